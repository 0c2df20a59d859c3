// a * b + c with one rounding wherever the machine has a fused multiply-add.
//
// GCC contracts a * b + c into an FMA by itself (-ffp-contract=fast), but in
// x * y + u * v either product may be the one fused, and which one depends on
// the shape of the surrounding code. Kernels whose vector form (full blocks)
// and per-lane form (partial last block, device) must give the same bits
// spell such sums with fused_mul_add, so the choice is fixed in the source.
#pragma once

#include <Kokkos_Macros.hpp>

#include <cmath>

namespace ibla::impl {

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__)
#define IBLA_IMPL_DEVICE_FMA 1  // the devices have FMA for float and double
#elif defined(__FP_FAST_FMA) && defined(__FP_FAST_FMAF)
#define IBLA_IMPL_HOST_FMA 1  // vectorised in the lane loops (vfmadd...p[sd])
#endif
// Otherwise there is no hardware FMA, nothing is contracted either, and
// a * b + c rounds twice in every form.

KOKKOS_FORCEINLINE_FUNCTION double fused_mul_add(const double a, const double b, const double c) {
#if defined(IBLA_IMPL_DEVICE_FMA)
  return ::fma(a, b, c);
#elif defined(IBLA_IMPL_HOST_FMA)
  return __builtin_fma(a, b, c);
#else
  return a * b + c;
#endif
}

KOKKOS_FORCEINLINE_FUNCTION float fused_mul_add(const float a, const float b, const float c) {
#if defined(IBLA_IMPL_DEVICE_FMA)
  return ::fmaf(a, b, c);
#elif defined(IBLA_IMPL_HOST_FMA)
  return __builtin_fmaf(a, b, c);
#else
  return a * b + c;
#endif
}

#undef IBLA_IMPL_DEVICE_FMA
#undef IBLA_IMPL_HOST_FMA

}  // namespace ibla::impl
