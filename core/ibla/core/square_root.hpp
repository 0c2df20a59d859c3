// Square roots for the kernels: one lane at a time (square_root) and all the
// lanes of a host vector form at once (square_root_lanes).
//
// GCC does not vectorise sqrt in a lane loop unless the whole translation
// unit is compiled with -fno-math-errno: a negative argument sets errno, a
// side effect the vector instruction lacks, so the call stays scalar (POTRF's
// pivots: vsqrtsd per lane, n = 8 at 2.3 GFLOP/s). Neither an optimize
// attribute nor a test that the argument is >= 0 changes that (GCC 12), and
// ibla does not impose -fno-math-errno on its users' code, so the host vector
// forms take their square roots here, with the x86 vector instructions where
// the compiler targets them. Those are correctly rounded as the scalar one is,
// so a lane gets the same bits in either form (the partial last block and the
// device use square_root).
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__SSE2__) &&                     \
    !defined(__CUDA_ARCH__) && !defined(__HIP_DEVICE_COMPILE__) && !defined(__SYCL_DEVICE_ONLY__)
#include <immintrin.h>
#define IBLA_IMPL_X86_SQRT 1
#endif

namespace ibla::impl {

/// sqrt(x) on host and device: Kokkos moved its math functions out of
/// Kokkos::Experimental in 3.7.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T square_root(T x) {
#if KOKKOS_VERSION >= 30700
  return Kokkos::sqrt(x);
#else
  return Kokkos::Experimental::sqrt(x);
#endif
}

/// x[l] = sqrt(x[l]) for l in [0, L): host vector forms only (see above).
template <int L, class T>
inline void square_root_lanes(T (&x)[L]) {
  static_assert(std::is_same<T, double>::value || std::is_same<T, float>::value,
                "ibla: square_root_lanes takes float or double");
#if defined(IBLA_IMPL_X86_SQRT)
  constexpr bool is_double = std::is_same<T, double>::value;
#if defined(__AVX512F__)
  if constexpr (L % (is_double ? 8 : 16) == 0) {
    for (int l = 0; l < L; l += (is_double ? 8 : 16)) {
      // The maskz forms with every lane set: the same vsqrtpd/vsqrtps, but
      // GCC 12's _mm512_sqrt_pd/_ps pass _mm512_undefined_*(), which warns
      // "'__Y' is used uninitialized" at -O2 -Wall in users' builds.
      if constexpr (is_double)
        _mm512_storeu_pd(x + l, _mm512_maskz_sqrt_pd(__mmask8(-1), _mm512_loadu_pd(x + l)));
      else _mm512_storeu_ps(x + l, _mm512_maskz_sqrt_ps(__mmask16(-1), _mm512_loadu_ps(x + l)));
    }
    return;
  }
#endif
#if defined(__AVX__)
  if constexpr (L % (is_double ? 4 : 8) == 0) {
    for (int l = 0; l < L; l += (is_double ? 4 : 8)) {
      if constexpr (is_double) _mm256_storeu_pd(x + l, _mm256_sqrt_pd(_mm256_loadu_pd(x + l)));
      else _mm256_storeu_ps(x + l, _mm256_sqrt_ps(_mm256_loadu_ps(x + l)));
    }
    return;
  }
#endif
  if constexpr (L % (is_double ? 2 : 4) == 0) {
    for (int l = 0; l < L; l += (is_double ? 2 : 4)) {
      if constexpr (is_double) _mm_storeu_pd(x + l, _mm_sqrt_pd(_mm_loadu_pd(x + l)));
      else _mm_storeu_ps(x + l, _mm_sqrt_ps(_mm_loadu_ps(x + l)));
    }
    return;
  }
#endif
  for (int l = 0; l < L; ++l) x[l] = square_root(x[l]);
}

}  // namespace ibla::impl

#undef IBLA_IMPL_X86_SQRT
