// Batched Cholesky factorization (LAPACK dpotrf semantics per problem):
//   Uplo::Lower: A = L L^T, L over the lower triangle of A;
//   Uplo::Upper: A = U^T U, U over the upper triangle of A.
// Only the Uplo triangle is read and written. info(b) = 0, or k > 0 when the
// leading minor of order k of problem b is not positive definite (pivot <= 0
// or NaN). Such a problem stops there as LAPACK's unblocked dpotf2 leaves it:
// columns 1..k-1 factored, the diagonal entry k holding the updated pivot,
// everything after untouched. (LAPACK's dpotrf reaches the same info through
// the recursive dpotrf2, which also updates the trailing matrix before it
// stops; the factored columns 1..k-1 are the same.) Every other problem of
// the batch is factored normally.
//
// Left-looking, panel by panel (seed 004: for small matrices it moves about
// half the data of the right-looking variant, each column is loaded, updated
// from the columns on its left, factored and stored once). Upper is the
// Lower algorithm on the transposed block (a stride swap).
//
// Failure is per lane without branching across lanes: the lane's info is its
// state; a lane keeps computing after it failed but its stores become
// selects of the old value, so the lane loop stays one vectorised loop.
#pragma once

#include <ibla/core/error.hpp>
#include <ibla/core/fused.hpp>
#include <ibla/core/lanes.hpp>
#include <ibla/core/registers.hpp>
#include <ibla/core/select.hpp>
#include <ibla/core/square_root.hpp>
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

// Panel width NB and row-tile height MR: a 4 x 4 tile of accumulators plus
// the 4 pivot reciprocals and 4 + 4 operands stay in AVX-512 registers.
inline constexpr int potrf_panel_cols = 4;
inline constexpr int potrf_tile_rows  = 4;

/// MR of the host tiles below the diagonal (potrf_below_tile_host): with 16
/// vector registers (AVX2) one row. The 4 x 4 tile's update spilled there:
/// its p loop (g++ 12 -O3, -march=znver3, L = 4 doubles, one register a
/// value) kept 2 of the 16 accumulators and 2 operands on the stack, 13
/// vector and 5 integer stack accesses a step for 16 FMAs. Measured
/// (ibla::potrf, 128 problems in L2, 2 threads, Zen 3 VM, medians of 201
/// calls, 2 alternated rounds, GFLOP/s, MR = 4 / 3 / 2 / 1): L = 4 doubles
/// n = 12 13.5-13.7 / 15.2-15.5 / 15.1-15.2 / 15.8-15.9, 16 19.1-19.4 /
/// 22.8-22.9 / 21.8-22.4 / 23.1-23.4, 32 29.4-30.4 / 37.8-38.1 / 34.4-34.8
/// / 39.5-39.6; L = 8 doubles (two registers a value) n = 32 26.0 /
/// 26.8-27.2 / 29.0-29.4 / 29.5; floats, n = 32, L = 8 66.7 / 81.8-82.4 /
/// - / 92.3-93.6, L = 16 55.4-55.5 / 55.2-55.8 / - / 60.2-60.4. Every
/// element sees the same operations in the same order: the same bits.
/// With 32 registers (AVX-512) the tile's rows are host_tile_rows: halved
/// where a lane value takes two registers (L = 16 doubles, 32 floats), whose
/// 4 x 4 tile is 32 registers of accumulators alone. Its p loop (g++ 12
/// -O3, -march=native on an Intel Xeon VM, L = 16 doubles) made 25 vector
/// stack accesses a step for 32 FMAs; the 2 x 4 tile's makes 3 for 16.
/// Measured there (ibla::potrf, 256 problems in L2, 2 threads, medians of
/// 201 calls, 2 alternated rounds, GFLOP/s, 4 rows -> 2): L = 16 doubles
/// n = 24 32.0 -> 35.9-41.0, 32 32.8-34.0 -> 37.2-37.4; L = 32 floats n =
/// 24 68.6-69.1 -> 88.8-99.5, 32 70.5-84.9 -> 86.2-87.5; `ibla_bench --ops
/// potrf,posv --impls ibla --reps 15` (n = 8..32, 3 alternated runs):
/// geometric mean 1.11x for L = 16 doubles against 1.04x for the unchanged
/// L = 8, 1.08x for L = 32 floats against 0.97x for L = 16.
template <class T, int L>
inline constexpr int potrf_host_tile_rows =
    host_has_wide_register_file ? host_tile_rows<T, L>(potrf_tile_rows) : 1;

/// Iterations of the host tiles' update loops (their p loops over the
/// columns left of the panel) per request of a slice of the next block's
/// lines, for a block of order n; 0: one slice per tile only. A tile below
/// the diagonal of panel j0 runs j0 iterations, so one slice per tile put
/// most of the requests in the first, short panels: half of the lines were
/// requested by the time a fifth of the block's work was done (n = 32).
/// A slice every `spacing` iterations as well spreads them over the work,
/// as a stream with one request per line does. Measured against one slice
/// per tile (10^4 problems, 2 threads, the two compiled into one process
/// and taking turns call by call, 31 rounds, medians of the per-round
/// ratios, same checksums; Intel Xeon VM with AVX-512), flushed: POTRF L =
/// 8 doubles n = 8, 12, 16, 20, 24, 28, 32 1.03x, 1.14x, 1.07x, 1.08x,
/// 1.07x, 1.09x, 1.00x; L = 16 1.15x, 1.05x, 1.12x, 1.10x, 1.03x, 1.07x,
/// 1.05x; POSV (A's triangle and B requested) n = 8..32 L = 8 0.94-1.08x,
/// L = 16 1.00-1.09x. The batch restored (partly in L3): POTRF 0.95-1.05x,
/// POSV L = 8 n = 12..32 0.89-0.94x, L = 16 0.92-1.01x, the price of the
/// flushed gain (POTRF and POSV stay 3-36x ahead of every peer there). One
/// slice every iteration at n = 32 (0.95-0.97x in an earlier build) and
/// below order 8 (warm n = 5, 6 0.92-0.96x) cost more than it gave.
KOKKOS_INLINE_FUNCTION constexpr int potrf_prefetch_spacing(const int n) {
  return n < 8 ? 0 : n <= 24 ? 1 : 2;
}

/// Whether update iteration p of a host tile requests a slice of the next
/// block (potrf_prefetch_spacing, a power of two).
KOKKOS_FORCEINLINE_FUNCTION constexpr bool potrf_prefetch_at(const int p, const int spacing) {
  return spacing != 0 && (p & (spacing - 1)) == 0;
}

/// Rows [i0, i0 + MR) of panel [j0, j0 + NB) below its diagonal tile, in
/// registers: update from the columns left of the panel, then solve against
/// the panel's diagonal tile (already in memory; its reciprocals in inv).
template <int MR, int NB, class T, class BA>
KOKKOS_FORCEINLINE_FUNCTION void potrf_below_tile(int i0, int j0, int done, const T (&inv)[NB],
                                                  const BA& A, const int l) {
  // Pointers walk the p loop (one add per operand and step, offsets r * rs
  // loop-invariant) instead of (i) * rs + (p) * cs per access: with runtime
  // strides the index arithmetic ran out of integer registers (as in GEMM).
  const index_t rs = A.rs, cs = A.cs, lo = index_t(l) * index_t(value_of(A.ls));
  T acc[MR][NB];
  for (int r = 0; r < MR; ++r)
    for (int c = 0; c < NB; ++c) acc[r][c] = A(i0 + r, j0 + c, l);
  const T* pa = A.ptr(i0, 0) + lo;
  const T* pb = A.ptr(j0, 0) + lo;
  for (int p = 0; p < j0; ++p) {
    T a[MR], b[NB];
    for (int r = 0; r < MR; ++r) a[r] = pa[r * rs];
    for (int c = 0; c < NB; ++c) b[c] = pb[c * rs];
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NB; ++c) acc[r][c] = fused_mul_add(-a[r], b[c], acc[r][c]);
    pa += cs;
    pb += cs;
  }
  for (int c = 0; c < NB; ++c) {
    for (int r = 0; r < MR; ++r) acc[r][c] *= inv[c];
    for (int c2 = c + 1; c2 < NB; ++c2) {
      const T lc = A(j0 + c2, j0 + c, l);
      for (int r = 0; r < MR; ++r) acc[r][c2] = fused_mul_add(-acc[r][c], lc, acc[r][c2]);
    }
  }
  // Column j is stored only when the lane factored it (j < done).
  for (int c = 0; c < NB; ++c) {
    const bool store = j0 + c < done;
    for (int r = 0; r < MR; ++r) {
      T& out = A(i0 + r, j0 + c, l);
      out    = store ? acc[r][c] : out;
    }
  }
}

/// Lane l of: columns [j0, j0 + NB) of the lower Cholesky factor of A
/// (left-looking), one lane loop for the whole panel so the pivot
/// reciprocals stay in registers for the tiles below the diagonal.
template <int NB, class BA, class BI>
KOKKOS_FORCEINLINE_FUNCTION void potrf_panel_lane(const int l, int j0, const BA& A,
                                                  const BI& info) {
  using T             = std::remove_const_t<typename BA::value_type>;
  constexpr int MR    = potrf_tile_rows;
  const int n         = A.rows;
  {
    // Diagonal tile: lower triangle only (the upper one is never read).
    T acc[NB][NB];
    for (int c = 0; c < NB; ++c)
      for (int r = c; r < NB; ++r) acc[r][c] = A(j0 + r, j0 + c, l);
    const index_t rs = A.rs, cs = A.cs;
    const T* pa = A.ptr(j0, 0) + index_t(l) * index_t(value_of(A.ls));
    for (int p = 0; p < j0; ++p) {
      T a[NB];
      for (int r = 0; r < NB; ++r) a[r] = pa[r * rs];
      for (int c = 0; c < NB; ++c)
        for (int r = c; r < NB; ++r) acc[r][c] = fused_mul_add(-a[r], a[c], acc[r][c]);
      pa += cs;
    }
    int status  = info(0, l);  // 0, or the order of the minor that failed
    T fail_pivot = T(0);
    T inv[NB];
    for (int c = 0; c < NB; ++c) {
      const T d      = acc[c][c];
      const bool bad = status == 0 && !(d > T(0));  // NaN is not > 0 either
      status         = bad ? j0 + c + 1 : status;
      fail_pivot     = bad ? d : fail_pivot;
      // A failed lane goes on with NaN/garbage that is never stored.
      const T s = square_root(d);
      inv[c]    = T(1) / s;  // dpotf2 scales by 1 / ajj too
      acc[c][c] = s;
      for (int r = c + 1; r < NB; ++r) acc[r][c] *= inv[c];
      for (int c2 = c + 1; c2 < NB; ++c2)
        for (int r = c2; r < NB; ++r) acc[r][c2] = fused_mul_add(-acc[r][c], acc[c2][c], acc[r][c2]);
    }
    // Columns the lane has factored completely.
    const int done = status == 0 ? n : status - 1;
    for (int c = 0; c < NB; ++c) {
      const bool store = j0 + c < done;
      for (int r = c + 1; r < NB; ++r) {
        T& out = A(j0 + r, j0 + c, l);
        out    = store ? acc[r][c] : out;
      }
      // dpotf2 leaves the updated non-positive pivot on the diagonal.
      T& dj = A(j0 + c, j0 + c, l);
      dj    = store ? acc[c][c] : (status == j0 + c + 1 ? fail_pivot : dj);
    }
    info(0, l) = status;

    int i0 = j0 + NB;
    for (; i0 + MR <= n; i0 += MR) potrf_below_tile<MR, NB>(i0, j0, done, inv, A, l);
    if (i0 < n) {
      detail::static_switch<MR - 1>(n - i0, [&](auto rows) {
        potrf_below_tile<decltype(rows)::value, NB>(i0, j0, done, inv, A, l);
      });
    }
  }
}

/// The lane body as a functor with a force-inlined operator(): GCC does not
/// inline a lambda this large into the `omp simd` loop of for_each_lane,
/// and the call would stop vectorisation.
template <int NB, class BA, class BI>
struct PotrfPanelLane {
  int j0;
  const BA& A;
  const BI& info;
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const int l) const {
    potrf_panel_lane<NB>(l, j0, A, info);
  }
};

#if !IBLA_IMPL_DEVICE_PASS
/// Host form of potrf_below_tile (see potrf_panel): the lane loop is the
/// innermost loop of every statement of the update; the solve against the
/// panel's triangle and the store are one lane loop, the tile in
/// registers, in the same order (same bits). With a lane loop per
/// statement there, GCC moved the accumulators through the stack after the
/// update, as in TRSM's tiles (trsm_tile): the object code of
/// potrf_below_tiles_operands_in_registers at L = 8 doubles had 32 vector
/// stores to the stack, 16 in this form. Measured (ibla::potrf, 1 thread,
/// 64 problems in cache, medians of 2001 calls, GFLOP/s): L = 8 doubles n =
/// 8 5.9-6.0 -> 6.5-6.6, 16 16.5 -> 18.4-18.9, 24 26.5 -> 29.6, 32
/// 30.6-31.8 -> 32.8-33.4; L = 16 doubles and floats 1.03-1.11x. 2 threads,
/// 10^4 problems, L = 8, 2 alternated runs: flushed n = 8 1.08x, 16 0.99x,
/// 24 1.04-1.07x, 32 1.04-1.05x; warm 1.11x, 1.04-1.07x, 1.03-1.05x,
/// 0.98-1.04x.
template <int MR, int NB, int L, class Member, class T, class BA>
KOKKOS_FORCEINLINE_FUNCTION void potrf_below_tile_host(const Member& member, int i0, int j0,
                                                       const lane_index_t<T> (&done)[L],
                                                       const T (&inv)[NB][L], const BA& A,
                                                       BlockPrefetch& prefetch,
                                                       const int spacing) {
  const index_t rs = A.rs, cs = A.cs, ls = index_t(value_of(A.ls));
  T acc[MR][NB][L];
  IBLA_IMPL_UNROLL
  for (int r = 0; r < MR; ++r)
    IBLA_IMPL_UNROLL
    for (int c = 0; c < NB; ++c)
      for_each_lane(member, A.lanes,
                    [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
                      acc[r][c][l] = A(i0 + r, j0 + c, l);
                    });
  const T* pa = A.ptr(i0, 0);
  const T* pb = A.ptr(j0, 0);
  for (int p = 0; p < j0; ++p) {
    if (potrf_prefetch_at(p, spacing)) prefetch.step();
    IBLA_IMPL_UNROLL
    for (int r = 0; r < MR; ++r)
      IBLA_IMPL_UNROLL
      for (int c = 0; c < NB; ++c)
        for_each_lane(member, A.lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
          acc[r][c][l] = fused_mul_add(-pa[r * rs + l * ls], pb[c * rs + l * ls], acc[r][c][l]);
        });
    pa += cs;
    pb += cs;
  }
  for_each_lane(member, A.lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
    T x[MR][NB];
    IBLA_IMPL_UNROLL
    for (int r = 0; r < MR; ++r)
      IBLA_IMPL_UNROLL
      for (int c = 0; c < NB; ++c) x[r][c] = acc[r][c][l];
    IBLA_IMPL_UNROLL
    for (int c = 0; c < NB; ++c) {
      IBLA_IMPL_UNROLL
      for (int r = 0; r < MR; ++r) x[r][c] *= inv[c][l];
      IBLA_IMPL_UNROLL
      for (int c2 = c + 1; c2 < NB; ++c2) {
        const T lc = A(j0 + c2, j0 + c, l);
        IBLA_IMPL_UNROLL
        for (int r = 0; r < MR; ++r) x[r][c2] = fused_mul_add(-x[r][c], lc, x[r][c2]);
      }
    }
    // select_bits, not `?:` (see select.hpp): on AVX2 (g++ 12 -O3,
    // -march=znver3) the `?:` store left this lane loop scalar in 14 of
    // its 16 instances in ibla_bench's unit of 64-byte blocks. Measured
    // (ibla::potrf and ibla::posv, 10^4 problems, 2 threads, Zen 3 VM, L =
    // 4, 8, 16 doubles, medians of 21 calls and of 5 alternated runs, same
    // checksums), with the same change in potrf_panel_host and trsm_tile:
    // n = 8..16 warm 0.92-1.33x (16 of the 18 cells 1.03x or more; POTRF
    // n = 12, L = 4: 6.7 -> 8.5 GFLOP/s), flushed 0.98-1.23x; n = 4, 24,
    // 32 0.82-1.19x; median of all 72 cells 1.06x.
    IBLA_IMPL_UNROLL
    for (int c = 0; c < NB; ++c)
      IBLA_IMPL_UNROLL
      for (int r = 0; r < MR; ++r) {
        T& out = A(i0 + r, j0 + c, l);
        out    = select_bits(j0 + c < done[l], x[r][c], out);
      }
  });
}

/// The tiles below panel j0's diagonal tile, MR rows at a time.
template <int NB, int L, class Member, class T, class BA>
KOKKOS_FORCEINLINE_FUNCTION void potrf_below_tiles_host(const Member& member, const int j0,
                                                        const lane_index_t<T> (&done)[L],
                                                        const T (&inv)[NB][L], const BA& A,
                                                        BlockPrefetch& prefetch,
                                                        const int spacing) {
  constexpr int MR = potrf_host_tile_rows<T, L>;
  const int n      = A.rows;
  int i0           = j0 + NB;
  for (; i0 + MR <= n; i0 += MR) {
    prefetch.step();
    potrf_below_tile_host<MR, NB, L>(member, i0, j0, done, inv, A, prefetch, spacing);
  }
  // One-row tiles (potrf_host_tile_rows on AVX2) leave no partial tile.
  if constexpr (MR > 1) {
    if (i0 < n) {
      prefetch.step();
      detail::static_switch<MR - 1>(n - i0, [&](auto rows) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
        potrf_below_tile_host<decltype(rows)::value, NB, L>(member, i0, j0, done, inv, A,
                                                             prefetch, spacing);
      });
    }
  }
}

IBLA_IMPL_OPERANDS_IN_REGISTERS_BEGIN
/// potrf_below_tiles_host compiled with its operands loaded into registers
/// once (see registers.hpp), for panels after the first, whose tiles below
/// run the MR x NB update over the j0 columns before (the GEMM tile's
/// shape); the first panel's have no update. Measured (AVX-512 Zen 4, GCC
/// 12, 1 thread, ibla::potrf on 512 problems, LayoutBlockInterleaved<8>,
/// double, 400 calls, median, two runs alike), GFLOP/s: n = 12 14.8 ->
/// 16.1, 16 18.6 -> 21.0, 24 21.8 -> 26.5, 32 23.6 -> 29.7. In ibla_bench
/// (10^4 problems, 2 threads, 3 alternated runs) the difference was inside
/// the runs' spread; POTRF's other code under this tuning (all of it)
/// lost 0.6-1.0x at n <= 20 there.
template <int NB, int L, class Member, class T, class BA>
KOKKOS_INLINE_FUNCTION void potrf_below_tiles_operands_in_registers(
    const Member& member, const int j0, const lane_index_t<T> (&done)[L], const T (&inv)[NB][L],
    const BA& A, BlockPrefetch& prefetch, const int spacing) {
  potrf_below_tiles_host<NB, L>(member, j0, done, inv, A, prefetch, spacing);
}
IBLA_IMPL_OPERANDS_IN_REGISTERS_END

/// Host form of potrf_panel_lane: the same operations per lane, with the
/// lane loop inside each statement (per-lane state in [L] arrays).
template <int NB, int L, class Member, class BA, class BI>
KOKKOS_FORCEINLINE_FUNCTION void potrf_panel_host(const Member& member, int j0, const BA& A,
                                                  const BI& info, BlockPrefetch& prefetch,
                                                  const int spacing) {
  using T          = std::remove_const_t<typename BA::value_type>;
  const int n      = A.rows;
  const index_t rs = A.rs, cs = A.cs, ls = index_t(value_of(A.ls));
  // The per-lane integers as wide as T (see KeptLanes, trsm.hpp): with an
  // int, the lane loops over 8 doubles took two 256-bit registers per value.
  using Index = lane_index_t<T>;
  T inv[NB][L];
  Index done[L];
  prefetch.step();
  {
    T acc[NB][NB][L];
    IBLA_IMPL_UNROLL
    for (int c = 0; c < NB; ++c)
      IBLA_IMPL_UNROLL
      for (int r = c; r < NB; ++r)
        for_each_lane(member, A.lanes, [&](const int l) { acc[r][c][l] = A(j0 + r, j0 + c, l); });
    const T* pa = A.ptr(j0, 0);
    for (int p = 0; p < j0; ++p) {
      if (potrf_prefetch_at(p, spacing)) prefetch.step();
      IBLA_IMPL_UNROLL
      for (int c = 0; c < NB; ++c)
        IBLA_IMPL_UNROLL
        for (int r = c; r < NB; ++r)
          for_each_lane(member, A.lanes, [&](const int l) {
            acc[r][c][l] = fused_mul_add(-pa[r * rs + l * ls], pa[c * rs + l * ls], acc[r][c][l]);
          });
      pa += cs;
    }
    // The per-lane state (info, failed pivot) in [L] arrays too, one lane
    // loop per statement, and the square roots through square_root_lanes:
    // GCC kept the whole per-lane column loop scalar (vsqrtsd, vdivsd).
    Index status[L];
    T fail_pivot[L];
    for_each_lane(member, A.lanes, [&](const int l) {
      status[l]     = Index(info(0, l));
      fail_pivot[l] = T(0);
    });
    IBLA_IMPL_UNROLL
    for (int c = 0; c < NB; ++c) {
      T s[L];
      for_each_lane(member, A.lanes, [&](const int l) {
        const T d      = acc[c][c][l];
        const bool bad = status[l] == 0 && !(d > T(0));
        status[l]      = bad ? Index(j0 + c + 1) : status[l];
        fail_pivot[l]  = bad ? d : fail_pivot[l];
        s[l]           = d;
      });
      square_root_lanes(s);
      for_each_lane(member, A.lanes, [&](const int l) {
        inv[c][l]    = T(1) / s[l];
        acc[c][c][l] = s[l];
      });
      IBLA_IMPL_UNROLL
      for (int r = c + 1; r < NB; ++r)
        for_each_lane(member, A.lanes, [&](const int l) { acc[r][c][l] *= inv[c][l]; });
      IBLA_IMPL_UNROLL
      for (int c2 = c + 1; c2 < NB; ++c2)
        IBLA_IMPL_UNROLL
        for (int r = c2; r < NB; ++r)
          for_each_lane(member, A.lanes, [&](const int l) {
            acc[r][c2][l] = fused_mul_add(-acc[r][c][l], acc[c2][c][l], acc[r][c2][l]);
          });
    }
    for_each_lane(member, A.lanes,
                  [&](const int l) { done[l] = status[l] == 0 ? Index(n) : status[l] - 1; });
    IBLA_IMPL_UNROLL
    for (int c = 0; c < NB; ++c) {
      IBLA_IMPL_UNROLL
      for (int r = c + 1; r < NB; ++r)
        for_each_lane(member, A.lanes, [&](const int l) {
          T& out = A(j0 + r, j0 + c, l);
          out    = select_bits(j0 + c < done[l], acc[r][c][l], out);
        });
      for_each_lane(member, A.lanes, [&](const int l) {
        T& dj = A(j0 + c, j0 + c, l);
        dj    = select_bits(j0 + c < done[l], acc[c][c][l],
                            select_bits(status[l] == j0 + c + 1, fail_pivot[l], dj));
      });
    }
    for_each_lane(member, A.lanes, [&](const int l) { info(0, l) = int(status[l]); });
  }
  // A panel narrower than potrf_panel_cols is the last one: nothing below.
  if constexpr (NB == potrf_panel_cols) {
    if (j0 > 0) {
      potrf_below_tiles_operands_in_registers<NB, L>(member, j0, done, inv, A, prefetch,
                                                     spacing);
      return;
    }
    potrf_below_tiles_host<NB, L>(member, j0, done, inv, A, prefetch, spacing);
  }
}
#endif

/// The panel for every lane. Host, full block (lanes_c<L>): potrf_panel_host,
/// the lane loop inside every statement; with the lane loop around the panel
/// (the per-lane form, kept for device, the partial last block and plain int
/// lane counts) GCC left the runtime p loops scalar.
template <int NB, class Member, class BA, class BI>
KOKKOS_INLINE_FUNCTION void potrf_panel(const Member& member, int j0, const BA& A,
                                        const BI& info, BlockPrefetch& prefetch,
                                        const int spacing) {
#if !IBLA_IMPL_DEVICE_PASS
  constexpr int L = fixed_lanes<typename BA::lane_count>::value;
  if constexpr (L > 0) {
    potrf_panel_host<NB, L>(member, j0, A, info, prefetch, spacing);
  } else
#endif
  {
    (void)prefetch;
    (void)spacing;
    for_each_lane(member, A.lanes, PotrfPanelLane<NB, BA, BI>{j0, A, info});
  }
}

/// MR of the tiles below the diagonal that potrf_panel runs on blocks of BA.
template <class BA>
KOKKOS_INLINE_FUNCTION constexpr int potrf_below_tile_rows() {
#if !IBLA_IMPL_DEVICE_PASS
  constexpr int L = fixed_lanes<typename BA::lane_count>::value;
  if constexpr (L > 0) return potrf_host_tile_rows<std::remove_const_t<typename BA::value_type>, L>;
#endif
  return potrf_tile_rows;
}

/// Lower Cholesky of every lane of A; info(0, l) must be 0 on entry. The
/// prefetch of the next block is spread over the tiles (host, full blocks):
/// one step per diagonal tile and per tile below it.
template <class Member, class BA, class BI>
KOKKOS_INLINE_FUNCTION void potrf_lower(const Member& member, const BA& A, const BI& info,
                                        BlockPrefetch& prefetch) {
  constexpr int NB = potrf_panel_cols;
  constexpr int MR = potrf_below_tile_rows<BA>();
  const int n       = A.rows;
  const int spacing = potrf_prefetch_spacing(n);
  index_t steps     = 0;
  for (int j0 = 0; j0 < n; j0 += NB) {
    const int below = n - j0 - NB;  // rows under the diagonal tile
    const int tiles = 1 + (below > 0 ? (below + MR - 1) / MR : 0);
    // One step before each tile, and one every `spacing` iterations of
    // each tile's update over the j0 columns on the left.
    steps += tiles;
    if (spacing != 0) steps += index_t(tiles) * index_t((j0 + spacing - 1) / spacing);
  }
  prefetch.plan(steps);
  for (int j0 = 0; j0 < n; j0 += NB) {
    detail::static_switch<NB>(n - j0 < NB ? n - j0 : NB, [&](auto cols) {
      potrf_panel<decltype(cols)::value>(member, j0, A, info, prefetch, spacing);
    });
  }
}

/// Batch-level POTRF and POSV prefetch the next block (A's uplo triangle,
/// and B for POSV) for n > potrf_prefetch_order: the factorization reads a
/// block a panel at a time, which the hardware prefetcher does not follow
/// (prefetch.hpp).
/// Measured (double, 10^4 problems, 2 threads, ibla_bench medians of 7
/// alternating runs, GFLOP/s before -> after), flushed: POTRF n = 6 11.1 ->
/// 13.9, 8 9.0 -> 17.0, 12 11.3 -> 18.7, 16 16.2 -> 25.1, 24 and 32 within 6%,
/// but n = 5 12.3 -> 10.4; POSV (A and B prefetched) n = 5 5.4 -> 9.1, 8 8.4
/// -> 14.8, 12 12.0 -> 17.1, 16 16.3 -> 23.2. Warm (the batch in cache) the
/// prefetch instructions cost 5-16% at n = 5..16. Not for one panel (n <= 4):
/// that reads the block front to back, which the hardware follows.
inline constexpr int potrf_prefetch_order = potrf_panel_cols;

/// team::potrf with the prefetch of the next block (batch-level POTRF and
/// POSV); no team_sync.
template <class Member, class BA, class BI>
KOKKOS_INLINE_FUNCTION void potrf_block(const Member& member, Uplo uplo, const BA& A,
                                        const BI& info, BlockPrefetch& prefetch) {
  for_each_lane(member, A.lanes, [&](const int l) { info(0, l) = 0; });
  // Both with runtime strides: one instance for the two triangles.
  if (uplo == Uplo::Lower) potrf_lower(member, runtime_strides(A), info, prefetch);
  else potrf_lower(member, transposed(A), info, prefetch);
}

}  // namespace impl

namespace team {

/// Cholesky factorization of one block of matrices (see the file comment).
/// A is a block of n x n matrices, info a block of a rank-1 int View over
/// the same matrices (info(0, l) is the info of lane l). Every thread of the
/// team calls it; results are visible to the team on return.
template <class Member, class BA, class BI>
KOKKOS_INLINE_FUNCTION void potrf(const Member& member, Uplo uplo, const BA& A, const BI& info) {
  impl::BlockPrefetch none;
  impl::potrf_block(member, uplo, A, info, none);
  team_sync(member);
}

}  // namespace team

namespace impl {
template <class AV, class IV>
struct PotrfBlocks {
  Uplo uplo;
  AV A;
  IV info;
  template <class Member, class Lanes>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, index_t first, Lanes lanes) const {
    BlockPrefetch prefetch;
    prefetch_next_triangle_of_factorization(prefetch, potrf_prefetch_order, first, lanes, uplo, A);
    potrf_block(member, uplo, lane_block(A, first, lanes), lane_block(info, first, lanes),
                prefetch);
    team_sync(member);
  }
};
}  // namespace impl

/// Batched Cholesky factorization. A: rank-3 View (batch, n, n), factored in
/// place (Uplo triangle only); info: rank-1 int View (batch), any layout.
/// Block-interleaved operands must share L. Throws ibla::argument_error,
/// touching no data, when the arguments do not fit together.
template <class ExecSpace, class AV, class IV>
void potrf(const ExecSpace& exec, Uplo uplo, const AV& A, const IV& info) {
  constexpr const char* routine = "potrf";
  detail::static_check_view<ExecSpace, AV>();
  detail::static_check_view<ExecSpace, IV>();
  detail::static_check_writable<AV>();
  detail::static_check_writable<IV>();
  using T = typename AV::non_const_value_type;
  static_assert(std::is_floating_point<T>::value, "ibla::potrf: A holds float or double");

  const index_t batch = index_t(A.extent(0));
  detail::require_square(routine, "A", A);
  detail::require_allocated(routine, "A", A);
  detail::require_info_view(routine, info, batch);
  detail::require_same_block_lanes(routine, {detail::named("A", A), detail::named("info", info)});

  if constexpr (detail::block_lanes_agree<AV, IV>()) {
    constexpr int L = detail::choose_block_lanes<T, ExecSpace, AV, IV>();
    detail::for_each_block_of<L>(
        exec, "ibla::potrf", batch, detail::problem_elements(A), detail::always_pack{},
        [=](const auto& a, const auto& i) {
          return impl::PotrfBlocks<std::decay_t<decltype(a)>, std::decay_t<decltype(i)>>{uplo, a,
                                                                                          i};
        },
        impl::read_written(A), impl::written_only(info));
  }
}

}  // namespace ibla
