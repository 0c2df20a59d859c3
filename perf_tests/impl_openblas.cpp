// The baseline every user has today: an OpenMP parallel-for over the
// problems, one serial BLAS/LAPACK call per problem (OpenBLAS, OpenMP build,
// linked by full path; inside a parallel region it runs each call on the
// calling thread). The same calls, made serially on a copy, are the
// reference the results of every implementation are checked against.
#include "bench.hpp"

#include <omp.h>

#include <algorithm>

extern "C" {
void openblas_set_num_threads(int);
// Fortran BLAS/LAPACK symbols (OpenBLAS implements them in C and ignores the
// hidden string lengths, so none are passed).
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*,
            const double*, const int*, const double*, const int*, const double*, double*,
            const int*);
void sgemm_(const char*, const char*, const int*, const int*, const int*, const float*,
            const float*, const int*, const float*, const int*, const float*, float*, const int*);
void dtrsm_(const char*, const char*, const char*, const char*, const int*, const int*,
            const double*, const double*, const int*, double*, const int*);
void strsm_(const char*, const char*, const char*, const char*, const int*, const int*,
            const float*, const float*, const int*, float*, const int*);
void dpotrf_(const char*, const int*, double*, const int*, int*);
void spotrf_(const char*, const int*, float*, const int*, int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void sgetrf_(const int*, const int*, float*, const int*, int*, int*);
void dposv_(const char*, const int*, const int*, double*, const int*, double*, const int*, int*);
void sposv_(const char*, const int*, const int*, float*, const int*, float*, const int*, int*);
void dgesv_(const int*, const int*, double*, const int*, int*, double*, const int*, int*);
void sgesv_(const int*, const int*, float*, const int*, int*, float*, const int*, int*);
}

namespace bench {
namespace {

inline void gemm(int n, double alpha, const double* A, const double* B, double beta, double* C) {
  dgemm_("N", "N", &n, &n, &n, &alpha, A, &n, B, &n, &beta, C, &n);
}
inline void gemm(int n, float alpha, const float* A, const float* B, float beta, float* C) {
  sgemm_("N", "N", &n, &n, &n, &alpha, A, &n, B, &n, &beta, C, &n);
}
inline void trsm(int n, int r, double alpha, const double* A, double* B) {
  dtrsm_("L", "L", "N", "N", &n, &r, &alpha, A, &n, B, &n);
}
inline void trsm(int n, int r, float alpha, const float* A, float* B) {
  strsm_("L", "L", "N", "N", &n, &r, &alpha, A, &n, B, &n);
}
inline void potrf(int n, double* A, int* info) { dpotrf_("L", &n, A, &n, info); }
inline void potrf(int n, float* A, int* info) { spotrf_("L", &n, A, &n, info); }
inline void getrf(int n, double* A, int* ipiv, int* info) { dgetrf_(&n, &n, A, &n, ipiv, info); }
inline void getrf(int n, float* A, int* ipiv, int* info) { sgetrf_(&n, &n, A, &n, ipiv, info); }
inline void posv(int n, int r, double* A, double* B, int* info) {
  dposv_("L", &n, &r, A, &n, B, &n, info);
}
inline void posv(int n, int r, float* A, float* B, int* info) {
  sposv_("L", &n, &r, A, &n, B, &n, info);
}
inline void gesv(int n, int r, double* A, int* ipiv, double* B, int* info) {
  dgesv_(&n, &r, A, &n, ipiv, B, &n, info);
}
inline void gesv(int n, int r, float* A, int* ipiv, float* B, int* info) {
  sgesv_(&n, &r, A, &n, ipiv, B, &n, info);
}

/// Problem b of the case on the operands of p (in place).
template <class T>
inline void solve_one(const Case& c, const HostProblem<T>& p, index_t b) {
  const int n = c.n, r = c.nrhs;
  const std::size_t nn = std::size_t(n) * std::size_t(n), nb = std::size_t(n) * std::size_t(p.b_cols());
  T* A = p.A.data() + std::size_t(b) * nn;
  switch (c.op) {
    case OpKind::gemm:
      gemm(n, T(gemm_alpha), A, p.B.data() + b * nb, T(gemm_beta), p.C.data() + b * nn);
      break;
    case OpKind::trsm: trsm(n, r, T(trsm_alpha), A, p.B.data() + b * nb); break;
    case OpKind::potrf: potrf(n, A, &p.info[b]); break;
    case OpKind::getrf: getrf(n, A, p.ipiv.data() + b * n, &p.info[b]); break;
    case OpKind::posv: posv(n, r, A, p.B.data() + b * nb, &p.info[b]); break;
    case OpKind::gesv: gesv(n, r, A, p.ipiv.data() + b * n, p.B.data() + b * nb, &p.info[b]); break;
  }
}

template <class T>
void copy_outputs(const HostProblem<T>& w, HostProblem<T>& out) {
  parallel_copy(out.A.data(), w.A.data(), w.A.bytes());
  if (w.has_B()) parallel_copy(out.B.data(), w.B.data(), w.B.bytes());
  if (w.has_C()) parallel_copy(out.C.data(), w.C.data(), w.C.bytes());
  if (w.has_ipiv()) parallel_copy(out.ipiv.data(), w.ipiv.data(), w.ipiv.bytes());
  if (w.has_info()) parallel_copy(out.info.data(), w.info.data(), w.info.bytes());
}

template <class T>
struct OmpLoop final : Impl<T> {
  const HostProblem<T>* in = nullptr;
  HostProblem<T> w;
  std::string group() const override { return "omp+openblas"; }
  std::string absent(const Case&) const override { return ""; }
  void setup(const HostProblem<T>& input) override {
    in = &input;
    w.allocate(input.c);
  }
  void restore() override { copy_operands(*in, w); }
  void spans(std::vector<Span>& out) const override {
    out.push_back({w.A.data(), w.A.bytes()});
    if (w.has_B()) out.push_back({w.B.data(), w.B.bytes()});
    if (w.has_C()) out.push_back({w.C.data(), w.C.bytes()});
    if (w.has_ipiv()) out.push_back({w.ipiv.data(), w.ipiv.bytes()});
    if (w.has_info()) out.push_back({w.info.data(), w.info.bytes()});
  }
  void run() override {
    const index_t batch = w.c.batch;
    const Case c        = w.c;
#pragma omp parallel for schedule(static)
    for (index_t b = 0; b < batch; ++b) solve_one(c, w, b);
  }
  void fetch(HostProblem<T>& out) override { copy_outputs(w, out); }
  void teardown() override { w = HostProblem<T>(); }
};

/// OpenBLAS makes each call on one thread, and the calling thread's OpenMP
/// thread count is left as it was. In OpenBLAS's OpenMP build
/// openblas_set_num_threads also calls omp_set_num_threads: until
/// 2026-12-04 every `omp parallel` region the benchmark entered after it
/// ran on one thread, so the OpenMP loop over OpenBLAS, LIBXSMM, Eigen and
/// the packing of kk-simd+conv were measured on one thread, and the
/// restores of every column's inputs were made by one thread.
void openblas_one_thread_a_call() {
  const int threads = omp_get_max_threads();
  openblas_set_num_threads(1);
  omp_set_num_threads(threads);
}

}  // namespace

template <class T>
void add_openblas(ImplList<T>& out) {
  // Each call runs serially on the thread of the parallel loop that makes it.
  openblas_one_thread_a_call();
  out.push_back(std::make_unique<OmpLoop<T>>());
}

template <class T>
void reference(const HostProblem<T>& in, HostProblem<T>& out) {
  openblas_one_thread_a_call();
  copy_operands(in, out);
  for (index_t b = 0; b < in.c.batch; ++b) solve_one(in.c, out, b);
}

template void add_openblas<float>(ImplList<float>&);
template void add_openblas<double>(ImplList<double>&);
template void reference<float>(const HostProblem<float>&, HostProblem<float>&);
template void reference<double>(const HostProblem<double>&, HostProblem<double>&);

}  // namespace bench
