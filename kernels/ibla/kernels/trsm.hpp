// Batched TRSM (BLAS dtrsm semantics): for every matrix of the batch
//   Side::Left:  op(A) X = alpha B,   A is m x m, B is m x nrhs;
//   Side::Right: X op(A) = alpha B,   A is nrhs x nrhs;
// X overwrites B. Only the Uplo triangle of A is read (and not its diagonal
// when Diag::Unit); alpha == 0 sets B to zero without reading A or B.
//
// Every variant is reduced, with stride swaps only (LaneBlock::transposed),
// to a left-side, non-transposed solve with a lower or upper triangle:
//   X op(A) = alpha B   <=>  op(A)^T X^T = alpha B^T   (Right -> Left)
//   A^T lower           ==   an upper triangle         (Trans flips Uplo)
// so there are two kernels (forward and backward substitution) instead of 16.
// They walk B in MR x NR tiles (seed 003 Algorithm 1 with register blocking):
// a tile of B stays in registers inside the lane loop, takes the update from
// the rows already solved (a GEMM with k = rows solved so far, like
// gemm_tile), then is solved against the MR x MR diagonal triangle in
// registers. The diagonal is inverted once per block where B is a tile wide
// or more (else once per tile row), and the reciprocal is shared by the
// columns: reference dtrsm divides, so results agree to rounding, not bit
// for bit.
#pragma once

#include <ibla/core/error.hpp>
#include <ibla/core/fused.hpp>
#include <ibla/core/lanes.hpp>
#include <ibla/core/registers.hpp>
#include <ibla/core/select.hpp>
#include <ibla/core/types.hpp>
#include <ibla/kernels/dispatch.hpp>
#include <ibla/kernels/pack.hpp>
#include <ibla/kernels/prefetch.hpp>
#include <ibla/kernels/static_switch.hpp>
#include <ibla/layouts/lane_block.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace ibla {
namespace impl {

// 4 x 4 tiles as in GEMM: 16 accumulators plus 4 + 4 operands fit the vector
// registers of AVX-512 (and spill little on AVX2).
inline constexpr int trsm_tile_rows = 4;
inline constexpr int trsm_tile_cols = 4;

// x / d for the diagonal step of a solve. The tiles multiply by 1 / d (one
// division per row instead of one per element), but 1 / d overflows when |d|
// is about 1 / max or less (a denormal diagonal), where netlib's division still gives
// a finite x: those lanes divide. The choice is per lane, so a lane's result
// does not depend on its neighbours in the block (determinism); `any_tiny`
// only skips the select when no lane of the row needs it.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION bool reciprocal_overflows(const T d) {
  // 2 / max, not 1 / max: the rounded threshold must not let a d through
  // whose reciprocal still overflows.
  constexpr T below = T(2) / Kokkos::Experimental::finite_max<T>::value;
#if IBLA_IMPL_DEVICE_PASS
  return (d < T(0) ? -d : d) < below;
#else
  // One AND per vector for |d| (see magnitude) instead of the ternary's
  // compare, negation and blend: TRSM, one right-hand side, L = 4
  // doubles, n = 6, 8: 818 -> 807, 1065 -> 1023 instructions a block.
  return magnitude(d) < below;
#endif
}

/// Every lane takes part (plain TRSM).
struct AllLanes {
  KOKKOS_FORCEINLINE_FUNCTION constexpr bool operator()(int) const { return true; }
};

/// Lanes whose factorization succeeded (info 0) take the solution.
template <class BI>
struct InfoIsZero {
  BI info;
  KOKKOS_FORCEINLINE_FUNCTION bool operator()(int l) const { return info(0, l) == 0; }
};

#if !IBLA_IMPL_DEVICE_PASS
/// keep of a full host block, read once before the lane loops into
/// integers as wide as T. GCC sizes an omp simd loop's vectors by its
/// narrowest type: InfoIsZero's int in a lane loop over 8 doubles asked for
/// 16 lanes on AVX-512, which the loop cannot fill, and GCC fell back to
/// two 256-bit registers per value (-fdump-tree-vect-details: "not enough
/// iterations", then vector mode V32QI). The same holds for every per-lane
/// integer of the host forms (LanePivots, POTRF's status).
template <class T, int L>
struct KeptLanes {
  lane_index_t<T> kept[L];
  KOKKOS_FORCEINLINE_FUNCTION bool operator()(const int l) const { return kept[l] != 0; }
};

template <class T, class Keep>
struct is_lane_wide_keep : std::false_type {};
template <class T>
struct is_lane_wide_keep<T, AllLanes> : std::true_type {};
template <class T, int L>
struct is_lane_wide_keep<T, KeptLanes<T, L>> : std::true_type {};
#endif

/// The keep that the lane loops of a block read: on host, for a full block,
/// KeptLanes read from keep once; AllLanes, a KeptLanes already, and keep
/// everywhere else as they are.
template <class T, class Member, class Lanes, class Keep>
KOKKOS_FORCEINLINE_FUNCTION auto lane_wide_keep(const Member& member, const Lanes& lanes,
                                                const Keep& keep) {
#if !IBLA_IMPL_DEVICE_PASS
  constexpr int L = fixed_lanes<Lanes>::value;
  if constexpr (L > 0 && !is_lane_wide_keep<T, Keep>::value) {
    KeptLanes<T, L> wide{};
    for_each_lane(member, lanes, [&](const int l) { wide.kept[l] = lane_index_t<T>(keep(l)); });
    return wide;
  } else {
    return keep;
  }
#else
  (void)member;
  (void)lanes;
  return keep;
#endif
}


/// Lane l of: solves rows [i0, i0 + MR) of columns [j0, j0 + NR) of T X = alpha B, T
/// lower (Lower) or upper triangular, X over B. Rows solved before (above
/// for Lower, below for Upper) are read back from B. Lanes where
/// keep(l) is false are computed but not stored (POSV leaves B untouched
/// for problems whose factorization failed; a select keeps the loop
/// vectorised).
template <int MR, int NR, bool Lower, class T, class BA, class BB, class Keep>
KOKKOS_FORCEINLINE_FUNCTION void trsm_tile_lane(const int l, int i0, int j0, const bool unit,
                                                const T alpha, const BA& A, const BB& B,
                                                const Keep& keep) {
  // Rows already solved that feed this tile.
  const int p_begin = Lower ? 0 : i0 + MR;
  const int p_end   = Lower ? i0 : A.rows;
    T acc[MR][NR];
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NR; ++c) acc[r][c] = alpha * B(i0 + r, j0 + c, l);
    // Pointers walk the p loop (one add per operand and step, offsets
    // loop-invariant) instead of (i) * rs + (p) * cs per access: with runtime
    // strides the index arithmetic ran out of integer registers (as in GEMM).
    // The rows solved before are taken in the order they were solved
    // (for Upper from the bottom up: the order of trsm_register_steps and
    // of netlib's dtrsm), so that both forms give the same bits.
    const index_t ars = A.rs, astep = Lower ? A.cs : -A.cs, bcs = B.cs, bstep = Lower ? B.rs : -B.rs;
    const int p_first = Lower ? p_begin : p_end - 1;
    const T* pa = A.ptr(i0, p_first) + index_t(l) * index_t(value_of(A.ls));
    const T* pb = B.ptr(p_first, j0) + index_t(l) * index_t(value_of(B.ls));
    for (int p = p_begin; p < p_end; ++p) {
      T a[MR], x[NR];
      for (int r = 0; r < MR; ++r) a[r] = pa[r * ars];
      for (int c = 0; c < NR; ++c) x[c] = pb[c * bcs];
      for (int r = 0; r < MR; ++r)
        for (int c = 0; c < NR; ++c) acc[r][c] = fused_mul_add(-a[r], x[c], acc[r][c]);
      pa += astep;
      pb += bstep;
    }
    // The MR x MR diagonal triangle, in registers.
    for (int s = 0; s < MR; ++s) {
      const int r = Lower ? s : MR - 1 - s;
      // Diag::Unit is a runtime flag (uniform over the lanes): a template
      // parameter would double the tile instantiations for a rare case.
      if (!unit) {
        const T d = A(i0 + r, i0 + r, l);
        if (reciprocal_overflows(d)) {
          for (int c = 0; c < NR; ++c) acc[r][c] /= d;
        } else {
          const T inv = T(1) / d;
          for (int c = 0; c < NR; ++c) acc[r][c] *= inv;
        }
      }
      if constexpr (Lower) {
        for (int r2 = r + 1; r2 < MR; ++r2) {
          const T a = A(i0 + r2, i0 + r, l);
          for (int c = 0; c < NR; ++c) acc[r2][c] = fused_mul_add(-a, acc[r][c], acc[r2][c]);
        }
      } else {
        for (int r2 = 0; r2 < r; ++r2) {
          const T a = A(i0 + r2, i0 + r, l);
          for (int c = 0; c < NR; ++c) acc[r2][c] = fused_mul_add(-a, acc[r][c], acc[r2][c]);
        }
      }
    }
    const bool store = keep(l);
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NR; ++c) {
        T& out = B(i0 + r, j0 + c, l);
        out    = store ? acc[r][c] : out;
      }
}

/// The lane body as a functor with a force-inlined operator(): GCC does not
/// always inline a large lambda into the `omp simd` loop of for_each_lane,
/// and a call there stops vectorisation.
template <int MR, int NR, bool Lower, class T, class BA, class BB, class Keep>
struct TrsmTileLane {
  int i0, j0;
  bool unit;
  T alpha;
  const BA& A;
  const BB& B;
  const Keep& keep;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int l) const {
    trsm_tile_lane<MR, NR, Lower>(l, i0, j0, unit, alpha, A, B, keep);
  }
};

/// One tile for every lane. Two forms, as gemm_tile:
///  - host, a full block (lanes_c<L>): the lane loop is the innermost loop of every statement,
///    so acc[r][c][0..L) are vectors kept in registers across the p loop.
///    With the lane loop around the whole tile (the per-lane form below) GCC
///    left the runtime p loop scalar: every FMA was a vfnmadd..sd;
///  - otherwise (device, the partial last block (see lanes_upto), or a plain
///    int lane count): the per-lane form, same operations in the same order.
/// shared_inv (host, full blocks; null elsewhere): the block's reciprocals of
/// the diagonal, inv[r * L + l] for row r and lane l, none of them
/// overflowing (trsm_left). The host form then solves the MR x MR triangle
/// and stores the tile in one lane loop, the tile in registers. Solved a
/// statement at a time, each with its own lane loop and its own division and
/// overflow test, GCC kept the accumulators on the stack through the
/// triangle (16 vector stores after the update, every FMA of the triangle
/// reading and writing memory), and the triangle and the store took about
/// half of the time of an order-32 solve in cache. A runtime test inside
/// that lane loop (Diag::Unit's, tried) made it slower than the
/// statement-level form (nrhs = n, n = 16 and 32: 0.64x and 0.74x), so
/// only the shared reciprocals take it: a unit diagonal, a block where a reciprocal
/// overflows and B narrower than a tile keep the statement-level form.
template <int MR, int NR, bool Lower, class Member, class T, class BA, class BB, class Keep>
KOKKOS_FORCEINLINE_FUNCTION void trsm_tile(const Member& member, int i0, int j0, const bool unit,
                                           const T alpha, const BA& A, const BB& B,
                                           const Keep& keep, const T* shared_inv) {
#if !IBLA_IMPL_DEVICE_PASS
  constexpr int L = fixed_lanes<typename BB::lane_count>::value;
  if constexpr (L > 0) {
    const int p_begin = Lower ? 0 : i0 + MR;
    const int p_end   = Lower ? i0 : A.rows;
    const index_t als = index_t(value_of(A.ls)), bls = index_t(value_of(B.ls));
    const index_t ars = A.rs, astep = Lower ? A.cs : -A.cs, bcs = B.cs, bstep = Lower ? B.rs : -B.rs;
    const int p_first = Lower ? p_begin : p_end - 1;
    T acc[MR][NR][L];
    IBLA_IMPL_UNROLL
    for (int r = 0; r < MR; ++r)
      IBLA_IMPL_UNROLL
      for (int c = 0; c < NR; ++c)
        for_each_lane(member, B.lanes,
                      [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
                        acc[r][c][l] = alpha * B(i0 + r, j0 + c, l);
                      });
    const T* pa = A.ptr(i0, p_first);
    const T* pb = B.ptr(p_first, j0);
    for (int p = p_begin; p < p_end; ++p) {
      IBLA_IMPL_UNROLL
      for (int r = 0; r < MR; ++r)
        IBLA_IMPL_UNROLL
        for (int c = 0; c < NR; ++c)
          for_each_lane(member, B.lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
            acc[r][c][l] = fused_mul_add(-pa[r * ars + l * als], pb[c * bcs + l * bls], acc[r][c][l]);
          });
      pa += astep;
      pb += bstep;
    }
    if (shared_inv != nullptr) {
      // The same operations in the same order as below (same bits).
      for_each_lane(member, B.lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
        T x[MR][NR];
        IBLA_IMPL_UNROLL
        for (int r = 0; r < MR; ++r)
          IBLA_IMPL_UNROLL
          for (int c = 0; c < NR; ++c) x[r][c] = acc[r][c][l];
        IBLA_IMPL_UNROLL
        for (int s = 0; s < MR; ++s) {
          const int r = Lower ? s : MR - 1 - s;
          const T inv = shared_inv[index_t(i0 + r) * L + l];
          IBLA_IMPL_UNROLL
          for (int c = 0; c < NR; ++c) x[r][c] *= inv;
          IBLA_IMPL_UNROLL
          for (int r2 = Lower ? r + 1 : 0; r2 < (Lower ? MR : r); ++r2) {
            const T a = A(i0 + r2, i0 + r, l);
            IBLA_IMPL_UNROLL
            for (int c = 0; c < NR; ++c) x[r2][c] = fused_mul_add(-a, x[r][c], x[r2][c]);
          }
        }
        const bool store = keep(l);
        IBLA_IMPL_UNROLL
        for (int r = 0; r < MR; ++r)
          IBLA_IMPL_UNROLL
          for (int c = 0; c < NR; ++c) {
            T& out = B(i0 + r, j0 + c, l);
            out    = select_bits(store, x[r][c], out);
          }
      });
      return;
    }
    IBLA_IMPL_UNROLL
    for (int s = 0; s < MR; ++s) {
      const int r = Lower ? s : MR - 1 - s;
      if (!unit) {
        // The test as a lane loop and an OR over an integer per lane (as
        // wide as T, see KeptLanes): both vectorise, where a scalar loop
        // over the lanes cost a fifth of TRSM's time at n <= 8.
        lane_index_t<T> lane_tiny[L] = {};  // read by every thread of a host team
        for_each_lane(member, B.lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
          lane_tiny[l] = reciprocal_overflows(A(i0 + r, i0 + r, l));
        });
        lane_index_t<T> any_tiny = 0;
        for (int l = 0; l < L; ++l) any_tiny |= lane_tiny[l];
        if (!any_tiny) {
          for_each_lane(member, B.lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
            const T inv = T(1) / A(i0 + r, i0 + r, l);
            IBLA_IMPL_UNROLL
            for (int c = 0; c < NR; ++c) acc[r][c][l] *= inv;
          });
        } else {
          for_each_lane(member, B.lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
            const T d   = A(i0 + r, i0 + r, l);
            const T inv = T(1) / d;
            const bool tiny = reciprocal_overflows(d);
            IBLA_IMPL_UNROLL
            for (int c = 0; c < NR; ++c) acc[r][c][l] = tiny ? acc[r][c][l] / d : acc[r][c][l] * inv;
          });
        }
      }
      IBLA_IMPL_UNROLL
      for (int r2 = Lower ? r + 1 : 0; r2 < (Lower ? MR : r); ++r2)
        for_each_lane(member, B.lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
          const T a = A(i0 + r2, i0 + r, l);
          IBLA_IMPL_UNROLL
          for (int c = 0; c < NR; ++c) acc[r2][c][l] = fused_mul_add(-a, acc[r][c][l], acc[r2][c][l]);
        });
    }
    IBLA_IMPL_UNROLL
    for (int r = 0; r < MR; ++r)
      IBLA_IMPL_UNROLL
      for (int c = 0; c < NR; ++c)
        for_each_lane(member, B.lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
          T& out = B(i0 + r, j0 + c, l);
          out    = select_bits(keep(l), acc[r][c][l], out);
        });
  } else
#endif
  {
    (void)shared_inv;
    for_each_lane(member, B.lanes,
                  TrsmTileLane<MR, NR, Lower, T, BA, BB, Keep>{i0, j0, unit, alpha, A, B, keep});
  }
}

// The orders of the host register forms below are compiled in the device
// pass too: the batch-level functors' prefetch distance names them
// (one_column_prefetch_ahead, false there).
/// Orders of the triangle up to this one are solved by trsm_registers_host
/// (and GETRS by getrs_registers_host): each column of B in N registers,
/// the same operations in the same order as the tiles below (same bits:
/// every element takes the rows solved before it in the order they were
/// solved, see trsm_tile). Up to 4 this is one tile row; at 5..8 the tile
/// form's runtime tile loops, static_switch dispatch and per-row overflow
/// test cost more than the arithmetic. Measured (double, 10^4 problems, 2
/// threads, ibla_bench medians of 3-5 alternating runs, AVX-512 Zen 4),
/// order 8 against 4, flushed / warm: TRSM nrhs=1 n = 5 1.26 / 1.77x, 6
/// 1.09 / 1.19x, 8 0.99 / 0.99x; nrhs=n n = 5 1.25 / 1.29x, 6 1.06 / 1.31x,
/// 8 1.05 / 1.15x; POSV n = 5 1.23 / 1.23x, 6 1.17 / 1.35x, 8 1.15 / 1.17x;
/// GESV n = 5 1.30-1.41x, 6 1.21-1.48x, 8 1.08-1.12x; n <= 4 unchanged
/// (0.95-1.14x, within the runs' spread). Its cost is compile time: the
/// solver units of the tests compile about 25% longer.
inline constexpr int trsm_register_order = 8;

/// Orders up to this one of the solves with one right-hand side (GETRS
/// Op::N, POTRS) take their register forms on host where A's row stride is
/// the compile-time L (LayoutBlockInterleaved): above trsm_register_order
/// those forms address A through fixed_order_block, whose constant offsets
/// need that stride. A runtime row stride, and several right-hand sides,
/// stop at trsm_register_order. Measurements and compile cost at
/// getrs_register_order (gesv.hpp) and potrs_one_column_registers_host
/// (posv.hpp).
template <class RowStride>
inline constexpr int one_column_register_order =
    std::is_same<RowStride, index_t>::value || trsm_register_order > 16 ? trsm_register_order : 16;

/// TRSM's register form (trsm_registers_fixed_order_host) goes on with one
/// right-hand side to this order, past one_column_register_order, where
/// A's row stride is the compile-time L. From about order 20 the column and A's operands
/// do not fit AVX-512's 32 vector registers, and GCC spills part of the
/// column, but the form still reads A a column after another, front to
/// back, which the hardware prefetcher follows; the tile form reads 4 rows
/// of every column to the left of a tile row, and lost to it with the
/// batch out of cache.
/// Measured (TRSM micro-driver, left lower non-unit, 10^4 problems, 2
/// threads, double, medians of 101 calls, alternated runs, GFLOP/s, tile
/// form -> this form), flushed: L = 8, n = 17 7.9 -> 11.2, 20 6.6-6.9 ->
/// 8.5-11.2, 24 6.2-7.2 -> 7.4-10.3; L = 16, n = 17 7.7-7.9 -> 10.5-11.5,
/// 20 7.3-8.0 -> 8.2-9.8, 24 7.3-8.6 -> 8.5-11.0. At n = 32 it was 1.2x
/// the tile form in the VM's quiet hours (L = 8, 8.3-8.8 -> 10.3) and
/// 0.5-0.8x in its busy ones (flushed 6.6-7.2 -> 4.8-5.7, warm 10.4 ->
/// 5.3), also without its prefetch or with it one block ahead: past 24
/// the tile form stays. A form solving a chunk of 8 rows at a time,
/// updating the later rows 8 at a time with it (8 columns read side by
/// side), was slower than this one: flushed, L = 8, n = 20 8.1-8.3 against
/// 10.0-11.2. Compile cost: the tests' triangular solve unit took about
/// 15% longer with orders up to 32 (-O1); IBLA_HOST_SPECIALISED_ORDERS
/// leaves the orders it does not list to the tile form.
template <class RowStride>
inline constexpr int trsm_one_column_register_order =
    std::is_same<RowStride, index_t>::value ? trsm_register_order : 24;

/// TRSM's register form (trsm_registers_fixed_order_host) takes several
/// right-hand sides, one lane loop a column, up to this order, past
/// trsm_register_order, where A's row stride is the compile-time L and the
/// host has 32 vector registers. Each column reads A's triangle again, from
/// L1, one load an FMA; the tile form it replaces
/// (trsm_tile_loops_operands_in_registers) shares each load among a 4 x 4
/// tile, but its runtime tile loops, tile-shape dispatch and stores of
/// every tile row back to B cost more at these orders. The form of one
/// order is compiled for one right-hand side anyway (to
/// trsm_one_column_register_order), so this adds no code. Measured
/// (micro-driver: ibla::trsm left lower non-unit, alpha 1.5, nrhs = n,
/// doubles, 2 threads, B restored before each call, medians of 201-401
/// calls, 2 alternated runs, same checksums; tile form -> this form,
/// GFLOP/s), L = 8, 1000 and 4000 problems: n = 9 55-58 -> 76-79, 10
/// 62-64 -> 84-86 (2000 problems), 12 89-90 -> 103-105 (2000), 14 66-86
/// -> 103-117, 16 99-112 -> 102-131, 20 90-131 -> 117-144; L = 16 n = 10
/// 58-72 -> 67-88, 16 94-103 -> 94-110. ibla_bench (--ops trsm --impls
/// ibla,kk-simd --reps 21, 10^4 problems, 4 alternated runs, medians,
/// pairs won), L = 8 flushed: n = 9 1.31x, 10 28.8 -> 47.8, 12 34.4 ->
/// 50.8, 14 1.13x, 16 41.4 -> 61.6 (4 of 4 each); warm n = 9 1.40x, 10
/// 58.5 -> 77.0, 12 1.12x, 14 1.24x (4 each), 16 1.17x (3); L = 16
/// flushed 1.12-1.62x, warm 1.05-1.52x. At 20 it was 1.00x flushed and
/// 0.75x warm (L = 8, 1 of 4), at 24 0.94-1.00x, so the tile form keeps
/// the orders past 16. With 16 registers (AVX2) the column spills from
/// about order 12; not measured there, so trsm_register_order.
template <class RowStride>
inline constexpr int trsm_several_columns_register_order =
    !std::is_same<RowStride, index_t>::value && host_has_wide_register_file ? 16
                                                                            : trsm_register_order;

/// Whether a column of k elements of L lanes of T is whole lines, as the
/// cursors of trsm_requests_next_columns take it (L = 8 doubles and 16
/// floats at every order; L = 4 doubles at even orders). Where it is not,
/// the block requests nothing ahead, as before those requests (AVX2's L =
/// 4 doubles were not measured with them).
template <class T, int L>
KOKKOS_INLINE_FUNCTION constexpr bool trsm_columns_are_whole_lines(const index_t k) {
  return (k * L * index_t(sizeof(T))) % BlockPrefetch::line == 0;
}

#if !IBLA_IMPL_DEVICE_PASS
/// The diagonal's reciprocals 1 / d of every lane of a block, inv[r][l],
/// computed once by DiagonalReciprocalLane and shared by the columns of B.
/// Recomputed per column they cost nrhs times the divisions: at nrhs = n
/// those (about 10x an FMA's throughput cost on Zen 4) outweighed the
/// substitution's FMAs, and Kokkos Kernels' TRSM, which divides once per
/// row, was up to 2x faster. They are used only for blocks where none of
/// them overflows (see register_columns_sharing_reciprocals), so a lane
/// form given them stores every lane it keeps without a per-lane test; a
/// block where one overflows goes to the tile form, which divides there.
template <int N, int L, class T>
struct SharedReciprocals {
  const T (*inv)[L];
};

/// A unit diagonal, in place of SharedReciprocals: x * 1 is x, so the
/// steps leave b[r] as it is (the tile form does not touch it either).
struct UnitDiagonal {};

/// Row S of the substitution (from the top for Lower, from the bottom
/// otherwise) and the following ones, on one lane's column b: multiply by
/// the reciprocal (none for UnitDiagonal), then update the rows not yet
/// solved. A function template per step, so that every index into b is a
/// compile-time constant (see getrf_register_steps). The reciprocals were
/// computed before the columns (SharedReciprocals), and none of them
/// overflows.
template <int S, bool Lower, int N, class T, class BA, class Reciprocals>
KOKKOS_FORCEINLINE_FUNCTION void trsm_register_steps(T (&b)[N], const BA& A, const int l,
                                                     const Reciprocals& shared) {
  constexpr int r = Lower ? S : N - 1 - S;
  if constexpr (!std::is_same<Reciprocals, UnitDiagonal>::value) b[r] *= shared.inv[r][l];
  IBLA_IMPL_UNROLL
  for (int r2 = Lower ? r + 1 : 0; r2 < (Lower ? N : r); ++r2)
    b[r2] = fused_mul_add(-A(r2, r, l), b[r], b[r2]);
  if constexpr (S + 1 < N) trsm_register_steps<S + 1, Lower>(b, A, l, shared);
}

/// Lane l of the reciprocals of A's diagonal (unit: ones, A's diagonal not
/// read), the same 1 / d as trsm_tile computes per tile row (same bits);
/// overflows[l] flags a lane where one of them overflows (a diagonal below
/// about 2 / max), which must divide instead.
template <int N, int L, class T, class BA, class Index>
struct DiagonalReciprocalLane {
  bool unit;
  const BA& A;
  T (*inv)[L];
  Index* overflows;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int l) const {
    Index overflow = 0;
    IBLA_IMPL_UNROLL
    for (int r = 0; r < N; ++r) {
      const T d = select_bits(unit, T(1), A(r, r, l));
      overflow |= Index(reciprocal_overflows(d));
      inv[r][l] = T(1) / d;
    }
    overflows[l] = overflow;
  }
};

/// DiagonalReciprocalLane on every lane of a full host block: inv[r][l] =
/// 1 / A(r, r, l) (ones if unit). Returns whether one of them overflows in
/// some lane: the forms that take the shared reciprocals then leave the
/// block to a form that divides. Which lanes is not returned: no caller
/// needs it (each one hands the whole block back).
template <int N, int L, class T, class Member, class Lanes, class BA>
KOKKOS_FORCEINLINE_FUNCTION bool diagonal_reciprocals_overflow(const Member& member,
                                                               const Lanes& lanes, const bool unit,
                                                               const BA& A, T (&inv)[N][L]) {
  using Index = lane_index_t<T>;
  Index overflows[L];  // every lane's is written by the lane loop
  for_each_lane(member, lanes,
                DiagonalReciprocalLane<N, L, T, BA, Index>{unit, A, inv, overflows});
  Index any = 0;
  for (int l = 0; l < L; ++l) any |= overflows[l];
  return any != 0;
}

/// The largest order of a triangle whose diagonal's reciprocals the host
/// tile form computes once per block (trsm_left, on the stack: 32 x L
/// values); larger ones take them per tile row.
inline constexpr int trsm_shared_reciprocal_rows = 32;

/// The reciprocals of the diagonal of a non-unit triangle of runtime order
/// `rows` on a full host block, for the tile form (trsm_tile's shared_inv):
/// inv[r * L + l] = 1 / A(r, r, l), the 1 / d that trsm_tile computes per
/// tile. Returns whether one of them overflows: the tiles then take theirs
/// per tile row, and divide in the lanes where it does.
template <int L, class T, class Member, class Lanes, class BA>
KOKKOS_FORCEINLINE_FUNCTION bool diagonal_reciprocals_overflow_rows(const Member& member,
                                                                    const Lanes& lanes,
                                                                    const int rows, const BA& A,
                                                                    T* inv) {
  lane_index_t<T> tiny[L] = {};
  for (int r = 0; r < rows; ++r)
    for_each_lane(member, lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
      const T d = A(r, r, l);
      tiny[l] |= lane_index_t<T>(reciprocal_overflows(d));
      inv[r * L + l] = T(1) / d;
    });
  lane_index_t<T> any = 0;
  for (int l = 0; l < L; ++l) any |= tiny[l];
  return any != 0;
}

/// The end of a register lane (TrsmRegisterLane, GetrsRegisterLane,
/// PotrsRegisterLane) on column j of lane l: b stored where keep.
template <int N, class T, class BB>
KOKKOS_FORCEINLINE_FUNCTION void store_register_column(const T (&b)[N], const BB& B, const int j,
                                                       const int l, const bool keep) {
  IBLA_IMPL_UNROLL
  for (int i = 0; i < N; ++i) {
    T& out = B(i, j, l);
    out    = select_bits(keep, b[i], out);
  }
}

/// Lane l of trsm_registers_host: column j of B, N rows, in registers: the
/// operations of trsm_tile on a single N x 1 tile, in its order (same bits),
/// multiplying by the shared reciprocals of the diagonal (ones if unit).
template <int N, bool Lower, int L, class T, class BA, class BB, class Keep>
struct TrsmRegisterLane {
  T alpha;
  const BA& A;
  const BB& B;
  const Keep& keep;
  int j;
  SharedReciprocals<N, L, T> shared;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int l) const {
    T b[N];
    IBLA_IMPL_UNROLL
    for (int i = 0; i < N; ++i) b[i] = alpha * B(i, j, l);
    trsm_register_steps<0, Lower>(b, A, l, shared);
    store_register_column(b, B, j, l, keep(l));
  }
};

/// The columns of B through a lane form that multiplies by the reciprocals
/// of A's diagonal (ones if unit): lane(j, reciprocals) makes the lane
/// functor of column j (a functor, not a lambda: see getrf_registers_host).
/// The reciprocals are computed once for all the columns. Returns false,
/// B untouched, when one of them overflows: the caller leaves the block to
/// the tile form, which divides there. Until 2026-11-30 such a block, and
/// every block with one column, took a two-pass form instead: the first
/// pass computed 1 / d in the lane and stored the lanes where none
/// overflowed, the second (only when a lane was flagged) divided there.
/// That second unrolled lane loop doubled the code of every order, and
/// the one-pass form is no slower with one column either (micro-drivers,
/// 10^4 problems, 2 threads, medians of 41 calls and of 3 alternated runs,
/// L = 8 doubles, same checksums, two-pass -> this): TRSM nrhs = 1 n =
/// 2..8 1.00-1.14x, GETRS nrhs = 1 n = 2..8 1.02-1.33x, flushed and in L3;
/// TRSM with a unit diagonal, in L3, 1.06-1.17x.
template <int N, int L, class T, class Member, class Lanes, class BA, class MakeLane>
KOKKOS_FORCEINLINE_FUNCTION bool register_columns_sharing_reciprocals(
    const Member& member, const Lanes& lanes, const int cols, BlockPrefetch& prefetch,
    const bool unit, const BA& A, const MakeLane& lane) {
  T inv[N][L];
  if (diagonal_reciprocals_overflow(member, lanes, unit, A, inv)) return false;
  prefetch.plan(cols);
  for (int j = 0; j < cols; ++j) {
    prefetch.step();
    for_each_lane(member, lanes, lane(j, SharedReciprocals<N, L, T>{inv}));
  }
  return true;
}

/// trsm_left for a full block on host whose triangle has order N <=
/// trsm_register_order: one lane loop per column of B, the column in
/// registers. The tile form's dispatch (runtime tile counts, static_switch,
/// a lane loop per statement) cost more than the arithmetic at these
/// orders. Solving several columns per lane loop, to share the loads of A,
/// was measured no faster (0.94-1.0x at n = 2..8, nrhs = n, 10^4 problems
/// in cache, 2 threads). False, B untouched: a reciprocal of the diagonal
/// overflows (see register_columns_sharing_reciprocals).
template <int N, bool Lower, int L, class Member, class T, class BA, class BB, class Keep>
KOKKOS_FORCEINLINE_FUNCTION bool trsm_registers_host(const Member& member, const bool unit,
                                                     const T alpha, const BA& A, const BB& B,
                                                     const Keep& keep, BlockPrefetch& prefetch) {
  return register_columns_sharing_reciprocals<N, L, T>(
      member, B.lanes, B.cols, prefetch, unit, A, [&](const int j, auto reciprocals) {
        return TrsmRegisterLane<N, Lower, L, T, BA, BB, Keep>{alpha, A, B, keep, j, reciprocals};
      });
}

/// trsm_registers_host where A's row stride is the compile-time L
/// (block-interleaved), for every column of B up to
/// trsm_several_columns_register_order and for one right-hand side past
/// it, up to trsm_one_column_register_order:
/// A and B at constant offsets (fixed_order_block, see
/// potrs_one_column_registers_host), op(A) = A^T through its transpose
/// keeping the strides, so one lane form per triangle (lower) and op. The
/// reciprocals of the diagonal are computed first; a block where one of
/// them overflows is left untouched (false returned) to trsm_masked, which
/// divides there. The same operations in the same order as the tile form
/// on each column (same bits). The prefetch (batch-level TRSM) of one
/// column is requested after the solve, as POTRS's, for the block two
/// ahead (one_column_prefetch_ahead); of several, a share before each
/// column (as register_columns_sharing_reciprocals), for the next block
/// (batch-level TRSM requests none at orders up to
/// trsm_several_columns_unrequested_order).
/// Out of line, as POTRS's: one call per block.
/// Up to trsm_register_order the blocks had taken trsm_masked's path
/// (trsm_left, its runtime strides, its dispatch and frame sized for the
/// tiles' reciprocals, then trsm_registers_host), which cost more than the
/// arithmetic there. Measured in one process against it (ibla::trsm left
/// lower non-unit, 10^4 problems, LayoutBlockInterleaved<L> doubles, 2
/// threads, the two forms taking turns call by call, medians of the
/// per-call ratios, same checksums; Intel Xeon VM, 2026-12-04), n = 2, 3,
/// 4, 5, 6, 8, warm / flushed: one right-hand side L = 8 1.47x, 1.51x,
/// 1.54x, 1.29x, 1.34x, 1.18x / 1.16x, 1.13x, 1.18x, 1.17x, 1.28x, 1.18x,
/// L = 16 1.44x, 1.34x, 1.25x, 1.19x, 1.28x, 1.10x / 1.15x, 1.19x, 1.04x,
/// 1.16x, 1.16x, 1.10x; nrhs = n L = 8 1.20-1.49x / 1.06-1.19x, L = 16
/// 1.06-1.36x / 1.05-1.10x; n = 10 and 16 (code unchanged) 0.95-1.02x.
/// Tried: one right-hand side at n = 5..8 with the prefetch one block
/// ahead (flushed 0.99-1.14x), several with it after the solve (n = 8, L =
/// 16, flushed 0.89-0.93x).
template <int N, int L, class Member, class T, class BA, class BB>
IBLA_IMPL_HOST_NOINLINE bool trsm_registers_fixed_order_host(const Member& member,
                                                             const bool lower, const Op op,
                                                             const bool unit, const T alpha,
                                                             const BA& A, const BB& B,
                                                             BlockPrefetch& prefetch) {
  const auto Af = fixed_order_block<N>(A);
  T inv[N][L];
  if (diagonal_reciprocals_overflow(member, B.lanes, unit, Af, inv)) return false;
  const auto Bf      = fixed_order_block<N>(B);
  const int cols     = B.cols;
  const bool one_col = cols == 1;
  const AllLanes keep;
  // The next block's column j of A and of B as column j of B is solved
  // (by_columns, trsm_requests_next_columns; A's columns past the last of
  // B's after it), else a planned share before each column. A column of
  // whole lines a cursor's call (L = 8 doubles, 16 floats: N lines).
  constexpr int element_bytes = L * int(sizeof(T));
  constexpr int column_lines  = N * element_bytes / BlockPrefetch::line;
  const bool by_columns       = trsm_columns_are_whole_lines<T, L>(N) && prefetch.by_cursors &&
                          prefetch.ranges == 2;
  auto next_a                 = prefetch.cursor<column_lines>(0);
  auto next_b                 = prefetch.cursor<column_lines>(1);
  // Of A's column j only the lines of its uplo triangle (rows j..N-1 or
  // 0..j), the lines the solve reads, not the other triangle's too.
  // Measured on AVX-512 Zen 4 (the micro-driver of
  // trsm_requests_next_columns, the two forms and Kokkos Kernels taking
  // turns call by call, ibla over the faster Kokkos Kernels, whole columns
  // -> the triangle's lines): flushed (5 runs) n = 4 0.91-1.13 ->
  // 0.91-1.17, 5 1.11-1.36 -> 1.16-1.39, 6 1.05-1.26 -> 1.04-1.31, within
  // the runs' spread; in cache, 10^4 problems (2 runs) n = 4 1.17 -> 1.18,
  // 5 1.05-1.06 -> 1.06-1.08, 6 1.14-1.15 -> 1.20-1.22, and 2000 problems
  // n = 4 1.34 -> 1.43, 6 1.23 -> 1.26.
  const auto next_a_column = [&](const int j) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
    if (lower) {
      next_a.part(j * element_bytes / BlockPrefetch::line, column_lines);
    } else {
      next_a.part(0, j * element_bytes / BlockPrefetch::line + 1);
    }
  };
  auto solve = [&](const auto& tri, auto is_lower) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
    if (!one_col && !by_columns) prefetch.plan(cols);
    for (int j = 0; j < cols; ++j) {
      if (by_columns) {
        if (j < N) next_a_column(j);
        next_b();
      } else if (!one_col) {
        prefetch.step();
      }
      for_each_lane(member, B.lanes,
                    TrsmRegisterLane<N, decltype(is_lower)::value, L, T,
                                     std::remove_cv_t<std::remove_reference_t<decltype(tri)>>,
                                     decltype(Bf), AllLanes>{alpha, tri, Bf, keep, j, {inv}});
    }
  };
  if (op == Op::N) {
    if (lower) solve(Af, std::true_type{});
    else solve(Af, std::false_type{});
  } else {
    const auto At = transposed_keeping_strides(Af);
    if (lower) solve(At, std::true_type{});
    else solve(At, std::false_type{});
  }
  if (by_columns)
    for (int j = cols; j < N; ++j) next_a_column(j);
  if (one_col) {
    prefetch.plan(1);
    prefetch.step();
  }
  return true;
}
#endif

/// trsm_left's tiles: forward or backward substitution, tile row by tile
/// row, MR x NR tiles.
template <bool Lower, int MR, int NR, class Member, class T, class BA, class BB, class Keep>
KOKKOS_FORCEINLINE_FUNCTION void trsm_tile_loops(const Member& member, const bool unit,
                                                 const T alpha, const BA& A, const BB& B,
                                                 const Keep& keep, BlockPrefetch& prefetch,
                                                 const T* shared_inv = nullptr) {
  const int m = B.rows, n = B.cols;
  prefetch.plan(index_t((m + MR - 1) / MR) * ((n + NR - 1) / NR));
  for (int j0 = 0; j0 < n; j0 += NR) {
    const int nr = n - j0 < NR ? n - j0 : NR;
    // Forward substitution walks the tile rows top-down, backward bottom-up;
    // the partial tile row is the last one walked.
    for (int t = 0; t < m; t += MR) {
      const int mr = m - t < MR ? m - t : MR;
      const int i0 = Lower ? t : m - t - mr;
      prefetch.step();
      detail::static_switch<MR>(mr, [&](auto rows) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
        detail::static_switch<NR>(nr, [&](auto cols) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
          trsm_tile<decltype(rows)::value, decltype(cols)::value, Lower>(member, i0, j0, unit,
                                                                         alpha, A, B, keep,
                                                                         shared_inv);
        });
      });
    }
  }
}

#if !IBLA_IMPL_DEVICE_PASS
IBLA_IMPL_OPERANDS_IN_REGISTERS_BEGIN
/// trsm_tile_loops compiled with its operands loaded into registers once
/// (see registers.hpp), for full host blocks with B at least one tile
/// wide: the MR x NR update then reuses each loaded value NR or MR times,
/// as GEMM's tile does. Measured (ibla_bench --ops trsm, double, 10^4
/// problems, 2 threads, 3 alternated runs, medians of the better L, AVX-512
/// Zen 4, GCC 12), nrhs = n, GFLOP/s: warm n = 10 25.0 -> 30.6, 16 30.7 ->
/// 39.3, 32 34.7 -> 47.7; flushed n = 16 29.7 -> 35.9, 32 36.7 -> 48.8,
/// n = 10, 12 0.90x and 1.00x; 1 thread, 16 problems in L2, 400 calls,
/// median: n = 10 9.5 -> 11.8, 16 16.5 -> 22.5, 32 22.8 -> 35.4. With
/// nrhs = 1 (tiles one column wide) the whole of TRSM under this tuning
/// was no faster (n = 16 warm 6.8 -> 5.0, flushed 0.72-1.08x), so those
/// keep the default.
template <bool Lower, int MR, int NR, class Member, class T, class BA, class BB, class Keep>
KOKKOS_INLINE_FUNCTION void trsm_tile_loops_operands_in_registers(
    const Member& member, const bool unit, const T alpha, const BA& A, const BB& B,
    const Keep& keep, BlockPrefetch& prefetch, const T* shared_inv) {
  trsm_tile_loops<Lower, MR, NR>(member, unit, alpha, A, B, keep, prefetch, shared_inv);
}
IBLA_IMPL_OPERANDS_IN_REGISTERS_END
#endif

/// T X = alpha B for T = A lower (Lower) or upper triangular, B of
/// A.rows x B.cols: forward or backward substitution, tile row by tile row.
template <bool Lower, class Member, class T, class BA, class BB, class Keep>
KOKKOS_INLINE_FUNCTION void trsm_left(const Member& member, const bool unit, const T alpha,
                                      const BA& A, const BB& B, const Keep& keep,
                                      BlockPrefetch& prefetch) {
#if !IBLA_IMPL_DEVICE_PASS
  constexpr int L = fixed_lanes<typename BB::lane_count>::value;
  if constexpr (L > 0) {
    // Only the thread that runs the host lane loops: the reciprocals'
    // overflow flags are filled by a lane loop and read outside it.
    if (member.team_rank() != 0) return;
    if (B.rows >= 1 && B.rows <= trsm_register_order && detail::host_order_compiled(B.rows)) {
      bool solved = false;  // false: a reciprocal of the diagonal overflows
      detail::static_switch<trsm_register_order>(B.rows, [&](auto order) {
        if constexpr (detail::host_order_specialised<decltype(order)::value>)
          solved = trsm_registers_host<decltype(order)::value, Lower, L>(member, unit, alpha, A,
                                                                         B, keep, prefetch);
      });
      if (solved) return;
    }
  }
#endif
  // Fewer rows where a lane value takes two registers (see host_tile_rows):
  // L = 16 doubles on AVX-512, nrhs = n, 2 x 4 against 4 x 4 tiles
  // (10^4 problems in cache, 2 threads, minimum of 100 calls, 2 runs):
  // n = 12 1.15-1.17x, 16 1.10-1.13x, 32 1.18-1.22x; nrhs = 1 unchanged.
  constexpr int MR = IBLA_IMPL_DEVICE_PASS
                         ? trsm_tile_rows
                         : host_tile_rows<T, fixed_lanes<typename BB::lane_count>::value>(
                               trsm_tile_rows);
  constexpr int NR = trsm_tile_cols;
#if !IBLA_IMPL_DEVICE_PASS
  if constexpr (fixed_lanes<typename BB::lane_count>::value > 0) {
    if (B.cols >= NR) {
      // The reciprocals once for the block, instead of once per tile row
      // and column of tiles (trsm_tile's shared_inv). ibla::trsm, left lower
      // non-unit, nrhs = n, L = 8 doubles, 1 thread, 64 problems in cache,
      // medians of 2001 calls, GFLOP/s: n = 9 14.6 -> 18.3, 16 28.0 -> 36.0,
      // 17 27.8 -> 34.1, 19 31.0 -> 38.5, 32 36.9 -> 43.8; L = 16 doubles
      // 1.15-1.22x, 16 floats 1.24-1.47x (n = 9..32).
      constexpr int L = fixed_lanes<typename BB::lane_count>::value;
      alignas(64) T inv[trsm_shared_reciprocal_rows * L];
      const bool share =
          !unit && B.rows <= trsm_shared_reciprocal_rows &&
          !diagonal_reciprocals_overflow_rows<L>(member, B.lanes, B.rows, A, &inv[0]);
      trsm_tile_loops_operands_in_registers<Lower, MR, NR>(member, unit, alpha, A, B, keep,
                                                           prefetch, share ? &inv[0] : nullptr);
      return;
    }
  }
#endif
  trsm_tile_loops<Lower, MR, NR>(member, unit, alpha, A, B, keep, prefetch);
}

KOKKOS_INLINE_FUNCTION constexpr Uplo flip(Uplo u) { return u == Uplo::Lower ? Uplo::Upper : Uplo::Lower; }

/// team::trsm with a per-lane store mask (see trsm_tile) and the prefetch
/// of the next block (batch-level TRSM).
template <class Member, class T, class BA, class BB, class Keep>
KOKKOS_INLINE_FUNCTION void trsm_masked(const Member& member, Side side, Uplo uplo, Op trans,
                                        Diag diag, const T alpha, const BA& A, const BB& B,
                                        const Keep& any_keep, BlockPrefetch& prefetch) {
  if (B.rows == 0 || B.cols == 0) return;
  const auto keep = lane_wide_keep<T>(member, B.lanes, any_keep);
  if (alpha == T(0)) {
    // BLAS: B = 0 without reading A or B (select keeps masked lanes).
    for (int j = 0; j < B.cols; ++j)
      for (int i = 0; i < B.rows; ++i)
        for_each_lane(member, B.lanes, [&](const int l) {
          T& out = B(i, j, l);
          out    = keep(l) ? T(0) : out;
        });
    return;
  }
  // Right -> Left on B^T with op flipped; then op(A) = A^T flips the triangle.
  const bool right = side == Side::Right;
  const Op op      = right ? (trans == Op::N ? Op::T : Op::N) : trans;
  const auto Bl    = right ? transposed(B) : runtime_strides(B);
  const auto Al    = apply_op(op, A);
  const bool lower = (op == Op::N ? uplo : flip(uplo)) == Uplo::Lower;
  const bool unit  = diag == Diag::Unit;
  if (lower) trsm_left<true>(member, unit, alpha, Al, Bl, keep, prefetch);
  else trsm_left<false>(member, unit, alpha, Al, Bl, keep, prefetch);
}

template <class Member, class T, class BA, class BB, class Keep>
KOKKOS_INLINE_FUNCTION void trsm_masked(const Member& member, Side side, Uplo uplo, Op trans,
                                        Diag diag, const T alpha, const BA& A, const BB& B,
                                        const Keep& keep) {
  BlockPrefetch none;
  trsm_masked(member, side, uplo, trans, diag, alpha, A, B, keep, none);
}

/// Whether a full host block whose triangle has this order, solved for
/// `cols` columns, takes a register form of one right-hand side whose
/// largest order is MaxOrder and which requests its prefetch after the
/// solve (TRSM's trsm_registers_fixed_order_host, to
/// trsm_one_column_register_order; POTRS's potrs_one_column_registers_host,
/// to one_column_register_order, whose prefetch starts past
/// potrs_prefetch_order): what batch-level TRSM and POTRS set their
/// prefetch distance by (one_column_prefetch_ahead). Both forms need A's
/// row stride to be the compile-time L, where MaxOrder is past
/// trsm_register_order; with a runtime one it is trsm_register_order, and
/// the forms that take the block request before their columns. False on
/// device.
template <int MaxOrder>
KOKKOS_INLINE_FUNCTION constexpr bool one_column_register_form(const index_t order,
                                                               const index_t cols) {
#if !IBLA_IMPL_DEVICE_PASS
  return MaxOrder > trsm_register_order && cols == 1 && order >= 1 && order <= MaxOrder &&
         detail::host_order_compiled(int(order));
#else
  (void)order;
  (void)cols;
  return false;
#endif
}

/// TRSM (team::trsm, batch-level TRSM) on a full host block whose A's row
/// stride is the compile-time L, with any number of right-hand sides up to
/// trsm_several_columns_register_order and one past it (up to
/// trsm_one_column_register_order): trsm_registers_fixed_order_host, or
/// trsm_masked where that leaves the block. Returns whether the block is
/// done. Past trsm_register_order the tile form it replaces
/// solved one column 1.3-2.5x slower (team::trsm on blocks in cache,
/// orders 9..16; perf_tests/RESULTS.md), as GETRS's and POTRS's did, and ran out of cache
/// at 0.6-0.9x of it at orders 17..24 (see trsm_one_column_register_order).
/// Not in trsm_masked, which
/// POSV's and GESV's solves share and which take their own one-column
/// forms: a second set there would be compiled into every solver for
/// nothing (a set of fixed-order forms in trsm_masked took the tests'
/// factor_and_solve.cpp 1.7x as long to compile, see perf_tests/RESULTS.md).
/// Order > 0: B.rows is Order (a kernel of one order, see
/// trsm_host_order_kernels), so no dispatch on it.
template <int Order = 0, class Member, class T, class BA, class BB>
KOKKOS_INLINE_FUNCTION bool trsm_registers_fixed_order(const Member& member, const Side side,
                                                       const Uplo uplo, const Op trans,
                                                       const Diag diag, const T alpha,
                                                       const BA& A, const BB& B,
                                                       BlockPrefetch& prefetch) {
#if !IBLA_IMPL_DEVICE_PASS
  constexpr int L     = fixed_lanes<typename BB::lane_count>::value;
  constexpr int order = trsm_one_column_register_order<typename BA::row_stride>;
  if constexpr (L > 0 && order > trsm_register_order) {
    const bool form = B.cols >= 1 && B.rows >= 1 &&
                      (B.cols == 1 ||
                       B.rows <= trsm_several_columns_register_order<typename BA::row_stride>) &&
                      B.rows <= order &&
                      detail::host_order_compiled(B.rows);
    if (side != Side::Left || alpha == T(0) || !form) return false;
    // Only the thread that runs the host lane loops (see trsm_left); the
    // fallback below runs on it too.
    if (member.team_rank() != 0) return true;
    const bool lower = (trans == Op::N ? uplo : flip(uplo)) == Uplo::Lower;
    bool solved      = false;
    if constexpr (Order > 0) {
      solved = trsm_registers_fixed_order_host<Order, L>(member, lower, trans, diag == Diag::Unit,
                                                         alpha, A, B, prefetch);
    } else {
      detail::static_switch<order>(B.rows, [&](auto n) {
        constexpr int N = decltype(n)::value;
        if constexpr (detail::host_order_specialised<N>)
          solved = trsm_registers_fixed_order_host<N, L>(member, lower, trans,
                                                         diag == Diag::Unit, alpha, A, B, prefetch);
      });
    }
    if (!solved) trsm_masked(member, side, uplo, trans, diag, alpha, A, B, AllLanes{}, prefetch);
    return true;
  }
#endif
  (void)member, (void)side, (void)uplo, (void)trans, (void)diag, (void)alpha, (void)A, (void)B,
      (void)prefetch;
  return false;
}

}  // namespace impl

namespace team {

/// B = alpha * op(A)^{-1} B (Side::Left) or alpha * B op(A)^{-1}
/// (Side::Right) on one block of matrices; A and B are blocks from
/// ibla::lane_block over the same matrices. B may be a rank-2 block (one
/// right-hand side). Every thread of the team calls it; results are visible
/// to the team on return.
template <class Member, class Scalar, class BA, class BB>
KOKKOS_INLINE_FUNCTION void trsm(const Member& member, Side side, Uplo uplo, Op trans, Diag diag,
                                 const Scalar alpha, const BA& A, const BB& B) {
  using T = std::remove_const_t<typename BB::value_type>;
  impl::BlockPrefetch none;
  if (!impl::trsm_registers_fixed_order(member, side, uplo, trans, diag, T(alpha), A, B, none))
    impl::trsm_masked(member, side, uplo, trans, diag, T(alpha), A, B, impl::AllLanes{}, none);
  team_sync(member);
}

}  // namespace team

namespace impl {
/// Batch-level TRSM prefetches the next block only where A's order is
/// above this one. Up to it a block is read front to back by the register
/// forms in a few dozen instructions, which the hardware prefetcher
/// follows, and the prefetch of the next block cost more than it saved.
/// Measured (double, 10^4 problems, 2 threads, ibla_bench --ops trsm, 5
/// alternated runs of 41 repetitions, ratio of the medians of each cell's
/// median, L = 8 and 16), without the prefetch at n <= 8 against with it:
/// n = 2..4 warm 1.05-1.67x, flushed 0.89-2.04x (the 2.04x: nrhs = n, n =
/// 4, L = 8); n = 5..8 warm 1.09-1.42x, but flushed 0.61-0.86x with one
/// right-hand side, where the prefetch stays. This threshold against the
/// prefetch at every n (5 more alternated runs, --ops trsm,posv --sizes
/// 2..5): n = 2..4 warm 1.06-1.46x, flushed 1.02-1.20x but for nrhs = 1,
/// n = 4, L = 16 (0.87x; L = 8 there 1.13x, and the better L is 1.13x);
/// n = 5 and POSV (unchanged) 0.97-1.06x but for one bimodal cell.
inline constexpr index_t trsm_prefetch_order = 4;

/// Up to this order batch-level TRSM (TrsmBlocks) requests nothing of the
/// next block where B has several columns and A is block-interleaved
/// (trsm_registers_fixed_order_host's blocks). A block of order 8 is 64 lines
/// of A and 8 of every column of B (L = 8 doubles), and a batch of 10^4
/// such problems stays in L3, from where the hardware prefetcher keeps up;
/// the requests (a share before every column, planned over the columns)
/// then cost more than they save, and only a batch out of cache gains
/// from them. Measured (ibla_bench --ops trsm --impls ibla,kk-simd --reps
/// 21, nrhs = n, 10^4 doubles, 4 alternated runs with the requests,
/// medians, GFLOP/s, pairs won), warm: L = 8 n = 5 36.9 -> 53.7, 6 45.7 ->
/// 69.2, 8 61.6 -> 78.2, L = 16 n = 5 42.6 -> 60.9, 6 52.9 -> 67.0, 8
/// 62.3 -> 71.5 (4 of 4 each), n = 2..4 1.01-1.09x; flushed (the VM's
/// memory in a slow phase): L = 8 n = 5 16.9 -> 13.1, 6 20.8 -> 17.4 (0
/// of 4), 8 1.10x (4), L = 16 n = 6 0.95x (0 of 4), 5 1.05x, 8 1.02x, n
/// = 2..4 1.00-1.07x. Past 8 (a micro-driver at n = 10 and 16, 10^4
/// problems, B restored before each call, 2 runs) the requests gained
/// 1.15-1.16x and 1.7x. The choice is TrsmBlocks', which then adds no
/// range: made inside trsm_registers_fixed_order_host (its column loop
/// without plan and steps up to this order) it had also changed that
/// function's code for one right-hand side, whose requests were the same,
/// and TRSM nrhs = 1 lost 10-25% flushed at n = 2..6 (micro-driver, n = 3,
/// L = 8, 10^4 problems, 5 alternated runs: 20.2-22.1 -> 22.9-25.8 us).
/// That was a Zen 5 (AMD EPYC VM, AVX-512). On an Intel Xeon VM (family 6
/// model 167, AVX-512, 2 threads) orders 7 and 8 gained from the requests
/// in cache as well as from memory, so elsewhere than on Zen cores with
/// AVX-512 (host_is_zen_with_avx512) the order is 6. Micro-driver (outside
/// the repo: ibla::trsm left lower non-unit, alpha 1.5, nrhs = n, 10^4
/// problems, B restored before each call, separate binaries alternated, 2
/// runs, medians of 41 calls, microseconds, up to 8 -> up to 6): doubles L
/// = 8 in cache n = 7 138-148 -> 128-130, 8 186-192 -> 167-168; flushed
/// (clflushopt) 7 273-276 -> 252, 8 374-375 -> 330-331; L = 16 in cache 7
/// 138-139 -> 124, 8 201-203 -> 164-167, flushed 7 284-287 -> 243-244, 8
/// 418-419 -> 322-323; floats L = 16 in cache 7 73-75 -> 65-68, 8 91-100
/// -> 89, flushed 7 127 -> 118-119, 8 180-181 -> 160; n = 5, 6 unchanged.
/// With the requests from order 5 (up to 4), n = 5 lost (in cache 70-72
/// -> 77, flushed 113-114 -> 121-122). AVX2 hosts were not measured.
inline constexpr int trsm_several_columns_unrequested_order = host_is_zen_with_avx512 ? 8 : 6;

/// Whether batch-level TRSM with one right-hand side on block-interleaved
/// A requests nothing of the blocks ahead, at every order: on Zen cores
/// with AVX-512 (host_is_zen_with_avx512), where the requests (a run of
/// prefetches per column of A's triangle, see prefetch_block_triangle_ahead)
/// cost more than they save, in cache and out of it. Measured on Zen 5
/// (micro-driver: ibla::trsm left lower non-unit, alpha 1.5, 10^4 problems,
/// L = 8 doubles, B restored before each call, 2 threads, medians of 201-401
/// calls, 2 runs, microseconds, requests -> none): in cache n = 6 21.3-21.8
/// -> 13.6-14.2, 8 29.8-30.1 -> 19.2-19.3, 10 41.0-42.6 -> 26.8-31.2, 16
/// 0.96-0.97x, 24 0.98x, 32 1.13x; flushed n = 5 44 -> 32-34, 6 1.03x, 8
/// 126 -> 83, 9 1.14x, 12 1.16-1.21x, 16..32 1.01-1.09x. ibla_bench
/// (--ops trsm --impls ibla,kk-simd --reps 21, 10^4 doubles, 3 runs
/// alternated with the requests, medians): nrhs = 1 warm L = 8 n = 5..12,
/// 20, 24 1.34-1.73x, 16 0.85x, L = 16 1.07-1.81x; flushed L = 8 n = 6..32
/// 1.02-1.49x, L = 16 n = 5, 6, 12..32 1.02-1.49x, 8, 10 0.91-0.96x, and
/// L = 8 n = 5 0.72x (6 runs, 0 of 6), where L = 16 gained 1.49x (5 of 6).
/// On the Intel Xeon VM they had gained flushed (prefetch.hpp), so they
/// stay elsewhere. On a Zen 4 (host_is_amd_family_19h) only up to order 8:
/// past it the requests gained from memory as much as they had on the
/// Xeon. Measured there (the micro-driver above, L = 8, 2 runs of 101
/// calls, microseconds, requests -> none): flushed n = 5 90 / 56 -> 116 /
/// 66, 6 0.97x / 1.10x, 8 0.94x / 0.94x, 10 133 -> 229, 12 161 -> 325, 16
/// 279 -> 655, 24 790 -> 1388, 32 1184 -> 1731 (1.5-2.3x slower without);
/// in cache n = 5 25.1 -> 17.3, 6 37.9 -> 20.7, 8 44.1 -> 30.2, 10 57-67
/// -> 45, 12 72 -> 59, 16 115 -> 99 (with them at 0.55-0.86x the speed), 24
/// 1.0x, and 32 (10^4 problems are larger than the L3) 674-722 ->
/// 1162-1291. So the orders up to 16 that lose in cache gain flushed more,
/// and the TRSM cells that lose in cache stay ahead of the peers there.
/// The largest order without requests; 0: requests at every order past
/// trsm_prefetch_order. Host only, read once.
inline int trsm_one_column_unrequested_order() {
  if constexpr (!host_is_zen_with_avx512) return 0;
  return host_is_amd_family_19h() ? 8 : 32;
}

/// How many blocks ahead batch-level TRSM and POTRS prefetch (see
/// prefetch_block_triangle_ahead): 2 where their one-column register forms
/// on block-interleaved A take the block (one_column_register_form), else
/// 1. Those forms request the prefetch all at once after
/// their solve and solve a block in less time than its lines take to come
/// from memory: requested for the next block, the lines were still on
/// their way when its solve read them. Measured (micro-drivers, 10^4
/// problems, 2 threads, L = 8, flushed, GFLOP/s, medians of 3-6 alternated
/// runs, 1 -> 2 blocks ahead): TRSM n = 9 7.0 -> 8.8, 12 7.5 -> 9.7, 16 8.0
/// -> 8.2; POTRS n = 16 11.9-13.7 -> 14.5-15.6 (n = 9, 12 and warm runs
/// unchanged). GETRS's one-column form, which requests its prefetch (the
/// whole next block) before its solve, was no faster 2 ahead (n = 9, 12,
/// 16: 11.4-12.3, 10.7-11.1, 9.6-10.4 against 11.5-12.9, 10.6-11.7,
/// 9.8-10.8 at 1) and keeps 1.
template <int MaxOrder>
KOKKOS_INLINE_FUNCTION constexpr index_t one_column_prefetch_ahead(const index_t order,
                                                                   const index_t cols) {
  return one_column_register_form<MaxOrder>(order, cols) ? 2 : 1;
}

/// Host batch-level TRSM (Side::Left) of orders up to this one runs a
/// kernel of its order (with_trsm_host_order), whose blocks call that
/// order's register form (trsm_registers_fixed_order_host) without the
/// dispatch on the order, as GETRF's (getrf_host_order_kernels): an
/// out-of-line trsm_registers_fixed_order and a jump table were about 45% of
/// a block's time at n = 2 with one right-hand side (perf, cpu-clock
/// samples, 10^4 problems in cache, L = 8 doubles). Micro-driver
/// (ibla::trsm left lower non-unit, alpha 1.5, 10^4 problems, A in cache
/// and B restored before each call, L = 8 doubles, 2 threads, medians of
/// 1001 calls, microseconds a call, 2 alternated runs), nrhs = 1 / nrhs =
/// n: n = 2 6.35-6.63 -> 5.24-5.39 / 6.8 -> 5.7, 3 6.8 -> 5.7 / 9.9-10.3 ->
/// 9.2-9.3, 4 8.6 -> 6.8-7.3 / 16.9 -> 14.4; with kernels up to 8, n = 5
/// 1.05x / 0.99x, 6 1.03x / 1.02x, 8 1.00x / 1.03x, so not past 4 (each
/// order is one more kernel per type and pair of layouts).
inline constexpr int trsm_host_order_kernels = 4;

/// Calls f(std::integral_constant<int, N>{}) with the HostOrder of
/// batch-level TRSM's kernel: N = m, the order of A, for Side::Left on host
/// up to trsm_host_order_kernels where A's blocks have a compile-time row
/// stride (trsm_registers_fixed_order's blocks) and the order is compiled;
/// else 0.
template <class T, int L, class ExecSpace, class AV, class F>
void with_trsm_host_order(const Side side, const index_t m, const F& f) {
#if !IBLA_IMPL_DEVICE_PASS
  if constexpr (is_host_space_v<ExecSpace> && L > 0) {
    using Block = decltype(lane_block(std::declval<const AV&>(), index_t(0), lanes_c<L>{}));
    if constexpr (!std::is_same<typename Block::row_stride, index_t>::value) {
      if (side == Side::Left && detail::with_host_kernel_order<trsm_host_order_kernels>(int(m), f))
        return;
    }
  }
#endif
  f(std::integral_constant<int, 0>{});
}

/// Whether batch-level TRSM (Side::Left, cols columns of B) on
/// block-interleaved A of order k requests A's whole block into L1, in
/// address order, before solving it (prefetcht0: 4 to 64 lines a block of
/// L = 8 doubles; the kernels of one order at constant offsets,
/// request_block_into_l1): up to order trsm_own_block_order, where the
/// block requests nothing of the blocks ahead (orders up to
/// trsm_prefetch_order; several columns up to
/// trsm_several_columns_unrequested_order; one column up to
/// one_column_unrequested, trsm_one_column_unrequested_order's value). The
/// register forms read A's diagonal first (its reciprocals), a line every
/// n + 1, then the triangle a column at a time, with the solve's dependent
/// arithmetic between; from memory the block's lines then came a few at a
/// time, and Kokkos Kernels' SIMD packs (no requests either) ran ahead of
/// ibla there. Measured on AMD EPYC Zen 4 (micro-driver outside the repo:
/// ibla::trsm left lower non-unit, alpha 1.5, 10^4 problems, L = 8
/// doubles, 2 threads, B restored before each call, clflushopt-flushed or
/// not; the requests switched by a variable, with and without taking turns
/// call by call with KokkosBatched::SerialTrsm on Vector<SIMD<double>, 8>
/// packs in one process, medians of 101 calls, 2-3 runs; ibla / the faster
/// of Kokkos Kernels' Unblocked and Blocked, without -> with): flushed
/// nrhs = n n = 3 0.99 -> 1.01-1.02, 4 0.79-0.81 -> 0.79-0.80, 5 0.82-0.83
/// -> 0.91-0.94, 6 0.80-0.83 -> 0.91-0.92, 8 1.58-1.62 -> 1.49-1.52; one
/// right-hand side n = 3 1.12-1.19 -> 1.21-1.27, 4 0.96-1.08 -> 1.32-1.48,
/// 5 1.11-1.12 -> 1.48, 6 1.05-1.06 -> 1.27-1.30, 7 1.21-1.23 -> 1.34-1.35,
/// 8 1.28-1.30 -> 1.38-1.39; in cache nrhs = n n = 3 1.02-1.05x, 4..6
/// 0.97-1.00x, 8 1.5x; one right-hand side n = 3, 4 0.97-1.02x, 5..8
/// 0.84-0.87x (1.53 -> 1.33 of Kokkos Kernels at n = 5, 1.56 -> 1.35 at
/// 8). ibla_bench (--ops trsm --sizes 2,3,4,5,6,8 --impls ibla,kk-simd
/// --reps 21, 10^4 doubles, 3 runs alternated, the medians of each run's
/// ibla / kk-simd; its memory speed moved 2x between runs) with the
/// requests up to order 4 and for several columns: flushed nrhs = n n = 3
/// 0.93 -> 1.02, 5 0.87 -> 1.02, 6 0.85 -> 1.03, 4 0.86 -> 0.81; one
/// right-hand side n = 3 0.85 -> 1.00, 4 0.82 -> 0.99; warm nrhs = n n = 4
/// 1.34 -> 1.16, 6 1.06 -> 0.98; then one right-hand side up to 8 too
/// (the same, 3 runs in a steadier phase): flushed n = 5 0.75-0.77 ->
/// 1.21-1.29, 6 0.73-0.76 -> 1.14-1.20, 8 1.33-1.45 -> 2.12-2.23; warm n = 5
/// 1.29-1.31 -> 1.05-1.12, 6 1.26-1.29 -> 1.17-1.19, 8 1.29 -> 1.07-1.09;
/// n = 4 and 10 and several columns 0.97-1.05x. B's whole block as well
/// gained flushed about as much more but cost 0.83-0.92x in cache; loads
/// of A's lines in address order instead of requests, or requests of every
/// second or fourth line, gained less flushed. Not measured on Zen 5 (no requests
/// ahead for one column up to order 32 there) or Intel (requests ahead
/// for one column past order 4).
inline constexpr index_t trsm_own_block_order = 8;

/// From this order a block that requests its own A (trsm_requests_own_block)
/// requests only A's uplo triangle (request_triangle_into_l1): the other
/// triangle's lines, never read, took line-fill buffers from the lines the
/// solve waits for. Below it the whole block, a few consecutive lines that
/// the hardware prefetcher follows. Measured on the Intel Xeon VM (family
/// 6 model 167, AVX-512; micro-driver outside the repo: ibla::trsm left
/// lower non-unit, alpha 1.5, nrhs = n, 10^4 problems, A and B restored by
/// Kokkos::deep_copy before each call as ibla_bench does, warm after an
/// untimed call or flushed with clflushopt, 2 threads, medians of 31 calls,
/// 3 alternated runs of the two builds, whole block -> triangle, us): warm
/// n = 5 L = 8 52.2-54.2 -> 45.1-45.9, L = 16 52.9-53.5 -> 43.4-43.7; n = 6
/// L = 8 96.4-98.4 -> 85.7-86.6, L = 16 95.7-96.3 -> 81.6-82.4; flushed n =
/// 5 L = 8 115-118 -> 120-124, L = 16 120-124 -> 116-119; n = 6 L = 8
/// 173-176 -> 175-183, L = 16 182-183 -> 176-180. At n = 4 within
/// 0.97-1.05x either way, and n = 2, 3 lost flushed (n = 2 L = 8 26.1-27.2
/// -> 28.1-32.2, L = 16 22.0-22.9 -> 24.2-27.0). Kokkos Kernels' Blocked
/// SerialTrsm on SIMD packs (compiled as ibla_bench compiles it) took
/// 49.1-51.6 (n = 5) and 87.5-87.9 (n = 6) warm in the same driver.
/// ibla_bench (--ops trsm --impls ibla,kk-simd --reps 21, 3 alternated
/// runs, nrhs = n, the better L over Kokkos Kernels' packs): warm n = 5
/// 0.95-0.98 -> 1.13-1.20, 6 0.89-0.92 -> 1.03-1.06; flushed n = 5
/// 1.23-1.25 -> 1.23-1.26, 6 1.15-1.16 -> 1.14-1.16. Not measured on Zen
/// cores, where these blocks reach order 8.
inline constexpr index_t trsm_own_triangle_first_order = 5;

/// Whether batch-level TRSM on block-interleaved A of order k (cols
/// columns of B; 0 for Side::Right) requests nothing of the blocks ahead:
/// up to trsm_prefetch_order, and up to
/// trsm_several_columns_unrequested_order or one_column_unrequested
/// (trsm_one_column_unrequested_order's value) for Side::Left. Other
/// layouts request past trsm_prefetch_order.
KOKKOS_INLINE_FUNCTION constexpr bool trsm_requests_nothing_ahead(
    const index_t k, const index_t cols, const int one_column_unrequested) {
  return k <= trsm_prefetch_order || (cols > 1 && k <= trsm_several_columns_unrequested_order) ||
         (cols == 1 && k <= index_t(one_column_unrequested));
}

KOKKOS_INLINE_FUNCTION constexpr bool trsm_requests_own_block(const index_t k, const index_t cols,
                                                              const int one_column_unrequested) {
  return k <= trsm_own_block_order && trsm_requests_nothing_ahead(k, cols, one_column_unrequested);
}

static_assert(trsm_host_order_kernels <= trsm_prefetch_order,
              "TRSM's kernels of one order request their own block (trsm_requests_own_block)");

/// Orders from the first to the last of these request the next block
/// column by column (trsm_requests_next_columns).
inline constexpr index_t trsm_next_columns_first_order = 4;
inline constexpr index_t trsm_next_columns_last_order  = 6;

/// Whether batch-level TRSM (Side::Left, cols columns of B) on
/// block-interleaved A of order k, which requests nothing of the blocks
/// ahead, requests the next block's A and B a column at a time, column j
/// of each as column j of B is solved (BlockPrefetch::cursor, see
/// trsm_registers_fixed_order_host): with several columns at orders
/// trsm_next_columns_first_order .. trsm_next_columns_last_order. Those
/// blocks read A's block into L1 first and then B front to back, which the
/// hardware prefetcher followed more slowly than a column's requests:
/// Kokkos Kernels' SIMD packs (Unblocked SerialTrsm on the same bytes)
/// were ahead from memory at n = 4..6. The planned requests of earlier
/// sessions (a share before each column through plan() and step(), 1, 2
/// or 4 blocks ahead) had lost there (0.56-0.94 of Kokkos Kernels).
/// Measured on AVX-512 Zen 4 (micro-driver outside the repo: ibla::trsm
/// left lower non-unit, alpha 1.5, nrhs = n, 10^4 problems, L = 8 doubles,
/// B restored before each call, 2 threads, the forms taking turns call by
/// call with Kokkos Kernels' Blocked and Unblocked SerialTrsm on SIMD
/// packs, medians of 101 calls, ibla over the faster Kokkos Kernels,
/// without -> with, runs in different minutes): flushed n = 4 0.85, 0.78,
/// 0.88, 0.82, 0.86, 1.02 -> 0.94, 0.92, 0.98, 0.96, 0.99, 1.04; 5 0.91,
/// 0.94, 1.20, 1.40, 1.04, 1.52 -> 1.05, 1.10, 1.27, 1.71, 1.12, 1.35; 6
/// 0.91, 0.93, 0.90, 1.33, 1.49, 1.42 -> 1.04, 1.05, 1.02, 1.50, 1.65, 1.72
/// (the VM's memory speed moved Kokkos Kernels 2x between runs); in cache
/// (the same 10^4 problems)
/// n = 4 1.57, 1.40, 1.50, 1.55 -> 1.35, 1.22, 1.27, 1.29; 5 1.24, 1.24,
/// 1.31, 1.38 -> 1.12, 1.12, 1.20, 1.24; 6 1.33, 1.32, 1.38, 1.35 -> 1.24,
/// 1.23, 1.29, 1.20. So from memory 1.1-1.2x at n = 4..6 (one run of six lost
/// at n = 5) for 0.83-0.93x in cache, where ibla stays ahead. Orders 7, 8
/// gained less flushed (1.0-1.3x) and lost up to 0.77x in cache, n = 2, 3
/// gained nothing (flushed 0.96-1.04x, in cache 0.88-0.93x); one column, with
/// no columns to spread them over, lost (n = 4, 6: flushed 0.61-0.91x); A's
/// next block only or B's only gained about half as much. The requests
/// through loops over the ranges and their ends instead of cursors cost
/// 0.61-0.86x in cache. Not measured on Zen 5 or Intel.
KOKKOS_INLINE_FUNCTION constexpr bool trsm_requests_next_columns(const index_t k,
                                                                 const index_t cols) {
  return cols > 1 && k >= trsm_next_columns_first_order && k <= trsm_next_columns_last_order;
}

/// HostOrder > 0: a kernel of one order (with_trsm_host_order).
template <class T, class AV, class BV, int HostOrder = 0>
struct TrsmBlocks {
  static_assert(HostOrder >= 0, "HostOrder: 0, or the order of a kernel of one order");
  Side side;
  Uplo uplo;
  Op trans;
  Diag diag;
  T alpha;
  AV A;
  BV B;
  // With one right-hand side, no requests up to this order of A: see
  // trsm_one_column_unrequested_order.
  int one_column_unrequested_order;
  template <class Member, class Lanes>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, index_t first, Lanes lanes) const {
    // TRSM reads A a tile row at a time (one triangle), which the hardware
    // prefetcher does not follow: see prefetch.hpp. The prefetch takes A's
    // uplo triangle of the next block and B's whole block (measured, double,
    // 10^4 problems, 2 threads, flushed: nrhs = n, n = 16 10.2 -> 15.5, n =
    // 32 20.2 -> 27.3 GFLOP/s against no prefetch; with one right-hand side,
    // where A is nearly all the traffic, the whole block of A had lost at
    // n = 32, 2.9 -> 2.2, and its triangle gains: see prefetch.hpp). Not for
    // k <= trsm_prefetch_order (see there).
    // The kernels of one order below trsm_next_columns_first_order
    // (with_trsm_host_order) request nothing, so they hold no code for it.
    BlockPrefetch prefetch;
    if constexpr (HostOrder == 0 || HostOrder >= trsm_next_columns_first_order) {
      const index_t k    = index_t(A.extent(1));
      const index_t cols = side == Side::Left ? (BV::rank == 3 ? index_t(B.extent(2)) : 1) : 0;
      constexpr bool fixed_order_blocks =
          !std::is_same<lane_block_row_stride_t<AV>, index_t>::value;
      const bool requests_ahead =
          fixed_order_blocks ? !trsm_requests_nothing_ahead(k, cols, one_column_unrequested_order)
                             : k > trsm_prefetch_order;
      if (requests_ahead) {
        prefetch_block_triangle_ahead(
            prefetch, first,
            one_column_prefetch_ahead<trsm_one_column_register_order<lane_block_row_stride_t<AV>>>(
                k, cols),
            lanes, B.extent(0), uplo, A, B);
      } else if (fixed_order_blocks && trsm_requests_next_columns(k, cols) &&
                 trsm_columns_are_whole_lines<T, fixed_lanes<Lanes>::value>(k)) {
        prefetch_next_block(prefetch, first, lanes, B.extent(0), A, B);
        prefetch.by_cursors = true;
      }
    }
    const auto a = lane_block(A, first, lanes);
    const auto b = lane_block(B, first, lanes);
    // A's block requested into L1 first, in address order, where the block
    // requests nothing ahead (see trsm_requests_own_block); from
    // trsm_own_triangle_first_order only its uplo triangle, the lines the
    // solve reads.
    if constexpr (!std::is_same<lane_block_row_stride_t<AV>, index_t>::value &&
                  fixed_lanes<Lanes>::value > 0) {
      if constexpr (HostOrder > 0) {
        // A kernel of one order: Side::Left, and every block the same size.
        request_block_into_l1<index_t(HostOrder) * HostOrder * fixed_lanes<Lanes>::value *
                              index_t(sizeof(T))>(a.data);
      } else if (side == Side::Left &&
                 trsm_requests_own_block(index_t(A.extent(1)),
                                         BV::rank == 3 ? index_t(B.extent(2)) : 1,
                                         one_column_unrequested_order)) {
        if (index_t(A.extent(1)) >= trsm_own_triangle_first_order)
          request_triangle_into_l1(a, uplo);
        else
          request_whole_blocks_into_l1(a);
      }
    }
    if (!trsm_registers_fixed_order<HostOrder>(member, side, uplo, trans, diag, alpha, a, b,
                                               prefetch))
      trsm_masked(member, side, uplo, trans, diag, alpha, a, b, AllLanes{}, prefetch);
    team_sync(member);
  }
};

/// One matrix, one right-hand side: op(A) x = alpha b, op(A) of order N
/// with unit row stride (its columns contiguous), b a column. The
/// substitution of trsm_register_steps a column of op(A) at a time: x_r
/// times the reciprocal of the diagonal (divided where the reciprocal
/// overflows, as trsm_tile does in such a lane), then the rows not yet
/// solved updated with op(A)'s column r, a vector over those rows. The same
/// operations in the same order on every element as the block forms: the
/// same bits. each_step() runs before every column.
template <int N, bool Lower, class T, class BA, class BB, class EachStep>
KOKKOS_FORCEINLINE_FUNCTION void trsm_small_matrix(const bool unit, const T alpha, const BA& A,
                                                   const BB& B, EachStep& each_step) {
  T b[N];
#pragma omp simd
  for (int i = 0; i < N; ++i) b[i] = alpha * B(i, 0, 0);
  IBLA_IMPL_UNROLL
  for (int s = 0; s < N; ++s) {
    const int r = Lower ? s : N - 1 - s;
    each_step();
    if (!unit) {
      const T d = A(r, r, 0);
      b[r]      = reciprocal_overflows(d) ? b[r] / d : b[r] * (T(1) / d);
    }
    const T x = b[r];
#pragma omp simd
    for (int i = Lower ? r + 1 : 0; i < (Lower ? N : r); ++i)
      b[i] = fused_mul_add(-A(i, r, 0), x, b[i]);
  }
#pragma omp simd
  for (int i = 0; i < N; ++i) B(i, 0, 0) = b[i];
}

/// Batch-level TRSM with one right-hand side on host Views whose matrices
/// lie one after another (LayoutRight, LayoutStride), op(A) dense with its
/// columns contiguous (column-major A, or row-major A transposed), solves a
/// matrix at a time (trsm_small_matrix) at the orders of
/// trsm_small_matrix_order instead of packing blocks of L matrices into
/// block-interleaved scratch: the packs cost as much as the solve from
/// memory and several times it in cache (perf_tests/RESULTS.md, 2026-12-07:
/// n = 16 flushed 552-612 us against 291-325 on the native layout). A
/// matrix's substitution is a chain of dependent steps (about 10 cycles a
/// column), so this form wins where its vectors are whole (orders 2, 4, 8,
/// 16, 32 of doubles, AVX-512) and loses where GCC cuts the columns into
/// parts. Measured on AVX-512 Zen 5 (micro-driver outside the repo:
/// ibla::trsm left lower non-unit, alpha 1.5, on column-major matrices one
/// after another in a LayoutStride View, 10^4 problems, B restored, 2
/// threads, medians of 101 calls, 2 runs alternated, the same sums,
/// microseconds, packs -> this form): doubles warm n = 2 16.4-17.2 ->
/// 13.3-15.5, 4 29.3-38.4 -> 24.2-29.6, 8 132.6-133.7 -> 84.4-85.7, 16
/// 352-381 -> 266-282, 32 2367-2449 -> 2105-2326; flushed 2 20.8-25.0 ->
/// 16.8-18.8, 4 41.1-48.3 -> 36.4-38.5, 8 160.6-164.1 -> 138.9-157.2, 16
/// 658-673 -> 476-496, 32 2400-2404 -> 2265. But warm 3 26.7-31.3 ->
/// 44.6-50.7, 6 74.0-77.7 -> 110.4-116.7, 12 199.5-216.7 -> 245.0-246.1,
/// 24 1128-1197 -> 1302-1338 (flushed even there), and floats, whose
/// packs are twice as fast, lost at every order but 16 (warm n = 8 46 ->
/// 63-77, 32 1669-1802 -> 2177-2308). Two or four matrices interleaved (to
/// overlap their chains) lost to one: n = 16 warm 252 -> 449 / 366 (the
/// columns' values left the registers).
template <class T>
constexpr bool trsm_small_matrix_order(const index_t n) {
  return sizeof(T) >= 8 && (n == 2 || n == 4 || n == 8 || n == 16 || n == 32);
}

/// The largest order trsm_small_matrix_order takes.
inline constexpr int trsm_small_matrix_last_order = 32;

/// From this order, on a batch larger than the last-level cache
/// (batch_exceeds_last_level_cache), each matrix of TrsmSmallMatrices
/// requests the next one's A (a few lines a column, from its first line)
/// and B: the hardware prefetcher alone left order 32 (8 KB a matrix)
/// slower than the packs from memory. Measured on AVX-512 Zen 5 (the
/// micro-driver of trsm_small_matrix_order, microseconds, 2 runs, packs /
/// no requests -> the next matrix / the second / the fourth): n = 32, 10^4
/// doubles (82 MB) flushed 2780-3156 / 4487-5874 -> 2385-2851 / 2584-2911 /
/// 2246-3070, in L3 2944-3156 / 4220-4325 -> 2308-2772 / 2306-2999 /
/// 2437-3033; 10^3 problems, in cache, 129-135 / 55-56 -> 65 (hence only
/// from memory). Order 16 lost with them, flushed 598-630 -> 691-698 and
/// from memory (10^5 problems) 5798-6028 -> 6800-7165.
inline constexpr int trsm_small_matrix_requesting_order = 32;

/// Whether this host compiles trsm_small_matrix's batch form: 64-byte
/// vectors and 32 of them (AVX-512), where it was measured; elsewhere such
/// Views are packed as before.
inline constexpr bool trsm_has_small_matrices =
    !IBLA_IMPL_DEVICE_PASS && host_simd_bytes >= 64 && host_has_wide_register_file;

/// trsm_small_matrix over a batch, detail::small_matrices_per_index
/// consecutive matrices an index, op(A)'s strides compile-time constants.
/// With requests (trsm_small_matrix_requesting_order), each matrix requests
/// the next one's A over its columns, as many lines a column as cover A and
/// its first line's offset, and B's lines before them.
template <int N, class T, class AV, class BV>
struct TrsmSmallMatrices {
  Op trans;
  bool lower, unit;
  T alpha;
  AV A;
  BV B;
  bool requests;
  index_t batch;
  template <bool Lower, bool Requests>
  KOKKOS_FORCEINLINE_FUNCTION void run(const index_t first, const index_t end) const {
#if !IBLA_IMPL_DEVICE_PASS
    constexpr index_t bytes = index_t(N) * N * index_t(sizeof(T));
    constexpr int lines     = int((bytes + BlockPrefetch::line - 1) / BlockPrefetch::line) + 1;
    constexpr int per_step  = (lines + N - 1) / N;
    const auto line_of      = [](const T* p) {
      return BlockPrefetch::line_of(reinterpret_cast<const char*>(p));
    };
    for (index_t m = first; m < end; ++m) {
      const auto a      = apply_op(trans, lane_block(A, m, lanes_c<1>{}));
      const auto b      = lane_block(B, m, lanes_c<1>{});
      const bool next   = Requests && m + 1 < batch;
      if constexpr (Requests) {
        BlockPrefetch::LineCursor<per_step> next_a{next ? line_of(&A(m + 1, 0, 0)) : nullptr, {}};
        if (next) {
          BlockPrefetch::LineCursor<(N * int(sizeof(T)) + BlockPrefetch::line - 1) /
                                        BlockPrefetch::line + 1>
              next_b{line_of(&lane_block(B, m + 1, lanes_c<1>{})(0, 0, 0)), {}};
          next_b();
        }
        auto each_step = [&]() IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
          if (next) next_a();
        };
        trsm_small_matrix<N, Lower>(unit, alpha, with_fixed_strides<1, N>(a), b, each_step);
      } else {
        auto nothing_more = []() IBLA_IMPL_ALWAYS_INLINE_LAMBDA {};
        trsm_small_matrix<N, Lower>(unit, alpha, with_fixed_strides<1, N>(a), b, nothing_more);
      }
    }
#else
    (void)first, (void)end;
#endif
  }
  KOKKOS_INLINE_FUNCTION void operator()(const index_t index) const {
    const auto [first, end] = detail::small_matrices_of_index(index, batch);
    if (requests) {
      if (lower) run<true, true>(first, end);
      else run<false, true>(first, end);
    } else {
      if (lower) run<true, false>(first, end);
      else run<false, false>(first, end);
    }
  }
};

/// Runs TRSM a matrix at a time (TrsmSmallMatrices) and returns true where
/// it applies: Side::Left, one right-hand side, alpha nonzero (alpha = 0
/// reads neither A nor B), an order of trsm_small_matrix_order that this
/// build compiles, op(A) dense with unit row stride; else false, nothing
/// done.
template <class ExecSpace, class T, class AV, class BV>
bool trsm_small_matrices_batch(const ExecSpace& exec, const Side side, const Uplo uplo,
                               const Op trans, const Diag diag, const T alpha, const AV& A,
                               const BV& B) {
#if IBLA_IMPL_DEVICE_PASS
  (void)exec, (void)side, (void)uplo, (void)trans, (void)diag, (void)alpha, (void)A, (void)B;
  return false;
#else
  const index_t batch = index_t(B.extent(0));
  const index_t n     = index_t(A.extent(1));
  const index_t cols  = BV::rank == 3 ? index_t(B.extent(2)) : 1;
  if (side != Side::Left || batch == 0 || alpha == T(0) || cols != 1 ||
      !trsm_small_matrix_order<T>(n) || !detail::host_order_compiled(int(n)))
    return false;
  const auto a = apply_op(trans, lane_block(A, 0, lanes_c<1>{}));
  if (!(a.rs == 1 && a.cs == n)) return false;
  const bool lower    = (trans == Op::N ? uplo : flip(uplo)) == Uplo::Lower;
  const bool requests = n >= trsm_small_matrix_requesting_order && batch_exceeds_last_level_cache(A, B);
  bool done           = false;
  detail::host_static_switch<trsm_small_matrix_last_order>(int(n), [&](auto order) {
    constexpr int N = decltype(order)::value;
    if constexpr (trsm_small_matrix_order<T>(N) && detail::host_order_specialised<N>) {
      Kokkos::parallel_for(
          "ibla::trsm",
          Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Static>,
                              Kokkos::IndexType<index_t>>(exec, 0,
                                                          detail::small_matrices_indices(batch)),
          TrsmSmallMatrices<N, T, AV, BV>{trans, lower, diag == Diag::Unit, alpha, A, B, requests,
                                          batch});
      done = true;
    }
  });
  return done;
#endif
}

}  // namespace impl

/// Batched TRSM. A is a rank-3 View (batch, k, k); B is rank-3 (batch, m,
/// nrhs) or rank-2 (batch, m) for one right-hand side; k = m for Side::Left,
/// k = nrhs for Side::Right. Any supported layout. Throws
/// ibla::argument_error, touching no data, when the arguments do not fit.
template <class ExecSpace, class Scalar, class AV, class BV>
void trsm(const ExecSpace& exec, Side side, Uplo uplo, Op trans, Diag diag, const Scalar alpha,
          const AV& A, const BV& B) {
  constexpr const char* routine = "trsm";
  detail::static_check_view<ExecSpace, AV>();
  detail::static_check_view<ExecSpace, BV>();
  detail::static_check_writable<BV>();
  static_assert(AV::rank == 3, "ibla::trsm: A is a rank-3 View (batch, k, k)");
  static_assert(BV::rank == 2 || BV::rank == 3,
                "ibla::trsm: B is a rank-3 View (batch, m, nrhs) or rank-2 (batch, m)");
  using T = typename BV::non_const_value_type;
  static_assert(std::is_same<typename AV::non_const_value_type, T>::value,
                "ibla::trsm: A and B must have the same value type");

  const index_t batch = index_t(B.extent(0));
  const index_t m = index_t(B.extent(1)), nrhs = BV::rank == 3 ? index_t(B.extent(2)) : 1;
  detail::require_extent(routine, "A", 0, index_t(A.extent(0)), batch, "the batch count of B");
  detail::require_extent(routine, "A", 2, index_t(A.extent(2)), index_t(A.extent(1)),
                         "A.extent(1) (A must be square)");
  if (side == Side::Left) {
    detail::require_extent(routine, "B", 1, m, index_t(A.extent(1)),
                           "the order of A (Side::Left solves op(A) X = alpha B)");
  } else {
    detail::require(nrhs == index_t(A.extent(1)), routine, "B",
                    BV::rank == 3 ? "extent(2) = " : "columns (rank-2 B) = ", nrhs,
                    " but the order of A (Side::Right solves X op(A) = alpha B) is ",
                    index_t(A.extent(1)));
  }
  detail::require_allocated(routine, "A", A);
  detail::require_allocated(routine, "B", B);
  detail::require_same_block_lanes(routine, {detail::named("A", A), detail::named("B", B)});

  if constexpr (detail::block_lanes_agree<BV, AV>()) {
    if (m == 0 || nrhs == 0) return;
    constexpr int L     = detail::choose_block_lanes<T, ExecSpace, BV, AV>();
    constexpr bool packs = detail::packs_blocks_v<ExecSpace, AV, BV>;
    const T alpha_t      = T(alpha);
    if constexpr (is_host_space_v<ExecSpace> && impl::trsm_has_small_matrices &&
                  lanes_apart_v<AV> && lanes_apart_v<BV>) {
      if (impl::trsm_small_matrices_batch(exec, side, uplo, trans, diag, alpha_t, A, B)) return;
    }
    const int one_column_unrequested =
        is_host_space_v<ExecSpace> ? impl::trsm_one_column_unrequested_order() : 0;
    impl::with_trsm_host_order<T, L, ExecSpace, detail::kernel_view_t<packs, L, AV>>(
        side, m, [&](auto order) {
          detail::for_each_block_of<L>(
              exec, "ibla::trsm", batch, detail::problem_elements(A, B), detail::always_pack{},
              [=](const auto& a, const auto& b) {
                return impl::TrsmBlocks<T, std::decay_t<decltype(a)>, std::decay_t<decltype(b)>,
                                        decltype(order)::value>{
                    side, uplo, trans, diag, alpha_t, a, b, one_column_unrequested};
              },
              impl::read_only(A), impl::read_written(B));
        });
  }
}

}  // namespace ibla
