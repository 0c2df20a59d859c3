// The one vector-loop primitive every ibla kernel is written with.
//
// A team owns a block of matrices; the matrices of the block are the "lanes".
// Kernels describe what one lane does and hand it to for_each_lane:
//  - on host backends the lanes are contiguous in memory and the loop is a
//    `#pragma omp simd` loop, so each lane becomes one SIMD element (GCC does
//    not vectorise Kokkos' ThreadVectorRange well: 2.3 vs 16.5 GFLOP/s measured
//    on 8x8 DGEMM);
//  - on device backends the lanes become the threads of the team
//    (Kokkos::TeamVectorRange), so neighbouring threads touch neighbouring
//    addresses and loads coalesce.
// The choice is made at compile time by the backend being compiled for.
#pragma once

#include <Kokkos_Core.hpp>

#include <type_traits>

#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(__SYCL_DEVICE_ONLY__)
#define IBLA_IMPL_DEVICE_PASS 1
#else
#define IBLA_IMPL_DEVICE_PASS 0
#endif

namespace ibla {

/// A lane count known at compile time (full blocks) ...
template <int L>
using lanes_c = std::integral_constant<int, L>;

/// The value of a count or stride that is either a plain integer or a
/// std::integral_constant. Device code must not call integral_constant's
/// conversion operator: it is a host-only constexpr function for nvcc
/// (without --expt-relaxed-constexpr).
template <class X>
KOKKOS_FORCEINLINE_FUNCTION constexpr auto value_of(const X& x) {
  if constexpr (std::is_arithmetic<X>::value) {
    return x;
  } else {
    return X::value;
  }
}

/// Runs f(lane) for lane in [0, count). count is an int or a lanes_c<L>; with
/// lanes_c<L> the trip count is a compile-time constant. Lanes are independent:
/// f(l) may only touch data of lane l. Every call made inside one team
/// operation maps lane l to the same thread, so no barrier is needed between
/// calls; team_sync() publishes the results to the whole team at the end.
template <class Member, class Count, class F>
KOKKOS_FORCEINLINE_FUNCTION void for_each_lane(const Member& member, Count count, const F& f) {
#if IBLA_IMPL_DEVICE_PASS
  Kokkos::parallel_for(Kokkos::TeamVectorRange(member, int(value_of(count))), f);
#else
  // One host thread does the whole block: the lanes are SIMD elements, and a
  // block is too small to split further.
  if (member.team_rank() != 0) return;
  const int n = count;
#pragma omp simd
  for (int l = 0; l < n; ++l) f(l);
#endif
}

/// Makes the results of a team operation visible to every thread of the team.
/// Free when the team has one thread, as in ibla's own batch-level kernels.
template <class Member>
KOKKOS_FORCEINLINE_FUNCTION void team_sync(const Member& member) {
  if (member.team_size() > 1) member.team_barrier();
}

}  // namespace ibla
