// Batched LU with partial pivoting: P(b) A(b) = L(b) U(b), LAPACK dgetrf
// semantics per problem (A m x n, possibly rectangular; min(m, n) 1-based
// pivots; every row interchange applied to the whole row; info = k for the
// first exact zero pivot U(k, k), after which the factorization goes on).
//
// Every lane of a block has its own pivot row, so pivoting must not branch
// per lane: the pivot search is an argmax done with per-lane selects (netlib
// idamax's rule: first index of the largest |a|, a NaN is never chosen over an
// earlier entry), and a row interchange reads and writes the pivot row of each
// lane through its own row index (one address per thread on device; on host
// a gather, and a scalar loop over the lanes for the stores: see
// getrf_lanes_host). Nothing in the lane loops depends on the data except
// selects, so every lane of a block runs the same instructions and the block
// stays one SIMD stream.
//
// The algorithm is the right-looking one (LAPACK's dgetf2 order): at step k
// the pivot column is searched, swapped and scaled, then each later column is
// swapped and receives the rank-1 update. The update works on NR columns at a
// time so that each loaded multiplier L(i, k) feeds NR fused multiply-adds.
// Each element of L and U gets the same sequence of operations as in netlib's
// recursive dgetrf2 (updates subtracted in increasing k, pivot column scaled
// by the reciprocal of the pivot unless |pivot| < sfmin), so results agree
// with LAPACK up to FMA contraction. On host, the right-looking form takes
// the steps in panels of four and gives the columns right of a panel its
// four updates together (getrf_deferred_update_tile): the same operations
// per element in the same order. On host, a block expected to need no
// interchange is first factored left-looking without them
// (getrf_crout_host), and a block of small order that needs them is
// factored left-looking with them (getrf_crout_pivoted_host: the
// interchanges of the earlier steps are applied to each column by selects
// as it is loaded): each element gets the same operations in the same
// order, so the same bits.
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
#include <utility>

namespace ibla {
namespace impl {

/// Rows x columns updated together by one lane loop of the LU update.
inline constexpr int getrf_tile_rows = 4;
inline constexpr int getrf_tile_cols = 4;

/// Rows of the host's tiles (the rows below a panel, the deferred update's
/// tiles): halved where a lane value takes two registers, and one where a
/// value takes one register of 16 (AVX2), whose 4 x 4 tiles spilled as
/// POTRF's did (potrf_host_tile_rows). Measured (ibla::getrf, 256
/// problems in L2, 2 threads, Zen 3 VM, medians of 201 calls, 2 alternated
/// rounds, GFLOP/s, 4 rows -> 1): L = 4 doubles, diagonally dominant input
/// n = 12 16.8-17.2 -> 23.6-23.9, 16 20.6-21.3 -> 29.9-30.6, 24 24.6 ->
/// 35.7-36.5, 32 27.3 -> 39.0; random input 1.05-1.09x; L = 8 floats
/// diagonally dominant 1.31-1.49x, random 1.06-1.12x. One row for the
/// panel's rows alone gave 1.32-1.36x at n = 12 and 16 on diagonally
/// dominant input, for the update's tiles alone 1.03-1.10x. Where a value
/// takes two registers (L = 8 doubles) one row instead of two was
/// 0.93-0.97x on random input. Every element sees the same operations in
/// the same order: the same bits.
template <class T, int L>
inline constexpr int getrf_host_tile_rows =
    !host_has_wide_register_file && host_registers_per_value<T, L> == 1
        ? 1
        : host_tile_rows<T, L>(getrf_tile_rows);

/// |x| as a select, so that it vectorises alike on every backend (-0 stays
/// -0, which compares equal to 0; NaN stays NaN, which never compares greater).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T abs_select(const T x) {
  return x < T(0) ? -x : x;
}

/// Step k, pivot column: argmax |A(k:m, k)| per lane, swap it to row k,
/// record ipiv and info, scale the part below the diagonal. LAPACK (dgetrf2,
/// n = 1 branch) scales by the reciprocal when |pivot| >= sfmin and divides
/// otherwise, and neither swaps nor scales when the pivot is exactly zero.
/// Every lane loop body is straight-line code (row loops outside, in tiles
/// with compile-time trip counts): the shape GCC's `omp simd` vectorises
/// across lanes; a lane body with a runtime row loop inside is left scalar.
template <class Member, class BA, class BP, class BI>
KOKKOS_FORCEINLINE_FUNCTION void getrf_pivot_column(const Member& member, const int k,
                                                    const BA& A, const BP& ipiv,
                                                    const BI& info) {
  using T       = std::remove_const_t<typename BA::value_type>;
  const int m   = A.rows;
  // Kokkos' trait, not std::numeric_limits: its constexpr host functions
  // may not be called from device code (nvcc warning #20013-D).
  const T sfmin = Kokkos::Experimental::norm_min<T>::value;
  // Argmax in tiles of rows; the running pivot row lives in ipiv(k) and its
  // |value| is gathered back at each tile, so every lane loop body is
  // straight-line code. Strict > over increasing rows: the first index of
  // the maximum wins, and NaN never wins unless it is A(k, k) (idamax).
  for_each_lane(member, A.lanes, [&](const int l) { ipiv(k, 0, l) = k + 1; });
  for (int i0 = k + 1; i0 < m; i0 += getrf_tile_rows) {
    const int mr = m - i0 < getrf_tile_rows ? m - i0 : getrf_tile_rows;
    detail::static_switch<getrf_tile_rows>(mr, [&](auto rows) {
      constexpr int MR = decltype(rows)::value;
      for_each_lane(member, A.lanes, [&](const int l) {
        int p  = ipiv(k, 0, l) - 1;
        T amax = abs_select(A(p, k, l));
        for (int t = 0; t < MR; ++t) {
          const T v       = abs_select(A(i0 + t, k, l));
          const bool more = v > amax;
          amax            = more ? v : amax;
          p               = more ? i0 + t : p;
        }
        ipiv(k, 0, l) = p + 1;
      });
    });
  }
  for_each_lane(member, A.lanes, [&](const int l) {
    const int p        = ipiv(k, 0, l) - 1;
    const T piv        = A(p, k, l);
    A(p, k, l)         = A(k, k, l);
    A(k, k, l)         = piv;
    const int old_info = info(0, 0, l);
    info(0, 0, l)      = (piv == T(0) && old_info == 0) ? k + 1 : old_info;
  });
  // Scaling in tiles of rows: the lane loop body is straight-line code (the
  // shape that vectorises across lanes), one reciprocal per tile.
  for (int i0 = k + 1; i0 < m; i0 += getrf_tile_rows) {
    const int mr = m - i0 < getrf_tile_rows ? m - i0 : getrf_tile_rows;
    detail::static_switch<getrf_tile_rows>(mr, [&](auto rows) {
      constexpr int MR = decltype(rows)::value;
      for_each_lane(member, A.lanes, [&](const int l) {
        const T piv = A(k, k, l);
        // A zero pivot means the whole column below is zero (or NaN, which
        // LAPACK leaves alone too): keep it, never multiply by 1/0.
        const bool zero = piv == T(0);
        const bool tiny = !(abs_select(piv) >= sfmin);
        const T r       = T(1) / piv;
        for (int t = 0; t < MR; ++t) {
          const T a       = A(i0 + t, k, l);
          A(i0 + t, k, l) = zero ? a : (tiny ? a / piv : a * r);
        }
      });
    });
  }
}

/// Step k, columns [j0, j0 + NR): when Swap, swap rows k and ipiv(k) of each
/// lane (getrf_lanes_host swaps on its own and asks for the update only);
/// when Update, also A(k+1:m, j) -= L(k+1:m, k) * U(k, j).
template <int NR, bool Swap, bool Update, class Member, class BA, class BP>
KOKKOS_FORCEINLINE_FUNCTION void getrf_swap_update_tile(const Member& member, const int k,
                                                        const int j0, const BA& A,
                                                        const BP& ipiv) {
  using T     = std::remove_const_t<typename BA::value_type>;
  const int m = A.rows;
  if constexpr (Swap) for_each_lane(member, A.lanes, [&](const int l) {
    const int p = ipiv(k, 0, l) - 1;
    for (int c = 0; c < NR; ++c) {
      const T u       = A(p, j0 + c, l);
      A(p, j0 + c, l) = A(k, j0 + c, l);
      A(k, j0 + c, l) = u;
    }
  });
  if constexpr (Update) {
    // MR x NR tiles of the rank-1 update; straight-line lane loop bodies.
    for (int i0 = k + 1; i0 < m; i0 += getrf_tile_rows) {
      const int mr = m - i0 < getrf_tile_rows ? m - i0 : getrf_tile_rows;
      detail::static_switch<getrf_tile_rows>(mr, [&](auto rows) {
        constexpr int MR = decltype(rows)::value;
        for_each_lane(member, A.lanes, [&](const int l) {
          T u[NR];
          for (int c = 0; c < NR; ++c) u[c] = A(k, j0 + c, l);
          for (int t = 0; t < MR; ++t) {
            const T a = A(i0 + t, k, l);
            // Fused in the source, not left to the compiler's contraction:
            // the vector and the one-lane forms must round alike.
            for (int c = 0; c < NR; ++c)
              A(i0 + t, j0 + c, l) = fused_mul_add(-a, u[c], A(i0 + t, j0 + c, l));
          }
        });
      });
    }
  }
}

/// Columns [begin, end) of step k, in tiles of NR.
template <bool Swap, bool Update, class Member, class BA, class BP>
KOKKOS_INLINE_FUNCTION void getrf_swap_update(const Member& member, const int k, const int begin,
                                              const int end, const BA& A, const BP& ipiv) {
  constexpr int NR = getrf_tile_cols;
  for (int j0 = begin; j0 < end; j0 += NR) {
    const int nr = end - j0 < NR ? end - j0 : NR;
    detail::static_switch<NR>(nr, [&](auto cols) {
      getrf_swap_update_tile<decltype(cols)::value, Swap, Update>(member, k, j0, A, ipiv);
    });
  }
}

/// The whole factorization of one block, lane loops inside every step; the
/// prefetch of the next block is spread over the steps.
template <class Member, class BA, class BP, class BI>
KOKKOS_INLINE_FUNCTION void getrf_lanes(const Member& member, const BA& A, const BP& ipiv,
                                        const BI& info, BlockPrefetch& prefetch) {
  for_each_lane(member, A.lanes, [&](const int l) { info(0, 0, l) = 0; });
  const int m = A.rows, n = A.cols;
  const int steps = m < n ? m : n;
  prefetch.plan(steps);
  for (int k = 0; k < steps; ++k) {
    prefetch.step();
    getrf_pivot_column(member, k, A, ipiv, info);
    // Left of k: the interchange only (LAPACK applies it to the whole row).
    getrf_swap_update<true, false>(member, k, 0, k, A, ipiv);
    getrf_swap_update<true, true>(member, k, k + 1, n, A, ipiv);
  }
}

/// Device form for small square orders: each lane (a GPU thread) holds its
/// N x N matrix in registers, reads it once and writes it once. getrf_lanes
/// reads and writes the trailing matrix through global memory at every step
/// (O(n^3) loads and stores per thread, each waiting on L1/L2): on an H100
/// it ran GETRF at 112 and 158 GFLOP/s at n = 4 and 8 against cuBLAS's
/// getrfBatched 137 and 365. Every index here is a compile-time constant
/// once the loops are unrolled, so the array can stay in registers (as far
/// as they hold it: see getrf_device_register_order): the pivot row's
/// interchange is a select over the rows below k, never an access through
/// the lane's pivot index (a dynamic index would put the whole array in
/// local memory). Same operations in the same order per element as
/// getrf_lanes (search by idamax's rule, scaling by the reciprocal unless
/// the pivot is zero or below sfmin, updates fused and subtracted in
/// increasing k), so the same bits, pivots and info; test_determinism_solvers
/// checks it against getrf_lanes on host, where it is not otherwise used.
template <int N, class Member, class BA, class BP, class BI>
KOKKOS_INLINE_FUNCTION void getrf_registers_lane(const Member& member, const BA& A,
                                                 const BP& ipiv, const BI& info) {
  using T       = std::remove_const_t<typename BA::value_type>;
  const T sfmin = Kokkos::Experimental::norm_min<T>::value;
  for_each_lane(member, A.lanes, [&](const int l) {
    T a[N][N];
    IBLA_IMPL_UNROLL
    for (int j = 0; j < N; ++j) {
      IBLA_IMPL_UNROLL
      for (int i = 0; i < N; ++i) a[i][j] = A(i, j, l);
    }
    int status = 0;
    IBLA_IMPL_UNROLL
    for (int k = 0; k < N; ++k) {
      int p    = k;
      T piv    = a[k][k];
      T amax   = abs_select(piv);
      IBLA_IMPL_UNROLL
      for (int i = k + 1; i < N; ++i) {
        const T v       = abs_select(a[i][k]);
        const bool more = v > amax;
        amax            = more ? v : amax;
        piv             = more ? a[i][k] : piv;
        p               = more ? i : p;
      }
      ipiv(k, 0, l) = p + 1;
      status        = (piv == T(0) && status == 0) ? k + 1 : status;
      // Rows k and p exchanged in every column (LAPACK swaps whole rows).
      IBLA_IMPL_UNROLL
      for (int j = 0; j < N; ++j) {
        const T old_k = a[k][j];
        T new_k       = old_k;
        IBLA_IMPL_UNROLL
        for (int i = k + 1; i < N; ++i) {
          new_k   = p == i ? a[i][j] : new_k;
          a[i][j] = p == i ? old_k : a[i][j];
        }
        a[k][j] = new_k;
      }
      // A zero pivot leaves the column (zero, or NaN) as it is; one below
      // sfmin (or NaN) divides, as LAPACK does: a rare branch, taken by the
      // lane alone.
      if (piv != T(0)) {
        if (!(abs_select(piv) >= sfmin)) {
          IBLA_IMPL_UNROLL
          for (int i = k + 1; i < N; ++i) a[i][k] = a[i][k] / piv;
        } else {
          const T r = T(1) / piv;
          IBLA_IMPL_UNROLL
          for (int i = k + 1; i < N; ++i) a[i][k] = a[i][k] * r;
        }
      }
      IBLA_IMPL_UNROLL
      for (int j = k + 1; j < N; ++j) {
        IBLA_IMPL_UNROLL
        for (int i = k + 1; i < N; ++i) a[i][j] = fused_mul_add(-a[i][k], a[k][j], a[i][j]);
      }
    }
    info(0, 0, l) = status;
    IBLA_IMPL_UNROLL
    for (int j = 0; j < N; ++j) {
      IBLA_IMPL_UNROLL
      for (int i = 0; i < N; ++i) A(i, j, l) = a[i][j];
    }
  });
}

/// The largest order getrf_registers_lane takes on device. The matrix fits
/// a thread's 255 registers up to n = 9 in double and n = 14 in float;
/// beyond, ptxas keeps part of it on the stack (local memory, cached in L1:
/// 2,760 bytes a thread at n = 16 double, 1,952 at n = 20 float), and the
/// form still ran faster than getrf_lanes at every order measured. H200,
/// ibla_device_bench --batch 100000, sm_90, GFLOP/s, general form ->
/// register form (cuBLAS getrfBatched in the same run): double n = 10
/// 176 -> 896 (288), 12 165 -> 732 (400), 14 161 -> 495 (515), 16 157 ->
/// 388 (637); float n = 12 298 -> 1814 (591), 16 249 -> 1008 (978), 20 238
/// -> 696 (825). Larger orders were not measured.
template <class T>
inline constexpr int getrf_device_register_order = sizeof(T) >= 8 ? 16 : 20;

#if !IBLA_IMPL_DEVICE_PASS
/// Steps getrf_lanes_host factors as one panel: the rank-1 updates of a
/// panel's steps reach only the panel's own columns, and the columns right
/// of it receive all of them at the panel's end, NB at a time per element
/// (getrf_deferred_update_tile).
inline constexpr int getrf_panel_steps = 4;

/// The updates of steps [k0, k0 + NB) deferred to columns [j0, j0 + NC),
/// which already hold those steps' interchanges (whole-row exchanges commute
/// with the updates: a row's multipliers move with it): first the panel's
/// rows of U, row k0 + r receiving steps k0..k0 + r - 1, then every row below
/// in tiles of MR. Each element gets the same fused updates in the same
/// increasing k as with a rank-1 update per step (the same bits), but is
/// loaded and stored once per panel instead of once per step: the rank-1
/// update stored every element it touched at every step, and those stores
/// bounded getrf_lanes_host (perf, n = 32: one 64-byte store per FMA).
template <int NB, int MaxMR, int NC, class Member, class BA>
KOKKOS_FORCEINLINE_FUNCTION void getrf_deferred_update_tile(const Member& member, const int k0,
                                                            const int j0, const BA& A) {
  using T     = std::remove_const_t<typename BA::value_type>;
  const int m = A.rows;
  // Unrolled before vectorisation: GCC 12 left the lane loops of these
  // nests scalar ("control flow in loop") when it kept a loop over r or k.
  for_each_lane(member, A.lanes, [&](const int l) {
    T u[NB][NC];
    IBLA_IMPL_UNROLL
    for (int r = 0; r < NB; ++r) {
      for (int c = 0; c < NC; ++c) u[r][c] = A(k0 + r, j0 + c, l);
      IBLA_IMPL_UNROLL
      for (int k = 0; k < r; ++k) {
        const T a = A(k0 + r, k0 + k, l);
        for (int c = 0; c < NC; ++c) u[r][c] = fused_mul_add(-a, u[k][c], u[r][c]);
      }
      // Row k0 too, unchanged: no branch in the lane loop.
      for (int c = 0; c < NC; ++c) A(k0 + r, j0 + c, l) = u[r][c];
    }
  });
  for (int i0 = k0 + NB; i0 < m; i0 += MaxMR) {
    const int mr = m - i0 < MaxMR ? m - i0 : MaxMR;
    detail::static_switch<MaxMR>(mr, [&](auto rows) {
      constexpr int MR = decltype(rows)::value;
      for_each_lane(member, A.lanes, [&](const int l) {
        T u[NB][NC], c_tile[MR][NC];
        for (int k = 0; k < NB; ++k)
          for (int c = 0; c < NC; ++c) u[k][c] = A(k0 + k, j0 + c, l);
        for (int t = 0; t < MR; ++t)
          for (int c = 0; c < NC; ++c) c_tile[t][c] = A(i0 + t, j0 + c, l);
        IBLA_IMPL_UNROLL
        for (int k = 0; k < NB; ++k)
          IBLA_IMPL_UNROLL
          for (int t = 0; t < MR; ++t) {
            const T a = A(i0 + t, k0 + k, l);
            for (int c = 0; c < NC; ++c)
              c_tile[t][c] = fused_mul_add(-a, u[k][c], c_tile[t][c]);
          }
        for (int t = 0; t < MR; ++t)
          for (int c = 0; c < NC; ++c) A(i0 + t, j0 + c, l) = c_tile[t][c];
      });
    });
  }
}

/// Rows k and rows[l] of each lane l exchanged in columns [begin, end) of
/// a full host block: column by column (a column's row k is one cache line
/// for all the lanes), each lane's two elements exchanged by scalar moves,
/// the L lanes unrolled (a lane whose pivot is row k exchanges an element
/// with itself). See getrf_lanes_host for the forms measured against it.
template <int L, class BA>
KOKKOS_FORCEINLINE_FUNCTION void exchange_rows_host(const BA& A, const int k,
                                                    const int (&rows)[L], const int begin,
                                                    const int end) {
  using T = std::remove_const_t<typename BA::value_type>;
  for (int j = begin; j < end; ++j) {
    IBLA_IMPL_UNROLL
    for (int l = 0; l < L; ++l) {
      const T u        = A(rows[l], j, l);
      A(rows[l], j, l) = A(k, j, l);
      A(k, j, l)       = u;
    }
  }
}

/// Blocks larger than this (m x n x L x sizeof(T) bytes, more than the L1
/// data cache of the CPUs measured, 48 KiB) take a panel's interchanges in
/// the columns right of the panel at the panel's end, each column tile's
/// just before getrf_deferred_update_tile updates it, instead of at every
/// step across all those columns. Each step's interchange walks rows k and
/// the lanes' pivot rows through every column, lines that a block this
/// large no longer keeps in L1 (at n = 32 and L = 8 doubles the 2 KB column
/// stride puts all of a row's lines in two L1 sets); at the panel's end a
/// tile's lines are read by its update right after. The same exchanges of
/// the same values (those columns are not read during the panel's steps),
/// so the same bits. Measured on an Intel Xeon with AVX-512 (GCC 12
/// rocketlake tuning; 1-thread micro-driver, ibla::getrf on 64 random
/// problems in cache, medians of 2001 calls, two runs each, GFLOP/s):
/// L = 8 doubles n = 32 15.0, 15.1 -> 17.0, 16.9; L = 16 doubles n = 24
/// 14.2, 14.3 -> 14.8, 14.7, 28 15.6, 15.7 -> 16.5, 16.2, 32 14.1, 14.1 ->
/// 16.6, 16.1. Blocks that fit L1 ran at 0.94-0.97x this way (n = 13..16),
/// and L = 8 n = 28 (49 KiB) at 0.98-1.0x. ibla_bench (random input, 10^4
/// problems, 2 threads, binaries before and after alternated in 6 pairs,
/// median of the pairs' ratios per L, flushed / warm): n = 32 GETRF L = 8
/// 1.07x / 1.08x, L = 16 1.12x / 1.09x, GESV 1.10-1.11x; L = 16 n = 24 and
/// 28 1.02-1.06x; L = 8 n = 28 0.97-1.02x.
inline constexpr size_t getrf_exchange_with_update_bytes = 48 * 1024;

/// Rows a block may have for getrf_panel_without_interchanges, whose copy
/// of the panel's input (for the steps with interchanges, should the panel
/// need one) is an array of this many rows.
inline constexpr int getrf_panel_copy_rows = 32;

/// Rows i0 .. i0 + R - 1 of the panel's columns k0 .. k0 + NB - 1 of lane l
/// into `rows`, and into the panel's copy (getrf_panel_without_interchanges).
template <int R, int NB, int L, class BA, class T>
KOKKOS_FORCEINLINE_FUNCTION void getrf_panel_load_rows(const BA& A, const int i0, const int k0,
                                                       const int l, T (&rows)[R][NB],
                                                       T (&copy)[NB][getrf_panel_copy_rows][L]) {
  IBLA_IMPL_UNROLL
  for (int t = 0; t < R; ++t)
    IBLA_IMPL_UNROLL
    for (int c = 0; c < NB; ++c) {
      rows[t][c]              = A(i0 + t, k0 + c, l);
      copy[c][i0 + t - k0][l] = rows[t][c];
    }
}

/// Steps [k0, k0 + NB) of getrf_lanes_host as one pass over the panel's
/// columns, for a block whose steps so far swapped no row: every row of the
/// panel is loaded once, takes the steps' updates in registers, is checked
/// and scaled, and stored once, instead of a pass per step for the check,
/// the scaling and the update of each later column of the panel. Each
/// element gets the same operations in the same order as in those steps
/// (updates in increasing k, fused_mul_add(-l, u, a), then the product with
/// the same reciprocal), so the same bits. A column passes where no row
/// below its diagonal is larger in magnitude than the diagonal (idamax's
/// rule then keeps row k: the check of getrf_lanes_host) and the diagonal
/// is at least sfmin (no zero pivot for info, no division). Where some
/// column of some lane fails, the panel's input is put back from `copy`
/// and false returned: the block then takes the panel's steps with
/// interchanges. The panel's ipiv entries are the caller's.
/// Measured against those steps (GETRF micro-driver, 10^4 diagonally
/// dominant problems, 2 threads, medians of 201 calls, alternated runs,
/// same checksums, Intel Xeon VM with AVX-512, GFLOP/s): L = 8 doubles, in
/// L3, n = 17 28.5-29.6 -> 31.5-32.7, 20 31.7-32.3 -> 34.6-36.1, 24
/// 36.1-37.9 -> 40.5-42.2, 32 40.2 -> 41.0-42.6; flushed n = 20 18.7-19.8 ->
/// 20.5-21.4, 24 23.6-24.0 -> 24.6-25.3, 32 29.1-30.3 -> 29.0-30.2; L = 16
/// in L3 n = 20 29.0-30.1 -> 30.9-31.8, 24 31.7-32.9 -> 32.6-33.9. Random
/// input never takes it (no step without interchanges): 0.98-1.01x.
template <int NB, int L, class Member, class BA, class T = std::remove_const_t<typename BA::value_type>>
KOKKOS_FORCEINLINE_FUNCTION bool getrf_panel_without_interchanges(
    const Member& member, const int k0, const BA& A, T (&copy)[NB][getrf_panel_copy_rows][L]) {
  using Index   = lane_index_t<T>;
  const T sfmin = Kokkos::Experimental::norm_min<T>::value;
  const int m   = A.rows;
  // The diagonal block, factored in registers; its reciprocals and
  // diagonal magnitudes kept for the rows below.
  T scale[NB][L], diagonal[NB][L];
  Index fails[L];
  for_each_lane(member, A.lanes, [&](const int l) {
    T d[NB][NB];
    getrf_panel_load_rows(A, k0, k0, l, d, copy);
    Index fail = 0;
    IBLA_IMPL_UNROLL
    for (int k = 0; k < NB; ++k) {
      const T size = magnitude(d[k][k]);
      fail |= Index(!(size >= sfmin));
      const T recip  = T(1) / d[k][k];
      scale[k][l]    = recip;
      diagonal[k][l] = size;
      IBLA_IMPL_UNROLL
      for (int r = k + 1; r < NB; ++r) {
        fail |= Index(magnitude(d[r][k]) > size);
        d[r][k] = d[r][k] * recip;
        IBLA_IMPL_UNROLL
        for (int c = k + 1; c < NB; ++c) d[r][c] = fused_mul_add(-d[r][k], d[k][c], d[r][c]);
      }
    }
    IBLA_IMPL_UNROLL
    for (int r = 0; r < NB; ++r)
      IBLA_IMPL_UNROLL
      for (int c = 0; c < NB; ++c) A(k0 + r, k0 + c, l) = d[r][c];
    fails[l] = fail;
  });
  // The rows below, MR at a time (getrf_host_tile_rows).
  constexpr int MR = getrf_host_tile_rows<T, L>;
  for (int i0 = k0 + NB; i0 < m; i0 += MR) {
    const int mr = m - i0 < MR ? m - i0 : MR;
    detail::static_switch<MR>(mr, [&](auto rows) {
      constexpr int R = decltype(rows)::value;
      for_each_lane(member, A.lanes, [&](const int l) {
        T a[R][NB];
        getrf_panel_load_rows(A, i0, k0, l, a, copy);
        Index fail = fails[l];
        IBLA_IMPL_UNROLL
        for (int k = 0; k < NB; ++k) {
          const T size  = diagonal[k][l];
          const T recip = scale[k][l];
          T u[NB];
          IBLA_IMPL_UNROLL
          for (int c = k + 1; c < NB; ++c) u[c] = A(k0 + k, k0 + c, l);
          IBLA_IMPL_UNROLL
          for (int t = 0; t < R; ++t) {
            fail |= Index(magnitude(a[t][k]) > size);
            a[t][k] = a[t][k] * recip;
            IBLA_IMPL_UNROLL
            for (int c = k + 1; c < NB; ++c) a[t][c] = fused_mul_add(-a[t][k], u[c], a[t][c]);
          }
        }
        IBLA_IMPL_UNROLL
        for (int t = 0; t < R; ++t)
          IBLA_IMPL_UNROLL
          for (int c = 0; c < NB; ++c) A(i0 + t, k0 + c, l) = a[t][c];
        fails[l] = fail;
      });
    });
  }
  Index any = 0;
  for (int l = 0; l < L; ++l) any |= fails[l];
  if (!any) return true;
  for (int c = 0; c < NB; ++c)
    for (int i = k0; i < m; ++i)
      for_each_lane(member, A.lanes, [&](const int l) { A(i, k0 + c, l) = copy[c][i - k0][l]; });
  return false;
}

/// Host form of getrf_lanes for a full block (lanes_c<L>): the same
/// operations per lane in the same order (same bits), arranged so that GCC
/// vectorises them. In getrf_lanes every lane loop that stores through the
/// lane's own pivot row (the interchanges; AVX2 has no scatter) stayed
/// scalar, and so did the pivot search and the scaling (a multiply or a
/// division that only one arm of a select evaluates is not if-converted):
/// scalar vmovsd/vdivsd/cmov were most of getrf's time on AVX2. Here:
///  - the pivot search carries the pivot's value and row in registers
///    (select_bits), and the pivot column's interchange is a select in the
///    scaling pass, which multiplies unconditionally (by 1 for a zero pivot);
///    a block with a pivot below sfmin takes a scalar path that divides;
///  - the other columns' interchange reads the new row k through each
///    lane's index (a gather) and stores the old row k back by a scalar
///    loop over the lanes; blocks where no lane swaps skip it. (Selects
///    over rows k+1..m-1 instead of any per-lane address were tried: slower
///    at every n, O(n^3) extra work.)
/// Measured on AVX2 (Zen 3; `ibla_bench --ops getrf,gesv --sizes
/// 2,4,8,16,32 --impls ibla --modes flushed`, double, 10^4 problems, 2
/// threads, 3 alternating runs of the binaries before and after, ratio of
/// the medians): GETRF random 1.6x (n = 2), 1.55x (4), 1.47x (8), 1.06x
/// (16), 0.99x (32); diagonally dominant 1.4-2.9x; GESV 1.16-2.3x.
/// The updates of the columns right of a panel deferred to its end
/// (getrf_panel_steps), on AVX-512 Zen 4 (same protocol, 4 runs, the better
/// L): GETRF random n = 16..32 1.10-1.29x, diagonally dominant n = 20..32
/// 1.20-1.40x (smaller orders take the left-looking forms); GESV alike.
/// Panels of 8 steps were no faster (1-thread micro-driver, n = 13..32).
/// Returns whether a lane of the block swapped rows.
template <int L, class Member, class BA, class BP, class BI>
IBLA_IMPL_HOST_NOINLINE bool getrf_lanes_host(const Member& member, const BA& A,
                                              const BP& ipiv, const BI& info,
                                              BlockPrefetch& prefetch,
                                              const bool diagonal_expected) {
  using T        = std::remove_const_t<typename BA::value_type>;
  using Index    = lane_index_t<T>;
  constexpr int NR = getrf_tile_cols;
  const T sfmin  = Kokkos::Experimental::norm_min<T>::value;
  const int m = A.rows, n = A.cols;
  const int steps = m < n ? m : n;
  // info in a lane-wide integer until the end: the lane loop that updated
  // the 32-bit info from the 64-bit pivot compare at every step stayed
  // scalar, with a branch per lane.
  Index status[L];
  for_each_lane(member, A.lanes, [&](const int l) { status[l] = 0; });
  bool swapped = false;
  // The pivot rows of the panel's steps and whether a lane exchanged rows
  // at each, for the interchanges deferred to the panel's end.
  int panel_rows[getrf_panel_steps][L];
  bool panel_swaps[getrf_panel_steps] = {};
  const bool exchanges_with_update =
      size_t(m) * size_t(n) * size_t(L) * sizeof(T) > getrf_exchange_with_update_bytes;
  // Whether the previous step kept every lane's pivot on the diagonal; for
  // the first step, whether the caller expects it (getrf_last_block_swapped).
  bool diagonal_before = diagonal_expected;
  constexpr int NB = getrf_panel_steps;
  // Steps k0 .. k0 + NB - 1 of a full panel done: the columns right of it
  // receive them, tile by tile. `steps_due`: prefetch steps still to take,
  // one before each tile and the rest after the last (after the one-pass
  // panel, its steps: taken at once before the tiles they held the
  // line-fill buffers; spread, GETRF micro-driver as at
  // getrf_panel_without_interchanges, L = 8: in L3 n = 20 1.04-1.09x, 24
  // 1.01-1.02x, 32 0.99-1.02x; flushed n = 20 1.02-1.05x, 24 0.97-0.98x,
  // 28 0.96-1.03x, 32 1.03-1.06x).
  auto update_right_of_panel = [&](const int k0, int steps_due) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
    // Tiles halved where a lane value takes two registers: the 4 x 4
    // tile and 4 x 4 rows of U of L = 16 doubles spilled (n = 12: 0.85x
    // the rank-1 updates, ibla_bench); rows: getrf_host_tile_rows.
    constexpr int MR = getrf_host_tile_rows<T, L>;
    constexpr int NC = host_tile_rows<T, L>(NR);
    for (int j0 = k0 + NB; j0 < n; j0 += NC) {
      const int nc = n - j0 < NC ? n - j0 : NC;
      // The panel's interchanges in these columns, in step order, just
      // before their update reads them (exchanges_with_update).
      if (exchanges_with_update)
        for (int s = 0; s < NB; ++s)
          if (panel_swaps[s]) exchange_rows_host(A, k0 + s, panel_rows[s], j0, j0 + nc);
      if (steps_due > 0) {
        prefetch.step();
        --steps_due;
      }
      detail::static_switch<NC>(nc, [&](auto cols) {
        getrf_deferred_update_tile<NB, MR, decltype(cols)::value>(member, k0, j0, A);
      });
    }
    for (; steps_due > 0; --steps_due) prefetch.step();
  };
  T panel_copy[NB][getrf_panel_copy_rows][L];
  prefetch.plan(steps);
  for (int k = 0; k < steps; ++k) {
    prefetch.step();
    // A full panel after a step without interchanges: first the pass that
    // assumes it needs none (getrf_panel_without_interchanges).
    if (k % NB == 0 && k + NB <= steps && diagonal_before && m <= getrf_panel_copy_rows &&
        getrf_panel_without_interchanges<NB, L>(member, k, A, panel_copy)) {
      for (int s = 0; s < NB; ++s) {
        for_each_lane(member, A.lanes, [&](const int l) { ipiv(k + s, 0, l) = k + s + 1; });
        panel_swaps[s] = false;
      }
      update_right_of_panel(k, NB - 1);
      k += NB - 1;
      continue;
    }
    // Pivot search (idamax's rule, as in getrf_pivot_column), carrying the
    // signed pivot value along with its row.
    Index p[L];
    T piv[L], amax[L];
    for_each_lane(member, A.lanes, [&](const int l) {
      piv[l]  = A(k, k, l);
      amax[l] = magnitude(piv[l]);
      p[l]    = k;
    });
    // After a step without interchanges (every step of a diagonally
    // dominant block), first only whether some row below beats the
    // diagonal: compares or-ed together, no chain of selects down the
    // column. idamax's rule leaves row k exactly when no |A(i, k)| > |A(k,
    // k)| (a NaN beats nothing, and nothing beats a NaN diagonal), and p and
    // piv already say row k; else the search. 1-thread micro-driver, 64
    // diagonally dominant problems in cache, medians of 2001 calls, Intel
    // Xeon with AVX-512: L = 8 / 16 doubles n = 17 1.07-1.12x / 1.09-1.14x,
    // 24 1.06-1.08x / 1.05-1.07x, 32 1.09-1.10x / 1.03-1.07x; L = 16 floats
    // 1.07x, 1.08x, 1.13-1.15x; random input (the check runs only after a
    // step without interchanges) 0.98-1.01x. ibla_bench: see perf_tests/RESULTS.md.
    bool diagonal = false;
    if (diagonal_before) {
      Index beaten[L];
      for_each_lane(member, A.lanes, [&](const int l) { beaten[l] = 0; });
      for (int i = k + 1; i < m; ++i)
        for_each_lane(member, A.lanes, [&](const int l) {
          beaten[l] |= Index(magnitude(A(i, k, l)) > amax[l]);
        });
      Index any_beaten = 0;
      for (int l = 0; l < L; ++l) any_beaten |= beaten[l];
      diagonal = any_beaten == 0;
    }
    if (!diagonal)
      for (int i = k + 1; i < m; ++i)
        for_each_lane(member, A.lanes, [&](const int l) {
          const T a       = A(i, k, l);
          const T v       = magnitude(a);
          const bool more = v > amax[l];
          amax[l]         = select_bits(more, v, amax[l]);
          piv[l]          = select_bits(more, a, piv[l]);
          p[l]            = more ? Index(i) : p[l];
        });
    for_each_lane(member, A.lanes, [&](const int l) {
      const bool first_zero = (Index(piv[l] == T(0)) & Index(status[l] == 0)) != 0;
      status[l]             = first_zero ? Index(k + 1) : status[l];
    });
    for_each_lane(member, A.lanes, [&](const int l) { ipiv(k, 0, l) = int(p[l]) + 1; });
    // Pivot column: A(k, k) <-> A(p, k), then the part below scaled. A
    // zero pivot (the column below is zero, or NaN) is neither scaled nor
    // multiplied by 1/0, as in LAPACK; a tiny one divides. Whether any lane
    // divides is asked once per step, so the usual case has no divisions.
    T old_kk[L], scale[L];
    Index tiny[L];
    for_each_lane(member, A.lanes, [&](const int l) {
      old_kk[l]     = A(k, k, l);
      A(k, k, l)    = piv[l];
      const T recip = T(1) / piv[l];
      // x * 1 is x: a zero pivot's column is kept by the same multiply.
      scale[l]      = select_bits(piv[l] == T(0), T(1), recip);
      // & not &&: no branch in the lane loop.
      tiny[l] = Index(piv[l] != T(0)) & Index(!(abs_select(piv[l]) >= sfmin));
    });
    Index any_tiny = 0;
    for (int l = 0; l < L; ++l) any_tiny |= tiny[l];
    if (!any_tiny && diagonal) {
      for (int i = k + 1; i < m; ++i)
        for_each_lane(member, A.lanes, [&](const int l) { A(i, k, l) = A(i, k, l) * scale[l]; });
    } else if (!any_tiny) {
      for (int i = k + 1; i < m; ++i)
        for_each_lane(member, A.lanes, [&](const int l) {
          const T a  = select_bits(p[l] == Index(i), old_kk[l], A(i, k, l));
          A(i, k, l) = a * scale[l];
        });
    } else {
      // A pivot below sfmin (|pivot| < 2.2e-308 in double) divides, as in
      // LAPACK: rare enough for a scalar loop.
      for (int i = k + 1; i < m; ++i)
        for (int l = 0; l < L; ++l) {
          const T x       = A(i, k, l);
          const T a       = p[l] == Index(i) ? old_kk[l] : x;
          A(i, k, l)      = tiny[l] ? a / piv[l] : a * scale[l];
        }
    }
    // Row interchange in the other columns (exchange_rows_host; right of a
    // panel at its end in large blocks, getrf_exchange_with_update_bytes). On
    // AVX-512 Zen 4 (1-thread micro-driver, random input, n = 13..32) this
    // ran 1.08-1.16x (L = 8) and 1.07-1.18x (L = 16) the form before it,
    // which read the new row k through each lane's index (a gather, emulated
    // with scalar loads and inserts) and stored the old row k back by a
    // scalar loop over the lanes. Measured slower there: the lanes outer,
    // skipping lanes whose pivot is row k (0.5x at n = 32: a 2 KB column
    // stride sends a row's elements in every column to the same L1 sets); a
    // runtime list of the lanes that swap (0.82-0.86x); AVX-512 gathers
    // (-mtune=icelake-server emits them: no faster than the emulated ones).
    // On AVX2 (Zen 3), for the gather form: selects over all rows k+1..m-1 of
    // every column (no per-lane address at all) cost more at every n; selects
    // over only the rows that are some lane's pivot, vector stores instead of
    // the scalar ones (0.92-1.0x at n = 8, 0.70x at n = 16); the interchanges
    // left of k deferred to the end and done as one gather per element
    // through each lane's final row permutation (0.82-0.86x at n = 8 and 16);
    // AVX2 gather instructions (0.95x at n = 8). On an Intel Xeon with
    // AVX-512 (same micro-driver, n = 13..32) the exchanges were half of this
    // form's time (skipped: n = 16 10.4 -> 19.2 GFLOP/s, 32 14.7 -> 31.6),
    // and no faster as one lane loop of AVX-512 gathers and scatters
    // (1.01-1.08x), as a gather with scalar stores (0.96-0.99x), with the
    // columns left of the panel exchanged at the end (1.00x; n = 32
    // 1.05-1.09x) or gathered there through each lane's composed permutation
    // (0.85-1.09x), or with the panel's columns exchanged by selects in its
    // rank-1 update (0.98-1.02x); nor with AVX-512 masked loads merging each
    // lane's pivot element into row k and masked stores of row k into the
    // pivot rows (9 stores a column instead of 16 for L = 8; 0.81-0.94x;
    // zero-masked loads OR-ed together 0.76-0.90x, with scalar stores
    // 0.90-1.05x), nor with the panel's update before the other columns'
    // exchanges (0.98-1.03x).
    const int k0         = k - k % NB;
    const bool in_panel  = k0 + NB <= steps;
    const int update_end = in_panel ? k0 + NB : n;
    int(&pivot_row)[L]   = panel_rows[k - k0];
    for (int l = 0; l < L; ++l) pivot_row[l] = int(p[l]);
    // Skipped when no lane of the block swaps (diagonally dominant blocks).
    Index swaps = 0;
    for (int l = 0; l < L; ++l) swaps |= Index(p[l] != Index(k));
    swapped |= swaps != 0;
    panel_swaps[k - k0] = swaps != 0;
    diagonal_before     = swaps == 0;
    if (swaps) {
      exchange_rows_host(A, k, pivot_row, 0, k);
      exchange_rows_host(A, k, pivot_row, k + 1, exchanges_with_update ? update_end : n);
    }
    // Rank-1 update: in a full panel only of the panel's columns, the
    // columns right of it receive the panel's steps together at its end;
    // the last steps, fewer than a panel, update every trailing column.
    getrf_swap_update<false, true>(member, k, k + 1, update_end, A, ipiv);
    if (in_panel && k == k0 + NB - 1) update_right_of_panel(k0, 0);
  }
  for_each_lane(member, A.lanes, [&](const int l) { info(0, 0, l) = int(status[l]); });
  return swapped;
}

/// Whether the host forms for square N x N blocks of L lanes of T test their
/// last pivot against sfmin. That pivot scales nothing (no row below it), so
/// the test changes no result; but it is the last link of the block's chain
/// of dependences (each column's division waits for the updates of the
/// columns before it), and the test of the block's flags waited on it.
/// Dropped where the matrix fits the vector registers: diagonally dominant
/// input (getrf_crout_host), 1-thread micro-driver, 4096 problems, L = 8: n
/// = 2..5 1.12-1.26x; L = 16: n = 2, 3 1.33x, 1.11x; random input, L = 8:
/// n = 2..5 1.06-1.18x. Kept above, where dropping it changed a few
/// instructions and how GCC scheduled them, nothing else: L = 8 n = 9 0.88x,
/// 11 1.10x, 12 0.89x; L = 16 n = 4 0.91x. The pass without interchanges
/// (getrf_crout_host) has since dropped the separate tests: its one check
/// a column tests every pivot, the last one included, against sfmin.
template <class T, int L, int N>
inline constexpr bool getrf_tests_last_pivot =
    N * N * host_registers_per_value<T, L> > host_simd_registers - 4;

/// Whether those forms test column J's pivot against sfmin: every pivot
/// but the last, that one as getrf_tests_last_pivot says.
template <class T, int L, int N, int J>
inline constexpr bool getrf_tests_pivot = J + 1 < N || getrf_tests_last_pivot<T, L, N>;

/// Square orders up to this one can be factored by getrf_registers_host:
/// blocks that swap rows where getrf_registers_preferred says so, and
/// blocks that getrf_crout_pivoted_host hands back (a pivot below sfmin).
/// Above it the matrix no longer fits the registers and the select-based
/// interchanges of whole rows cost O(n^3). With 16 vector registers
/// (AVX2) the register form was slower than getrf_lanes_host at n = 5, 6
/// and 8 (1-thread micro-driver, L = 4 and 8, 0.3-0.9x), so it stops at 4
/// there. With 32 (AVX-512, Zen 4; `ibla_bench --ops getrf,gesv --sizes
/// 4..8`, 10^4 problems, 2 threads, the binaries before and after
/// alternating, 3-5 runs, ratio of the medians), with the next block
/// prefetched before the lane loop: n = 5 GETRF random 1.65-1.71x, GESV
/// random 1.45-1.54x; n = 6 random 1.31-1.35x; n = 7, 8 0.38-0.86x (spills).
inline constexpr int getrf_register_order = host_has_wide_register_file ? 6 : 4;

/// Blocks of the one-lane-loop host forms (getrf_registers_host,
/// getrf_crout_host, getrf_crout_pivoted_host) up to this size request the
/// next block's lines before their lane loops; larger ones after them (see
/// getrf_crout_host). At n = 2, 3, 4 with L = 8 doubles (0.5, 0.6 and 1 KB)
/// after ran at 0.83-0.90x, 0.88-0.96x and 0.94-0.99x of before in L3
/// (diagonally dominant; flushed 0.95-0.98x; random input alike).
inline constexpr size_t getrf_prefetch_first_bytes = 1024;

template <int N, int L, class T>
inline constexpr bool getrf_prefetch_first =
    size_t(N) * size_t(N) * size_t(L) * sizeof(T) <= getrf_prefetch_first_bytes;

/// The request of the next block by those forms for an N x N block of L
/// lanes of T: called with Before true ahead of the lane loops and false
/// after them, it requests the block at the one of the two places that
/// getrf_prefetch_first says.
template <bool Before, int N, int L, class T>
KOKKOS_FORCEINLINE_FUNCTION void getrf_request_next_block(BlockPrefetch& prefetch) {
  if constexpr (Before == getrf_prefetch_first<N, L, T>) {
    prefetch.plan(1);
    prefetch.step();
  }
}

/// The elimination of step K of the register forms (getrf_register_steps,
/// getrf_register_steps_unpivoted), with piv on the diagonal: column K below
/// it scaled by the pivot's reciprocal, the trailing rows and columns
/// updated, and tiny set where the pivot lies below sfmin (LAPACK divides
/// there) and getrf_tests_pivot says to test it.
template <int K, int L, int N, class T, class Index>
KOKKOS_FORCEINLINE_FUNCTION void getrf_register_eliminate(T (&a)[N][N], const T piv,
                                                          Index& tiny) {
  const T sfmin = Kokkos::Experimental::norm_min<T>::value;
  // x * 1 is x: a zero pivot's column is kept by the same multiply.
  const T scale = select_bits(piv == T(0), T(1), T(1) / piv);
  if constexpr (getrf_tests_pivot<T, L, N, K>)
    tiny |= Index(piv != T(0)) & Index(!(abs_select(piv) >= sfmin));
  IBLA_IMPL_UNROLL
  for (int i = K + 1; i < N; ++i) a[i][K] *= scale;
  IBLA_IMPL_UNROLL
  for (int i = K + 1; i < N; ++i)
    IBLA_IMPL_UNROLL
    for (int j = K + 1; j < N; ++j) a[i][j] = fused_mul_add(-a[i][K], a[K][j], a[i][j]);
}

/// Lane l's N x N matrix of the block A, into a (registers once inlined).
template <int N, class T, class BA>
KOKKOS_FORCEINLINE_FUNCTION void load_lane_matrix(T (&a)[N][N], const BA& A, const int l) {
  IBLA_IMPL_UNROLL
  for (int i = 0; i < N; ++i)
    IBLA_IMPL_UNROLL
    for (int j = 0; j < N; ++j) a[i][j] = A(i, j, l);
}

/// a back into lane l's matrix of the block A, but where keep_input (by a
/// select per element, which keeps the lane loop vectorised).
template <int N, class T, class BA>
KOKKOS_FORCEINLINE_FUNCTION void store_lane_matrix(const T (&a)[N][N], const BA& A, const int l,
                                                   const bool keep_input) {
  IBLA_IMPL_UNROLL
  for (int i = 0; i < N; ++i)
    IBLA_IMPL_UNROLL
    for (int j = 0; j < N; ++j) {
      T& out = A(i, j, l);
      out    = select_bits(keep_input, out, a[i][j]);
    }
}

/// Step K and the following ones of getrf_registers_host, for one lane whose
/// N x N matrix is in a: the same operations, in the same order, as
/// getrf_pivot_column and getrf_swap_update (same bits), with the row
/// interchange done by selects. A function template per step, not a loop:
/// every index into a is a compile-time constant whatever the compiler's
/// unrolling heuristics decide, so a stays in registers.
template <int K, int L, int N, class T, class Index>
KOKKOS_FORCEINLINE_FUNCTION void getrf_register_steps(T (&a)[N][N], Index (&pivot_row)[N],
                                                      T& status, Index& tiny) {
  // Pivot search, idamax's rule.
  T piv   = a[K][K];
  Index p = K;
  T amax  = abs_select(piv);
  IBLA_IMPL_UNROLL
  for (int i = K + 1; i < N; ++i) {
    const T v       = abs_select(a[i][K]);
    const bool more = v > amax;
    amax            = select_bits(more, v, amax);
    piv             = select_bits(more, a[i][K], piv);
    p               = more ? Index(i) : p;
  }
  pivot_row[K] = p;
  // The first zero pivot sets status (0 until then). status is a T, so that
  // both compares are of T: a select mixing a double compare with an
  // integer one made GCC give up the lane loop of the 4 x 4 case ("relevant
  // stmt not supported").
  status = select_bits((piv == T(0)) & (status == T(0)), T(K + 1), status);
  // Rows K and p exchanged in every column (a select per element and row).
  IBLA_IMPL_UNROLL
  for (int j = 0; j < N; ++j) {
    const T row_k = a[K][j];
    T to_k        = row_k;
    IBLA_IMPL_UNROLL
    for (int i = K + 1; i < N; ++i) {
      const bool here = p == Index(i);
      to_k            = select_bits(here, a[i][j], to_k);
      a[i][j]         = select_bits(here, row_k, a[i][j]);
    }
    a[K][j] = to_k;
  }
  getrf_register_eliminate<K, L>(a, piv, tiny);
  if constexpr (K + 1 < N) getrf_register_steps<K + 1, L>(a, pivot_row, status, tiny);
}

/// getrf_register_steps without the interchanges, for blocks expected to
/// need none (the thread's last block swapped no row): the same operations
/// on the same values where no step would have swapped, and moved set
/// where one would have (a row below K larger than the pivot in absolute
/// value, idamax's rule), the lane's result then not LAPACK's.
template <int K, int L, int N, class T, class Index>
KOKKOS_FORCEINLINE_FUNCTION void getrf_register_steps_unpivoted(T (&a)[N][N], T& status,
                                                                Index& tiny, Index& moved) {
  const T piv  = a[K][K];
  const T amax = abs_select(piv);
  IBLA_IMPL_UNROLL
  for (int i = K + 1; i < N; ++i) moved |= Index(abs_select(a[i][K]) > amax);
  status = select_bits((piv == T(0)) & (status == T(0)), T(K + 1), status);
  getrf_register_eliminate<K, L>(a, piv, tiny);
  if constexpr (K + 1 < N) getrf_register_steps_unpivoted<K + 1, L>(a, status, tiny, moved);
}

/// Lane l of getrf_registers_host: loads its matrix, factors it
/// (getrf_register_steps), stores it back with ipiv and info. flags[l]: bit
/// 0 a pivot below sfmin (the lane stores nothing to A: it is factored
/// again from its input), bit 1 a row interchange. A functor with an
/// always-inlined operator(), not a lambda: a lambda this large was not
/// inlined into the lane loop, which then stayed scalar.
template <int N, int L, class BA, class BP, class BI>
struct GetrfRegisterLane {
  using T     = std::remove_const_t<typename BA::value_type>;
  using Index = lane_index_t<T>;
  const BA& A;
  const BP& ipiv;
  const BI& info;
  Index* flags;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int l) const {
    T a[N][N];
    load_lane_matrix(a, A, l);
    Index pivot_row[N];
    T status   = T(0);  // info, as a T (see getrf_register_steps)
    Index tiny = 0;
    getrf_register_steps<0, L>(a, pivot_row, status, tiny);
    // pivot_row[k] >= k: the sum is 0 exactly when no step swapped. A flag
    // or-ed at every step (swapped |= p != K) became a chain of the search's
    // compare masks that GCC did not vectorise (the lane loop went scalar,
    // 5x slower).
    Index swapped = 0;
    IBLA_IMPL_UNROLL
    for (int k = 0; k < N; ++k) swapped += pivot_row[k] - Index(k);
    store_lane_matrix(a, A, l, tiny != 0);
    IBLA_IMPL_UNROLL
    for (int k = 0; k < N; ++k) ipiv(k, 0, l) = int(pivot_row[k]) + 1;
    info(0, 0, l) = int(status);
    flags[l]      = tiny | (Index(swapped != 0) << 1);
  }
};

/// Whether the last block this host thread factored had a lane that
/// swapped rows. Batches are mostly alike (diagonally dominant ones never
/// swap, random ones swap in nearly every block), so it predicts the next
/// block: getrf_block tries the pass without interchanges
/// (getrf_crout_host) only after a block without any. It only picks which
/// form runs first, never the results.
inline bool& getrf_last_block_swapped() {
  static thread_local bool swapped = true;
  return swapped;
}

/// Host form for a full block of square N x N matrices, N small: each lane
/// factors its whole matrix in registers inside one lane loop (straight-line
/// code, the shape GCC vectorises across lanes), so a row interchange is a
/// select per element between the two rows instead of a store through the
/// lane's own pivot row, and nothing goes back to memory between the steps.
/// A lane whose pivot falls below sfmin (LAPACK divides then, which the
/// multiply here would not match) stores nothing but its flag; such lanes
/// are factored afterwards, one at a time, by getrf_lanes from their
/// untouched input. Measured against getrf_lanes_host (1-thread
/// micro-driver, double, 4 x 10^4 problems, medians of 41): 1.4-2.7x at
/// n = 1..3, 1.0-1.9x at n = 4 (L = 8 and 16). Returns whether a lane of
/// the block swapped rows. Out of line: inlined, its lane arrays gave the
/// function holding getrf_square_block_host's forms a frame of 6.6 KB, set
/// up at every block whichever form ran (GETRF micro-driver, 10^4
/// diagonally dominant problems in cache, L = 8 doubles, 2 threads, medians
/// of 2001 calls, microseconds a call: n = 2 6.4 -> 5.1, 3 8.4 -> 7.3, 4
/// 11.1 -> 10.3 in the kernels of one order; random input n = 8 and 12,
/// through getrf_block's dispatch, 1.06x and 1.00x).
template <int N, int L, class Member, class BA, class BP, class BI>
IBLA_IMPL_HOST_NOINLINE bool getrf_registers_host(const Member& member, const BA& A,
                                                  const BP& ipiv, const BI& info,
                                                  BlockPrefetch& prefetch) {
  using T     = std::remove_const_t<typename BA::value_type>;
  using Index = lane_index_t<T>;
  // One lane loop reads the whole block, so the next block's lines are all
  // requested at once, after it where the block is larger than
  // getrf_prefetch_first_bytes (see getrf_crout_host). Without any request
  // the register form at n = 5, 6 was 1.41-1.70x getrf_lanes_host warm but
  // 0.46-1.11x flushed.
  getrf_request_next_block<true, N, L, T>(prefetch);
  Index flags[L];
  for_each_lane(member, A.lanes, GetrfRegisterLane<N, L, BA, BP, BI>{A, ipiv, info, flags});
  getrf_request_next_block<false, N, L, T>(prefetch);
  Index swapped = 0;
  for (int l = 0; l < L; ++l) swapped |= flags[l] & 2;
  // Lanes with a pivot below sfmin: one at a time from their untouched input.
  for (int l = 0; l < L; ++l)
    if (flags[l] & 1) {
      BlockPrefetch none;
      getrf_lanes(member, single_lane(A, l), single_lane(ipiv, l), single_lane(info, l), none);
    }
  return swapped != 0;
}

/// Square orders up to this one get a first pass without interchanges,
/// left-looking (getrf_crout_host), when the thread's previous block
/// swapped no row: as long as its column of N lane values fits in
/// host_simd_registers - 4 registers (L = 16 doubles on AVX-512 take two
/// registers a value: up to 14), and at most 17. A micro-driver (getrf of
/// 10^4 diagonally dominant problems in L3, 2 threads, minimum of 300
/// calls, AVX-512 Zen 4) measured L = 8 at n = 16 34 GFLOP/s, at n = 20 25
/// and at n = 24 7 GFLOP/s (its scratch no longer fits L1), and L = 16 at
/// n = 16 18 GFLOP/s against getrf_lanes_host's 20; each order also adds
/// its own unrolled instance to every build (order 17: 9 CPU-s more for
/// the tests' native GETRF and GESV unit at -O1, 79 -> 88).
/// Orders 17..20 against getrf_lanes_host with its one-pass panels
/// (getrf_panel_without_interchanges), on an Intel Xeon VM with AVX-512
/// (L1d 48 KiB; the same micro-driver, medians of 101 calls, 2 alternated
/// runs, GFLOP/s, in L3 / flushed): L = 8 doubles n = 17 37.7-39.7 ->
/// 41.1-42.0 / 22.3-23.2 -> 25.9-26.2, 18 40.8-41.4 -> 39.7-40.6 /
/// 24.0-24.3 -> 25.2-25.6, 20 41.5-42.0 -> 37.5-37.6 / 26.5-27.0 ->
/// 25.5-26.5; L = 16 floats n = 17 82.3-84.6 -> 84.6-85.5 / 50.9-51.3 ->
/// 56.9-57.7, 18 84.3-85.3 -> 82.8-83.3 / 53.0-53.2 -> 56.4-57.2, 20
/// 94.4-95.0 -> 84.6-84.7 / 59.1-59.2 -> 56.6-57.9. Block and scratch
/// together (2 N^2 L sizeof(T)) are 37 KB at n = 17, 51 KB at 20.
///
/// With 16 registers (AVX2) the rule gave 12 for one register a value but
/// only 6 and 3 for two and four (L = 8 and 16 doubles, 16 and 32 floats),
/// and those lane counts went to getrf_lanes_host from there. Measured
/// instead (Zen 3, the micro-driver of getrf_crout_host: ibla::getrf on 4096
/// diagonally dominant problems in cache, 1 thread, best of 300 calls,
/// GFLOP/s), the form up to 12 at every L, its column spilling: double L =
/// 16 n = 4 3.2 -> 7.0, 6 4.0 -> 10.3, 8 6.1 -> 12.6, 10 7.8 -> 13.6, 12 9.2
/// -> 14.2 (the best L before: 5.6, 9.4, 10.7, 9.4, 10.0); L = 8 n = 8 6.3
/// -> 12.5. The two or four registers of a value are independent chains,
/// which the left-looking column (a chain of J updates per column, then a
/// division) lacks with one. Order 13 and up: 3 GFLOP/s (the lane loop no
/// longer vectorises). Float alike. Only for blocks whose row stride is
/// the compile-time L (block-interleaved): with a runtime row stride
/// (LayoutInterleaved, same micro-driver) the larger orders ran at
/// 0.87-0.93x at n = 7..12, and each order is one more instance per layout
/// (the tests' GETRF and GESV unit compiled 32% longer with them for
/// every layout).
template <class T, int L, class RowStride>
inline constexpr int getrf_crout_order =
    !host_has_wide_register_file && !std::is_same<RowStride, index_t>::value ? 12
    : (host_simd_registers - 4) / host_registers_per_value<T, L> < 17
        ? (host_simd_registers - 4) / host_registers_per_value<T, L>
        : 17;

/// Orders up to this one of getrf_crout_host keep the lane's multipliers
/// (L below the diagonal) in an array of the lane's own for the columns
/// after theirs, instead of reading them back from A: the compiler cannot
/// tell a store to one column of A from a load of another (the column
/// stride is a runtime value), so it reloaded them after every store. On
/// AVX2 (the micro-driver of getrf_crout_host, best L, two builds of 3
/// alternated runs each): n = 3..6 1.05-1.10x in both; n = 7..9 0.91-1.09x,
/// the sign changing between the builds; n = 10, 11 0.86x, 0.95x (L = 4:
/// 45 and 55 multipliers).
inline constexpr int getrf_crout_lane_multipliers_order = 6;

/// Update K of a column of getrf_crout_host: rows K+1.. of c take column
/// K of L times c[K] (getrf_crout_updates: K = 0, 1, ... in increasing
/// order, each row's in the order the loops had). Folds, not row loops: at
/// -O1 -ftree-vectorize (the unit tests' level) GCC 12.2 does not unroll
/// such loops before vectorising, vectorised the row loop of this update
/// instead, and got rows 12..14 of column 9 wrong at orders 15 and 16 (L =
/// 8 doubles, AVX-512; right at -O1, -O2 and -O3, no sanitizer report).
/// Folds leave only the lane loop to vectorise. Unoptimised builds keep
/// the loops (see getrf_crout_columns).
template <int K, bool LaneMultipliers, int N, class T, class BA, int... I>
KOKKOS_FORCEINLINE_FUNCTION void getrf_crout_update(T (&c)[N], const T (&multipliers)[N][N],
                                                    const BA& A, [[maybe_unused]] const int l,
                                                    std::integer_sequence<int, I...>) {
  ((c[K + 1 + I] = fused_mul_add(
        -(LaneMultipliers ? multipliers[K + 1 + I][K] : A(K + 1 + I, K, l)), c[K], c[K + 1 + I])),
   ...);
}

template <bool LaneMultipliers, int N, class T, class BA, int... K>
KOKKOS_FORCEINLINE_FUNCTION void getrf_crout_updates(T (&c)[N], const T (&multipliers)[N][N],
                                                     const BA& A, [[maybe_unused]] const int l,
                                                     std::integer_sequence<int, K...>) {
  (getrf_crout_update<K, LaneMultipliers>(c, multipliers, A, l,
                                          std::make_integer_sequence<int, N - 1 - K>{}),
   ...);
}

/// Column J and the following ones of getrf_crout_host, for lane l: the
/// column is loaded into registers and kept in W as it was (but row 0,
/// which no step changes), receives the
/// updates of the columns before it in increasing k (their multipliers
/// from the lane's own array, or read back from A above
/// getrf_crout_lane_multipliers_order), is checked (its pivot at least
/// sfmin, no row below larger), scaled, and stored to A. Each element gets the operations
/// of the right-looking steps (getrf_register_steps, getrf_lanes_host) in
/// the same order: updates in increasing k, then the scaling by the same
/// reciprocal; so the same bits. A function template per column, so that
/// every index into c is a compile-time constant.
template <int J, int End, int N, int L, class T, class BA>
KOKKOS_FORCEINLINE_FUNCTION void getrf_crout_columns(const BA& A, T (&W)[N][N][L],
                                                     T (&multipliers)[N][N], const int l,
                                                     bool& all_pass) {
  constexpr bool lane_multipliers = N <= getrf_crout_lane_multipliers_order;
  const T sfmin = Kokkos::Experimental::norm_min<T>::value;
  T c[N];
  IBLA_IMPL_UNROLL
  for (int i = 0; i < N; ++i) c[i] = A(i, J, l);
  // Row 0 receives no update and no scaling: it is neither kept nor stored.
  IBLA_IMPL_UNROLL
  for (int i = 1; i < N; ++i) W[i][J][l] = c[i];
#if defined(__OPTIMIZE__)
  getrf_crout_updates<lane_multipliers>(c, multipliers, A, l, std::make_integer_sequence<int, J>{});
#else
  // Unoptimised builds (the sanitizer stage's -O0, the fuzz harness): the
  // loops, same operations in the same order. There nothing vectorises
  // them, and the fold is straight-line code of about N^3 / 6 instrumented
  // updates a lane loop: with it the sanitizer stage's build took 642 s on
  // a fresh clone (2026-11-28), against about 340 before.
  IBLA_IMPL_UNROLL
  for (int k = 0; k < J; ++k)
    IBLA_IMPL_UNROLL
    for (int i = k + 1; i < N; ++i)
      c[i] = fused_mul_add(-(lane_multipliers ? multipliers[i][k] : A(i, k, l)), c[k], c[i]);
#endif
  // The column passes when its pivot is at least sfmin in magnitude and
  // every row below is at most as large (idamax would pick a larger one):
  // independent compares and-ed together (a running maximum, a chain of
  // compare and select per row, was a quarter of the form's time: perf, n =
  // 8). A zero, tiny or NaN pivot fails, and so does a NaN below (no
  // ordered compare holds for it): such blocks are rare, and the form with
  // interchanges handles them as LAPACK does (info, no scaling, division
  // below sfmin, NaN never picked), so this pass needs neither info nor a
  // guarded scale. The flags of each kind apart (beaten, zero pivot for
  // info, tiny pivot) were about 11 vector operations more a column.
  const T piv_size = magnitude(c[J]);
  bool passes      = piv_size >= sfmin;
  IBLA_IMPL_UNROLL
  for (int i = J + 1; i < N; ++i) passes &= magnitude(c[i]) <= piv_size;
  all_pass &= passes;
  const T scale = T(1) / c[J];
  IBLA_IMPL_UNROLL
  for (int i = J + 1; i < N; ++i) c[i] *= scale;
  IBLA_IMPL_UNROLL
  for (int i = 1; i < N; ++i) A(i, J, l) = c[i];
  if constexpr (lane_multipliers) {
    IBLA_IMPL_UNROLL
    for (int i = J + 1; i < N; ++i) multipliers[i][J] = c[i];
  }
  if constexpr (J + 1 < End) getrf_crout_columns<J + 1, End>(A, W, multipliers, l, all_pass);
}

/// Memory references of column J of getrf_crout_columns (above
/// getrf_crout_lane_multipliers_order): the column's N loads, its N - 1
/// stores to W and N - 1 to A, and a multiplier load for each update.
constexpr int getrf_crout_column_references(const int N, const int J) {
  int references = 3 * N - 2;
  for (int k = 0; k < J; ++k) references += N - 1 - k;
  return references;
}

/// The column after the last one of the lane loop of getrf_crout_host that
/// starts at column Begin: as many columns as stay within 960 memory
/// references. GCC does not vectorise a loop with more than 1000 (its
/// --param loop-max-datarefs-for-datadeps): the lane loop is left scalar.
/// One loop for all the columns stayed within it up to order 12 (914);
/// from 13 it went scalar, at a third of the speed (AVX-512, L = 8 doubles,
/// micro-driver of getrf_crout_order, n = 13..16: about 8 GFLOP/s against
/// 25-28 at n = 12 and 17; with the parameter raised, 27-33).
constexpr int getrf_crout_part_end(const int N, const int Begin) {
  int end = Begin, references = 0;
  while (end < N && (end == Begin ||
                     references + getrf_crout_column_references(N, end) <= 960)) {
    references += getrf_crout_column_references(N, end);
    ++end;
  }
  return end;
}

/// Lane l of getrf_crout_host's columns Begin .. End-1 (a functor: see
/// GetrfRegisterLane). flags[l] gets 1 when a column of the lane failed
/// getrf_crout_columns' check (cleared by the first part). The later parts
/// read the multipliers of the earlier ones back from A, as the columns of
/// one part do above getrf_crout_lane_multipliers_order.
template <int Begin, int End, int N, int L, class T, class Index, class BA>
struct GetrfCroutLane {
  static_assert(Begin == 0 || N > getrf_crout_lane_multipliers_order,
                "GetrfCroutLane: the lane's own multipliers do not cross parts");
  const BA& A;
  T (&W)[N][N][L];
  Index (&flags)[L];
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int l) const {
    bool all_pass = true;
    T multipliers[N][N];
    getrf_crout_columns<Begin, End>(A, W, multipliers, l, all_pass);
    flags[l] = (Begin == 0 ? Index(0) : flags[l]) | Index(!all_pass);
  }
};

/// Columns Begin .. N-1 of getrf_crout_host, one lane loop per part
/// (getrf_crout_part_end).
template <int Begin, int N, int L, class Member, class T, class Index, class BA>
KOKKOS_FORCEINLINE_FUNCTION void getrf_crout_parts(const Member& member, const BA& A,
                                                   T (&W)[N][N][L], Index (&flags)[L]) {
  if constexpr (Begin < N) {
    constexpr int End = getrf_crout_part_end(N, Begin);
    for_each_lane(member, A.lanes, GetrfCroutLane<Begin, End, N, L, T, Index, BA>{A, W, flags});
    getrf_crout_parts<End>(member, A, W, flags);
  }
}

/// Row i of a full host block of ints (ipiv's row i, or info with i = 0)
/// set to value(l) in lane l, value called once a lane: by streaming stores
/// where Streamed (store_lanes_streaming; the kernel's teams fence at their
/// end, see getrf_host_stores), else by a plain store in the lane loop.
template <bool Streamed, int L, class Member, class Lanes, class Block, class Value>
KOKKOS_FORCEINLINE_FUNCTION void getrf_store_int_row(const Member& member, const Lanes& lanes,
                                                     const Block& block, const int i,
                                                     const Value& value) {
  if constexpr (Streamed) {
    int row[L];
    for_each_lane(member, lanes,
                  [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA { row[l] = value(l); });
    store_lanes_streaming(block, i, row);
  } else {
    for_each_lane(member, lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
      block(i, 0, l) = value(l);
    });
  }
}

/// Host form for a full block of square N x N matrices when no interchange
/// is expected: the block is factored without interchanges, left-looking
/// (Crout order: one column in registers at a time, the finished columns
/// of L kept per lane or read back from A, in L1), in place, the input kept
/// in the scratch W. If no lane had a row beating its diagonal, nor a pivot
/// below sfmin (zero included) nor a NaN in a column, A holds the
/// factorization LAPACK computes (pivots k + 1, info 0) and it returns
/// true; otherwise A gets its input back from W, it returns false, and the
/// caller factors the block with interchanges.
///
/// The block was first factored into W and copied to A once it passed.
/// Factored in place instead, a passing block (every block of a diagonally
/// dominant batch) loads and stores each element once less: on AVX2 (Zen 3,
/// 1-thread micro-driver: ibla::getrf on 4096 diagonally dominant problems,
/// input restored before each of 200 calls, best call, 3 alternated runs,
/// the better L, GFLOP/s) n = 2 2.31 -> 3.02, 3 3.68 -> 4.62, 4 4.72 ->
/// 5.30, 5 6.27 -> 7.28, 6 6.53 -> 8.00, 7 7.28 -> 8.49, 8 8.65 -> 9.42, 9
/// 8.43 -> 9.27, 10 unchanged (9.5); float (L = 8, 16, 32; with the lane's
/// multipliers below; best of 5-6 runs each) n = 2 4.3 -> 5.3, 3 7.0 ->
/// 9.4, 4 7.5 -> 11.6, 5 10.0 -> 15.3, 6 11.8 -> 19.4, 7..10 0.98-1.10x.
/// Not measured on AVX-512.
///
/// Right-looking, the register form held all n^2 values until its selected
/// store at the end, and spilled them from n = 7; the general form
/// (getrf_lanes_host) stores every element at every step. Against them, on
/// diagonally dominant input (the micro-driver of getrf_crout_order,
/// GFLOP/s, L = 8 / 16): n = 7 26.4 / 26.8 against getrf_lanes_host's
/// 9.8 / 13.6, n = 8 30.6 / 30.1 against 11.9 / 16.1, n = 10 36.8 / 33.6
/// against 14.8 / 18.5, n = 12 39.9 / 32.0; n = 2..6 against the register
/// form's pass without interchanges (which it replaces): L = 16 1.1-1.7x,
/// L = 8 0.7-0.9x at n = 2..4 and 1.1-1.2x at n = 5, 6, the best L of each
/// faster with this form at every order.
template <int N, int L, bool StreamOutputs, class Member, class BlockA, class BP, class BI>
IBLA_IMPL_HOST_NOINLINE bool getrf_crout_host(const Member& member, const BlockA& block,
                                              const BP& ipiv, const BI& info,
                                              BlockPrefetch& prefetch) {
  // Every address a constant offset from the block's origin (see
  // fixed_order_block): L = 4 doubles, same micro-driver, n = 5..9
  // 1.05-1.14x, n = 10..12 within noise.
  const auto A = fixed_order_block<N>(block);
  using BA     = std::remove_const_t<decltype(A)>;
  using T      = std::remove_const_t<typename BA::value_type>;
  using Index  = lane_index_t<T>;
  getrf_request_next_block<true, N, L, T>(prefetch);
  T W[N][N][L];
  Index flags[L];
  getrf_crout_parts<0>(member, A, W, flags);
  // The next block's lines, all at once after this block's lane loops
  // (which read it front to back), but in blocks of at most
  // getrf_prefetch_first_bytes: requested before them, the requests
  // held the line-fill buffers that this block's own loads wait for, a
  // wait as long as the next block's lines take to come. GETRF
  // micro-driver, 10^4 problems, 2 threads, L = 8 doubles, medians of 101
  // calls, GFLOP/s, requested before -> after (-> none), on an Intel Xeon
  // VM with AVX-512: diagonally dominant, flushed n = 6 8.2-8.8 -> 9.0-9.1
  // (7.5-7.7), 8 13.2-13.4 -> 14.1-14.7 (11.8-11.9), 12 16.9-18.0 ->
  // 19.8-20.8 (16.0-17.1), 16 20.7-21.4 -> 23.5-24.3 (19.8); in L3 n = 6
  // 15.8 -> 17.7-17.9 (16.6), 8 21.6-21.7 -> 26.0-26.4 (26.4-26.8), 12
  // 28.0-29.9 -> 36.5-36.7 (43.3-43.6), 16 34.7-35.6 -> 39.1-40.7
  // (54.8-55.6). getrf_crout_pivoted_host and getrf_registers_host alike.
  getrf_request_next_block<false, N, L, T>(prefetch);
  Index any = 0;
  for (int l = 0; l < L; ++l) any |= flags[l];
  if (any) {
    IBLA_IMPL_UNROLL
    for (int i = 1; i < N; ++i)
      IBLA_IMPL_UNROLL
      for (int j = 0; j < N; ++j)
        for_each_lane(member, A.lanes, [&](const int l) { A(i, j, l) = W[i][j][l]; });
    return false;
  }
  IBLA_IMPL_UNROLL
  for (int k = 0; k < N; ++k) {
    const auto pivot = [&](int) IBLA_IMPL_ALWAYS_INLINE_LAMBDA { return k + 1; };
    getrf_store_int_row<StreamOutputs, L>(member, A.lanes, ipiv, k, pivot);
  }
  // No zero pivot passes the check.
  getrf_store_int_row<StreamOutputs, L>(member, A.lanes, info, 0,
                                        [](int) IBLA_IMPL_ALWAYS_INLINE_LAMBDA { return 0; });
  return true;
}

/// Whether swap_rows_in_registers takes the masks of its selects from
/// rows_match_mask (integer arithmetic, the masks in vector registers)
/// for a column of N rows of L lanes of T, rather than from compares (the
/// masks in AVX-512's mask registers, which getrf_crout_pivoted_host's
/// columns spilled to the stack and reloaded: 402 kmovb at n = 8). For
/// doubles where a value takes one register, from order 4 to 11. Random
/// input, GETRF micro-driver (ibla::getrf on 10^4 problems, 2 threads,
/// medians of 200 calls, 3 processes each, GFLOP/s, compares ->
/// arithmetic), Zen 5 VM:
/// L = 8 doubles n = 4 14.0-14.4 -> 14.6-15.0, 5 16.6-17.5 -> 17.0-17.8,
/// 6 the same, 7 19.3-19.7 -> 21.1-21.3, 8 19.9-21.0 -> 23.0-23.2, 9
/// 20.0-21.0 -> 20.8-21.4, 10 12.4 -> 20.8-21.7, 11 20.6-21.2 ->
/// 21.0-22.1. L = 16 floats gained there too (n = 6..11 1.02-1.10x,
/// medians) but lost in ibla_bench at n = 10, GETRF and GESV 0.6-0.7x in
/// each of 4 alternated runs (22-29 against 36-40 GFLOP/s), so floats keep
/// the compares. The compare form at n = 10, L = 8 ran at 22.7-23.9 in the
/// session's first runs and at 12.0-12.5 in every run after (the same
/// binary), the arithmetic form at 20.8-24.9 in both. Not kept: n = 3
/// (0.97x), n = 12 (13.5-16.9 against 21.6-22.1: the 12 rows and their
/// masks spilled, 2483 register moves against 688), two registers a value
/// (L = 16 doubles: n = 8 1.03-1.07x, 9..12 0.91-0.98x), and the masks of
/// getrf_register_steps (L = 16 doubles n = 3, 4 0.83-0.99x). ibla_bench
/// (GETRF and GESV, n = 2..12, 10^4 problems, 4 alternated runs, L = 8
/// doubles) put the forms within its runs' spread but for n = 8, where
/// the compare form ran at 12-14 GFLOP/s in those runs and this one at
/// 20-22.
template <class T, int L, int N>
inline constexpr bool swap_rows_by_arithmetic_masks = host_has_mask_registers && sizeof(T) == 8 &&
                                                      L > 0 && host_registers_per_value<T, L> == 1 &&
                                                      N >= 4 && N <= 11;

/// Rows K and p of the register column c exchanged, p >= K being a lane's
/// own pivot row: selects over the rows below K, so that no lane needs an
/// address of its own (as in getrf_register_steps). K is a template
/// parameter so that every index into c is a compile-time constant: with a
/// loop index, GCC left the loop of the 12 x 12 form rolled, c went to
/// memory and the lane loop stayed scalar (6x slower). L: the lanes of the
/// block (0 where not known), which with N picks how the selects' masks
/// are made (swap_rows_by_arithmetic_masks).
template <int K, int L, int N, class T, class Index>
KOKKOS_FORCEINLINE_FUNCTION void swap_rows_in_registers(T (&c)[N], const Index p) {
  const T row_k = c[K];
  T to_k        = row_k;
  IBLA_IMPL_UNROLL
  for (int i = K + 1; i < N; ++i) {
    if constexpr (swap_rows_by_arithmetic_masks<T, L, N>) {
      const select_mask_t<T> here = rows_match_mask<T>(p, Index(i));
      to_k                        = select_by_mask(here, c[i], to_k);
      c[i]                        = select_by_mask(here, row_k, c[i]);
    } else {
      const bool here = p == Index(i);
      to_k            = select_bits(here, c[i], to_k);
      c[i]            = select_bits(here, row_k, c[i]);
    }
  }
  c[K] = to_k;
}

/// Step K of right-looking LU on the register column c (a column right of
/// K): rows K and pivot_row[K] exchanged, then the update by column K of L,
/// which W holds in the row order of step K (after its interchange).
template <int K, int N, int L, class T, class Index>
KOKKOS_FORCEINLINE_FUNCTION void getrf_crout_pivoted_step(T (&c)[N], const T (&W)[N][N][L],
                                                          const Index (&pivot_row)[N],
                                                          const int l) {
  swap_rows_in_registers<K, L>(c, pivot_row[K]);
  IBLA_IMPL_UNROLL
  for (int i = K + 1; i < N; ++i) c[i] = fused_mul_add(-W[i][K][l], c[K], c[i]);
}

/// Steps K... in increasing order (a comma fold runs left to right). A fold,
/// not a recursion over (K, J): each step is one template instance per
/// order, where the recursion made one per pair of step and column.
template <int N, int L, class T, class Index, int... K>
KOKKOS_FORCEINLINE_FUNCTION void getrf_crout_pivoted_steps(T (&c)[N], const T (&W)[N][N][L],
                                                           const Index (&pivot_row)[N],
                                                           [[maybe_unused]] const int l,
                                                           std::integer_sequence<int, K...>) {
  // l is unused when K... is empty (column 0): no warning for that instance.
  (getrf_crout_pivoted_step<K>(c, W, pivot_row, l), ...);
}

/// B + S... for S... = 0 .. M-1.
template <int B, int... S>
constexpr std::integer_sequence<int, (B + S)...> offset_sequence(std::integer_sequence<int, S...>) {
  return {};
}

/// The interchanges of steps S... on the register column c, in increasing
/// order.
template <int N, class T, class Index, int L, int... S>
KOKKOS_FORCEINLINE_FUNCTION void swap_rows_in_registers_at(T (&c)[N], const Index (&P)[N][L],
                                                           [[maybe_unused]] const int l,
                                                           std::integer_sequence<int, S...>) {
  (swap_rows_in_registers<S, L>(c, P[S][l]), ...);
}

/// Column J and the following ones of getrf_crout_pivoted_host, for lane l.
/// Column J is loaded into registers in the input's row order and goes
/// through steps k = 0 .. J-1 as right-looking LU (getrf_lanes_host,
/// getrf_register_steps) would take it: rows k and pivot_row[k] exchanged,
/// then the update by column k of L, which W holds in the row order of step
/// k (after its interchange). Then step J's own pivot search (idamax's
/// rule), interchange and scaling, and the column goes to W. Each element
/// gets the same operations in the same order as right-looking: the same
/// bits. The interchanges of the later steps are not applied to W's
/// columns of L here but once, when they are stored (GetrfCroutPivotedStore).
template <int J, int End, int N, int L, class T, class Index, class BA>
KOKKOS_FORCEINLINE_FUNCTION void getrf_crout_pivoted_columns(const BA& A, T (&W)[N][N][L],
                                                             Index (&pivot_row)[N], const int l,
                                                             T& status, Index& tiny) {
  const T sfmin = Kokkos::Experimental::norm_min<T>::value;
  T c[N];
  IBLA_IMPL_UNROLL
  for (int i = 0; i < N; ++i) c[i] = A(i, J, l);
  getrf_crout_pivoted_steps(c, W, pivot_row, l, std::make_integer_sequence<int, J>{});
  T piv   = c[J];
  Index p = J;
  T amax  = magnitude(piv);
  IBLA_IMPL_UNROLL
  for (int i = J + 1; i < N; ++i) {
    const T v       = magnitude(c[i]);
    const bool more = v > amax;
    amax            = select_bits(more, v, amax);
    piv             = select_bits(more, c[i], piv);
    p               = select_bits(more, Index(i), p);
  }
  pivot_row[J] = p;
  status       = select_bits((piv == T(0)) & (status == T(0)), T(J + 1), status);
  swap_rows_in_registers<J, L>(c, p);
  // x * 1 is x: a zero pivot's column is kept by the same multiply.
  const T scale = select_bits(piv == T(0), T(1), T(1) / piv);
  if constexpr (getrf_tests_pivot<T, L, N, J>)
    tiny |= Index(piv != T(0)) & Index(!(magnitude(piv) >= sfmin));
  IBLA_IMPL_UNROLL
  for (int i = J + 1; i < N; ++i) c[i] *= scale;
  IBLA_IMPL_UNROLL
  for (int i = 0; i < N; ++i) W[i][J][l] = c[i];
  if constexpr (J + 1 < End)
    getrf_crout_pivoted_columns<J + 1, End>(A, W, pivot_row, l, status, tiny);
}

/// Columns per lane loop of getrf_crout_pivoted_host of order N: all of
/// them up to 10, half above. With all 12 in one loop GCC 12 kept one
/// column's array in memory and the loop stayed scalar (1.5 GFLOP/s); in
/// two loops n = 12 ran at 11.4 GFLOP/s against getrf_lanes_host's 9.5 (L =
/// 8, random input, micro-driver of getrf_crout_order), while n = 8 split
/// in two ran at 0.95x of one loop.
template <int N>
inline constexpr int getrf_crout_pivoted_part = N <= 10 ? N : (N + 1) / 2;

/// Lane l of getrf_crout_pivoted_host (a functor: see GetrfRegisterLane):
/// columns Begin .. End-1 into W, their pivot rows into P[k][l] (those of
/// the columns before are read from there), info so far in status[l] and
/// whether a pivot fell below sfmin in tiny[l].
template <int Begin, int End, int N, int L, class T, class Index, class BA>
struct GetrfCroutPivotedLane {
  const BA& A;
  T (&W)[N][N][L];
  Index (&P)[N][L];
  T (&status)[L];
  Index (&tiny)[L];
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int l) const {
    Index pivot_row[N];
    IBLA_IMPL_UNROLL
    for (int k = 0; k < Begin; ++k) pivot_row[k] = P[k][l];
    T lane_status   = Begin == 0 ? T(0) : status[l];
    Index lane_tiny = Begin == 0 ? Index(0) : tiny[l];
    getrf_crout_pivoted_columns<Begin, End>(A, W, pivot_row, l, lane_status, lane_tiny);
    IBLA_IMPL_UNROLL
    for (int k = Begin; k < End; ++k) P[k][l] = pivot_row[k];
    status[l] = lane_status;
    tiny[l]   = lane_tiny;
  }
};

/// Columns Begin .. N-1 of getrf_crout_pivoted_host, getrf_crout_pivoted_part
/// columns per lane loop.
template <int Begin, int N, int L, class Member, class T, class Index, class BA>
KOKKOS_FORCEINLINE_FUNCTION void getrf_crout_pivoted_parts(const Member& member, const BA& A,
                                                           T (&W)[N][N][L], Index (&P)[N][L],
                                                           T (&status)[L], Index (&tiny)[L]) {
  if constexpr (Begin < N) {
    constexpr int part = getrf_crout_pivoted_part<N>;
    constexpr int End  = Begin + part < N ? Begin + part : N;
    for_each_lane(member, A.lanes,
                  GetrfCroutPivotedLane<Begin, End, N, L, T, Index, BA>{A, W, P, status, tiny});
    getrf_crout_pivoted_parts<End>(member, A, W, P, status, tiny);
  }
}

/// Lane l of the store of getrf_crout_pivoted_host: column K of W goes to
/// A after the interchanges of steps K+1 .. N-1 (LAPACK applies every
/// interchange to the whole row, L's part included); the rows they move
/// are all below K, where W holds L.
template <int K, int N, int L, class T, class Index, class BA>
struct GetrfCroutPivotedStore {
  const BA& A;
  const T (&W)[N][N][L];
  const Index (&P)[N][L];
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int l) const {
    T c[N];
    IBLA_IMPL_UNROLL
    for (int i = 0; i < N; ++i) c[i] = W[i][K][l];
    swap_rows_in_registers_at(c, P, l,
                              offset_sequence<K + 1>(std::make_integer_sequence<int, N - K - 1>{}));
    IBLA_IMPL_UNROLL
    for (int i = 0; i < N; ++i) A(i, K, l) = c[i];
  }
};

template <int K, int N, int L, class Member, class T, class Index, class BA>
KOKKOS_FORCEINLINE_FUNCTION void getrf_crout_pivoted_store(const Member& member, const BA& A,
                                                           const T (&W)[N][N][L],
                                                           const Index (&P)[N][L]) {
  if constexpr (K < N) {
    for_each_lane(member, A.lanes, GetrfCroutPivotedStore<K, N, L, T, Index, BA>{A, W, P});
    getrf_crout_pivoted_store<K + 1>(member, A, W, P);
  }
}

/// Square orders up to this one are factored with interchanges by
/// getrf_crout_pivoted_host: while a column and as many temporaries (the
/// selects of the interchanges and of the pivot search) fit the vector
/// registers, and at most 12. Measured, random input, micro-driver of
/// getrf_crout_order: L = 16 doubles (two registers a value) at n = 10 ran
/// at 0.8x getrf_lanes_host; L = 8 at n = 14 ran as fast as
/// getrf_lanes_host, and at n = 16 GCC 12 left a lane loop scalar.
template <class T, int L>
inline constexpr int getrf_crout_pivoted_order =
    host_simd_registers / (2 * host_registers_per_value<T, L>) < 12
        ? host_simd_registers / (2 * host_registers_per_value<T, L>)
        : 12;

/// Orders where getrf_registers_host beats getrf_crout_pivoted_host on
/// blocks that swap: 3 and 4 when a lane value takes two registers (L = 16
/// doubles on AVX-512: 7.7 against 4.8 and 8.1 against 7.6 GFLOP/s, random
/// input, micro-driver of getrf_crout_order). With one register a value the
/// pivoted form was faster at every order (L = 8: 1.2-2.0x at n = 2..10).
template <class T, int L>
constexpr bool getrf_registers_preferred(const int n) {
  return host_registers_per_value<T, L> > 1 && n >= 3 && n <= 4;
}

/// Host form for a full block of square N x N matrices with partial
/// pivoting, left-looking: one column in registers at a time, the
/// interchanges of the earlier steps applied to it by selects as it comes
/// (no per-lane address anywhere), the finished columns in the scratch W
/// (L1). The right-looking forms exchange two whole rows at every step:
/// getrf_register_steps by selects over the whole matrix held in registers
/// (it spills from n = 7), getrf_lanes_host by a gather and a scalar store
/// per lane and column. A is the input until the end: if a lane's pivot
/// fell below sfmin (LAPACK divides then), it returns false with A
/// untouched and the caller factors the block again; otherwise A, ipiv and
/// info hold LAPACK's result, and swapped says whether a lane exchanged
/// rows.
template <int N, int L, bool StreamOutputs, class Member, class BA, class BP, class BI>
IBLA_IMPL_HOST_NOINLINE bool getrf_crout_pivoted_host(const Member& member, const BA& A,
                                                      const BP& ipiv, const BI& info,
                                                      BlockPrefetch& prefetch, bool& swapped) {
  using T     = std::remove_const_t<typename BA::value_type>;
  using Index = lane_index_t<T>;
  getrf_request_next_block<true, N, L, T>(prefetch);
  T W[N][N][L];
  Index P[N][L];
  T status[L];
  Index tiny[L];
  // Constant offsets from the block's origin (see getrf_crout_host):
  // random input, L = 4 doubles, n = 6, 7 1.08x, 1.16x.
  const auto Af = fixed_order_block<N>(A);
  getrf_crout_pivoted_parts<0>(member, Af, W, P, status, tiny);
  // The next block's lines after the lane loops, as in getrf_crout_host:
  // random input, same micro-driver, before -> after, flushed n = 7 7.2 ->
  // 9.0, 9 8.1-8.2 -> 10.8-10.9, 12 9.1-9.3 -> 12.7-13.1; in L3 n = 7 9.6
  // -> 11.7-11.8, 9 10.7-10.8 -> 13.7-16.2, 12 11.4-12.6 -> 14.7-14.9.
  getrf_request_next_block<false, N, L, T>(prefetch);
  Index any_tiny = 0;
  for (int l = 0; l < L; ++l) any_tiny |= tiny[l];
  if (any_tiny) return false;
  getrf_crout_pivoted_store<0>(member, Af, W, P);
  // P[k][l] >= k: the sum is 0 exactly when no lane exchanged rows.
  Index moved[L] = {};
  IBLA_IMPL_UNROLL
  for (int k = 0; k < N; ++k) {
    const auto pivot = [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
      moved[l] += P[k][l] - Index(k);
      return int(P[k][l]) + 1;
    };
    getrf_store_int_row<StreamOutputs, L>(member, A.lanes, ipiv, k, pivot);
  }
  const auto lane_status = [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
    return int(status[l]);
  };
  getrf_store_int_row<StreamOutputs, L>(member, A.lanes, info, 0, lane_status);
  Index any_moved = 0;
  for (int l = 0; l < L; ++l) any_moved |= moved[l];
  swapped = any_moved != 0;
  return true;
}

/// The square orders getrf_square_block_host takes for blocks of L lanes of T
/// whose row stride is RowStride: those of any of its forms with a fixed
/// order (getrf_crout_host, getrf_crout_pivoted_host, getrf_registers_host).
template <class T, int L, class RowStride>
inline constexpr int getrf_square_block_order =
    getrf_crout_order<T, L, RowStride> > getrf_crout_pivoted_order<T, L>
        ? (getrf_crout_order<T, L, RowStride> > getrf_register_order
               ? getrf_crout_order<T, L, RowStride>
               : getrf_register_order)
        : (getrf_crout_pivoted_order<T, L> > getrf_register_order ? getrf_crout_pivoted_order<T, L>
                                                                  : getrf_register_order);

/// Host, a full block (L lanes) of square N x N matrices, N up to
/// getrf_square_block_order: the forms of a fixed order, tried in turn. The
/// pass without interchanges (getrf_crout_host) when the thread's previous
/// block swapped no row; then, interchanges expected or found by that pass
/// (which then requested the whole next block already: the prefetch finds
/// nothing left to plan), the pivoted form (getrf_crout_pivoted_host); then
/// the register form (getrf_registers_host), where the order prefers it and
/// for blocks the pivoted form hands back (a pivot below sfmin: these forms
/// divide where LAPACK does); else the general form. Only the thread that
/// runs the lane loops (team rank 0) calls it: the forms keep per-lane state
/// in arrays that only it fills.
template <int N, bool StreamOutputs = false, class Member, class BA, class BP, class BI>
KOKKOS_FORCEINLINE_FUNCTION void getrf_square_block_host(const Member& member, const BA& A,
                                                         const BP& ipiv, const BI& info,
                                                         BlockPrefetch& prefetch) {
  using T            = std::remove_const_t<typename BA::value_type>;
  constexpr int L    = fixed_lanes<typename BA::lane_count>::value;
  bool& last_swapped = getrf_last_block_swapped();
  if constexpr (N <= getrf_crout_order<T, L, typename BA::row_stride>) {
    if (!last_swapped && getrf_crout_host<N, L, StreamOutputs>(member, A, ipiv, info, prefetch))
      return;
  }
  if constexpr (N <= getrf_crout_pivoted_order<T, L> && !getrf_registers_preferred<T, L>(N)) {
    bool swapped = true;
    if (getrf_crout_pivoted_host<N, L, StreamOutputs>(member, A, ipiv, info, prefetch, swapped)) {
      last_swapped = swapped;
      return;
    }
  }
  if constexpr (N <= getrf_register_order) {
    last_swapped = getrf_registers_host<N, L>(member, A, ipiv, info, prefetch);
  } else {
    last_swapped = getrf_lanes_host<L>(member, A, ipiv, info, prefetch, !last_swapped);
  }
}
#endif

/// getrf_block's forms but the device register form of one order: on host
/// the forms chosen per block, on device the register form when
/// DeviceRegisterForms and the order allows, else getrf_lanes.
template <bool DeviceRegisterForms, class Member, class BA, class BP, class BI>
KOKKOS_INLINE_FUNCTION void getrf_block_general(const Member& member, const BA& A,
                                                const BP& ipiv, const BI& info,
                                                BlockPrefetch& prefetch) {
#if !IBLA_IMPL_DEVICE_PASS
  if constexpr (is_lanes_upto<typename BA::lane_count>::value) {
    // Host, the partial last block of a batch: one matrix at a time, each as
    // a block of one lane. The lane loops with a runtime trip count compiled
    // to masked SIMD loops that were half of getrf's compile time (2.8 of
    // 5.6 s per instantiation), for at most L - 1 matrices of the batch.
    // Same source, same operations per lane: the same bits as in a full
    // block (test_determinism_solvers).
    if (member.team_rank() == 0) {
      BlockPrefetch none;  // the last block: nothing after it
      for (int l = 0; l < A.lanes.n; ++l)
        getrf_lanes(member, single_lane(A, l), single_lane(ipiv, l), single_lane(info, l), none);
    }
    return;
  }
  constexpr int L = fixed_lanes<typename BA::lane_count>::value;
  if constexpr (L > 0) {
    // See getrf_square_block_host: team rank 0 alone.
    if (member.team_rank() != 0) return;
    using T              = std::remove_const_t<typename BA::value_type>;
    constexpr int square = getrf_square_block_order<T, L, typename BA::row_stride>;
    if (A.rows == A.cols && A.rows >= 1 && A.rows <= square &&
        detail::host_order_compiled(A.rows)) {
      detail::static_switch<square>(A.rows, [&](auto order) {
        if constexpr (detail::host_order_specialised<decltype(order)::value>)
          getrf_square_block_host<decltype(order)::value>(member, A, ipiv, info, prefetch);
      });
      return;
    }
    bool& last_swapped = getrf_last_block_swapped();
    last_swapped       = getrf_lanes_host<L>(member, A, ipiv, info, prefetch, !last_swapped);
    return;
  }
#else
  using T = std::remove_const_t<typename BA::value_type>;
  if constexpr (DeviceRegisterForms) {
    if (A.rows == A.cols && A.rows >= 1 && A.rows <= getrf_device_register_order<T>) {
      detail::static_switch<getrf_device_register_order<T>>(A.rows, [&](auto order) {
        getrf_registers_lane<decltype(order)::value>(member, A, ipiv, info);
      });
      return;
    }
  }
#endif
  getrf_lanes(member, A, ipiv, info, prefetch);
}

/// team::getrf with the prefetch of the next block (batch-level GETRF and
/// GESV); no team_sync. DeviceOrder picks the device form: -1 (the team-level
/// API) by the block's order at run time, 0 the general form, N > 0 the
/// register form of order N alone (a batch-level kernel launched for one
/// small order: see with_getrf_device_order). It changes nothing on host.
/// HostOrder N > 0: a host batch-level kernel launched for square problems
/// of order N alone (with_getrf_host_order), whose full blocks go to
/// getrf_square_block_host without the dispatch on the order.
/// StreamOutputs: those blocks' forms without and with interchanges
/// (getrf_crout_host, getrf_crout_pivoted_host) store the pivots and info
/// by streaming stores, for a kernel whose teams end with their fence
/// (getrf_host_stores); the others store them as usual.
template <int DeviceOrder = -1, int HostOrder = 0, bool StreamOutputs = false, class Member,
          class BA, class BP, class BI>
KOKKOS_INLINE_FUNCTION void getrf_block(const Member& member, const BA& A, const BP& ipiv,
                                        const BI& info, BlockPrefetch& prefetch) {
  if constexpr (DeviceOrder > 0) {
    // Only launched on device; its host instance (compiled with every
    // device functor) skips the host forms.
    getrf_registers_lane<DeviceOrder>(member, A, ipiv, info);
#if !IBLA_IMPL_DEVICE_PASS
  } else if constexpr (HostOrder > 0 && fixed_lanes<typename BA::lane_count>::value > 0) {
    if (member.team_rank() == 0)
      getrf_square_block_host<HostOrder, StreamOutputs>(member, A, ipiv, info, prefetch);
#endif
  } else {
    // Always false in the host pass: one instance of the host forms for
    // the team-level API and the batch-level kernels alike.
    constexpr bool register_forms = IBLA_IMPL_DEVICE_PASS && DeviceOrder < 0;
    getrf_block_general<register_forms>(member, A, ipiv, info, prefetch);
  }
}

/// Calls f(std::integral_constant<int, N>{}) with the DeviceOrder of the
/// batch-level kernel for m x n problems on ExecSpace: N = n where the device
/// register form takes the order, else 0. One kernel per small order: a
/// kernel that held both forms was allocated the registers of the largest
/// register form (202 against 56 for double on an H200), and the general
/// form lost occupancy (GETRF n = 16: 158 -> 127 GFLOP/s). On host always 0
/// (the host forms are chosen per block, inside one kernel).
template <class T, class ExecSpace, class F>
void with_getrf_device_order(const index_t m, const index_t n, const F& f) {
  if constexpr (!is_host_space_v<ExecSpace>) {
    constexpr int most = getrf_device_register_order<T>;
    if (m == n && n >= 1 && n <= most) {
      // An order left out of IBLA_DEVICE_SPECIALISED_ORDERS: the general kernel.
      detail::host_static_switch<most>(int(n), [&](auto order) {
        if constexpr (detail::device_order_listed(decltype(order)::value)) {
          f(order);
        } else {
          f(std::integral_constant<int, 0>{});
        }
      });
      return;
    }
  }
  f(std::integral_constant<int, 0>{});
}

/// Host batch-level GETRF and GESV of square orders up to this one run a
/// kernel of their order (with_getrf_host_order): its full blocks call the
/// forms of that order (getrf_square_block_host) without getrf_block's
/// dispatch on the order, an out-of-line call through a jump table that at
/// n = 2 took about a third of a block's time (perf, cpu-clock samples).
/// Measured on AVX-512 Zen 5 (micro-driver: ibla::getrf on 10^4 diagonally
/// dominant problems in cache, L = 8 doubles, 2 threads, medians of 2001
/// calls, microseconds a call, 2 alternated runs, with
/// getrf_registers_host out of line): n = 2 6.8-9.1 -> 5.1-7.3, 3 8.9-11.5
/// -> 7.3-9.2, 4 12.0-14.0 -> 10.3-12.1, 6 27.0-28.4 -> 25.8-28.1; Kokkos
/// Kernels' SerialLU on SIMD packs of the same storage took 3.4, 7.6-7.9,
/// 12.8 and 30.9-31.7 in other runs of the same session. ibla_bench (GETRF
/// and GESV, n = 2..12, 4 runs alternated with the tree before, medians)
/// in the GFLOP/s table of perf_tests/RESULTS.md (2026-12-05, fourth
/// session). Order 6 gained 1.00-1.04x; larger orders were not tried: the
/// dispatch is a smaller share of their blocks' time, and each order is one
/// more kernel per type and layout.
template <class T, int L>
inline constexpr int getrf_host_order_kernels = L > 0 ? 6 : 0;

/// Calls f(std::integral_constant<int, N>{}) with the HostOrder of the
/// batch-level kernel for m x n problems in blocks of L lanes on ExecSpace:
/// N = n for square orders up to getrf_host_order_kernels on host (those
/// getrf_square_block_host takes, compiled in this build), else 0.
template <class T, int L, class ExecSpace, class AV, class F>
void with_getrf_host_order(const index_t m, const index_t n, const F& f) {
#if !IBLA_IMPL_DEVICE_PASS
  if constexpr (is_host_space_v<ExecSpace>) {
    using Block = decltype(lane_block(std::declval<const AV&>(), index_t(0), lanes_c<L>{}));
    constexpr int square = getrf_square_block_order<T, L, typename Block::row_stride>;
    constexpr int most =
        getrf_host_order_kernels<T, L> < square ? getrf_host_order_kernels<T, L> : square;
    if (m == n && detail::with_host_kernel_order<most>(int(n), f)) return;
  }
#endif
  f(std::integral_constant<int, 0>{});
}

/// Batch-level GETRF and GESV prefetch the next block for n >
/// getrf_prefetch_order, one slice per step k (see potrf_prefetch_order).
/// Measured (double, 10^4, 2 threads, medians of 5 alternating ibla_bench
/// runs, GFLOP/s before -> after), flushed: GETRF random n = 5 3.3 -> 4.0, 8
/// 4.8 -> 6.0, 12 7.0 -> 8.8, 16 9.8 -> 11.6, diagonally dominant n = 8 5.0 ->
/// 7.1; GESV random n = 8 5.3 -> 6.7, 16 10.5 -> 12.4; n = 32 within 8%; warm
/// within -6%..+12%.
inline constexpr int getrf_prefetch_order = getrf_tile_cols;

}  // namespace impl

namespace team {

/// LU with partial pivoting of one block of matrices, in place: A holds L
/// (unit diagonal not stored) and U on return, ipiv(k, 0, l) the 1-based row
/// swapped with row k at step k, info(0, 0, l) LAPACK's info for lane l.
/// A is a block of (m x n) matrices, ipiv a block of a rank-2 (batch,
/// min(m, n)) int View, info a block of a rank-1 (batch) int View, all from
/// ibla::lane_block over the same matrices. Every thread of the team calls
/// it; results are visible to the team on return.
template <class Member, class BA, class BP, class BI>
KOKKOS_INLINE_FUNCTION void getrf(const Member& member, const BA& A, const BP& ipiv,
                                  const BI& info) {
  impl::BlockPrefetch none;
  impl::getrf_block(member, A, ipiv, info, none);
  team_sync(member);
}

}  // namespace team

namespace impl {

/// How batch-level GETRF of order HostOrder (with_getrf_host_order)
/// stores: streamed in the kernels of one order, whose full blocks' pivots
/// and info then go to memory by streaming stores (getrf_block's
/// StreamOutputs), as GESV's register form's do (gesv_host_stores). A
/// plain store of those ints first reads their line from memory: at n = 2
/// a block of L = 8 doubles reads and writes 256 bytes of A and writes 96
/// of pivots and info, which plain stores made 352 read and 352 written.
/// Measured on AMD EPYC Zen 4 (ibla_bench --ops getrf --sizes 2,3,4,5,6,8
/// --impls ibla,kk-simd,eigen --reps 21, 10^4 doubles, L = 8, 3 runs
/// alternated with the tree before, medians, GFLOP/s, and the runs'
/// ibla / best peer, before -> streamed): diagonally dominant flushed n =
/// 2 3.9 -> 5.8 (0.77-1.07 -> 1.09-1.17 of Kokkos Kernels' SIMD packs), 3
/// 8.3 -> 12.0 (0.73-0.77 -> 0.88-0.97), 4 13.8 -> 18.9 (0.83-0.90 ->
/// 1.05-1.13), 5 1.20x, 6 1.12x; warm n = 2 1.28x, 3 1.22x, 4..6
/// 1.07-1.08x, 8 (no kernel of one order) 1.00x; random n = 2 1.36x
/// flushed, 1.45x warm, 3 1.06-1.10x, 4 1.06x flushed, 0.94x warm, 5, 6
/// 0.99-1.02x. The price: a GETRS right after GETRF, in cache, reads the
/// pivots from memory (why they were plain stores before): micro-driver,
/// ibla::getrf then ibla::getrs with one right-hand side on 10^4 diagonally
/// dominant problems, A and B restored before each pair, 3 runs of 201,
/// GETRS n = 3..5 1.02-1.16x the time, the pair 0.96-1.07x. GESV, which
/// never reads them back, and the team-level API are unchanged. Not
/// explained: in three of some ninety runs of GETRF micro-drivers with the
/// streaming stores at n = 2 in cache, every call took 10-17 times as long
/// (none with plain stores, none in 30 later runs, none of 16 of GESV,
/// which streams the same stores).
template <int HostOrder>
inline constexpr detail::HostStores getrf_host_stores =
    HostOrder > 0 ? detail::HostStores::streamed : detail::HostStores::cached;

/// Stores: getrf_host_stores<HostOrder>, but cached where the blocks are
/// packed into scratch (pack.hpp), whose pivots and info are read back at
/// once.
template <int DeviceOrder, int HostOrder, detail::HostStores Stores, class AV, class PV, class IV>
struct GetrfBlocks {
  AV A;
  PV ipiv;
  IV info;
  template <class Member, class Lanes>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, index_t first, Lanes lanes) const {
    BlockPrefetch prefetch;
    prefetch_next_block_of_factorization(prefetch, getrf_prefetch_order, first, lanes, A);
    constexpr bool streamed = Stores == detail::HostStores::streamed;
    getrf_block<DeviceOrder, HostOrder, streamed>(member, lane_block(A, first, lanes),
                                                  lane_block(ipiv, first, lanes),
                                                  lane_block(info, first, lanes), prefetch);
    team_sync(member);
  }
};

/// Device form for square orders N from getrf_team_rows_from, where
/// one thread per matrix no longer holds it in registers: a team per S
/// matrices with one thread per row and matrix (team rank: the row, vector
/// thread: the matrix), each holding its row in registers. At step k the
/// rows write their column-k entries to shared memory, every thread of a
/// matrix searches them alike (idamax's rule, as getrf_registers_lane), the
/// pivot row and row k trade places through shared memory, and the rows
/// below k scale and update themselves from the pivot row there: two team
/// barriers a step, the matrix read and written once. Same operations in
/// the same order per element as getrf_registers_lane (reciprocal unless
/// the pivot is zero or below sfmin, updates fused in increasing k), so the
/// same bits, pivots and info. One instance per order: padding the order
/// to a multiple of 4 (with identity rows and columns, 6 instances instead
/// of 21) doubled the registers ptxas gave a thread (n = 20, double, S = 8:
/// 98 -> 162..204, for the per-column guards of the loads and stores) and
/// halved the speed on an H200 (791 -> 361 GFLOP/s).
template <int N, int S, class AV, class PV, class IV>
struct GetrfTeamRows {
  using T = typename AV::non_const_value_type;
  template <class ScratchSpace>
  using Scratch = Kokkos::View<T**, Kokkos::LayoutRight, ScratchSpace, Kokkos::MemoryUnmanaged>;
  AV A;
  PV ipiv;
  IV info;

  /// Shared memory a team needs: a column, the pivot row and row k, each
  /// N x S (lanes contiguous: a warp's accesses fall in distinct banks).
  template <class ExecSpace>
  static size_t scratch_bytes() {
    return 3 * Scratch<typename ExecSpace::scratch_memory_space>::shmem_size(N, S);
  }

  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, const index_t first,
                                         const int count) const {
    using Shared  = Scratch<typename Member::execution_space::scratch_memory_space>;
    const T sfmin = Kokkos::Experimental::norm_min<T>::value;
    const Shared column(member.team_scratch(0), N, S), pivot_row(member.team_scratch(0), N, S),
        row_k(member.team_scratch(0), N, S);
    const auto a_block = lane_block(A, first, count);
    const auto p_block = lane_block(ipiv, first, count);
    const auto i_block = lane_block(info, first, count);
    const int l = team_vector_lane(member, S), i = member.team_rank();
    // Lanes past the batch's end run along (they must reach every barrier)
    // on zeros, and neither read nor write.
    const bool live = l < count;
    T a[N];
    IBLA_IMPL_UNROLL
    for (int j = 0; j < N; ++j) a[j] = live ? a_block(i, j, l) : T(0);
    int status = 0;
    IBLA_IMPL_UNROLL
    for (int k = 0; k < N; ++k) {
      if (i >= k) column(i, l) = a[k];
      member.team_barrier();
      int p  = k;
      T piv  = column(k, l);
      T amax = abs_select(piv);
      IBLA_IMPL_UNROLL
      for (int r = k + 1; r < N; ++r) {
        const T x       = column(r, l);
        const T v       = abs_select(x);
        const bool more = v > amax;
        amax            = more ? v : amax;
        piv             = more ? x : piv;
        p               = more ? r : p;
      }
      status = (piv == T(0) && status == 0) ? k + 1 : status;
      if (i == p) {
        IBLA_IMPL_UNROLL
        for (int j = 0; j < N; ++j) pivot_row(j, l) = a[j];
      } else if (i == k) {
        IBLA_IMPL_UNROLL
        for (int j = 0; j < N; ++j) row_k(j, l) = a[j];
      }
      member.team_barrier();
      if (i == k) {
        IBLA_IMPL_UNROLL
        for (int j = 0; j < N; ++j) a[j] = pivot_row(j, l);
        if (live) p_block(k, 0, l) = p + 1;
      } else if (i == p) {
        IBLA_IMPL_UNROLL
        for (int j = 0; j < N; ++j) a[j] = row_k(j, l);
      }
      if (i > k) {
        if (piv != T(0)) {
          if (!(abs_select(piv) >= sfmin)) {
            a[k] = a[k] / piv;
          } else {
            a[k] = a[k] * (T(1) / piv);
          }
        }
        IBLA_IMPL_UNROLL
        for (int j = k + 1; j < N; ++j) a[j] = fused_mul_add(-a[k], pivot_row(j, l), a[j]);
      }
      // The next step writes the column before its first barrier: after
      // this step's second, which every thread passes after its search;
      // and the rows after its first, which every thread passes after its
      // update. So no thread overwrites what another still reads.
    }
    if (live) {
      IBLA_IMPL_UNROLL
      for (int j = 0; j < N; ++j) a_block(i, j, l) = a[j];
      if (i == 0) i_block(0, 0, l) = status;
    }
  }
};

/// info(b) = 0 for every problem: the whole answer when min(m, n) == 0.
template <class IV>
struct ZeroInfo {
  IV info;
  KOKKOS_INLINE_FUNCTION void operator()(const index_t b) const { info(b) = 0; }
};

/// The square orders the batch-level device GETRF runs as GetrfTeamRows:
/// from where getrf_registers_lane spills or loses to it, to 32 (a team of
/// S * N threads, one row each). Measured on an H200 (scratch driver, batch
/// 100,000 random matrices in LayoutBlockInterleaved<32>, L2 overwritten
/// before each of 9 calls, median, GFLOP/s; every form gave the same bits,
/// pivots and info as getrf_registers_lane or getrf_lanes), the form it
/// replaces -> GetrfTeamRows with the S of getrf_team_rows_lanes: double
/// n = 12 724 -> 789, 16 387 -> 756, 20 158 -> 791, 24 162 -> 747, 32 165
/// -> 590; float n = 12 1772 -> 1185 (kept in registers), 16 1009 -> 1353,
/// 20 705 -> 1487, 24 231 -> 1420, 32 232 -> 1295. cuBLAS getrfBatched on
/// the same GPU (see the README): double 637, 620, 829, 1305 and float
/// 978, 825, 1113, 1783 at n = 16, 20, 24, 32.
template <class T>
inline constexpr int getrf_team_rows_from = sizeof(T) >= 8 ? 12 : 15;
inline constexpr int getrf_team_rows_order = 32;

/// Matrices per team of GetrfTeamRows of order N: the fastest of S = 8, 16,
/// 32 in the run above at n = 12, 16, 20, 24, 32, taken for the orders
/// around each; in double from n = 28 those of a second run (2026-11-27,
/// same protocol, special matrices mixed in, every S the same bits) at n =
/// 24, 26, 28, 30, 32, S = 8 / 16 / 32: 717 / 657 / 663, 720 / 660 / 612,
/// 435 / 666 / 629, 468 / 632 / 572, 505 / 564 / 574 GFLOP/s.
template <class T, int N>
inline constexpr int getrf_team_rows_lanes =
    sizeof(T) >= 8 ? (N <= 16 ? 16 : N <= 27 ? 8 : N <= 31 ? 16 : 32)
                   : (N <= 16 ? 32 : N <= 28 ? 16 : 32);

/// Teams of GetrfTeamRows of order N an SM is to hold at once (the launch
/// bound's MinTeams, see for_each_lane_group): at orders 20..24 in double
/// and 20..28 in float, as many as fit 64K registers when a thread keeps
/// its row (N * sizeof(T) / 4 registers) and headroom more, 48 in double
/// and 24 in float; elsewhere 1 (ptxas' own choice, up to 64K / (S * N)).
/// With MinTeams = 1 ptxas gave a thread more registers than the row
/// needs, and an SM held fewer teams than fit: double n = 24, S = 8, 114
/// registers, 2 teams of 192 threads (ncu: 18.75% occupancy, SM 36% busy);
/// here 96, 3 teams. Measured on an H200 (ibla_device_bench, batch 100,000
/// random matrices, L2 overwritten before each of 11 calls, median, every
/// result PASS with the same residuals and pivots; three builds in one
/// call, 2026-11-28), MinTeams 1 -> these (cuBLAS getrfBatched in the same
/// run), GFLOP/s: double n = 20 784 -> 809 (620), 22 710 -> 887 (722), 24
/// 740 -> 891 (830); float n = 20 1476 -> 1646 (828), 24 1428 -> 1680
/// (1119), 26 984 -> 1655 (1270), 28 995 -> 1561 (1427); registers (ptxas
/// -v) double n = 22 106 -> 80, 24 114 -> 96, float 26 78 -> 48 (24 bytes
/// spilled), 28 80 -> 72. Not taken: double with headroom 24 (n = 22 809,
/// 24 920, 26 649 against 708: spills at every order), double n = 26 with
/// 48 (702 against 708; 16 bytes spilled), float with 48 (n = 26 1484, 28
/// 997). Orders 21, 23 and 25, 27 (float) were not measured: they take the
/// rule of the orders around them. Double n = 32 (S = 32, 1024 threads, 64
/// registers) spills about 8 KB a thread whatever this says.
template <class T, int N>
constexpr int getrf_team_rows_teams() {
  constexpr bool tuned = sizeof(T) >= 8 ? (N >= 20 && N <= 24) : (N >= 20 && N <= 28);
  constexpr int headroom   = sizeof(T) >= 8 ? 48 : 24;
  constexpr int per_thread = N * int(sizeof(T)) / 4 + headroom;
  constexpr int teams      = 65536 / (getrf_team_rows_lanes<T, N> * N * per_thread);
  return tuned && teams > 1 ? teams : 1;
}

/// Runs the batch-level GETRF of square n x n problems as GetrfTeamRows and
/// returns true, where the device takes that form for T and the layouts' L
/// (block_lanes); else returns false.
template <class T, int BlockLanes, class ExecSpace, class AV, class PV, class IV>
bool getrf_team_rows(const ExecSpace& exec, const AV& A, const PV& ipiv, const IV& info) {
  const index_t m = index_t(A.extent(1)), n = index_t(A.extent(2));
  constexpr int from = getrf_team_rows_from<T>;
  if (m != n || n < from || n > getrf_team_rows_order) return false;
  bool done = false;
  detail::host_static_switch<getrf_team_rows_order - from + 1>(int(n - from + 1), [&](auto above) {
    constexpr int N = from - 1 + decltype(above)::value;
    constexpr int S = getrf_team_rows_lanes<T, N>;
    if constexpr (detail::lane_groups_fit(S, BlockLanes) && detail::device_order_listed(N)) {
      using Rows = GetrfTeamRows<N, S, AV, PV, IV>;
      detail::for_each_lane_group<S, S * N, getrf_team_rows_teams<T, N>()>(
          exec, "ibla::getrf(team rows)", index_t(A.extent(0)), N,
          Rows::template scratch_bytes<ExecSpace>(), Rows{A, ipiv, info});
      done = true;
    }
  });
  return done;
}

}  // namespace impl

namespace detail {

/// The checks getrf, gesv and getrs share on the pivots: a rank-2 int View
/// (batch, min(m, n)).
template <class PV>
void require_pivots(const char* routine, const PV& ipiv, index_t batch, index_t steps) {
  static_assert(PV::rank == 2, "ibla: ipiv is a rank-2 View (batch, min(m, n))");
  static_assert(std::is_same<typename PV::non_const_value_type, int>::value,
                "ibla: ipiv holds int (LAPACK's 1-based pivots)");
  require_extent(routine, "ipiv", 0, index_t(ipiv.extent(0)), batch, "the batch count of A");
  require_extent(routine, "ipiv", 1, index_t(ipiv.extent(1)), steps, "min(m, n) of A");
  require_allocated(routine, "ipiv", ipiv);
}

}  // namespace detail

/// Batched LU with partial pivoting (LAPACK dgetrf per problem). A: rank-3
/// View (batch, m, n), factored in place; ipiv: rank-2 int View (batch,
/// min(m, n)), 1-based; info: rank-1 int View (batch), 0 or the 1-based index
/// of the first exactly zero pivot. Any supported layout for each; the
/// block-interleaved ones must share L. Throws ibla::argument_error, touching
/// no data, when the arguments do not fit together.
template <class ExecSpace, class AV, class PV, class IV>
void getrf(const ExecSpace& exec, const AV& A, const PV& ipiv, const IV& info) {
  constexpr const char* routine = "getrf";
  detail::static_check_view<ExecSpace, AV>();
  detail::static_check_view<ExecSpace, PV>();
  detail::static_check_view<ExecSpace, IV>();
  detail::static_check_writable<AV>();
  detail::static_check_writable<PV>();
  detail::static_check_writable<IV>();
  static_assert(AV::rank == 3, "ibla::getrf: A is a rank-3 View (batch, m, n)");
  using T = typename AV::non_const_value_type;
  static_assert(std::is_floating_point<T>::value, "ibla::getrf: A holds float or double");

  const index_t batch = index_t(A.extent(0));
  const index_t m = index_t(A.extent(1)), n = index_t(A.extent(2));
  detail::require_allocated(routine, "A", A);
  detail::require_pivots(routine, ipiv, batch, m < n ? m : n);
  detail::require_info_view(routine, info, batch);
  detail::require_same_block_lanes(
      routine, {detail::named("A", A), detail::named("ipiv", ipiv), detail::named("info", info)});

  if constexpr (detail::block_lanes_agree<AV, PV, IV>()) {
    if (batch == 0) return;
    if (m == 0 || n == 0) {
      Kokkos::parallel_for(
          "ibla::getrf(empty)",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<index_t>>(exec, 0, batch),
          impl::ZeroInfo<IV>{info});
      return;
    }
    constexpr int L = detail::choose_block_lanes<T, ExecSpace, AV, PV, IV>();
    if constexpr (!is_host_space_v<ExecSpace>) {
      if (impl::getrf_team_rows<T, L>(exec, A, ipiv, info)) return;
    }
    constexpr bool packs = detail::packs_blocks_v<ExecSpace, AV, PV, IV>;
    impl::with_getrf_device_order<T, ExecSpace>(m, n, [&](auto device_order) {
      using KA = detail::kernel_view_t<packs, L, AV>;
      impl::with_getrf_host_order<T, L, ExecSpace, KA>(m, n, [&](auto host_order) {
        constexpr int HostOrder = decltype(host_order)::value;
        constexpr auto stores   = detail::kernel_stores<packs>(impl::getrf_host_stores<HostOrder>);
        detail::for_each_block_of<L, stores>(
            exec, "ibla::getrf", batch, detail::problem_elements(A), detail::always_pack{},
            [=](const auto& a, const auto& p, const auto& i) {
              return impl::GetrfBlocks<decltype(device_order)::value, HostOrder, stores,
                                       std::decay_t<decltype(a)>, std::decay_t<decltype(p)>,
                                       std::decay_t<decltype(i)>>{a, p, i};
            },
            impl::read_written(A), impl::written_only(ipiv), impl::written_only(info));
      });
    });
  }
}

}  // namespace ibla
