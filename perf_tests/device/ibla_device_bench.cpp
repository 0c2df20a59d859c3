// ibla_device_bench: ibla next to cuBLAS / cuSOLVER batched routines on a
// CUDA GPU, on the same batch in the same run: what a CUDA user would call
// otherwise for batches of tiny problems.
//   GEMM  (NN, alpha 1.5, beta 0.5)  vs cublas<t>gemmStridedBatched
//   POTRF (lower, SPD input)         vs cusolverDn<t>potrfBatched
//   GETRF (partial pivoting, random) vs cublas<t>getrfBatched
// ibla runs on its device layout, LayoutBlockInterleaved<32> (a block of 32
// matrices per warp); the peers on contiguous column-major matrices (stride
// n*n), their native storage. Both get the same inputs: generated on the host
// in column-major form and converted to ibla's layout with ibla::convert.
// Protocol per cell: one untimed call, then the inputs restored and the L2
// cache (50 MB on an H100) overwritten by a 256 MiB write before each timed
// repetition, median of --reps (default 11) with min and max, each call
// timed from launch to fence. Afterwards the results of both are checked on the host, each on
// its own: GEMM against a loop in double, POTRF by ||A - L L^T|| and GETRF by
// ||A - P^T L U|| (1-based pivots applied as LAPACK does), both against the
// largest entries, within 16 n eps; info 0 everywhere. How many pivots the
// two GETRFs chose differently is shown (rounding can break a near-tie
// either way; both are then right). A FAIL makes the exit status 1.
// Usage: ibla_device_bench [--float] [--batch N] [--sizes 4,8,16,32] [--reps R]
#include <ibla/ibla.hpp>

#include <Kokkos_Core.hpp>

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Exec    = Kokkos::Cuda;
using Mem     = Kokkos::CudaSpace;
using index_t = ibla::index_t;

// ---------------------------------------------------------------------------
// The peers' entry points by value type.
#define IBLA_BENCH_CHECK(call, what)                                                \
  do {                                                                              \
    if ((call) != 0) throw std::runtime_error(std::string(what) + " failed");      \
  } while (0)

cublasStatus_t gemm_strided(cublasHandle_t h, int n, const double* alpha, const double* A,
                            const double* B, const double* beta, double* C, int batch) {
  return cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, alpha, A, n,
                                   static_cast<long long>(n) * n, B, n, static_cast<long long>(n) * n, beta, C, n,
                                   static_cast<long long>(n) * n, batch);
}
cublasStatus_t gemm_strided(cublasHandle_t h, int n, const float* alpha, const float* A,
                            const float* B, const float* beta, float* C, int batch) {
  return cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, alpha, A, n,
                                   static_cast<long long>(n) * n, B, n, static_cast<long long>(n) * n, beta, C, n,
                                   static_cast<long long>(n) * n, batch);
}
cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, double** A, int* info, int batch) {
  return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, A, n, info, batch);
}
cusolverStatus_t potrf_batched(cusolverDnHandle_t h, int n, float** A, int* info, int batch) {
  return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, A, n, info, batch);
}
cublasStatus_t getrf_batched(cublasHandle_t h, int n, double** A, int* ipiv, int* info, int batch) {
  return cublasDgetrfBatched(h, n, A, n, ipiv, info, batch);
}
cublasStatus_t getrf_batched(cublasHandle_t h, int n, float** A, int* ipiv, int* info, int batch) {
  return cublasSgetrfBatched(h, n, A, n, ipiv, info, batch);
}

// ---------------------------------------------------------------------------
// Storage. Column-major matrices one after another, seen as (b, i, j).
template <class T>
using ColMajor = Kokkos::View<T***, Kokkos::LayoutStride, Mem>;
template <class T>
using Interleaved = Kokkos::View<T***, ibla::LayoutBlockInterleaved<32>, Mem>;

template <class T>
ColMajor<T> col_major(const char* label, index_t batch, int n) {
  return ColMajor<T>(std::string(label), Kokkos::LayoutStride(size_t(batch), size_t(n) * n, size_t(n), 1,
                                                 size_t(n), size_t(n)));
}

/// Pointers to the matrices of a column-major batch (the peers' P2P form),
/// held as integers: a View of T** would be a rank-2 View of T.
template <class T>
struct PointerArray {
  Kokkos::View<std::uintptr_t*, Mem> ptrs;
  T** data() const { return reinterpret_cast<T**>(ptrs.data()); }
};
template <class T>
PointerArray<T> pointers_to(const ColMajor<T>& a, int n) {
  Kokkos::View<std::uintptr_t*, Mem> p("pointers", a.extent(0));
  T* base = a.data();
  Kokkos::parallel_for(
      "pointers", Kokkos::RangePolicy<Exec>(0, index_t(a.extent(0))),
      KOKKOS_LAMBDA(const index_t b) { p(b) = reinterpret_cast<std::uintptr_t>(base + b * index_t(n) * n); });
  Kokkos::fence();
  return {p};
}

// ---------------------------------------------------------------------------
// Timing.
struct Stats {
  double median = 0, min = 0, max = 0;
};
Stats stats_of(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front(), t.back()};
}

/// Overwrites the L2 cache between repetitions.
struct CacheFlusher {
  Kokkos::View<double*, Mem> junk{"flush", size_t(256) << 17};  // 256 MiB
  int round = 0;
  void operator()() { Kokkos::deep_copy(junk, double(++round)); }
};

/// Median/min/max seconds of `run` over reps, `restore` and a flush first,
/// after one untimed call (the first launch of a kernel also loads it).
Stats time_it(int reps, CacheFlusher& flush, const std::function<void()>& restore,
              const std::function<void()>& run) {
  restore();
  run();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    restore();
    flush();
    Kokkos::fence();
    Kokkos::Timer timer;
    run();
    Kokkos::fence();
    t.push_back(timer.seconds());
  }
  return stats_of(t);
}

// ---------------------------------------------------------------------------
// Inputs (host, column-major) and checks.
template <class T>
std::vector<T> random_batch(index_t batch, int n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<T> a(size_t(batch) * n * n);
  for (auto& x : a) x = T(dist(gen));
  return a;
}

/// M M^T + n I per matrix: SPD with eigenvalues >= n.
template <class T>
std::vector<T> spd_batch(index_t batch, int n, std::uint64_t seed) {
  auto m = random_batch<T>(batch, n, seed);
  std::vector<T> a(m.size());
  for (index_t b = 0; b < batch; ++b) {
    const T* mb = &m[size_t(b) * n * n];
    T* ab       = &a[size_t(b) * n * n];
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double s = i == j ? n : 0;
        for (int k = 0; k < n; ++k) s += double(mb[i + k * n]) * double(mb[j + k * n]);
        ab[i + j * n] = T(s);
      }
  }
  return a;
}

template <class T>
std::vector<T> to_host(const ColMajor<T>& a) {
  std::vector<T> h(a.span());
  Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> hv(h.data(), h.size());
  Kokkos::View<T*, Mem, Kokkos::MemoryUnmanaged> dv(a.data(), a.span());
  Kokkos::deep_copy(hv, dv);
  return h;
}

template <class T>
void to_device(const ColMajor<T>& a, const std::vector<T>& h) {
  Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged> hv(h.data(), h.size());
  Kokkos::View<T*, Mem, Kokkos::MemoryUnmanaged> dv(a.data(), a.span());
  Kokkos::deep_copy(dv, hv);
}

/// Largest |x - y| of a matrix against its largest |y|, the worst matrix.
template <class T>
double relative_difference(const std::vector<T>& x, const std::vector<T>& y, index_t batch, int n) {
  double worst = 0;
  for (index_t b = 0; b < batch; ++b) {
    double diff = 0, mag = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        const size_t k = size_t(b) * n * n + i + size_t(j) * n;
        diff = std::max(diff, std::abs(double(x[k]) - double(y[k])));
        mag  = std::max(mag, std::abs(double(y[k])));
      }
    if (!(diff <= 1e300)) return std::numeric_limits<double>::infinity();  // NaN
    worst = std::max(worst, mag > 0 ? diff / mag : diff);
  }
  return worst;
}

/// max over the batch of max|A - L L^T| / max|A| on the lower triangle.
template <class T>
double cholesky_residual(const std::vector<T>& a, const std::vector<T>& l, index_t batch, int n) {
  double worst = 0;
  for (index_t q = 0; q < batch; ++q) {
    const size_t o = size_t(q) * n * n;
    double diff = 0, mag = 0;
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) {
        double s = 0;
        for (int k = 0; k <= j; ++k) s += double(l[o + i + size_t(k) * n]) * double(l[o + j + size_t(k) * n]);
        diff = std::max(diff, std::abs(s - double(a[o + i + size_t(j) * n])));
        mag  = std::max(mag, std::abs(double(a[o + i + size_t(j) * n])));
      }
    if (!(diff <= 1e300)) return std::numeric_limits<double>::infinity();  // NaN
    worst = std::max(worst, diff / mag);
  }
  return worst;
}

/// max over the batch of max|A - P^T L U| / (max|A| + max|LU|): the factors
/// multiplied back, then LAPACK's interchanges (ipiv 1-based, row k swapped
/// with ipiv[k] - 1) undone from the last to the first.
template <class T>
double lu_residual(const std::vector<T>& a, const std::vector<T>& lu, const std::vector<int>& ipiv,
                   index_t batch, int n) {
  double worst = 0;
  std::vector<double> r(size_t(n) * n);
  for (index_t q = 0; q < batch; ++q) {
    const size_t o = size_t(q) * n * n;
    double mag = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int k = 0; k <= std::min(i, j); ++k) {
          const double lik = k == i ? 1.0 : double(lu[o + i + size_t(k) * n]);
          s += lik * double(lu[o + k + size_t(j) * n]);
        }
        r[i + size_t(j) * n] = s;
        mag = std::max({mag, std::abs(double(a[o + i + size_t(j) * n])), std::abs(double(lu[o + i + size_t(j) * n]))});
      }
    for (int k = n - 1; k >= 0; --k) {
      const int p = ipiv[size_t(q) * n + k] - 1;
      if (p < 0 || p >= n) return std::numeric_limits<double>::infinity();
      if (p != k)
        for (int j = 0; j < n; ++j) std::swap(r[k + size_t(j) * n], r[p + size_t(j) * n]);
    }
    double diff = 0;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) diff = std::max(diff, std::abs(r[i + size_t(j) * n] - double(a[o + i + size_t(j) * n])));
    if (!(diff <= 1e300)) return std::numeric_limits<double>::infinity();  // NaN
    worst = std::max(worst, diff / mag);
  }
  return worst;
}

// ---------------------------------------------------------------------------
struct Row {
  std::string op;
  int n;
  Stats ibla, peer;
  double flops;  // of the whole batch
  bool pass;
  std::string detail;
};

void print_row(const Row& r, index_t batch) {
  auto gf = [&](double s) { return r.flops / s * 1e-9; };
  std::printf("%-6s %3d %9ld | %9.1f [%7.1f, %7.1f] | %9.1f [%7.1f, %7.1f] | %6.2fx | %s %s\n",
              r.op.c_str(), r.n, long(batch), gf(r.ibla.median), gf(r.ibla.max), gf(r.ibla.min),
              gf(r.peer.median), gf(r.peer.max), gf(r.peer.min), r.peer.median / r.ibla.median,
              r.pass ? "PASS" : "FAIL", r.detail.c_str());
  std::fflush(stdout);
}

template <class T>
struct Bench {
  index_t batch;
  int reps;
  cublasHandle_t blas;
  cusolverDnHandle_t solver;
  CacheFlusher flush;
  const double tol_factor = 16 * std::numeric_limits<T>::epsilon();

  Row gemm(int n) {
    const T alpha = T(1.5), beta = T(0.5);
    auto a = random_batch<T>(batch, n, 1), b = random_batch<T>(batch, n, 2),
         c = random_batch<T>(batch, n, 3);
    auto A = col_major<T>("A", batch, n), B = col_major<T>("B", batch, n),
         C0 = col_major<T>("C0", batch, n), C = col_major<T>("C", batch, n);
    to_device(A, a), to_device(B, b), to_device(C0, c);
    Interleaved<T> Ai("Ai", batch, n, n), Bi("Bi", batch, n, n), C0i("C0i", batch, n, n),
        Ci("Ci", batch, n, n);
    const Exec exec;
    ibla::convert(exec, A, Ai), ibla::convert(exec, B, Bi), ibla::convert(exec, C0, C0i);
    Row r{"gemm", n, {}, {}, 2.0 * n * n * n * double(batch), true, ""};
    r.ibla = time_it(
        reps, flush, [&] { Kokkos::deep_copy(Ci, C0i); },
        [&] { ibla::gemm(exec, ibla::Op::N, ibla::Op::N, alpha, Ai, Bi, beta, Ci); });
    r.peer = time_it(
        reps, flush, [&] { Kokkos::deep_copy(C, C0); },
        [&] {
          IBLA_BENCH_CHECK(gemm_strided(blas, n, &alpha, A.data(), B.data(), &beta, C.data(), int(batch)),
                           "cublas gemmStridedBatched");
        });
    // Check: both against a host loop in double.
    auto C_ibla = col_major<T>("C_ibla", batch, n);
    ibla::convert(exec, Ci, C_ibla);
    auto ci = to_host(C_ibla), cp = to_host(C);
    std::vector<T> ref(c.size());
    for (index_t q = 0; q < batch; ++q)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
          const size_t o = size_t(q) * n * n;
          double s = double(beta) * c[o + i + size_t(j) * n];
          for (int k = 0; k < n; ++k) s += double(alpha) * a[o + i + size_t(k) * n] * b[o + k + size_t(j) * n];
          ref[o + i + size_t(j) * n] = T(s);
        }
    const double ei = relative_difference(ci, ref, batch, n),
                 ep = relative_difference(cp, ref, batch, n), tol = tol_factor * n;
    r.pass = ei <= tol && ep <= tol;
    std::ostringstream d;
    d << "(error vs host: ibla " << ei << ", cublas " << ep << ", tolerance " << tol << ")";
    r.detail = d.str();
    return r;
  }

  Row potrf(int n) {
    auto a = spd_batch<T>(batch, n, 4);
    auto A0 = col_major<T>("A0", batch, n), A = col_major<T>("A", batch, n);
    to_device(A0, a);
    Interleaved<T> A0i("A0i", batch, n, n), Ai("Ai", batch, n, n);
    Kokkos::View<int*, ibla::LayoutBlockInterleaved<32>, Mem> info_i("info_i", batch);
    Kokkos::View<int*, Mem> info_p("info_p", batch);
    const Exec exec;
    ibla::convert(exec, A0, A0i);
    auto ptrs = pointers_to(A, n);
    const double nd = n;
    Row r{"potrf", n, {}, {}, (nd * nd * nd / 3 + nd * nd / 2 + nd / 6) * double(batch), true, ""};
    r.ibla = time_it(
        reps, flush, [&] { Kokkos::deep_copy(Ai, A0i); },
        [&] { ibla::potrf(exec, ibla::Uplo::Lower, Ai, info_i); });
    r.peer = time_it(
        reps, flush, [&] { Kokkos::deep_copy(A, A0); },
        [&] {
          IBLA_BENCH_CHECK(potrf_batched(solver, n, ptrs.data(), info_p.data(), int(batch)),
                           "cusolverDn potrfBatched");
        });
    auto A_ibla = col_major<T>("A_ibla", batch, n);
    ibla::convert(exec, Ai, A_ibla);
    const double ei = cholesky_residual(a, to_host(A_ibla), batch, n),
                 ep = cholesky_residual(a, to_host(A), batch, n), tol = tol_factor * n;
    auto hi = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), info_i);
    auto hp = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), info_p);
    index_t nonzero = 0;
    for (index_t q = 0; q < batch; ++q) nonzero += (hi(q) != 0) + (hp(q) != 0);
    r.pass = ei <= tol && ep <= tol && nonzero == 0;
    std::ostringstream d;
    d << "(residual: ibla " << ei << ", cusolver " << ep << ", tolerance " << tol
      << "; nonzero info: " << nonzero << ")";
    r.detail = d.str();
    return r;
  }

  Row getrf(int n) {
    auto a = random_batch<T>(batch, n, 5);
    auto A0 = col_major<T>("A0", batch, n), A = col_major<T>("A", batch, n);
    to_device(A0, a);
    Interleaved<T> A0i("A0i", batch, n, n), Ai("Ai", batch, n, n);
    Kokkos::View<int**, ibla::LayoutBlockInterleaved<32>, Mem> ipiv_i("ipiv_i", batch, n);
    Kokkos::View<int*, ibla::LayoutBlockInterleaved<32>, Mem> info_i("info_i", batch);
    Kokkos::View<int**, Kokkos::LayoutRight, Mem> ipiv_p("ipiv_p", batch, n);
    Kokkos::View<int*, Mem> info_p("info_p", batch);
    const Exec exec;
    ibla::convert(exec, A0, A0i);
    auto ptrs = pointers_to(A, n);
    Row r{"getrf", n, {}, {}, 2.0 * n * n * n / 3.0 * double(batch), true, ""};
    r.ibla = time_it(
        reps, flush, [&] { Kokkos::deep_copy(Ai, A0i); }, [&] { ibla::getrf(exec, Ai, ipiv_i, info_i); });
    r.peer = time_it(
        reps, flush, [&] { Kokkos::deep_copy(A, A0); },
        [&] {
          IBLA_BENCH_CHECK(getrf_batched(blas, n, ptrs.data(), ipiv_p.data(), info_p.data(), int(batch)),
                           "cublas getrfBatched");
        });
    auto A_ibla = col_major<T>("A_ibla", batch, n);
    ibla::convert(exec, Ai, A_ibla);
    auto pi = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), ipiv_i);
    auto pp = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), ipiv_p);
    auto ii = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), info_i);
    auto ip = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), info_p);
    std::vector<int> piv_i(size_t(batch) * n), piv_p(size_t(batch) * n);
    index_t pivots_differ = 0, nonzero = 0;
    for (index_t q = 0; q < batch; ++q) {
      nonzero += (ii(q) != 0) + (ip(q) != 0);
      for (int k = 0; k < n; ++k) {
        piv_i[size_t(q) * n + k] = pi(q, k);
        piv_p[size_t(q) * n + k] = pp(q, k);
        pivots_differ += pi(q, k) != pp(q, k);
      }
    }
    const double ei = lu_residual(a, to_host(A_ibla), piv_i, batch, n),
                 ep = lu_residual(a, to_host(A), piv_p, batch, n), tol = tol_factor * n;
    r.pass = ei <= tol && ep <= tol && nonzero == 0;
    std::ostringstream d;
    d << "(residual: ibla " << ei << ", cublas " << ep << ", tolerance " << tol
      << "; nonzero info: " << nonzero << "; pivots chosen differently: " << pivots_differ << ")";
    r.detail = d.str();
    return r;
  }
};

std::vector<int> parse_sizes(const std::string& s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) v.push_back(std::stoi(item));
  return v;
}

template <class T>
int run(index_t batch, const std::vector<int>& sizes, int reps) {
  Bench<T> bench{batch, reps, nullptr, nullptr, {}};
  IBLA_BENCH_CHECK(cublasCreate(&bench.blas), "cublasCreate");
  IBLA_BENCH_CHECK(cusolverDnCreate(&bench.solver), "cusolverDnCreate");
  // The peers on Kokkos' default stream, like ibla's calls.
  IBLA_BENCH_CHECK(cublasSetStream(bench.blas, Exec().cuda_stream()), "cublasSetStream");
  IBLA_BENCH_CHECK(cusolverDnSetStream(bench.solver, Exec().cuda_stream()), "cusolverDnSetStream");
  std::printf("ibla_device_bench: %s, batch %ld, %d repetitions (L2 overwritten before each), GFLOP/s median [min, max]\n",
              sizeof(T) == 8 ? "double" : "float", long(batch), reps);
  std::printf("%-6s %3s %9s | %-31s | %-31s | %-7s|\n", "op", "n", "batch", "ibla (BlockInterleaved<32>)",
              "cuBLAS/cuSOLVER (column-major)", "ibla/peer");
  bool all = true;
  for (const char* op : {"gemm", "potrf", "getrf"})
    for (int n : sizes) {
      Row r = std::string(op) == "gemm" ? bench.gemm(n) : std::string(op) == "potrf" ? bench.potrf(n) : bench.getrf(n);
      print_row(r, batch);
      all = all && r.pass;
    }
  cusolverDnDestroy(bench.solver);
  cublasDestroy(bench.blas);
  std::printf(all ? "all results PASS\n" : "some results FAIL\n");
  return all ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  index_t batch = 100000;
  int reps      = 11;
  bool single   = false;
  std::vector<int> sizes{4, 8, 16, 32};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--float") single = true;
    else if (a == "--batch") batch = std::stoll(value());
    else if (a == "--sizes") sizes = parse_sizes(value());
    else if (a == "--reps") reps = std::stoi(value());
    else if (a == "--help") {
      std::printf("usage: ibla_device_bench [--float] [--batch N] [--sizes 4,8,16,32] [--reps R]\n");
      return 0;
    } else if (a.rfind("--kokkos", 0) != 0) {
      std::fprintf(stderr, "unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  return single ? run<float>(batch, sizes, reps) : run<double>(batch, sizes, reps);
}
