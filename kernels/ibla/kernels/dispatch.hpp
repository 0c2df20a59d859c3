// The batch-level machinery shared by every operation: choosing the block
// size, validating Views, and running one team per block of matrices.
#pragma once

#include <ibla/core/error.hpp>
#include <ibla/core/lanes.hpp>
#include <ibla/core/types.hpp>
#include <ibla/kernels/streaming_stores.hpp>
#include <ibla/layouts/lane_block.hpp>
#include <ibla/layouts/layouts.hpp>

#include <Kokkos_Core.hpp>

#include <initializer_list>
#include <type_traits>
#include <utility>

namespace ibla {

/// True for execution spaces whose lanes are SIMD elements of one thread.
template <class ExecSpace>
inline constexpr bool is_host_space_v =
    Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

/// Matrices per block when no operand is block-interleaved: one 64-byte
/// vector of lanes on host (one AVX-512 register, two AVX2 ones), one warp on
/// device.
template <class T, class ExecSpace>
inline constexpr int default_block_lanes = is_host_space_v<ExecSpace> ? int(64 / sizeof(T)) : 32;

namespace detail {

/// Host batch forms that run a matrix at a time (GemmSmallMatrices,
/// TrsmSmallMatrices) give each index of their range this many consecutive
/// matrices: with a matrix an index, each a call of the functor from
/// Kokkos' loop, GEMM n = 2 took 13.7 us against 8.2 for a plain OpenMP
/// loop over the same kernel.
inline constexpr index_t small_matrices_per_index = 16;

/// The indices such a form's range has for a batch.
KOKKOS_INLINE_FUNCTION constexpr index_t small_matrices_indices(const index_t batch) {
  return (batch + small_matrices_per_index - 1) / small_matrices_per_index;
}

/// The matrices [first, end) of index `index` of such a range.
struct MatrixRange {
  index_t first, end;
};
KOKKOS_INLINE_FUNCTION constexpr MatrixRange small_matrices_of_index(const index_t index,
                                                                     const index_t batch) {
  const index_t first = index * small_matrices_per_index;
  return {first, first + small_matrices_per_index < batch ? first + small_matrices_per_index : batch};
}

/// L of the first block-interleaved View type among Views, else the default.
template <class T, class ExecSpace, class... Views>
constexpr int choose_block_lanes() {
  int lanes = 0;
  ((lanes = (lanes == 0 ? block_lanes_of<Views>::value : lanes)), ...);
  return lanes != 0 ? lanes : default_block_lanes<T, ExecSpace>;
}

struct NamedLanes {
  const char* name;
  int lanes;  // L, or 0 when not block-interleaved
};

/// Every block-interleaved operand must use the same L.
inline void require_same_block_lanes(const char* routine, std::initializer_list<NamedLanes> ops) {
  const NamedLanes* first = nullptr;
  for (const auto& op : ops) {
    if (op.lanes == 0) continue;
    if (first == nullptr) {
      first = &op;
    } else if (op.lanes != first->lanes) {
      fail(routine, op.name, "LayoutBlockInterleaved<", op.lanes, "> but ", first->name,
           " is LayoutBlockInterleaved<", first->lanes,
           ">: all block-interleaved operands of one call must use the same L");
    }
  }
}

template <class View>
NamedLanes named(const char* name, const View&) {
  return NamedLanes{name, block_lanes_of<View>::value};
}

/// The compile-time side of require_same_block_lanes: whether the
/// block-interleaved types among Views share one L. A call that mixes two
/// always throws there, so each operation launches its kernels only under
/// `if constexpr (block_lanes_agree<...>())`: such a call (an error test, a
/// caller's mistake) instantiates no kernel. Without it, each refused call
/// compiled a whole set of kernels, for every order: test_posv.cpp's three
/// took 23% of its compile time (g++ 12, -O1).
template <class... Views>
constexpr bool block_lanes_agree() {
  int lanes = 0;
  bool agree = true;
  for (const int l : {block_lanes_of<Views>::value...}) {
    if (l == 0) continue;
    if (lanes == 0) lanes = l;
    agree = agree && l == lanes;
  }
  return agree;
}

template <class ExecSpace, class View>
constexpr void static_check_view() {
  static_assert(Kokkos::is_view<View>::value, "ibla: batch operands must be Kokkos::Views");
  static_assert(View::rank >= 1 && View::rank <= 3, "ibla: batch Views have rank 1, 2 or 3");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "ibla: a View is not accessible from the execution space of the call");
}

template <class View>
constexpr void static_check_writable() {
  static_assert(!std::is_const<typename View::value_type>::value,
                "ibla: an output View has a const value type");
}

inline void require_extent(const char* routine, const char* name, int dim, index_t got,
                           index_t expected, const char* what) {
  require(got == expected, routine, name, "extent(", dim, ") = ", got, " but ", what, " is ",
          expected);
}

/// A View whose data pointer is null while its extents are not (a
/// default-constructed View passed by mistake).
template <class View>
void require_allocated(const char* routine, const char* name, const View& v) {
  // The product of the extents, not v.size(): the mdspan-based View (Kokkos
  // >= 4.6.99) reports size() == 0 whenever its data pointer is null.
  size_t elements = 1;
  for (unsigned r = 0; r < unsigned(View::rank); ++r) elements *= size_t(v.extent(r));
  require(elements == 0 || v.data() != nullptr, routine, name,
          "is not allocated (null data with ", elements, " elements)");
}

/// A: a rank-3 View (batch, n, n) of square matrices.
template <class AV>
void require_square(const char* routine, const char* name, const AV& A) {
  static_assert(AV::rank == 3, "ibla: the matrix operand is a rank-3 View (batch, n, n)");
  require(A.extent(1) == A.extent(2), routine, name, "is not square: extent(1) = ", A.extent(1),
          ", extent(2) = ", A.extent(2));
}

/// info: a rank-1 int View with one entry per problem.
template <class IV>
void require_info_view(const char* routine, const IV& info, index_t batch) {
  static_assert(IV::rank == 1, "ibla: info is a rank-1 View (batch)");
  static_assert(std::is_same<typename IV::non_const_value_type, int>::value,
                "ibla: info holds int");
  require_extent(routine, "info", 0, index_t(info.extent(0)), batch, "the batch count of A");
  require_allocated(routine, "info", info);
}

/// B: rank-3 (batch, n, nrhs) or rank-2 (batch, n) right-hand sides for the
/// n x n matrices of A.
template <class AV, class BV>
void require_rhs(const char* routine, const AV& A, const BV& B) {
  static_assert(BV::rank == 2 || BV::rank == 3,
                "ibla: B is a rank-3 View (batch, n, nrhs) or rank-2 (batch, n)");
  require_extent(routine, "B", 0, index_t(B.extent(0)), index_t(A.extent(0)),
                 "the batch count of A");
  require_extent(routine, "B", 1, index_t(B.extent(1)), index_t(A.extent(1)),
                 "the order n of A");
  require_allocated(routine, "B", B);
}

/// The team member ibla's own host kernels see: for_each_block runs host
/// teams of one thread, and saying so at compile time spares for_each_lane
/// and team_sync asking the team at every statement (the rank check, three
/// dependent loads, was 8% of a 2 x 2 GEMM). Users' team kernels pass their
/// Kokkos member and keep the checks.
struct HostSoloMember {
  KOKKOS_FORCEINLINE_FUNCTION constexpr int team_rank() const { return 0; }
  KOKKOS_FORCEINLINE_FUNCTION constexpr int team_size() const { return 1; }
  KOKKOS_FORCEINLINE_FUNCTION void team_barrier() const {}
};

/// How the host blocks of a batch-level kernel store their outputs.
/// streamed: some outputs by streaming stores (streaming_stores.hpp), which
/// every host team then fences at its end; for_each_block gives each host
/// thread a single team, so that the fence, which waits for the last
/// stores to reach memory, comes once a thread. A fence a team of the
/// usual size (host_team_elements) took back most of what the streaming
/// stores saved: GESV micro-driver, 10^4 diagonally dominant problems, L =
/// 8 doubles, 2 threads, medians of 401 calls, microseconds, flushed n = 2
/// 16.1-17.1 plain, 13.4-13.9 streamed with a fence a team, 12.3-12.6 with
/// one team a thread; n = 3 27.6-28.6, 20.3-20.5, 18.0-19.2. One team a
/// thread with plain stores: 16.2-16.4 and 27.6-28.9.
enum class HostStores { cached, streamed };

/// Whether a host block functor runs a team's blocks itself:
/// Op::run_blocks(member, begin, end) for the matrices [begin, end), begin
/// a multiple of L, once a team, instead of op(member, first, lanes) once a
/// block, so that what it sets up for a block is set up once for them all
/// (PackedBlocks: its scratch Views and the kernel made over them).
template <class Op, class = void>
struct runs_block_ranges : std::false_type {};
template <class Op>
struct runs_block_ranges<Op, std::enable_if_t<Op::runs_block_ranges>> : std::true_type {};

/// Runs op(member, first, lanes) once per block of L consecutive matrices,
/// blocks_per_team consecutive blocks per team; lanes is lanes_c<L> for full
/// blocks and lanes_upto<L> for the last partial one (bit-identical results
/// either way; see lanes.hpp). On host, op.run_blocks once a team where op
/// runs its blocks itself (runs_block_ranges).
template <int L, class Op, HostStores Stores = HostStores::cached>
struct BlockLoop {
  Op op;
  index_t batch;
  index_t blocks_per_team;
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const index_t begin = index_t(member.league_rank()) * blocks_per_team * L;
    const index_t end   = begin + blocks_per_team * L < batch ? begin + blocks_per_team * L : batch;
#if IBLA_IMPL_DEVICE_PASS
    const Member& team = member;
#else
    const HostSoloMember team;
#endif
    // Counted in blocks, first = block * L: the compiler then sees that
    // first is a multiple of L, and the layouts' first / L and first % L
    // (lane_block) fold to block and 0 instead of a signed division with
    // its fix-ups for every operand of every block.
#if !IBLA_IMPL_DEVICE_PASS
    if constexpr (runs_block_ranges<Op>::value) {
      op.run_blocks(team, begin, end);
    } else
#endif
    {
      for (index_t block = begin / L; block * L < end; ++block) {
        const index_t first     = block * L;
        const index_t remaining = batch - first;
        if (remaining >= L) {
          op(team, first, lanes_c<L>{});
        } else {
          op(team, first, lanes_upto<L>{int(remaining)});
        }
      }
    }
    if constexpr (Stores == HostStores::streamed) impl::fence_streaming_stores();
  }
};

constexpr int vector_length_for(int lanes) {
  int v = 1;
  while (v < lanes && v < 32) v *= 2;
  return v;
}

/// The team functor of for_each_lane_group.
template <int S, class Op>
struct LaneGroupLoop {
  Op op;
  index_t batch;
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const index_t first = index_t(member.league_rank()) * S;
    op(member, first, batch - first < S ? int(batch - first) : S);
  }
};

/// Elements (of all operands) a host team works through per league index at
/// least: blocks of tiny problems are grouped until they reach it. A league
/// index (a team member made, a rendezvous) costs about as much as a 2 x 2
/// GEMM block of 4 matrices: grouping took that GEMM from 0.84 to 1.38
/// GFLOP/s (one thread, batch in L3, L = 4).
inline constexpr index_t host_team_elements = 2048;

/// The elements one problem has in each of these Views (all but the batch
/// extent), summed.
template <class... Views>
index_t problem_elements(const Views&... views) {
  auto one = [](const auto& v) {
    index_t e = 1;
    for (unsigned r = 1; r < unsigned(std::decay_t<decltype(v)>::rank); ++r) e *= index_t(v.extent(r));
    return e;
  };
  return (index_t(0) + ... + one(views));
}

/// Runs op over the batch in blocks of L matrices. elements_per_problem (the
/// elements of every operand of one problem) sizes the groups of blocks a
/// host team runs in a row; on device every team runs one block. Stores:
/// see HostStores.
template <int L, HostStores Stores = HostStores::cached, class ExecSpace, class Op>
void for_each_block(const ExecSpace& exec, const char* label, index_t batch,
                    index_t elements_per_problem, const Op& op) {
  if (batch <= 0) return;
  const index_t nblocks = (batch + L - 1) / L;
  index_t per_team      = 1;
  if constexpr (is_host_space_v<ExecSpace> && Stores == HostStores::streamed) {
    // One team a thread (see HostStores).
    const index_t threads = index_t(exec.concurrency());
    per_team              = (nblocks + threads - 1) / threads;
  } else if constexpr (is_host_space_v<ExecSpace>) {
    const index_t block_elements = index_t(L) * (elements_per_problem > 0 ? elements_per_problem : 1);
    per_team = host_team_elements / block_elements;
    // Enough groups left for every thread to take several (load balance).
    const index_t most = nblocks / (index_t(16) * index_t(exec.concurrency()));
    if (per_team > most) per_team = most;
    if (per_team < 1) per_team = 1;
  }
  const index_t teams = (nblocks + per_team - 1) / per_team;
  // Host: one thread per team, the lanes are its SIMD elements. Device: the
  // lanes of a block are the vector threads of the team.
  constexpr int vector_length = is_host_space_v<ExecSpace> ? 1 : vector_length_for(L);
  Kokkos::TeamPolicy<ExecSpace> policy(exec, int(teams), 1, vector_length);
  Kokkos::parallel_for(label, policy, BlockLoop<L, Op, Stores>{op, batch, per_team});
}

/// Runs op(member, first, count) once per group of S consecutive matrices
/// [first, first + count) of the batch, count = S but in the last group, one
/// team per group: S vector threads, one per lane (neighbouring threads,
/// neighbouring matrices, so their loads coalesce), times threads_per_lane
/// team ranks, which split the work on each matrix among them. For device
/// kernels whose threads cooperate on a block (GEMM's tiles, GETRF's rows);
/// the team-level API and for_each_block give a block one thread per lane.
/// MaxThreads bounds S * threads_per_lane; with MinTeams it is the kernel's
/// launch bound: the compiler may give a thread 64K / (MaxThreads *
/// MinTeams) registers, so that MinTeams teams fit an SM's register file
/// at once. scratch_bytes: the team's shared memory.
template <int S, int MaxThreads, int MinTeams = 1, class ExecSpace, class Op>
void for_each_lane_group(const ExecSpace& exec, const char* label, index_t batch,
                         int threads_per_lane, size_t scratch_bytes, const Op& op) {
  static_assert(!is_host_space_v<ExecSpace>, "for_each_lane_group: device execution spaces only");
  static_assert(S == vector_length_for(S), "for_each_lane_group: S is a power of two up to 32");
  if (batch <= 0) return;
  const index_t groups = (batch + S - 1) / S;
  Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<MaxThreads, MinTeams>> policy(
      exec, int(groups), threads_per_lane, S);
  if (scratch_bytes > 0) policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes));
  Kokkos::parallel_for(label, policy, LaneGroupLoop<S, Op>{op, batch});
}

/// Whether groups of S lanes (for_each_lane_group) stay inside the blocks of
/// the batch's layouts: S divides block_lanes, the L of choose_block_lanes
/// (that of the block-interleaved operands, else the default).
constexpr bool lane_groups_fit(int S, int block_lanes) {
  return block_lanes == 0 || block_lanes % S == 0;
}

}  // namespace detail
}  // namespace ibla
