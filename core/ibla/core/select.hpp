// Lane-wise selects for the host kernels' vector forms (getrf, getrs,
// trsm): written so that GCC keeps the lane loops vectorised.
#pragma once

#include <ibla/core/lanes.hpp>

#include <Kokkos_Macros.hpp>

#include <type_traits>

namespace ibla::impl {

#if !IBLA_IMPL_DEVICE_PASS
/// A signed integer as wide as T: the pivot row index of a lane lives in
/// the same SIMD element as its values, so selects between indices and
/// between values use the same comparison mask.
template <class T>
using lane_index_t = std::conditional_t<sizeof(T) == 8, long long, int>;

/// here ? a : b, as bit operations on both values. A select written as
/// `?:` on a value that only one arm reads lets GCC turn the read into a
/// masked load (or sink it into a branch), and the lane loop then stayed
/// scalar ("unsupported access type for masked load"); with both values
/// read unconditionally it is one blend (or and/andnot/or) per vector.
/// The same holds for a store that keeps the old value, `out = keep ? x :
/// out`: GCC 12 makes it a conditional store, which AVX2 can only do as a
/// masked store, and left most such lane loops scalar ("control flow in
/// loop"); select_bits stores every lane.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T select_bits(const bool here, const T a, const T b) {
#if !defined(__OPTIMIZE__)
  // Unoptimised builds (the fuzz harness: clang -O0 with ASan): the same
  // value, bit for bit, without the three copies through memory, each
  // instrumented, that took most of that build's 21 GB (the host LU forms
  // select thousands of times per order).
  return here ? a : b;
#else
  using Bits = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned>;
  static_assert(sizeof(Bits) == sizeof(T), "select_bits: float or double");
  Bits ua, ub;
  __builtin_memcpy(&ua, &a, sizeof(T));
  __builtin_memcpy(&ub, &b, sizeof(T));
  const Bits mask = Bits(0) - Bits(here);
  const Bits r    = (ua & mask) | (ub & ~mask);
  T out;
  __builtin_memcpy(&out, &r, sizeof(T));
  return out;
#endif
}

/// |x| by clearing the sign bit: one AND per vector where `x < 0 ? -x : x`
/// is a compare, a negation and a blend. -0 becomes +0 and a NaN stays a
/// NaN, so compares of magnitudes give the same answers either way.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T magnitude(const T x) {
  using Bits = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned>;
  static_assert(sizeof(Bits) == sizeof(T), "magnitude: float or double");
  Bits u;
  __builtin_memcpy(&u, &x, sizeof(T));
  u &= ~Bits(0) >> 1;
  T out;
  __builtin_memcpy(&out, &u, sizeof(T));
  return out;
}
#endif

}  // namespace ibla::impl
