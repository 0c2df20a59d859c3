// ibla_bench: shared definitions of the benchmark driver and of the
// implementations it measures. Every implementation (ibla and each peer)
// lives in its own translation unit behind the Impl<T> interface below, so a
// change in one of them rebuilds only that file.
//
// Storage convention of the driver ("strided"): the batch is a contiguous
// array of column-major matrices one after another, each with leading
// dimension n (what LAPACK, OpenBLAS, LIBXSMM and Eigen::Map want). Every
// implementation receives its inputs in that form, keeps its own working
// copy in whatever storage it computes on, and hands its outputs back in that
// form to be checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace bench {

using index_t = std::int64_t;

// ---------------------------------------------------------------------------
// Operations and cases.
enum class OpKind { gemm, trsm, potrf, getrf, posv, gesv };

/// One benchmark case: an operation on `batch` problems of size n.
struct Case {
  OpKind op;
  int n;
  int nrhs;          // trsm/posv/gesv: columns of B
  bool random_input;  // getrf/gesv: random (row swaps) instead of diagonally dominant
  index_t batch;
  std::string name() const;  // e.g. "gemm", "trsm(nrhs=n)", "getrf(random)"
};

inline constexpr double gemm_alpha = 1.5, gemm_beta = 0.5;
inline constexpr double trsm_alpha = 1.0;

/// Flops of one problem (the counts of the issue: GEMM 2n^3, TRSM n^2 nrhs,
/// POTRF n^3/3+n^2/2+n/6, GETRF 2n^3/3, POSV/GESV factorization + 2n^2 nrhs).
double flops_per_problem(const Case& c);
/// Bytes one problem must read at least (reads only; the triangle for the
/// symmetric/triangular operands): the denominator of the bandwidth bound.
double bytes_read_per_problem(const Case& c, std::size_t elem);
/// Bytes of every operand of one problem (read or written): decides which
/// cache level holds a warm batch.
double footprint_per_problem(const Case& c, std::size_t elem);

// ---------------------------------------------------------------------------
// 64-byte aligned buffer (cache-line aligned, so flushing covers it exactly).
template <class T>
struct Buf {
  std::unique_ptr<T[], void (*)(T*)> p{nullptr, [](T* q) { std::free(q); }};
  std::size_t n = 0;
  Buf() = default;
  explicit Buf(std::size_t count) { resize(count); }
  void resize(std::size_t count) {
    n = count;
    const std::size_t bytes = ((count * sizeof(T) + 63) / 64) * 64;
    T* q = static_cast<T*>(std::aligned_alloc(64, bytes > 0 ? bytes : 64));
    if (q == nullptr) throw std::bad_alloc();
    p = std::unique_ptr<T[], void (*)(T*)>(q, [](T* r) { std::free(r); });
  }
  T* data() const { return p.get(); }
  std::size_t size() const { return n; }
  std::size_t bytes() const { return n * sizeof(T); }
  T& operator[](std::size_t i) const { return p[i]; }
};

/// The operands of one case in strided storage. A is n x n, B is n x nrhs
/// (gemm: n x n), C is n x n (gemm only); ipiv (1-based, LAPACK) and info per
/// problem for the factorizations.
template <class T>
struct HostProblem {
  Case c{};
  Buf<T> A, B, C;
  Buf<int> ipiv, info;
  bool has_B() const;
  bool has_C() const { return c.op == OpKind::gemm; }
  bool has_ipiv() const { return c.op == OpKind::getrf || c.op == OpKind::gesv; }
  bool has_info() const { return c.op != OpKind::gemm && c.op != OpKind::trsm; }
  int b_cols() const { return c.op == OpKind::gemm ? c.n : c.nrhs; }
  /// Whether the operation overwrites A, B (C, where there is one, always):
  /// GEMM and TRSM only read A, GEMM B too.
  bool writes_A() const { return c.op != OpKind::gemm && c.op != OpKind::trsm; }
  bool writes_B() const { return has_B() && c.op != OpKind::gemm; }
  void allocate(const Case& cs);
};

/// Copies every operand of from (A, and B and C where the case has them)
/// into to's (the pristine inputs into working storage, a working set's
/// results into a fetched copy).
template <class T>
void copy_operands(const HostProblem<T>& from, HostProblem<T>& to);

/// A memory range the timed run touches: flushed before each cold repetition.
struct Span {
  const void* p;
  std::size_t bytes;
};

/// Parallel memcpy (restoring inputs is not timed, but should not take long).
void parallel_copy(void* dst, const void* src, std::size_t bytes);

// ---------------------------------------------------------------------------
/// One implementation of the operations. Lifetime per case: setup, then
/// repeatedly restore / run, then fetch.
template <class T>
struct Impl {
  virtual ~Impl() = default;
  /// Column of the table this implementation is reported in. Implementations
  /// with the same group (e.g. Kokkos Kernels Blocked and Unblocked) are
  /// measured separately and the better one is reported.
  virtual std::string group() const = 0;
  /// Full name (group plus variant), for the CSV.
  virtual std::string name() const { return group(); }
  /// Empty when the case is supported, else why it is absent.
  virtual std::string absent(const Case& c) const = 0;
  /// Extra note for the table (e.g. "nopiv").
  virtual std::string note(const Case&) const { return ""; }
  /// Allocate working storage for the case; `in` stays alive until fetch.
  virtual void setup(const HostProblem<T>& in) = 0;
  /// Working operands <- the pristine inputs (not timed), all of them: a
  /// copy of those the operation only reads is not needed for the results,
  /// but warm runs measured faster after it (perf_tests/RESULTS.md).
  virtual void restore() = 0;
  /// Every range the timed run reads or writes.
  virtual void spans(std::vector<Span>& out) const = 0;
  /// The timed part; returns when the results are complete.
  virtual void run() = 0;
  /// Outputs in strided storage (out was allocated for the same case).
  virtual void fetch(HostProblem<T>& out) = 0;
  /// Release working storage.
  virtual void teardown() = 0;
};

template <class T>
using ImplList = std::vector<std::unique_ptr<Impl<T>>>;

// Factories, one per translation unit. Each appends its implementations.
template <class T> void add_ibla(ImplList<T>& out);
template <class T, int Bytes> void add_ibla_blocks(ImplList<T>& out);
template <class T> void add_ibla_register_blocks(ImplList<T>& out);
template <class T> void add_ibla_on_strided(ImplList<T>& out);
template <class T> void add_openblas(ImplList<T>& out);
template <class T> void add_kokkos_kernels(ImplList<T>& out);
template <class T> void add_libxsmm(ImplList<T>& out);
template <class T> void add_eigen(ImplList<T>& out);

/// The reference result (serial OpenBLAS/LAPACK on a copy of the inputs).
template <class T> void reference(const HostProblem<T>& in, HostProblem<T>& out);

/// What ibla's operations are available in this build (headers present).
std::string ibla_ops_available();

// ---------------------------------------------------------------------------
// Machine limits (limits.cpp).
struct Limits {
  double peak_gflops = 0;   // FMA microkernel in the run's precision, all threads
  double bw_dram = 0;       // GB/s, triad on arrays far larger than L3
  double bw_l3 = 0;         // GB/s, triad on arrays that fit in L3, not in L2
  double bw_l2 = 0;         // GB/s, triad on arrays that fit in each core's L2
  std::size_t l2_bytes = 0;  // per core
  std::size_t l3_bytes = 0;  // total
  int threads = 1;
  std::string isa;
  std::string precision;    // of the FMA microkernel: "double" or "float"
};
Limits measure_limits(bool quick, bool single);

/// Evicts every cache line of the spans from all cache levels (clflushopt).
void flush_spans(const std::vector<Span>& spans);

}  // namespace bench
