// Case bookkeeping, flop and byte counts, copying and cache flushing.
#include "bench.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#endif

namespace bench {

std::string Case::name() const {
  switch (op) {
    case OpKind::gemm: return "gemm";
    case OpKind::trsm: return nrhs == 1 ? "trsm(nrhs=1)" : "trsm(nrhs=n)";
    case OpKind::potrf: return "potrf";
    case OpKind::getrf: return random_input ? "getrf(random)" : "getrf(diagdom)";
    case OpKind::posv: return "posv";
    case OpKind::gesv: return random_input ? "gesv(random)" : "gesv(diagdom)";
  }
  return "?";
}

static double potrf_flops(double n) { return n * n * n / 3 + n * n / 2 + n / 6; }
static double getrf_flops(double n) { return 2 * n * n * n / 3; }

double flops_per_problem(const Case& c) {
  const double n = c.n, r = c.nrhs;
  switch (c.op) {
    case OpKind::gemm: return 2 * n * n * n;
    case OpKind::trsm: return n * n * r;
    case OpKind::potrf: return potrf_flops(n);
    case OpKind::getrf: return getrf_flops(n);
    case OpKind::posv: return potrf_flops(n) + 2 * n * n * r;
    case OpKind::gesv: return getrf_flops(n) + 2 * n * n * r;
  }
  return 0;
}

double bytes_read_per_problem(const Case& c, std::size_t elem) {
  const double n = c.n, r = c.nrhs, tri = n * (n + 1) / 2;
  double elems = 0;
  switch (c.op) {
    case OpKind::gemm: elems = 3 * n * n; break;  // A, B and C (beta != 0)
    case OpKind::trsm: elems = tri + n * r; break;
    case OpKind::potrf: elems = tri; break;
    case OpKind::getrf: elems = n * n; break;
    case OpKind::posv: elems = tri + n * r; break;
    case OpKind::gesv: elems = n * n + n * r; break;
  }
  return elems * double(elem);
}

double footprint_per_problem(const Case& c, std::size_t elem) {
  const double n = c.n, r = c.nrhs;
  switch (c.op) {
    case OpKind::gemm: return 3 * n * n * double(elem);
    case OpKind::trsm:
    case OpKind::posv: return (n * n + n * r) * double(elem);
    case OpKind::potrf: return n * n * double(elem);
    case OpKind::getrf: return n * n * double(elem) + n * 4;
    case OpKind::gesv: return (n * n + n * r) * double(elem) + n * 4;
  }
  return 0;
}

template <class T>
bool HostProblem<T>::has_B() const {
  return c.op == OpKind::gemm || c.op == OpKind::trsm || c.op == OpKind::posv ||
         c.op == OpKind::gesv;
}

template <class T>
void HostProblem<T>::allocate(const Case& cs) {
  c = cs;
  const std::size_t b = std::size_t(cs.batch), n = std::size_t(cs.n);
  A.resize(b * n * n);
  if (has_B()) B.resize(b * n * std::size_t(b_cols()));
  if (has_C()) C.resize(b * n * n);
  if (has_ipiv()) ipiv.resize(b * n);
  if (has_info()) info.resize(b);
}

template struct HostProblem<float>;
template struct HostProblem<double>;

void parallel_copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  char* d       = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
#pragma omp parallel
  {
    const std::size_t nt = std::size_t(omp_get_num_threads()), t = std::size_t(omp_get_thread_num());
    const std::size_t chunk = ((bytes + nt - 1) / nt + 63) / 64 * 64;
    const std::size_t lo = std::min(bytes, t * chunk), hi = std::min(bytes, lo + chunk);
    if (hi > lo) std::memcpy(d + lo, s + lo, hi - lo);
  }
}

template <class T>
void copy_operands(const HostProblem<T>& from, HostProblem<T>& to) {
  parallel_copy(to.A.data(), from.A.data(), from.A.bytes());
  if (from.has_B()) parallel_copy(to.B.data(), from.B.data(), from.B.bytes());
  if (from.has_C()) parallel_copy(to.C.data(), from.C.data(), from.C.bytes());
}

template void copy_operands(const HostProblem<float>&, HostProblem<float>&);
template void copy_operands(const HostProblem<double>&, HostProblem<double>&);

void flush_spans(const std::vector<Span>& spans) {
  // Every thread flushes a share of the lines, then fences its own flushes.
  // clflushopt evicts the line from every cache of the coherence domain, so
  // the thread that flushes need not be the one that holds it.
#pragma omp parallel
  {
    const std::size_t nt = std::size_t(omp_get_num_threads()), t = std::size_t(omp_get_thread_num());
    for (const Span& s : spans) {
      const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(s.p) & ~std::uintptr_t(63);
      const std::uintptr_t end   = reinterpret_cast<std::uintptr_t>(s.p) + s.bytes;
      const std::size_t lines    = (end - first + 63) / 64;
      const std::size_t lo = lines * t / nt, hi = lines * (t + 1) / nt;
      for (std::size_t i = lo; i < hi; ++i) {
        char* line = reinterpret_cast<char*>(first + i * 64);
#if defined(__CLFLUSHOPT__)
        _mm_clflushopt(line);
#elif defined(__x86_64__)
        _mm_clflush(line);
#else
        __builtin___clear_cache(line, line + 64);
#endif
      }
    }
#if defined(__x86_64__)
    _mm_mfence();
#endif
  }
}

}  // namespace bench
