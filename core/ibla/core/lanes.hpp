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

// Full unrolling of the small tile loops (see gemm_tile, trsm_tile, potrf_panel). nvcc defines
// __GNUC__ but does not know "GCC unroll" (warning #1675-D).
#if defined(__clang__) || defined(__CUDACC__)
#define IBLA_IMPL_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define IBLA_IMPL_UNROLL _Pragma("GCC unroll 32")
#else
#define IBLA_IMPL_UNROLL
#endif

// A host form of a kernel kept out of line where several forms share one
// dispatch (see getrf_block): inlined together, GCC's register allocation
// of the whole dispatch spilled the general form's loop state (GETRF,
// random input, n = 8, L = 16: 0.88x).
#if defined(__GNUC__) || defined(__clang__)
#define IBLA_IMPL_HOST_NOINLINE __attribute__((noinline))
#else
#define IBLA_IMPL_HOST_NOINLINE
#endif

namespace ibla {

/// A lane count known at compile time (full blocks) ...
template <int L>
using lanes_c = std::integral_constant<int, L>;

/// ... and one known only at run time but at most L (the partial last block
/// of a batch). The register-tiled host kernels run their vector form (lane
/// loop inside every statement) only for lanes_c<L>, and the per-lane form
/// (each lane runs the whole tile) for lanes_upto<L>: a vector form for a
/// runtime lane count compiled to masked loops that made up about 2/3 of
/// the compile time of TRSM (27 s vs 12 s for one instantiation at -O2), for
/// one block of the batch. Both forms do the same operations in the same
/// order for a lane, so a matrix gets the same bits whether it falls in a
/// full block or in the last one (test_determinism checks it).
template <int L>
struct lanes_upto {
  int n;
};

/// The compile-time bound of a lane count: L for lanes_c<L> and
/// lanes_upto<L>, 0 for a plain int (no bound known).
template <class Count>
struct max_lanes : std::integral_constant<int, 0> {};
template <int L>
struct max_lanes<lanes_c<L>> : std::integral_constant<int, L> {};
template <int L>
struct max_lanes<lanes_upto<L>> : std::integral_constant<int, L> {};

/// L for lanes_c<L> (a full block: the vector forms of the kernels), 0 for
/// every other count.
template <class Count>
struct fixed_lanes : std::integral_constant<int, 0> {};
template <int L>
struct fixed_lanes<lanes_c<L>> : std::integral_constant<int, L> {};

template <class X>
struct is_lanes_upto : std::false_type {};
template <int L>
struct is_lanes_upto<lanes_upto<L>> : std::true_type {};

/// The value of a count or stride that is either a plain integer or a
/// std::integral_constant. Device code must not call integral_constant's
/// conversion operator: it is a host-only constexpr function for nvcc
/// (without --expt-relaxed-constexpr).
template <class X>
KOKKOS_FORCEINLINE_FUNCTION constexpr auto value_of(const X& x) {
  if constexpr (std::is_arithmetic<X>::value) {
    return x;
  } else if constexpr (is_lanes_upto<X>::value) {
    return x.n;
  } else {
    return X::value;
  }
}

/// Runs f(lane) for lane in [0, count). count is an int, a lanes_c<L> (the
/// trip count is then a compile-time constant) or a lanes_upto<L>. Lanes are independent:
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
  const int n = int(value_of(count));
#pragma omp simd
  for (int l = 0; l < n; ++l) f(l);
#endif
}

/// The lane (0 .. vector_length - 1) a thread stands for, in a device team
/// of that vector length whose threads each keep one lane's state across
/// team barriers (see for_each_lane_group): ThreadVectorRange gives each
/// vector thread one index of a range as long as the vector. Device code
/// only: on host one thread runs every index.
template <class Member>
KOKKOS_FORCEINLINE_FUNCTION int team_vector_lane(const Member& member, const int vector_length) {
  int lane = 0;
  Kokkos::parallel_for(Kokkos::ThreadVectorRange(member, vector_length),
                       [&](const int v) { lane = v; });
  return lane;
}

/// Makes the results of a team operation visible to every thread of the team.
/// Free when the team has one thread, as in ibla's own batch-level kernels.
template <class Member>
KOKKOS_FORCEINLINE_FUNCTION void team_sync(const Member& member) {
  if (member.team_size() > 1) member.team_barrier();
}

}  // namespace ibla
