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

/// An unsigned integer as wide as T: the masks of select_by_mask.
template <class T>
using select_mask_t = std::conditional_t<sizeof(T) == 8, unsigned long long, unsigned>;

/// a where mask is all ones, b where it is zero (select_bits with the
/// condition already a mask of T's width).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T select_by_mask(const select_mask_t<T> mask, const T a, const T b) {
#if !defined(__OPTIMIZE__)
  // Unoptimised builds (the fuzz harness: clang -O0 with ASan): the same
  // value, bit for bit, without the three copies through memory, each
  // instrumented, that took most of that build's 21 GB (the host LU forms
  // select thousands of times per order).
  return mask != 0 ? a : b;
#else
  using Bits = select_mask_t<T>;
  static_assert(sizeof(Bits) == sizeof(T), "select_by_mask: float or double");
  Bits ua, ub;
  __builtin_memcpy(&ua, &a, sizeof(T));
  __builtin_memcpy(&ub, &b, sizeof(T));
  const Bits r = (ua & mask) | (ub & ~mask);
  T out;
  __builtin_memcpy(&out, &r, sizeof(T));
  return out;
#endif
}

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
  return here ? a : b;  // see select_by_mask
#else
  // select_by_mask's operations written out again, not a call to it: with
  // the call GCC 12 scheduled the host forms that select (TRSM, POTRF,
  // GETRS) differently, unmeasured.
  using Bits = select_mask_t<T>;
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

/// The select_by_mask mask of T's width for "row p is row i" (p, i >= 0),
/// from integer arithmetic: p ^ i is zero only where they are equal, minus
/// one makes that one negative, and the arithmetic shift spreads its sign
/// bit. With the mask from a compare (p == i, select_bits), GCC 12 on
/// AVX-512 made each select two blends with zero under mask registers and
/// an OR, and kept the masks of a row interchange, one per row, in the 8
/// mask registers, spilling them (kmovb, about 400 a block at n = 8); as
/// integer vectors the masks stay in vector registers and each select is
/// one vpternlogq. Where it pays: swap_rows_by_arithmetic_masks (getrf.hpp).
template <class T, class Index>
KOKKOS_FORCEINLINE_FUNCTION select_mask_t<T> rows_match_mask(const Index p, const Index i) {
  static_assert(sizeof(Index) == sizeof(T) && std::is_signed<Index>::value,
                "rows_match_mask: a signed index as wide as T (lane_index_t)");
  return select_mask_t<T>(Index(Index(p ^ i) - Index(1)) >> (8 * sizeof(Index) - 1));
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
