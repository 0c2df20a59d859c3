// Batched Cholesky solves (LAPACK dpotrs / dposv semantics per problem):
//   potrs: B = A^{-1} B with A already factored by potrf (L L^T or U^T U);
//   posv:  potrf on A, then potrs for the problems whose info is 0. Where
//          info > 0, B is left untouched (dposv does not solve).
// POSV is one pass over the data (seed 003 Algorithm 2 without any layout
// conversion): one team per block factors the block and solves it with the
// two triangular solves while the block is still in cache, instead of three
// kernel launches over the whole batch.
#pragma once

#include <ibla/core/error.hpp>
#include <ibla/core/lanes.hpp>
#include <ibla/core/types.hpp>
#include <ibla/kernels/dispatch.hpp>
#include <ibla/kernels/pack.hpp>
#include <ibla/kernels/potrf.hpp>
#include <ibla/kernels/trsm.hpp>
#include <ibla/layouts/lane_block.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace ibla {
namespace impl {

#if !IBLA_IMPL_DEVICE_PASS
/// Lane l of potrs_registers_host on column j of B: the forward then the
/// backward substitution of trsm's register form (trsm_register_steps) on
/// the column kept in registers, with the shared reciprocals; the same
/// operations in the same order as the two trsm_masked calls (alpha = 1,
/// and 1 * b is b), so the same bits. A functor (see GetrfRegisterLane).
template <int N, class T, class BLower, class BUpper, class BB, class Keep, int L>
struct PotrsRegisterLane {
  const BLower& lower;  // L, or U^T
  const BUpper& upper;  // its transpose
  const BB& B;
  const Keep& keep;
  SharedReciprocals<N, L, T> shared;
  int j;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int l) const {
    T b[N];
    IBLA_IMPL_UNROLL
    for (int i = 0; i < N; ++i) b[i] = B(i, j, l);
    trsm_register_steps<0, true>(b, lower, l, shared);
    trsm_register_steps<0, false>(b, upper, l, shared);
    store_register_column(b, B, j, l, keep(l));
  }
};

/// potrs_masked on a full host block of order N <= trsm_register_order: per
/// column of B, one lane loop solves forward and backward with the column
/// in registers (PotrsRegisterLane), the reciprocals of the diagonal
/// computed once for both solves and every column (the factor's diagonal
/// serves L and L^T), where each trsm_masked computed its own, one column at
/// a time for a single right-hand side, and stored B between the solves.
/// Returns false, B untouched, when a lane's reciprocal overflows (trsm
/// divides there; the caller takes the general path). Measured (1-thread
/// micro-driver: ibla::posv, 2048 problems, LayoutBlockInterleaved<8>,
/// double, one right-hand side, 400 calls, medians of two alternated runs,
/// us before -> after): n = 1 12.1 -> 6.5, 2 15.7 -> 9.7, 3 20.4 -> 12.6,
/// 4 28.3 -> 19.7, 5 35.7 -> 29.8, 6 39.5 -> 33.0, 7 52.8 -> 39.4, 8 69.8
/// -> 56.4 (L = 16: 1.1-1.3x); the results hash alike. In ibla_bench (10^4
/// problems, 2 threads, 4 alternated runs, GFLOP/s, flushed): n = 2 2.6 ->
/// 5.3, 3 3.9 -> 8.2, 4 5.1 -> 7.7, 5 8.6 -> 11.1, 6 10.6 -> 13.5, 8 12.5 ->
/// 15.8 (POTRF, unchanged, moved 0.99-1.29x in the same runs).
/// The shape of register_columns_sharing_reciprocals (trsm.hpp), written
/// out: through it (with an empty BlockPrefetch, these orders taking none),
/// GCC 12 left out of line, in ibla_bench's -O3 units, 8 of the lambdas
/// making each column's lane functor (called per column) and a plan() of
/// the empty prefetch, and POSV n = 3 L = 8 doubles ran at 0.94x flushed
/// (3 alternated runs; the other orders 2..8 0.94-1.05x, 2026-11-30).
template <int N, int L, class Member, class T, class BA, class BB, class Keep>
KOKKOS_FORCEINLINE_FUNCTION bool potrs_registers_host(const Member& member, const Uplo uplo,
                                                      const BA& A, const BB& B, const Keep& keep) {
  T inv[N][L];
  if (diagonal_reciprocals_overflow(member, B.lanes, false, A, inv)) return false;
  const auto lower = uplo == Uplo::Lower ? runtime_strides(A) : transposed(A);
  const auto upper = transposed(lower);
  using BT         = std::remove_const_t<decltype(lower)>;
  for (int j = 0; j < B.cols; ++j)
    for_each_lane(member, B.lanes,
                  PotrsRegisterLane<N, T, BT, BT, BB, Keep, L>{lower, upper, B, keep, {inv}, j});
  return true;
}

/// potrs_registers_host for one right-hand side at orders past
/// trsm_register_order, up to one_column_register_order, where A's row
/// stride is the compile-time L: A is addressed through fixed_order_block
/// (every element at a constant offset from the block's origin; with
/// runtime strides GCC kept the column addresses live and spilled them,
/// see fixed_order_block), and its transpose with the strides' types kept,
/// one instance per triangle. The tile form that took these orders solved
/// with one right-hand side 2-3x slower than a register form (as GETRS's,
/// see getrs_register_order). The prefetch of the next block (batch-level
/// POTRS) is requested after the solve, where it does not meet the block's
/// own loads. Batch-level POTRS flushed (10^4 problems, 2 threads, L = 8,
/// 7 alternated runs, medians, GFLOP/s; prefetch before the solve / after
/// it / the tile form): n = 13 10.1 / 14.1 / 12.1, 15 9.1 / 11.6 / 11.6,
/// 16 8.6 / 11.1 / 12.4; warm this form is 1.5-2.2x the tile form. That
/// prefetch is of the block two ahead (one_column_prefetch_ahead), which
/// took n = 16 past the tile form. Out of line, as
/// getrs_registers_host_skipping_swaps: one call per block, and the
/// smaller orders' forms keep the code GCC gave them.
template <int N, int L, class Member, class T, class BA, class BB, class Keep>
IBLA_IMPL_HOST_NOINLINE bool potrs_one_column_registers_host(const Member& member, const Uplo uplo,
                                                             const BA& A, const BB& B,
                                                             const Keep& keep,
                                                             BlockPrefetch& prefetch) {
  const auto Af = fixed_order_block<N>(A);
  T inv[N][L];
  if (diagonal_reciprocals_overflow(member, B.lanes, false, Af, inv)) return false;
  const auto At = transposed_keeping_strides(Af);
  const auto Bf = fixed_order_block<N>(B);
  if (uplo == Uplo::Lower) {
    for_each_lane(member, B.lanes,
                  PotrsRegisterLane<N, T, decltype(Af), decltype(At), decltype(Bf), Keep, L>{
                      Af, At, Bf, keep, {inv}, 0});
  } else {
    for_each_lane(member, B.lanes,
                  PotrsRegisterLane<N, T, decltype(At), decltype(Af), decltype(Bf), Keep, L>{
                      At, Af, Bf, keep, {inv}, 0});
  }
  prefetch.plan(1);
  prefetch.step();
  return true;
}
#endif

/// The two triangular solves of dpotrs: L L^T X = B (Lower) or U^T U X = B
/// (Upper), storing only in lanes where keep(l); the prefetch of the next
/// block is spread over the first solve (the register forms up to
/// trsm_register_order take none: see PotrsBlocks; the one-column forms
/// past it request it after their solve).
template <class Member, class BA, class BB, class Keep>
KOKKOS_INLINE_FUNCTION void potrs_masked(const Member& member, Uplo uplo, const BA& A,
                                         const BB& B, const Keep& keep, BlockPrefetch& prefetch) {
  using T          = std::remove_const_t<typename BB::value_type>;
  const Op first   = uplo == Uplo::Lower ? Op::N : Op::T;
  const Op second  = uplo == Uplo::Lower ? Op::T : Op::N;
  // Read once for both solves (trsm_masked passes a lane-wide keep through).
  const auto wide  = lane_wide_keep<T>(member, B.lanes, keep);
#if !IBLA_IMPL_DEVICE_PASS
  constexpr int L = fixed_lanes<typename BB::lane_count>::value;
  if constexpr (L > 0) {
    // The host vector forms run on one thread of the team, as in trsm_left.
    if (member.team_rank() != 0) return;
    constexpr int register_order = one_column_register_order<typename BA::row_stride>;
    if (B.rows >= 1 && B.rows <= (B.cols == 1 ? register_order : trsm_register_order) &&
        B.cols > 0 && detail::host_order_compiled(B.rows)) {
      bool solved = false;
      detail::static_switch<register_order>(B.rows, [&](auto order) {
        constexpr int N = decltype(order)::value;
        if constexpr (!detail::host_order_specialised<N>) {
        } else if constexpr (N > trsm_register_order) {
          solved = potrs_one_column_registers_host<N, L, Member, T>(member, uplo, A, B, wide,
                                                                    prefetch);
        } else {
          solved = potrs_registers_host<N, L, Member, T>(member, uplo, A, B, wide);
        }
      });
      if (solved) return;
    }
  }
#endif
  trsm_masked(member, Side::Left, uplo, first, Diag::NonUnit, T(1), A, B, wide, prefetch);
  trsm_masked(member, Side::Left, uplo, second, Diag::NonUnit, T(1), A, B, wide);
}

template <class Member, class BA, class BB, class Keep>
KOKKOS_INLINE_FUNCTION void potrs_masked(const Member& member, Uplo uplo, const BA& A,
                                         const BB& B, const Keep& keep) {
  BlockPrefetch none;
  potrs_masked(member, uplo, A, B, keep, none);
}

/// team::posv with the prefetch of the next block (batch-level POSV).
template <class Member, class BA, class BB, class BI>
KOKKOS_INLINE_FUNCTION void posv_block(const Member& member, Uplo uplo, const BA& A,
                                       const BB& B, const BI& info, BlockPrefetch& prefetch) {
  potrf_block(member, uplo, A, info, prefetch);
  team_sync(member);
  potrs_masked(member, uplo, A, B, InfoIsZero<BI>{info});
  team_sync(member);
}

}  // namespace impl

namespace team {

/// B = A^{-1} B on one block, A holding the Cholesky factor from potrf in
/// its Uplo triangle. B is a block of n x nrhs matrices (rank-3 View) or of
/// n-vectors (rank-2 View).
template <class Member, class BA, class BB>
KOKKOS_INLINE_FUNCTION void potrs(const Member& member, Uplo uplo, const BA& A, const BB& B) {
  impl::potrs_masked(member, uplo, A, B, impl::AllLanes{});
  team_sync(member);
}

/// potrf then potrs on one block; lanes with info > 0 keep their B.
template <class Member, class BA, class BB, class BI>
KOKKOS_INLINE_FUNCTION void posv(const Member& member, Uplo uplo, const BA& A, const BB& B,
                                 const BI& info) {
  impl::BlockPrefetch none;
  impl::posv_block(member, uplo, A, B, info, none);
}

}  // namespace team

namespace impl {
/// Batch-level POTRS prefetches the next block past this order, the largest
/// of its register forms for any number of right-hand sides
/// (trsm_register_order, host only, while ibla::potrs is compiled in the
/// device pass too); the one-column forms past it take the prefetch
/// (potrs_one_column_registers_host).
inline constexpr index_t potrs_prefetch_order = 8;
#if !IBLA_IMPL_DEVICE_PASS
static_assert(potrs_prefetch_order == trsm_register_order,
              "potrs_prefetch_order: the register forms up to it run without the prefetch");
#endif

/// Batch-level POTRS; Prefetch: the next block's triangle of A and its B
/// are requested during the first solve, as in TRSM (TrsmBlocks), for
/// orders past potrs_prefetch_order (ibla::potrs). A separate instance: the
/// register forms measured 1.1-1.4x slower at n = 4 and 7 (micro-driver,
/// 10^4 problems, 2 threads, warm and flushed) when the functor that ran
/// them also held the prefetch, even empty.
template <class AV, class BV, bool Prefetch>
struct PotrsBlocks {
  Uplo uplo;
  AV A;
  BV B;
  template <class Member, class Lanes>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, index_t first, Lanes lanes) const {
    if constexpr (Prefetch) {
      BlockPrefetch prefetch;
      const index_t order = index_t(A.extent(1)), cols = BV::rank == 3 ? index_t(B.extent(2)) : 1;
      prefetch_block_triangle_ahead(prefetch, first,
                                    one_column_prefetch_ahead<one_column_register_order<
                                        lane_block_row_stride_t<AV>>>(order, cols),
                                    lanes, B.extent(0), uplo, A, B);
      potrs_masked(member, uplo, lane_block(A, first, lanes), lane_block(B, first, lanes),
                   AllLanes{}, prefetch);
      team_sync(member);
    } else {
      team::potrs(member, uplo, lane_block(A, first, lanes), lane_block(B, first, lanes));
    }
  }
};
template <class AV, class BV, class IV>
struct PosvBlocks {
  Uplo uplo;
  AV A;
  BV B;
  IV info;
  template <class Member, class Lanes>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, index_t first, Lanes lanes) const {
    // The next block's A and B are requested during the factorization.
    BlockPrefetch prefetch;
    prefetch_next_triangle_of_factorization(prefetch, potrf_prefetch_order, first, lanes, uplo, A,
                                            B);
    posv_block(member, uplo, lane_block(A, first, lanes), lane_block(B, first, lanes),
               lane_block(info, first, lanes), prefetch);
  }
};
}  // namespace impl

/// Batched Cholesky solve with factors from ibla::potrf. A: rank-3 View
/// (batch, n, n); B: rank-3 (batch, n, nrhs) or rank-2 (batch, n),
/// overwritten by the solution. Throws ibla::argument_error, touching no
/// data, when the arguments do not fit together.
template <class ExecSpace, class AV, class BV>
void potrs(const ExecSpace& exec, Uplo uplo, const AV& A, const BV& B) {
  constexpr const char* routine = "potrs";
  detail::static_check_view<ExecSpace, AV>();
  detail::static_check_view<ExecSpace, BV>();
  detail::static_check_writable<BV>();
  using T = typename BV::non_const_value_type;
  static_assert(std::is_same<typename AV::non_const_value_type, T>::value,
                "ibla::potrs: A and B must have the same value type");
  detail::require_square(routine, "A", A);
  detail::require_rhs(routine, A, B);
  detail::require_allocated(routine, "A", A);
  detail::require_same_block_lanes(routine, {detail::named("A", A), detail::named("B", B)});

  if constexpr (detail::block_lanes_agree<AV, BV>()) {
    if (A.extent(1) == 0 || (BV::rank == 3 && B.extent(2) == 0)) return;
    constexpr int L = detail::choose_block_lanes<T, ExecSpace, AV, BV>();
    const index_t batch = index_t(A.extent(0));
    // Blocks packed into scratch (pack.hpp) are requested as they are
    // packed: their kernel requests nothing ahead.
    constexpr bool packs = detail::packs_blocks_v<ExecSpace, AV, BV>;
    auto solve           = [&](auto prefetch) {
      detail::for_each_block_of<L>(
          exec, "ibla::potrs", batch, detail::problem_elements(A, B), detail::always_pack{},
          [=](const auto& a, const auto& b) {
            return impl::PotrsBlocks<std::decay_t<decltype(a)>, std::decay_t<decltype(b)>,
                                     decltype(prefetch)::value>{uplo, a, b};
          },
          impl::read_only(A), impl::read_written(B));
    };
    if constexpr (packs) {
      solve(std::false_type{});
    } else if (index_t(A.extent(1)) > impl::potrs_prefetch_order) {
      solve(std::true_type{});
    } else {
      solve(std::false_type{});
    }
  }
}

/// Batched Cholesky factorization and solve in one pass: A (batch, n, n) is
/// overwritten by its factor as by ibla::potrf, B (batch, n, nrhs) or
/// (batch, n) by the solution where info(b) == 0 and left as it was where
/// info(b) > 0. Throws ibla::argument_error, touching no data, when the
/// arguments do not fit together.
template <class ExecSpace, class AV, class BV, class IV>
void posv(const ExecSpace& exec, Uplo uplo, const AV& A, const BV& B, const IV& info) {
  constexpr const char* routine = "posv";
  detail::static_check_view<ExecSpace, AV>();
  detail::static_check_view<ExecSpace, BV>();
  detail::static_check_view<ExecSpace, IV>();
  detail::static_check_writable<AV>();
  detail::static_check_writable<BV>();
  detail::static_check_writable<IV>();
  using T = typename BV::non_const_value_type;
  static_assert(std::is_same<typename AV::non_const_value_type, T>::value,
                "ibla::posv: A and B must have the same value type");
  static_assert(std::is_floating_point<T>::value, "ibla::posv: A holds float or double");
  const index_t batch = index_t(A.extent(0));
  detail::require_square(routine, "A", A);
  detail::require_rhs(routine, A, B);
  detail::require_allocated(routine, "A", A);
  detail::require_info_view(routine, info, batch);
  detail::require_same_block_lanes(
      routine, {detail::named("A", A), detail::named("B", B), detail::named("info", info)});

  if constexpr (detail::block_lanes_agree<AV, BV, IV>()) {
    constexpr int L = detail::choose_block_lanes<T, ExecSpace, AV, BV, IV>();
    detail::for_each_block_of<L>(
        exec, "ibla::posv", batch, detail::problem_elements(A, B), detail::always_pack{},
        [=](const auto& a, const auto& b, const auto& i) {
          return impl::PosvBlocks<std::decay_t<decltype(a)>, std::decay_t<decltype(b)>,
                                  std::decay_t<decltype(i)>>{uplo, a, b, i};
        },
        impl::read_written(A), impl::read_written(B), impl::written_only(info));
  }
}

}  // namespace ibla
