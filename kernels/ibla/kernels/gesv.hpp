// Batched LU solves (LAPACK dgetrs / dgesv semantics per problem):
//   getrs: B = op(A)^{-1} B with A = P^T L U already factored by getrf;
//   gesv:  getrf on A, then getrs for the problems whose info is 0. Where
//          info > 0, A holds the factorization and B is left untouched
//          (dgesv factors but does not solve).
// GESV is one pass over the data: one team per block factors the block and
// solves it (row interchanges, then the two triangular solves) while the
// block is still in cache, instead of separate kernels over the whole batch.
// The row interchanges of B are per lane (each problem has its own pivots):
// every lane reads and writes its own pivot row through its own index, so
// the lanes of a block stay one SIMD stream, as in getrf.
#pragma once

#include <ibla/core/error.hpp>
#include <ibla/core/lanes.hpp>
#include <ibla/core/types.hpp>
#include <ibla/kernels/dispatch.hpp>
#include <ibla/kernels/getrf.hpp>
#include <ibla/kernels/pack.hpp>
#include <ibla/kernels/static_switch.hpp>
#include <ibla/kernels/streaming_stores.hpp>
#include <ibla/kernels/trsm.hpp>
#include <ibla/layouts/lane_block.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

#include <type_traits>

namespace ibla {
namespace impl {

/// Swaps rows k and ipiv(k) - 1 of columns [j0, j0 + NR) of B for
/// k = 0 .. n-1 (Forward, dlaswp with incx = 1) or n-1 .. 0 (backward,
/// incx = -1), in lanes where keep(l); the other lanes swap row k with
/// itself, i.e. keep B.
template <int NR, bool Forward, class Member, class BB, class BP, class Keep>
KOKKOS_FORCEINLINE_FUNCTION void laswp_tile(const Member& member, const int j0, const BB& B,
                                            const BP& ipiv, const Keep& keep) {
  using T     = std::remove_const_t<typename BB::value_type>;
  const int n = ipiv.rows;
  // The interchange loop stays outside the lane loop: a straight-line lane
  // body is what vectorises across lanes (see getrf.hpp).
  for (int s = 0; s < n; ++s) {
    const int k = Forward ? s : n - 1 - s;
    for_each_lane(member, B.lanes, [&](const int l) {
      const int p = keep(l) ? ipiv(k, 0, l) - 1 : k;
      for (int c = 0; c < NR; ++c) {
        const T x       = B(p, j0 + c, l);
        B(p, j0 + c, l) = B(k, j0 + c, l);
        B(k, j0 + c, l) = x;
      }
    });
  }
}

#if !IBLA_IMPL_DEVICE_PASS
/// The first N pivots of a full host block, read once before the register
/// forms' lane loops into integers as wide as T (see KeptLanes): p(k, 0, l)
/// is ipiv(k, 0, l).
template <int N, int L, class Index>
struct LanePivots {
  Index rows[N][L];
  KOKKOS_FORCEINLINE_FUNCTION Index operator()(const int k, int, const int l) const {
    return rows[k][l];
  }
};

template <int N, class T, int L, class Member, class BP>
KOKKOS_FORCEINLINE_FUNCTION LanePivots<N, L, lane_index_t<T>> lane_wide_pivots(
    const Member& member, lanes_c<L> lanes, const BP& ipiv) {
  LanePivots<N, L, lane_index_t<T>> wide{};
  IBLA_IMPL_UNROLL
  for (int k = 0; k < N; ++k)
    for_each_lane(member, lanes, [&](const int l) { wide.rows[k][l] = ipiv(k, 0, l); });
  return wide;
}

/// Whether any lane of a full host block has a pivot other than its own
/// row (ipiv(k) != k + 1 for some k), keep aside: a lane that keeps its B
/// swaps nothing either way. Rows > 0: ipiv.rows, known at compile time.
template <int Rows = 0, int L, class Member, class BP>
KOKKOS_FORCEINLINE_FUNCTION bool block_swaps_rows(const Member& member, lanes_c<L> lanes,
                                                  const BP& ipiv) {
  int moved[L] = {};
  // A compile-time Rows (3..8) is a trip count GCC unrolls by itself; an
  // unroll pragma would also have unrolled the runtime count of laswp's.
  const int rows = Rows > 0 ? Rows : ipiv.rows;
  for (int k = 0; k < rows; ++k)
    for_each_lane(member, lanes, [&](const int l) { moved[l] |= ipiv(k, 0, l) ^ (k + 1); });
  int any = 0;
  for (int l = 0; l < L; ++l) any |= moved[l];
  return any != 0;
}

/// The interchanges of dlaswp on one lane's column b (N rows, in
/// registers), by selects (swap_rows_in_registers): rows k and ipiv(k) - 1
/// for k = 0 .. N-1 (Forward) or N-1 .. 0, none where !swaps. A pivot row is
/// never above its step, so rows k+1..N-1 are the only candidates.
template <int N, bool Forward, int S = 0, class T, class BP>
KOKKOS_FORCEINLINE_FUNCTION void laswp_registers_lane(T (&b)[N], const BP& ipiv, const int l,
                                                      const bool swaps) {
  if constexpr (S < N) {
    using Index     = lane_index_t<T>;
    constexpr int k = Forward ? S : N - 1 - S;
    // A 64-bit index against 64-bit values: one mask width in the selects.
    // The pivot is loaded in every lane (a lane's ipiv entries exist even
    // where they are not used): a load under the condition became a masked
    // load that GCC's dependence analysis rejected, and the whole lane loop
    // stayed scalar.
    const Index stored = Index(ipiv(k, 0, l) - 1);
    // Masks from compares (L = 0): the arithmetic masks of GETRF's columns
    // (swap_rows_by_arithmetic_masks) were measured here too and not kept,
    // GESV 0.83-1.04x at n = 4..10 and within the spread above
    // (perf_tests/RESULTS.md, 2026-12-04 late night).
    swap_rows_in_registers<k, 0>(b, swaps ? stored : Index(k));
    laswp_registers_lane<N, Forward, S + 1>(b, ipiv, l, swaps);
  }
}

/// Lane l of laswp_registers_host: column j of B.
template <int N, bool Forward, class BB, class BP, class Keep>
struct LaswpRegisterLane {
  using T = std::remove_const_t<typename BB::value_type>;
  const BB& B;
  const BP& ipiv;
  const Keep& keep;
  int j;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int l) const {
    T b[N];
    IBLA_IMPL_UNROLL
    for (int i = 0; i < N; ++i) b[i] = B(i, j, l);
    laswp_registers_lane<N, Forward>(b, ipiv, l, keep(l));
    IBLA_IMPL_UNROLL
    for (int i = 0; i < N; ++i) B(i, j, l) = b[i];
  }
};

/// Orders whose laswp (GETRS Op::T: the interchanges after the solves) runs
/// in registers: the order 4 it was measured at (with getrf_register_order,
/// which has since moved on; GETRS Op::N swaps inside its own register form
/// up to trsm_register_order).
inline constexpr int laswp_register_order = 4;

/// laswp for a full block on host, N = ipiv.rows small: each column of B in
/// registers. laswp_tile stores through each lane's own pivot row, a scalar
/// loop over the lanes on AVX2 (no scatter).
template <int N, bool Forward, class Member, class BB, class BP, class Keep>
KOKKOS_FORCEINLINE_FUNCTION void laswp_registers_host(const Member& member, const BB& B,
                                                      const BP& ipiv, const Keep& keep) {
  using T           = std::remove_const_t<typename BB::value_type>;
  const auto pivots = lane_wide_pivots<N, T>(member, B.lanes, ipiv);
  for (int j = 0; j < B.cols; ++j)
    for_each_lane(member, B.lanes,
                  LaswpRegisterLane<N, Forward, BB, decltype(pivots), Keep>{B, pivots, keep, j});
}

/// Lane l of getrs_registers_host: column j of B swapped (as laswp; not
/// where !Swaps, for blocks whose pivots swap nothing), then solved with L
/// (unit) and U by trsm_left's register steps (as the two trsm_left calls
/// of getrs_masked: same operations, same order, same bits), with the
/// shared reciprocals of U's diagonal.
template <int N, bool Swaps, int L, class BA, class BP, class BB, class Keep>
struct GetrsRegisterLane {
  using T = std::remove_const_t<typename BB::value_type>;
  const BA& A;
  const BP& ipiv;
  const BB& B;
  const Keep& keep;
  int j;
  SharedReciprocals<N, L, T> shared;  // U's diagonal
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int l) const {
    T b[N];
    IBLA_IMPL_UNROLL
    for (int i = 0; i < N; ++i) b[i] = B(i, j, l);
    const bool solve = keep(l);
    if constexpr (Swaps) laswp_registers_lane<N, true>(b, ipiv, l, solve);
    trsm_register_steps<0, true>(b, A, l, UnitDiagonal{});
    trsm_register_steps<0, false>(b, A, l, shared);
    store_register_column(b, B, j, l, solve);
  }
};

/// getrs_masked (Op::N) for a full block on host, N = A.rows small: one lane
/// loop per column of B does its interchanges and both triangular solves in
/// registers, where laswp and the two trsm_left calls took three passes (and
/// their dispatch cost more than the arithmetic at n = 2). GESV with it and
/// getrf_registers_host against the general paths (1-thread micro-driver,
/// double, 4 x 10^4 problems, nrhs 1, medians of 41): 2-3.4x at n = 1..3,
/// 1.4-2.1x at n = 4 on random input.
/// Swaps: the interchanges of ipiv (lane_wide_pivots), else none (a block
/// whose pivots are all k + 1).
/// The reciprocals of U's diagonal are computed first (see
/// register_columns_sharing_reciprocals), and a block where one of them
/// overflows is left untouched (false returned) to the tile form, which
/// divides there. Past trsm_register_order (one right-hand side, see
/// getrs_register_order) that took a two-pass form until 2026-11-30, whose
/// second unrolled lane loop, dividing, doubled the code of each order:
/// GETRS's orders 9..24 were 2.8 of the 6.4 MB of the tests' triangular
/// solve unit (1.6 MB after; the unit compiled in 164 s instead of 230 at
/// -O1, side by side). Batch-level GETRS (micro-driver, Op::N, one
/// right-hand side, 10^4 problems, 2 threads, medians of 41 calls and of 3
/// alternated runs, same checksums), two-pass -> this: L = 8 doubles
/// 0.96-1.12x at n = 10, 13, 16, 20, 24 (random or diagonally dominant,
/// flushed or in L3; 0.96 at n = 20 diagonally dominant in L3 only), L = 16
/// floats 1.01-1.12x.
template <int N, bool Swaps, int L, class Member, class BA, class BP, class BB, class Keep>
KOKKOS_FORCEINLINE_FUNCTION bool getrs_registers_host(const Member& member, const BA& A,
                                                      const BP& ipiv, const BB& B,
                                                      const Keep& keep, BlockPrefetch& prefetch) {
  using T           = std::remove_const_t<typename BB::value_type>;
  const auto pivots = [&] {
    if constexpr (Swaps) {
      return lane_wide_pivots<N, T>(member, B.lanes, ipiv);
    } else {
      return ipiv;  // not read
    }
  }();
  // Constant offsets from the blocks' origins (see fixed_order_block).
  const auto Af = fixed_order_block<N>(A);
  const auto Bf = fixed_order_block<N>(B);
  return register_columns_sharing_reciprocals<N, L, T>(
      member, B.lanes, B.cols, prefetch, /*unit=*/false, Af,
      [&](const int j, auto reciprocals) {
        return GetrsRegisterLane<N, Swaps, L, decltype(Af), decltype(pivots), decltype(Bf), Keep>{
            Af, pivots, Bf, keep, j, reciprocals};
      });
}

/// getrs_registers_host, without the interchanges for a block whose pivots
/// are all k + 1 (every block of diagonally dominant input): their compares
/// and selects were about a sixth of GESV's instructions at n = 5
/// (callgrind, L = 8 doubles: 1206 -> 1055 a block). Measured (GESV
/// micro-driver, double, 10^4 problems, 2 threads, 5 alternated runs,
/// medians), diagonally dominant input, L = 8 / 16: n = 3 1.08 / 1.13x, 5
/// 1.04 / 1.18x, 8 1.23 / 1.15x; random input (every block swaps, so the
/// check is extra work) 0.93-1.08x at n = 2, 5, 8, inside the runs'
/// spread. The pivots are checked only where this thread's last GETRF block
/// swapped no rows (getrf_last_block_swapped: in GESV, this block's), so
/// that random input, where nearly every block swaps, skips the check; the
/// hint only picks whether to look, never the result. Out of line: inlined
/// into the batch loop with the other orders, GCC's register allocation of
/// the whole made n = 2 slower (370 -> 402 instructions a block). Not at
/// n <= 2, whose one interchange costs less than the check (0.93x at L =
/// 8).
template <int N, int L, class Member, class BA, class BP, class BB, class Keep>
IBLA_IMPL_HOST_NOINLINE bool getrs_registers_host_skipping_swaps(const Member& member,
                                                                 const BA& A, const BP& ipiv,
                                                                 const BB& B, const Keep& keep,
                                                                 BlockPrefetch& prefetch) {
  if (!getrf_last_block_swapped() && !block_swaps_rows<N>(member, B.lanes, ipiv))
    return getrs_registers_host<N, false, L>(member, A, ipiv, B, keep, prefetch);
  return getrs_registers_host<N, true, L>(member, A, ipiv, B, keep, prefetch);
}

/// Orders up to this one of GETRS (Op::N) take getrs_registers_host on
/// host: trsm_register_order, and up to 16 for one right-hand side in
/// blocks whose row stride is the compile-time L (LayoutBlockInterleaved).
/// At 9..12 the tile form (laswp and two trsm_left) took about as many
/// instructions as the factorization before it (GESV n = 10, L = 8
/// doubles, diagonally dominant: 2,400 of 5,336 a block). Callgrind,
/// instructions a block, diagonally dominant, L = 8 / 16: n = 9 4661 ->
/// 2601 / 7938 -> 4732, 10 5336 -> 3165 / 9428 -> 5844, 12 7672 -> 5020 /
/// 12896 -> 8474; random input, n = 10, L = 8: 16377 -> 13752. GESV
/// (ibla_bench --ops gesv --impls ibla,kk-simd, double, 10^4 problems, 2
/// threads, 3 alternated runs of each build; ibla over Kokkos Kernels in the
/// same run, median of the runs), diagonally dominant, n = 9, 10, 11, 12:
/// flushed 1.50x, 1.12x, 1.18x, 1.10x, warm 1.52x, 1.23x, 1.31x, 1.08x (n =
/// 8 and 16, unchanged: 0.96-1.14x); random input (its micro-driver, L =
/// 8, flushed, medians of 3) n = 10 8.2 -> 9.7, 12 10.4 -> 11.2 GFLOP/s.
/// Its cost is compile time: each order is two more unrolled lane loops
/// (with and without interchanges) per type and L; the tests' two solver
/// instance units compiled 28 s longer (99 -> 109 s, 150 -> 168 s), where
/// the reciprocal-sharing form for several right-hand sides too had made
/// it 73 s. So several right-hand sides and a runtime row stride keep the
/// tile form.
/// Raised from 12 to 16: with one right-hand side the tile form ran 2-3x
/// slower than this form at the orders just above (a micro-driver calling
/// team::getrs on 4 blocks in L1/L2 in one kernel, 1 thread, double,
/// minimum of 31 runs, ns a problem, L = 8 / 16; build 12 -> build 16):
/// diagonally dominant n = 13 20.5 -> 7.1 / 16.8 -> 7.5, 14 20.8 -> 9.9 /
/// 18.2 -> 9.8, 16 24.0 -> 14.2 / 23.6 -> 14.2; random n = 13 32.7 ->
/// 14.9 / 29.5 -> 11.9, 16 39.1 -> 23.0 / 38.4 -> 19.8. The gain went on
/// (n = 20 37 -> 19-25, 24 51 -> 33-34), but the compile time grows with
/// the square of the order: up to 16 the tests' native solver instance
/// unit compiled 19 CPU-s longer (89 -> 108 s at -O1, side by side).
/// Raised from 16 to 24 (TRSM's one-column order,
/// trsm_one_column_register_order) once GETRF's general form had got
/// faster on diagonally dominant input (getrf_panel_without_interchanges):
/// the tile form's solves were then twice Kokkos Kernels' two triangular
/// solves at n = 20 (GESV micro-driver, 10^4 problems, 2 threads, L = 8
/// doubles, in L3: about 150 us of 1400 against 70), and GESV was behind
/// it there. GESV micro-driver (medians of 201 calls, alternated, same
/// checksums, Intel Xeon VM with AVX-512, GFLOP/s, build 16 -> build 24),
/// diagonally dominant, in L3: n = 17 38.1-38.3 -> 41.8-42.5, 20 40.2-41.1
/// -> 43.9-44.7, 24 43.0-45.8 -> 47.8-48.0; flushed n = 17 23.2-23.4 ->
/// 24.7-24.9, 20 28.5 -> 29.4-29.8, 24 28.8-29.0 -> 29.5-30.4; random input
/// n = 20 1.01-1.04x, 24 0.98-1.01x. Compile cost: the tests' native solver
/// instance unit 86 -> 123 CPU-s (-O1, side by side).
template <class RowStride>
inline constexpr int getrs_register_order = trsm_one_column_register_order<RowStride>;
#endif

template <bool Forward, class Member, class BB, class BP, class Keep>
KOKKOS_INLINE_FUNCTION void laswp(const Member& member, const BB& B, const BP& ipiv,
                                  const Keep& keep) {
#if !IBLA_IMPL_DEVICE_PASS
  if constexpr (fixed_lanes<typename BB::lane_count>::value > 0) {
    // Only the thread that runs the host lane loops (see getrf_block).
    if (member.team_rank() != 0) return;
    if (ipiv.rows >= 1 && ipiv.rows <= laswp_register_order &&
        detail::host_order_compiled(ipiv.rows)) {
      detail::static_switch<laswp_register_order>(ipiv.rows, [&](auto order) {
        if constexpr (detail::host_order_specialised<decltype(order)::value>)
          laswp_registers_host<decltype(order)::value, Forward>(member, B, ipiv, keep);
      });
      return;
    }
    // A block whose pivots are all k + 1 (every block of diagonally
    // dominant input) swaps nothing, and laswp_tile's per-lane stores are
    // scalar: GESV of order 10..16 on such input spent more time here and
    // in the solves than in the factorization.
    if (!block_swaps_rows(member, B.lanes, ipiv)) return;
  }
#endif
  constexpr int NR = getrf_tile_cols;
  const int nrhs   = B.cols;
  for (int j0 = 0; j0 < nrhs; j0 += NR) {
    const int nr = nrhs - j0 < NR ? nrhs - j0 : NR;
    detail::static_switch<NR>(nr, [&](auto cols) {
      laswp_tile<decltype(cols)::value, Forward>(member, j0, B, ipiv, keep);
    });
  }
}

/// dgetrs on one block, storing only in lanes where keep(l); the prefetch
/// of the next block is spread over the first triangular solve.
template <class Member, class BA, class BP, class BB, class Keep>
KOKKOS_INLINE_FUNCTION void getrs_masked(const Member& member, Op trans, const BA& A,
                                         const BP& ipiv, const BB& B, const Keep& any_keep,
                                         BlockPrefetch& prefetch) {
  using T = std::remove_const_t<typename BB::value_type>;
  if (A.rows == 0 || B.cols == 0) return;
  const auto keep = lane_wide_keep<T>(member, B.lanes, any_keep);
  if (trans == Op::N) {
#if !IBLA_IMPL_DEVICE_PASS
    constexpr int L = fixed_lanes<typename BB::lane_count>::value;
    if constexpr (L > 0) {
      // Only the thread that runs the host lane loops (see getrf_block).
      if (member.team_rank() != 0) return;
      constexpr int register_order = getrs_register_order<typename BA::row_stride>;
      if (A.rows <= (B.cols == 1 ? register_order : trsm_register_order) &&
          detail::host_order_compiled(A.rows)) {
        bool solved = false;  // false: a reciprocal of U's diagonal overflows
        detail::static_switch<register_order>(A.rows, [&](auto order) {
          constexpr int N = decltype(order)::value;
          if constexpr (!detail::host_order_specialised<N>) {
          } else if constexpr (N >= 3) {
            solved = getrs_registers_host_skipping_swaps<N, L>(member, A, ipiv, B, keep, prefetch);
          } else {
            solved = getrs_registers_host<N, true, L>(member, A, ipiv, B, keep, prefetch);
          }
        });
        if (solved) return;
      }
    }
#endif
    // P^T L U X = B: X = U^{-1} L^{-1} (P B).
    laswp<true>(member, B, ipiv, keep);
    trsm_masked(member, Side::Left, Uplo::Lower, Op::N, Diag::Unit, T(1), A, B, keep, prefetch);
    trsm_masked(member, Side::Left, Uplo::Upper, Op::N, Diag::NonUnit, T(1), A, B, keep);
  } else {
    // U^T L^T P X = B: X = P^T L^{-T} U^{-T} B, the interchanges in reverse.
    trsm_masked(member, Side::Left, Uplo::Upper, Op::T, Diag::NonUnit, T(1), A, B, keep,
                prefetch);
    trsm_masked(member, Side::Left, Uplo::Lower, Op::T, Diag::Unit, T(1), A, B, keep);
    laswp<false>(member, B, ipiv, keep);
  }
}

template <class Member, class BA, class BP, class BB, class Keep>
KOKKOS_INLINE_FUNCTION void getrs_masked(const Member& member, Op trans, const BA& A,
                                         const BP& ipiv, const BB& B, const Keep& keep) {
  BlockPrefetch none;
  getrs_masked(member, trans, A, ipiv, B, keep, none);
}

#if !IBLA_IMPL_DEVICE_PASS
/// Square orders up to this one of batch-level GESV with one right-hand
/// side factor and solve each lane's problem in one lane loop on host
/// (gesv_registers_host), in blocks where a lane value is one vector
/// register of 32 (L = 8 doubles, 16 floats on AVX-512); 0 elsewhere.
/// After a block that swapped no row, without interchanges (its lanes that
/// would swap are solved again); after one that did, with them up to
/// gesv_pivoting_register_order. Otherwise getrf_block then getrs_masked.
/// ibla_bench (GESV, L = 8 doubles, 10^4 problems, 2 threads, --reps 21, 4
/// runs alternated with the tree before, medians, GFLOP/s, pairs won),
/// with the kernels of one order (getrf_host_order_kernels): diagonally
/// dominant flushed n = 2 6.4 -> 8.6 (4), 3 13.9 -> 15.1 (4), warm n = 2
/// 7.0 -> 12.5 (4), 3 20.6 -> 27.8 (4); random flushed n = 2 6.1 -> 7.9
/// (4), warm 6.7 -> 10.9 (4). n = 4 since its pivots and info are
/// streaming stores (gesv_host_stores; before them the one loop there ran
/// at 0.95x flushed, 0 of 4): same protocol against the two loops with
/// the streaming stores at n = 2, 3, diagonally dominant flushed 19.0 ->
/// 21.5 (4 of 4), warm 36.9 -> 42.8 (4); random (the two loops after a
/// swap, as before) flushed 0.96x (0), warm 1.04x (4); floats, L = 16, 3
/// runs, diagonally dominant flushed 1.17x, warm 1.18x, random flushed
/// 1.06x. Tried and not kept: n = 5 and 6 (micro-driver in cache 0.92x
/// and 0.85x, and 0.95x at n = 5 with the streaming stores); with
/// interchanges at n = 3 (random input, flushed 0.85-0.90x in two sets,
/// warm 1.25x) and 4 (in cache 0.8x).
template <class T, int L>
inline constexpr int gesv_register_order =
    host_has_wide_register_file && L > 0 && host_registers_per_value<T, L> == 1 ? 4 : 0;
inline constexpr int gesv_pivoting_register_order = 2;

/// How batch-level GESV of order HostOrder (with_getrf_host_order) in
/// blocks of L lanes of T stores: streamed where its full blocks can take
/// the register form, whose pivots and info are streaming stores.
template <class T, int L, int HostOrder>
inline constexpr detail::HostStores gesv_host_stores =
    HostOrder > 0 && HostOrder <= gesv_register_order<T, L> ? detail::HostStores::streamed
                                                            : detail::HostStores::cached;

/// The matrix of a register lane, as the register steps read an operand
/// (A(i, j, l), the lane ignored).
template <int N, class T>
struct RegisterMatrix {
  const T (&a)[N][N];
  KOKKOS_FORCEINLINE_FUNCTION T operator()(const int i, const int j, int) const { return a[i][j]; }
};

/// A lane's pivot rows (0-based, in registers) as laswp_registers_lane
/// reads ipiv (1-based).
template <int N, class Index>
struct RegisterPivots {
  const Index (&rows)[N];
  KOKKOS_FORCEINLINE_FUNCTION Index operator()(const int k, int, int) const { return rows[k] + 1; }
};

/// Lane l of gesv_registers_host: the lane's matrix factored in registers
/// (getrf_register_steps, as getrf_registers_host), then its right-hand side
/// swapped and solved with the factors still in registers (as
/// getrs_registers_host: laswp, L unit, U by the reciprocals of its
/// diagonal; same operations in the same order, so the same bits as
/// getrf_block then getrs_masked). A, ipiv, info and B are stored at the
/// end. again[l]: the lane has a pivot below sfmin (LAPACK divides
/// there), or solves with a diagonal of U whose reciprocal overflows (the
/// tile form divides there): A and B stay untouched, and the caller solves
/// the lane again by gesv_block's general forms.
template <int N, int L, bool Pivoting, class BA, class BB>
struct GesvRegisterLane {
  using T     = std::remove_const_t<typename BA::value_type>;
  using Index = lane_index_t<T>;
  const BA& A;
  const BB& B;
  Index (*pivots)[L];  // the pivot rows, 0-based
  T* statuses;         // info, as a T
  Index* again;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int l) const {
    T a[N][N];
    load_lane_matrix(a, A, l);
    Index pivot_row[N];
    T status    = T(0);  // info, as a T (see getrf_register_steps)
    Index tiny  = 0;
    Index moved = 0;
    if constexpr (Pivoting) {
      getrf_register_steps<0, L>(a, pivot_row, status, tiny);
      IBLA_IMPL_UNROLL
      for (int k = 0; k < N; ++k) moved += pivot_row[k] - Index(k);  // >= 0 each
    } else {
      getrf_register_steps_unpivoted<0, L>(a, status, tiny, moved);
      IBLA_IMPL_UNROLL
      for (int k = 0; k < N; ++k) pivot_row[k] = Index(k);
    }
    const bool solve = status == T(0);  // InfoIsZero
    T b[N];
    IBLA_IMPL_UNROLL
    for (int i = 0; i < N; ++i) b[i] = B(i, 0, l);
    const RegisterMatrix<N, T> factors{a};
    if constexpr (Pivoting)
      laswp_registers_lane<N, true>(b, RegisterPivots<N, Index>{pivot_row}, l, solve);
    trsm_register_steps<0, true>(b, factors, 0, UnitDiagonal{});
    T inv[N][1];
    Index overflow = 0;
    IBLA_IMPL_UNROLL
    for (int r = 0; r < N; ++r) {
      overflow |= Index(reciprocal_overflows(a[r][r]));
      inv[r][0] = T(1) / a[r][r];
    }
    trsm_register_steps<0, false>(b, factors, 0, SharedReciprocals<N, 1, T>{inv});
    const bool redo = (tiny != 0) | (solve & (overflow != 0)) | (!Pivoting & (moved != 0));
    store_lane_matrix(a, A, l, redo);
    IBLA_IMPL_UNROLL
    for (int k = 0; k < N; ++k) pivots[k][l] = pivot_row[k];
    statuses[l] = status;
    store_register_column(b, B, 0, l, solve & !redo);
    again[l] = Index(redo) | (Index(moved != 0) << 1);
  }
};

/// Batch-level GESV (one right-hand side) on a full host block of square
/// N x N matrices, N up to gesv_register_order: one lane loop factors and
/// solves (GesvRegisterLane), where getrf_block then getrs_masked took the
/// factorization's lane loop, then the solve's dispatch, the pivots and
/// the info read back into lane-wide arrays, the reciprocals' lane loop
/// and the solve's lane loop. again[l]: bit 0 for the lanes to solve
/// again (see GesvRegisterLane), bit 1 for those that swap rows.
/// Pivoting false: the steps without interchanges
/// (getrf_register_steps_unpivoted), whose lanes that would swap are
/// solved again. Streamed: the pivots and info by streaming stores (see
/// below); plain where the block is packed scratch (pack.hpp), read back
/// at once.
template <int N, bool Pivoting, bool Streamed, class Member, class BA, class BP, class BB, class BI,
          class Index>
KOKKOS_FORCEINLINE_FUNCTION void gesv_registers_host(const Member& member, const BA& A,
                                                     const BP& ipiv, const BB& B, const BI& info,
                                                     BlockPrefetch& prefetch, Index* again) {
  using T         = std::remove_const_t<typename BA::value_type>;
  constexpr int L = fixed_lanes<typename BA::lane_count>::value;
  static_assert(std::is_same<Index, lane_index_t<T>>::value, "again: lane_index_t<T>");
  const auto Af = fixed_order_block<N>(A);
  const auto Bf = fixed_order_block<N>(B);
  getrf_request_next_block<true, N, L, T>(prefetch);
  Index pivots[N][L];
  T statuses[L];
  for_each_lane(member, A.lanes,
                GesvRegisterLane<N, L, Pivoting, decltype(Af), decltype(Bf)>{Af, Bf, pivots,
                                                                             statuses, again});
  getrf_request_next_block<false, N, L, T>(prefetch);
  // The int outputs in lane loops of their own: stored in the loop above,
  // they made GCC vectorise it with 32-byte vectors (two per lane vector of
  // doubles). GESV never reads them back, so they go to memory by
  // streaming stores (gesv_host_stores): GESV micro-driver, 10^4
  // diagonally dominant problems, L = 8 doubles, 2 threads, medians of 401
  // calls, microseconds, plain -> streamed, flushed n = 2 16.1-17.1 ->
  // 12.3-12.6, 3 27.6-28.6 -> 18.0-19.2; in cache n = 2 13.0-13.1 ->
  // 12.9-13.0, 3 17.6-17.8 -> 16.0-16.2.
  int pivot_rows[N][L];
  int status[L];
  IBLA_IMPL_UNROLL
  for (int k = 0; k < N; ++k)
    for_each_lane(member, A.lanes, [&](const int l) { pivot_rows[k][l] = int(pivots[k][l]) + 1; });
  for_each_lane(member, A.lanes, [&](const int l) { status[l] = int(statuses[l]); });
  if constexpr (Streamed) {
    IBLA_IMPL_UNROLL
    for (int k = 0; k < N; ++k) store_lanes_streaming(ipiv, k, pivot_rows[k]);
    store_lanes_streaming(info, 0, status);
  } else {
    IBLA_IMPL_UNROLL
    for (int k = 0; k < N; ++k)
      for_each_lane(member, A.lanes, [&](const int l) { ipiv(k, 0, l) = pivot_rows[k][l]; });
    for_each_lane(member, A.lanes, [&](const int l) { info(0, 0, l) = status[l]; });
  }
}
#else
// The device pass compiles no host forms.
template <class T, int L, int HostOrder>
inline constexpr detail::HostStores gesv_host_stores = detail::HostStores::cached;
#endif

/// team::gesv with the prefetch of the next block (batch-level GESV);
/// DeviceOrder and HostOrder as for getrf_block.
template <int DeviceOrder = -1, int HostOrder = 0, class Member, class BA, class BP, class BB,
          class BI>
KOKKOS_INLINE_FUNCTION void gesv_block(const Member& member, const BA& A, const BP& ipiv,
                                       const BB& B, const BI& info, BlockPrefetch& prefetch) {
  getrf_block<DeviceOrder, HostOrder>(member, A, ipiv, info, prefetch);
  team_sync(member);
  getrs_masked(member, Op::N, A, ipiv, B, InfoIsZero<BI>{info});
  team_sync(member);
}

}  // namespace impl

namespace team {

/// B = op(A)^{-1} B on one block, A and ipiv holding the LU factorization
/// from getrf (n x n). B is a block of n x nrhs matrices (rank-3 View) or of
/// n-vectors (rank-2 View). trans: Op::N, Op::T (Op::C = Op::T for real
/// types). Every thread of the team calls it; results are visible to the
/// team on return.
template <class Member, class BA, class BP, class BB>
KOKKOS_INLINE_FUNCTION void getrs(const Member& member, Op trans, const BA& A, const BP& ipiv,
                                  const BB& B) {
  impl::getrs_masked(member, trans, A, ipiv, B, impl::AllLanes{});
  team_sync(member);
}

/// getrf then getrs (Op::N) on one block; lanes with info > 0 keep their B.
template <class Member, class BA, class BP, class BB, class BI>
KOKKOS_INLINE_FUNCTION void gesv(const Member& member, const BA& A, const BP& ipiv, const BB& B,
                                 const BI& info) {
  impl::BlockPrefetch none;
  impl::gesv_block(member, A, ipiv, B, info, none);
}

}  // namespace team

namespace impl {
/// Batch-level GETRS; with an info View (IV), the solve of a device GESV
/// whose factorization ran as its own kernel (GetrfTeamRows), where only
/// the lanes whose info is 0 take the solution and the others keep B.
template <class AV, class PV, class BV, class IV = std::nullptr_t>
struct GetrsBlocks {
  Op trans;
  AV A;
  PV ipiv;
  BV B;
  IV info{};
  template <class Member, class Lanes>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, index_t first, Lanes lanes) const {
    // The next block's A (both triangles are read), B and pivots, as for
    // TRSM (TrsmBlocks).
    BlockPrefetch prefetch;
    if (index_t(A.extent(1)) > trsm_prefetch_order)
      prefetch_next_block(prefetch, first, lanes, B.extent(0), A, B, ipiv);
    auto solve = [&](const auto& keep) {
      getrs_masked(member, trans, lane_block(A, first, lanes), lane_block(ipiv, first, lanes),
                   lane_block(B, first, lanes), keep, prefetch);
    };
    if constexpr (std::is_null_pointer<IV>::value) {
      solve(AllLanes{});
    } else {
      const auto info_block = lane_block(info, first, lanes);
      solve(InfoIsZero<decltype(info_block)>{info_block});
    }
    team_sync(member);
  }
};
/// Stores: gesv_host_stores, but cached where the blocks are packed into
/// scratch (pack.hpp), whose pivots and info are read back at once.
template <int DeviceOrder, int HostOrder, detail::HostStores Stores, class AV, class PV, class BV,
          class IV>
struct GesvBlocks {
  AV A;
  PV ipiv;
  BV B;
  IV info;
  template <class Member, class Lanes>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, index_t first, Lanes lanes) const {
    // The next block's A and B are requested during the factorization.
    BlockPrefetch prefetch;
    prefetch_next_block_of_factorization(prefetch, getrf_prefetch_order, first, lanes, A, B);
#if !IBLA_IMPL_DEVICE_PASS
    using T         = typename AV::non_const_value_type;
    constexpr int L = fixed_lanes<Lanes>::value;
    if constexpr (HostOrder > 0 && HostOrder <= gesv_register_order<T, L>) {
      const auto b       = lane_block(B, first, lanes);
      bool& last_swapped = getrf_last_block_swapped();
      if (b.cols == 1 && (!last_swapped || HostOrder <= gesv_pivoting_register_order)) {
        lane_index_t<T> again[L];
        const auto a = lane_block(A, first, lanes);
        const auto p = lane_block(ipiv, first, lanes);
        const auto i = lane_block(info, first, lanes);
        constexpr bool streamed = Stores == detail::HostStores::streamed;
        if (last_swapped) {
          gesv_registers_host<HostOrder, true, streamed>(member, a, p, b, i, prefetch, again);
        } else {
          gesv_registers_host<HostOrder, false, streamed>(member, a, p, b, i, prefetch, again);
        }
        lane_index_t<T> moved = 0;
        for (int l = 0; l < L; ++l) moved |= again[l] & 2;
        last_swapped = moved != 0;
        // One lane at a time, by the forms of the partial last block.
        for (int l = 0; l < L; ++l)
          if (again[l] & 1) {
            const auto one = lanes_upto<L>{1};
            BlockPrefetch none;  // the next block was requested above
            gesv_block<DeviceOrder>(member, lane_block(A, first + l, one),
                                    lane_block(ipiv, first + l, one), lane_block(B, first + l, one),
                                    lane_block(info, first + l, one), none);
          }
        return;
      }
    }
#endif
    gesv_block<DeviceOrder, HostOrder>(member, lane_block(A, first, lanes),
                                       lane_block(ipiv, first, lanes), lane_block(B, first, lanes),
                                       lane_block(info, first, lanes), prefetch);
  }
};
}  // namespace impl

/// Batched solve with an LU factorization from ibla::getrf: op(A(b)) X = B(b).
/// A: rank-3 View (batch, n, n); ipiv: rank-2 int View (batch, n) from getrf;
/// B: rank-3 (batch, n, nrhs) or rank-2 (batch, n), overwritten by X. trans:
/// Op::N or Op::T (Op::C = Op::T). Throws ibla::argument_error, touching no
/// data, when the arguments do not fit together.
template <class ExecSpace, class AV, class PV, class BV>
void getrs(const ExecSpace& exec, Op trans, const AV& A, const PV& ipiv, const BV& B) {
  constexpr const char* routine = "getrs";
  detail::static_check_view<ExecSpace, AV>();
  detail::static_check_view<ExecSpace, PV>();
  detail::static_check_view<ExecSpace, BV>();
  detail::static_check_writable<BV>();
  using T = typename BV::non_const_value_type;
  static_assert(std::is_same<typename AV::non_const_value_type, T>::value,
                "ibla::getrs: A and B must have the same value type");
  const index_t batch = index_t(A.extent(0));
  detail::require_square(routine, "A", A);
  detail::require_rhs(routine, A, B);
  detail::require_allocated(routine, "A", A);
  detail::require_pivots(routine, ipiv, batch, index_t(A.extent(1)));
  detail::require_same_block_lanes(
      routine, {detail::named("A", A), detail::named("ipiv", ipiv), detail::named("B", B)});

  if constexpr (detail::block_lanes_agree<AV, PV, BV>()) {
    if (A.extent(1) == 0 || (BV::rank == 3 && B.extent(2) == 0)) return;
    constexpr int L = detail::choose_block_lanes<T, ExecSpace, AV, PV, BV>();
    detail::for_each_block_of<L>(
        exec, "ibla::getrs", batch, detail::problem_elements(A, B), detail::always_pack{},
        [=](const auto& a, const auto& p, const auto& b) {
          return impl::GetrsBlocks<std::decay_t<decltype(a)>, std::decay_t<decltype(p)>,
                                   std::decay_t<decltype(b)>>{trans, a, p, b};
        },
        impl::read_only(A), impl::read_only(ipiv), impl::read_written(B));
  }
}

/// Batched LU factorization and solve in one pass (LAPACK dgesv per
/// problem): A (batch, n, n) is overwritten by its factors and ipiv (batch,
/// n) by the pivots as by ibla::getrf; B (batch, n, nrhs) or (batch, n) by
/// the solution where info(b) == 0 and left as it was where info(b) > 0.
/// Throws ibla::argument_error, touching no data, when the arguments do not
/// fit together.
template <class ExecSpace, class AV, class PV, class BV, class IV>
void gesv(const ExecSpace& exec, const AV& A, const PV& ipiv, const BV& B, const IV& info) {
  constexpr const char* routine = "gesv";
  detail::static_check_view<ExecSpace, AV>();
  detail::static_check_view<ExecSpace, PV>();
  detail::static_check_view<ExecSpace, BV>();
  detail::static_check_view<ExecSpace, IV>();
  detail::static_check_writable<AV>();
  detail::static_check_writable<PV>();
  detail::static_check_writable<BV>();
  detail::static_check_writable<IV>();
  using T = typename BV::non_const_value_type;
  static_assert(std::is_same<typename AV::non_const_value_type, T>::value,
                "ibla::gesv: A and B must have the same value type");
  static_assert(std::is_floating_point<T>::value, "ibla::gesv: A holds float or double");
  const index_t batch = index_t(A.extent(0));
  detail::require_square(routine, "A", A);
  detail::require_rhs(routine, A, B);
  detail::require_allocated(routine, "A", A);
  detail::require_pivots(routine, ipiv, batch, index_t(A.extent(1)));
  detail::require_info_view(routine, info, batch);
  detail::require_same_block_lanes(routine, {detail::named("A", A), detail::named("ipiv", ipiv),
                                             detail::named("B", B), detail::named("info", info)});

  if constexpr (detail::block_lanes_agree<AV, PV, BV, IV>()) {
    if (batch == 0) return;
    if (A.extent(1) == 0) {
      Kokkos::parallel_for(
          "ibla::gesv(empty)",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, batch),
          impl::ZeroInfo<IV>{info});
      return;
    }
    constexpr int L = detail::choose_block_lanes<T, ExecSpace, AV, PV, BV, IV>();
    const index_t n = index_t(A.extent(1));
    if constexpr (!is_host_space_v<ExecSpace>) {
      // The orders whose device factorization is GetrfTeamRows: that kernel,
      // then the solve as a second one (the rows' team shape is GETRF's own).
      if (impl::getrf_team_rows<T, L>(exec, A, ipiv, info)) {
        detail::for_each_block<L>(exec, "ibla::gesv(solve)", batch, detail::problem_elements(A, B),
                                  impl::GetrsBlocks<AV, PV, BV, IV>{Op::N, A, ipiv, B, info});
        return;
      }
    }
    constexpr bool packs = detail::packs_blocks_v<ExecSpace, AV, PV, BV, IV>;
    impl::with_getrf_device_order<T, ExecSpace>(n, n, [&](auto device_order) {
      using KA = detail::kernel_view_t<packs, L, AV>;
      impl::with_getrf_host_order<T, L, ExecSpace, KA>(n, n, [&](auto host_order) {
        constexpr int host    = decltype(host_order)::value;
        constexpr auto stores = detail::kernel_stores<packs>(impl::gesv_host_stores<T, L, host>);
        detail::for_each_block_of<L, stores>(
            exec, "ibla::gesv", batch, detail::problem_elements(A, B), detail::always_pack{},
            [=](const auto& a, const auto& p, const auto& b, const auto& i) {
              return impl::GesvBlocks<decltype(device_order)::value, host, stores,
                                      std::decay_t<decltype(a)>, std::decay_t<decltype(p)>,
                                      std::decay_t<decltype(b)>, std::decay_t<decltype(i)>>{
                  a, p, b, i};
            },
            impl::read_written(A), impl::written_only(ipiv), impl::read_written(B),
            impl::written_only(info));
      });
    });
  }
}

}  // namespace ibla
