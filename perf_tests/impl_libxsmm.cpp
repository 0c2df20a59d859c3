// LIBXSMM 1.17 (Debian libxsmm-dev): one JIT-generated GEMM kernel per size,
// called per problem in an OpenMP parallel-for on the strided storage.
// LIBXSMM 1.17 kernels take alpha = 1 and beta in {0, 1} only, so each call
// computes T = A*B into a per-thread scratch matrix (L1-resident) and the
// loop finishes C = alpha*T + beta*C. Only GEMM: the other operations are
// absent from LIBXSMM.
#include "bench.hpp"

#include <libxsmm.h>

#include <stdexcept>

namespace bench {
namespace {

template <class T>
struct Kernel;
template <>
struct Kernel<double> {
  using fn = libxsmm_dmmfunction;
  static fn get(int n) {
    const libxsmm_blasint ld = n;
    const double alpha = 1, beta = 0;
    const int flags = LIBXSMM_GEMM_FLAG_NONE, prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
    return libxsmm_dmmdispatch(n, n, n, &ld, &ld, &ld, &alpha, &beta, &flags, &prefetch);
  }
};
template <>
struct Kernel<float> {
  using fn = libxsmm_smmfunction;
  static fn get(int n) {
    const libxsmm_blasint ld = n;
    const float alpha = 1, beta = 0;
    const int flags = LIBXSMM_GEMM_FLAG_NONE, prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
    return libxsmm_smmdispatch(n, n, n, &ld, &ld, &ld, &alpha, &beta, &flags, &prefetch);
  }
};

template <class T>
struct Xsmm final : Impl<T> {
  const HostProblem<T>* in = nullptr;
  HostProblem<T> w;
  typename Kernel<T>::fn kernel = nullptr;
  std::string group() const override { return "libxsmm"; }
  std::string absent(const Case& c) const override {
    return c.op == OpKind::gemm ? "" : "GEMM only";
  }
  void setup(const HostProblem<T>& input) override {
    in = &input;
    w.allocate(input.c);
    kernel = Kernel<T>::get(input.c.n);
    if (kernel == nullptr) throw std::runtime_error("libxsmm: no kernel for this size");
  }
  void restore() override { copy_operands(*in, w); }
  void spans(std::vector<Span>& out) const override {
    out.push_back({w.A.data(), w.A.bytes()});
    out.push_back({w.B.data(), w.B.bytes()});
    out.push_back({w.C.data(), w.C.bytes()});
  }
  void run() override {
    const int n = w.c.n;
    const std::size_t nn = std::size_t(n) * std::size_t(n);
    const T alpha = T(gemm_alpha), beta = T(gemm_beta);
    const T* A = w.A.data();
    const T* B = w.B.data();
    T* C = w.C.data();
    const auto k = kernel;
#pragma omp parallel
    {
      alignas(64) T tmp[32 * 32];
#pragma omp for schedule(static)
      for (index_t b = 0; b < w.c.batch; ++b) {
        k(A + b * nn, B + b * nn, tmp);
        T* c = C + b * nn;
#pragma omp simd
        for (std::size_t e = 0; e < nn; ++e) c[e] = alpha * tmp[e] + beta * c[e];
      }
    }
  }
  void fetch(HostProblem<T>& out) override { parallel_copy(out.C.data(), w.C.data(), w.C.bytes()); }
  void teardown() override { w = HostProblem<T>(); }
};

}  // namespace

template <class T>
void add_libxsmm(ImplList<T>& out) {
  libxsmm_init();
  out.push_back(std::make_unique<Xsmm<T>>());
}
template void add_libxsmm<float>(ImplList<float>&);
template void add_libxsmm<double>(ImplList<double>&);

}  // namespace bench
