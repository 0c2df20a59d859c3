// Device compile check: every batch-level operation of ibla instantiated for
// one value type on one layout, so that a device build (CUDA) compiles and
// links each kernel's device path once, without the weight of the typed unit
// tests that instantiate the same kernels over and over: the one target to
// build at full device optimization (IBLA_CUDA_OPTIMIZED=1
// IBLA_CUDA_TARGETS=ibla_device_check scripts/test_stages/30-cuda-build.sh;
// CI builds every test, as PTX). Not a test: it checks no numbers.
// Run on a GPU, it launches every kernel once on a small batch, which shows
// launch failures (e.g. resource limits) as Kokkos errors.
// check_float.cpp and check_double.cpp instantiate it on two layouts each:
// LayoutBlockInterleaved<32> (the device default: lanes are the threads of a
// warp, compile-time lane count, unit lane stride) and a LayoutStride View
// (runtime lane stride: the other form of every kernel). One translation unit
// per value type, so that a two-core machine compiles them side by side;
// every layout in one unit took cicc more than 6 CPU-minutes.
#pragma once

#include "support/batch.hpp"

#include <ibla/ibla.hpp>

namespace ibla_device_check {

using namespace ibla_test;
using ibla::Diag;
using ibla::Op;
using ibla::Side;
using ibla::Uplo;

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
  ibla::getrs(exec, Op::N, A, ipiv, B);
  ibla::gesv(exec, A, ipiv, B, info);
  Kokkos::fence();
}

template <class T>
void instantiate_layouts(index_t batch, int n) {
  instantiate<T, ibla::LayoutBlockInterleaved<32>>(batch, n);
  instantiate<T, LayoutStrideColMajor>(batch, n);
}

void check_float();
void check_double();

}  // namespace ibla_device_check
