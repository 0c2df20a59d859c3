// Device compile check: instantiates every batch-level operation of ibla for
// float and double on every supported layout (LayoutBlockInterleaved<L> with
// the device default L = 32 and with L = 8, LayoutInterleaved, LayoutLeft,
// LayoutRight, LayoutStride), so that a device build (CUDA) compiles and
// links each kernel's device path once, without the host-side weight of the
// typed unit tests that instantiate the same kernels over and over (see
// scripts/test_stages/30-cuda-build.sh). Not a test: it checks no numbers.
// Run on a GPU, it launches every kernel once on a small batch, which shows
// launch failures (e.g. resource limits) as Kokkos errors.
#include "support/batch.hpp"

#include <ibla/ibla.hpp>
#if __has_include(<ibla/kernels/gesv.hpp>)
#include <ibla/kernels/gesv.hpp>
#define IBLA_DEVICE_CHECK_GESV 1
#endif

#include <cstdio>

using namespace ibla_test;
using ibla::Diag;
using ibla::Op;
using ibla::Side;
using ibla::Uplo;

namespace {

// ipiv/info Views: the same layout, except that the strided test layout
// keeps them LayoutRight.
template <class Layout>
struct aux_layout {
  using type = Layout;
};
template <>
struct aux_layout<LayoutStrideColMajor> {
  using type = Kokkos::LayoutRight;
};

template <class T, class Layout>
void instantiate(index_t batch, int n) {
  using Aux   = typename aux_layout<Layout>::type;
  const auto exec = Kokkos::DefaultExecutionSpace();
  auto A = make_view<T, Layout>("A", batch, n, n);
  auto B = make_view<T, Layout>("B", batch, n, n);
  auto C = make_view<T, Layout>("C", batch, n, n);
  Kokkos::View<int**, Aux> ipiv("ipiv", batch, n);
  Kokkos::View<int*, Aux> info("info", batch);
  ibla::convert(exec, A, B);
  ibla::gemm(exec, Op::N, Op::T, T(1), A, B, T(0), C);
  ibla::gemm(exec, Op::T, Op::N, T(1), A, B, T(1), C);
  ibla::trsm(exec, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, T(1), A, B);
  ibla::trsm(exec, Side::Right, Uplo::Upper, Op::T, Diag::Unit, T(1), A, B);
  ibla::potrf(exec, Uplo::Lower, A, info);
  ibla::potrs(exec, Uplo::Lower, A, B);
  ibla::posv(exec, Uplo::Upper, A, B, info);
  ibla::getrf(exec, A, ipiv, info);
#if IBLA_DEVICE_CHECK_GESV
  ibla::getrs(exec, Op::N, A, ipiv, B);
  ibla::gesv(exec, A, ipiv, B, info);
#endif
  Kokkos::fence();
}

template <class T>
void instantiate_all_layouts(index_t batch, int n) {
  instantiate<T, ibla::LayoutBlockInterleaved<32>>(batch, n);
  instantiate<T, ibla::LayoutBlockInterleaved<8>>(batch, n);
  instantiate<T, ibla::LayoutInterleaved>(batch, n);
  instantiate<T, Kokkos::LayoutLeft>(batch, n);
  instantiate<T, Kokkos::LayoutRight>(batch, n);
  instantiate<T, LayoutStrideColMajor>(batch, n);
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard guard(argc, argv);
  // Zero matrices: factorisations report info > 0 and solves produce
  // inf/NaN; only compiling, linking and launching matter here.
  instantiate_all_layouts<float>(37, 3);
  instantiate_all_layouts<double>(37, 3);
  std::printf("ibla device compile check: every kernel launched on %s\n",
              Kokkos::DefaultExecutionSpace::name());
  return 0;
}
