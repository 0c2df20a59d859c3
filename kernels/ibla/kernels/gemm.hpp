// Batched GEMM: C(b) = alpha * op(A(b)) * op(B(b)) + beta * C(b).
//
// ibla::team::gemm works on one block of matrices and can be called inside a
// user's own team kernel; ibla::gemm validates the Views and runs one team
// per block. The kernel computes C in MR x NR tiles whose accumulators stay in
// registers (one SIMD vector of lanes per accumulator on host), so each loaded
// element of A and B feeds NR resp. MR fused multiply-adds.
#pragma once

#include <ibla/core/error.hpp>
#include <ibla/core/fused.hpp>
#include <ibla/core/lanes.hpp>
#include <ibla/core/registers.hpp>
#include <ibla/core/types.hpp>
#include <ibla/kernels/block_copy.hpp>
#include <ibla/kernels/dispatch.hpp>
#include <ibla/kernels/pack.hpp>
#include <ibla/kernels/prefetch.hpp>
#include <ibla/kernels/static_switch.hpp>
#include <ibla/layouts/lane_block.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace ibla {
namespace impl {

// MR x NR tiles of accumulators (one vector of lanes each on host): 4 x 4
// where the host has 32 vector registers (AVX-512: 16 accumulators, 4 rows of
// A, a column of B) and on device (a lane's tile in its thread's registers);
// 3 x 4 with 16 (AVX2: 12 accumulators and 3 rows of A, B read as the FMAs'
// memory operand). Each loaded element of A feeds NR FMAs, each of B MR.
// Measured on AVX2 (Zen 3, one thread, 4 MB batch in L3, L = 4): 3 x 4
// 17.8 GFLOP/s at n = 32 and 13.2 at n = 16, 4 x 4 16.0 and 11.8.
inline constexpr int gemm_tile_rows = (IBLA_IMPL_DEVICE_PASS || host_has_wide_register_file) ? 4 : 3;
inline constexpr int gemm_tile_cols = 4;

// One MR x NR tile of C for every lane of the block. Two forms:
//  - host, a full block (lanes_c<L>): the lane loop is the
//    innermost loop of every statement, so each statement is one SIMD
//    instruction over the L lanes, and the accumulators acc[r][c][0..L) are
//    loop-invariant vectors that the compiler keeps in registers across the
//    k loop (GCC does not vectorise the lane loop when it encloses the k loop:
//    measured all-scalar FMAs, 0.7 GFLOP/s for n = 8);
//  - otherwise (device, where a lane is a thread; the partial last block,
//    see lanes_upto; a team-level call with a plain int lane count): each
//    lane runs the whole tile with its accumulators in its own registers,
//    the same operations in the same order as the vector form.
//  CByColumns (host vector form): C's tile is read and written after the k
//  loop a column after another, in the block-interleaved layouts' address
//  order, instead of a row after another (see gemm_single_tile_c_by_columns).
//  The same operations on the same values, so the same bits.
//  each_step() runs before every step of the host vector form's k loop (the
//  next block's requests, see gemm_order_tile_sequence); the lane form, a
//  lane at a time, does not call it.
struct NothingEachStep {
  KOKKOS_FORCEINLINE_FUNCTION void operator()() const {}
};
template <int MR, int NR, bool ReadC, bool CByColumns = false, class Member, class K, class T,
          class BA, class BB, class BC, class EachStep = NothingEachStep>
KOKKOS_FORCEINLINE_FUNCTION void gemm_tile(const Member& member, int i0, int j0, const K k,
                                           const T alpha, const BA& A, const BB& B, const T beta,
                                           const BC& C, EachStep&& each_step = EachStep{}) {
#if !IBLA_IMPL_DEVICE_PASS
  constexpr int L = fixed_lanes<typename BC::lane_count>::value;
  if constexpr (L > 0) {
    // Pointers walk the k loop: one add per operand and step, and the
    // offsets inside a step are loop-invariant (r * ars, c * bcs), instead of
    // (i0 + r) * rs + p * cs recomputed from runtime strides for every access.
    const index_t als = index_t(value_of(A.ls)), bls = index_t(value_of(B.ls));
    const index_t ars = A.rs, bcs = B.cs;
    const index_t astep = A.cs, bstep = B.rs;
    const T* a = A.ptr(i0, 0);
    const T* b = B.ptr(0, j0);
    // The r and c loops must be unrolled before vectorisation so that every
    // acc[r][c] is a fixed vector the compiler can keep in a register.
    T acc[MR][NR][L];
    IBLA_IMPL_UNROLL
    for (int r = 0; r < MR; ++r)
      IBLA_IMPL_UNROLL
      for (int c = 0; c < NR; ++c)
        for_each_lane(member, C.lanes,
                      [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
                        acc[r][c][l] = T(0);
                      });
    for (int p = 0; p < value_of(k); ++p) {
      each_step();
      IBLA_IMPL_UNROLL
      for (int r = 0; r < MR; ++r)
        IBLA_IMPL_UNROLL
        for (int c = 0; c < NR; ++c)
          for_each_lane(member, C.lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
            acc[r][c][l] = fused_mul_add(a[r * ars + l * als], b[c * bcs + l * bls], acc[r][c][l]);
          });
      a += astep;
      b += bstep;
    }
    const auto store = [&](const int r, const int c) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
      for_each_lane(member, C.lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
        T& out = C(i0 + r, j0 + c, l);
        if constexpr (ReadC) {
          out = fused_mul_add(alpha, acc[r][c][l], beta * out);
        } else {
          out = alpha * acc[r][c][l];
        }
      });
    };
    if constexpr (CByColumns) {
      IBLA_IMPL_UNROLL
      for (int c = 0; c < NR; ++c)
        IBLA_IMPL_UNROLL
        for (int r = 0; r < MR; ++r) store(r, c);
    } else {
      IBLA_IMPL_UNROLL
      for (int r = 0; r < MR; ++r)
        IBLA_IMPL_UNROLL
        for (int c = 0; c < NR; ++c) store(r, c);
    }
    return;
  }
#endif
  (void)each_step;
  for_each_lane(member, C.lanes, [&](const int l) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
    T acc[MR][NR];
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NR; ++c) acc[r][c] = T(0);
    for (int p = 0; p < value_of(k); ++p) {
      T a[MR], b[NR];
      for (int r = 0; r < MR; ++r) a[r] = A(i0 + r, p, l);
      for (int c = 0; c < NR; ++c) b[c] = B(p, j0 + c, l);
      for (int r = 0; r < MR; ++r)
        for (int c = 0; c < NR; ++c) acc[r][c] = fused_mul_add(a[r], b[c], acc[r][c]);
    }
    for (int r = 0; r < MR; ++r)
      for (int c = 0; c < NR; ++c) {
        T& out = C(i0 + r, j0 + c, l);
        if constexpr (ReadC) {
          out = fused_mul_add(alpha, acc[r][c], beta * out);
        } else {
          out = alpha * acc[r][c];
        }
      }
  });
}

/// Requests into L2 column p of A and row p of B of lane l, the share of
/// team rank `rank` of `ranks`: rows and columns rank, rank + ranks, ...
/// Each request is one element's line, which holds the element of the
/// team's neighbouring lanes too (their vector threads request the same
/// line), so the team's ranks together request the whole column and row once.
template <class BA, class BB>
KOKKOS_FORCEINLINE_FUNCTION void prefetch_operands_step(const BA& A, const BB& B, const int p,
                                                        const int rank, const int ranks,
                                                        const int l) {
  for (int i = rank; i < A.rows; i += ranks) prefetch_line_to_l2(&A(i, p, l));
  for (int j = rank; j < B.cols; j += ranks) prefetch_line_to_l2(&B(p, j, l));
}

/// One MR x NR tile of C (rows from i0, columns from j0) of lane l alone:
/// the work of one thread of a device team that splits each matrix's tiles
/// among its threads (GemmTeamTiles). A tile that reaches past the last row
/// or column (MR or NR not dividing m or n) computes on the last row or
/// column repeated and stores only what lies inside: one instance per tile
/// shape, not one per edge extent. Each element gets gemm_tile's operations
/// in its order (k increasing, fused), so the same bits.
/// PrefetchDistance > 0: at step p the thread also requests into L2 its
/// share (prefetch_operands_step: it is rank `rank` of `ranks` that split the
/// tiles) of A's column and B's row p + PrefetchDistance.
template <int MR, int NR, bool ReadC, int PrefetchDistance, class T, class BA, class BB, class BC>
KOKKOS_FORCEINLINE_FUNCTION void gemm_tile_lane_clamped(const int i0, const int j0, const T alpha,
                                                        const BA& A, const BB& B, const T beta,
                                                        const BC& C, const int l, const int rank,
                                                        const int ranks) {
  const int m = C.rows, n = C.cols, k = A.cols;
  int row[MR], col[NR];
  IBLA_IMPL_UNROLL
  for (int r = 0; r < MR; ++r) row[r] = i0 + r < m ? i0 + r : m - 1;
  IBLA_IMPL_UNROLL
  for (int c = 0; c < NR; ++c) col[c] = j0 + c < n ? j0 + c : n - 1;
  T acc[MR][NR];
  IBLA_IMPL_UNROLL
  for (int r = 0; r < MR; ++r)
    IBLA_IMPL_UNROLL
    for (int c = 0; c < NR; ++c) acc[r][c] = T(0);
  if constexpr (PrefetchDistance > 0) {
    // Step 0 is loaded at once below; steps 1 .. distance - 1 have no step
    // PrefetchDistance before them.
    for (int p = 1; p < PrefetchDistance && p < k; ++p)
      prefetch_operands_step(A, B, p, rank, ranks, l);
  }
  for (int p = 0; p < k; ++p) {
    if constexpr (PrefetchDistance > 0) {
      if (p + PrefetchDistance < k)
        prefetch_operands_step(A, B, p + PrefetchDistance, rank, ranks, l);
    }
    T a[MR], b[NR];
    IBLA_IMPL_UNROLL
    for (int r = 0; r < MR; ++r) a[r] = A(row[r], p, l);
    IBLA_IMPL_UNROLL
    for (int c = 0; c < NR; ++c) b[c] = B(p, col[c], l);
    IBLA_IMPL_UNROLL
    for (int r = 0; r < MR; ++r)
      IBLA_IMPL_UNROLL
      for (int c = 0; c < NR; ++c) acc[r][c] = fused_mul_add(a[r], b[c], acc[r][c]);
  }
  IBLA_IMPL_UNROLL
  for (int r = 0; r < MR; ++r)
    IBLA_IMPL_UNROLL
    for (int c = 0; c < NR; ++c) {
      if (i0 + r < m && j0 + c < n) {
        T& out = C(i0 + r, j0 + c, l);
        if constexpr (ReadC) {
          out = fused_mul_add(alpha, acc[r][c], beta * out);
        } else {
          out = alpha * acc[r][c];
        }
      }
    }
}

/// C = beta * C, with beta == 0 writing zeros without reading C (BLAS).
template <class Member, class T, class BC>
KOKKOS_INLINE_FUNCTION void scale_block(const Member& member, const T beta, const BC& C) {
  for (int j = 0; j < C.cols; ++j)
    for (int i = 0; i < C.rows; ++i) {
      if (beta == T(0)) {
        for_each_lane(member, C.lanes, [&](const int l) { C(i, j, l) = T(0); });
      } else if (beta != T(1)) {
        for_each_lane(member, C.lanes, [&](const int l) { C(i, j, l) *= beta; });
      }
    }
}

/// Square GEMMs of order up to this one are one tile of compile-time
/// order (gemm_tiles): 5 x 5 (25 accumulators, 5 values of A, B read as
/// the FMAs' operand) where a lane value is one of 32 registers (L = 8
/// doubles on AVX-512), else 4 x 4. Measured at n = 5, L = 8 doubles, against
/// the 4 x 4, 4 x 1, 1 x 4, 1 x 1 tiles (double, 10^4 problems, 2 threads):
/// 1.32-1.42x in cache (minimum of 400 calls, 3 runs), and in ibla_bench
/// (median of 3 alternated runs, best repetition) warm 25.0 -> 51.5 GFLOP/s,
/// flushed 17.5 -> 16.9 without the software prefetch (see GemmBlocks), 15.7
/// with it; with two registers per value (L = 16) the 5 x 5 tile spilled
/// (0.90x). With 16 registers (AVX2) a tile of order N holds N * N
/// accumulators and a column of A, N + 1 values a row: up to the largest N
/// (at most 4) whose values fit them, 3 for one register per value (L = 4
/// doubles), 2 for two (L = 8); larger orders take gemm_tiles' 3 x 4 or 1 x
/// 4 tiles as a compile-time sequence (gemm_fixed_order). Where a value
/// takes four registers the order stays 4 (not measured). Measured on Zen 3
/// with gemm_fixed_order (its micro-driver, the better L) against the 4 x 4
/// tile, which spilled: n = 3 9.3 -> 10.7, 4 11.2 -> 14.3 GFLOP/s; n = 2
/// unchanged.
constexpr int gemm_narrow_single_tile_order(const int registers_per_value) {
  int order = 1;
  while (order < 4 &&
         (order + 1) * (order + 2) * registers_per_value <= host_simd_registers)
    ++order;
  return order;
}
template <class T, int L>
inline constexpr int gemm_single_tile_order =
    IBLA_IMPL_DEVICE_PASS                 ? 4
    : host_has_wide_register_file         ? (host_registers_per_value<T, L> == 1 ? 5 : 4)
    : host_registers_per_value<T, L> <= 2 ? gemm_narrow_single_tile_order(
                                                host_registers_per_value<T, L>)
                                          : 4;

/// Whether the single tile of order N (gemm_single_tile_order) reads B as
/// its FMAs' memory operand, and so requests B's lines into L1 before it
/// (gemm_fixed_order_nn): with one register a value, where its N * N
/// accumulators, a column of A and a row of B take more than the vector
/// registers (5 x 5 on AVX-512) and GCC keeps B out of them. Each of B's
/// values then feeds N FMAs from memory, a row of them N lines apart.
/// Measured on AVX-512 Zen 5 (ibla_bench --ops gemm --impls ibla --reps 31,
/// 10^4 problems, 2 threads, alternated runs, medians, GFLOP/s, pairs won):
/// n = 5 doubles L = 8 flushed 19.3 -> 29.3 (6 of 6) and 18.9 -> 22.2 (5
/// of 5, the VM's memory slower in three), warm 1.03x (4 of 6, 4 of 5);
/// floats L = 16 flushed 38.0 -> 52.5 (4 of 4), warm 0.98x. In the same
/// runs order 8 (L = 8 doubles), whose tiles did not change (a function of
/// their own, at the same address), ran 0.89-0.91x flushed (none of 11
/// pairs won), also in runs of n = 8 alone and with the order-5 tile out of
/// line (0.91-0.94x), but not in the micro-driver (0.96-1.0x): the block
/// function that calls those tiles holds the tiles of orders up to 5 and
/// compiled differently. With two registers a value the 4 x 4 tile (L =
/// 16 doubles) lost with the requests (flushed 0.94x, warm 0.92x); where B
/// fits the registers (n = 3, 4, one register a value) they lost in L3
/// (micro-driver, 0.90-0.96x) and gained nothing flushed. Loads of B's
/// lines in address order (touch_in_order's) in place of the requests lost
/// in L3 at n = 3, 4 (0.89-0.91x) and were unsteady at 5 (0.76-1.04x).
template <class T, int L, int N>
inline constexpr bool gemm_single_tile_reads_b_from_memory =
    !IBLA_IMPL_DEVICE_PASS && L > 0 && host_registers_per_value<T, L> == 1 &&
    N <= gemm_single_tile_order<T, L> && N * N + 2 * N > host_simd_registers;

/// Whether the single tile (gemm_single_tile_order) reads and writes C a
/// column after another (gemm_tile's CByColumns): a block-interleaved block
/// is column-major, so that is C's address order. A row after another it
/// reads and writes lines N apart, and a batch out of cache ran slower.
/// Measured on AVX-512 Zen 5 (ibla_bench --ops gemm --impls ibla --reps 21,
/// 10^4 problems, 2 threads, 5 runs alternated with the rows order, in
/// which C was loaded before the k loop up to 16 values (971c93f); medians,
/// GFLOP/s, pairs won of 5): doubles L = 8 flushed n = 3 1.11x (4), 4 14.9
/// -> 24.2 (5), 5 17.3 -> 19.2 (5), warm n = 3 1.11x (5), 4 48.1 -> 56.2
/// (5), 5 66.1 -> 70.5 (5), n = 2 1.02-1.06x; L = 16 flushed n = 3 1.18x,
/// 4 1.23x; floats L = 16 flushed n = 4 31.9 -> 35.3 (5), 5 1.09x (5), warm
/// n = 3 1.05x, 4 1.05x (5 each), 5 0.97x (2), and in 5 more runs started
/// with the change n = 4 1.10x / 1.06x, 5 1.07x / 1.11x; L = 32 flushed n =
/// 4 1.10x. A micro-driver (ibla::gemm NN, n = 4, L = 8 doubles, 10^4
/// problems, 2 threads, 301 calls, medians of 2 runs, flushed / in L3): rows
/// with C first 17.2 / 47.7-49.0, rows with C after the loop 20.3 /
/// 52.2-52.3, columns with C first 21.9-22.0 / 46.7-48.5, columns after the
/// loop 25.1-25.2 / 54.8-55.3; Kokkos Kernels' SIMD packs (same storage)
/// 24.8-25.2 / 43.9-44.5. The larger tiles (orders 6..32) in the
/// columns order moved doubles 0.89-1.06x and lost 6-14% in L = 16's 2 x 4
/// tiles at orders 12..24, so they keep the rows order. With 16 registers
/// (AVX2) not measured.
inline constexpr bool gemm_single_tile_c_by_columns = true;

/// Square GEMMs of order above gemm_single_tile_order and up to this one
/// run gemm_tiles' tiles as a compile-time sequence (gemm_order_tiles),
/// where a lane value is one register of 32 (as for the single tile) or of
/// 16 (see below), in full
/// blocks (L > 0, the vector form; the last, partial block of a batch keeps
/// the loops, same bits). The tiles are the loops' own instances (k a
/// runtime count), so this adds no tile code to compile. Measured with
/// ibla_bench (double, L = 8, 10^4, 2 threads, AVX-512 Zen 4, 4 alternated
/// runs, medians, GFLOP/s) against the loops: warm n = 6 31.8 -> 39.1, 7
/// 32.8 -> 39.1, 8 34.1 -> 36.2; flushed 0.96x at n = 6..8, inside the
/// runs' spread (n = 6 16.6-20.2 before, 17.3-19.2 after). Tried and not
/// kept: N x 4 tiles at N = 6, 7 (24 and 28 accumulators; warm n = 7 46-49
/// in a micro-benchmark of repeated calls but 34.1 in ibla_bench, flushed
/// 0.91-0.93x, and eight new tile instances per configuration: the tests'
/// GEMM instance unit compiled in 27 s against 18 s), and a compile-time k
/// (no faster). With 16 registers (AVX2): up to 10 where a lane value is
/// one register (L = 4 doubles, 8 floats: 3 x 4 tiles), up to 4 where it
/// takes two (L = 8 doubles: the orders the single tile no longer takes).
/// With two, 1 x 4 tiles make long sequences: up to 10 they took the
/// tests' GEMM instance unit from 18 to 69 s of compile time (49 s up to
/// 8), and the whole test run past 30 minutes; as chosen it takes 25 s.
/// Measured on Zen 3 (1-thread micro-driver: ibla::gemm NN on 1024
/// problems in cache, best of 300-400 calls, 2 alternated runs, the better
/// L, GFLOP/s, with the single tile above) against the loops: double n = 5
/// 9.2 -> 12.3, 6 12.3 -> 16.2, 9 12.2 -> 16.3, 10 14.3 -> 16.3, n = 7, 8
/// unchanged; float (L = 8, 16, 32) n = 4 21.7 -> 26.0, 5 19.0 -> 25.0, 6
/// 25.4 -> 32.0, 7 28.5 -> 32.5, 8 33.5 -> 37.2, 9 25.9 -> 39.6, 10 28.2 ->
/// 31.9. At n = 12 the sequence was no faster (18.9 both ways), so not
/// beyond 10.
/// With 32 registers, orders 9..11 too (4 x 4 tiles, their next-block
/// requests planned over the tiles, see gemm_whole_block_prefetch_order).
/// Measured on AVX-512 Zen 5 (micro-driver: ibla::gemm NN, beta 0.5, 2
/// threads, 400 calls of 10 each, medians of 3 alternated runs, GFLOP/s)
/// against the loops: double (L = 8) on 256 problems n = 9 90-92 -> 111-113,
/// 10 100-103 -> 121-122, 11 89-115 -> 115-126; on 1024 and 4000
/// problems (L3) 1.05-1.24x at n = 9..11; float (L = 16) on 256
/// problems n = 9 64-72 -> 73-84, 10 69-84 -> 113, 11 84-92 -> 118-131,
/// on 2048 n = 9 133-137 -> 157-161, 10 140-145 -> 176-179, 11 152-161
/// -> 181-184. The blocks of two registers a value (L = 16 doubles, 32
/// floats) take these orders too, a register of lanes at a time
/// (gemm_lane_group_lanes, gemm_fixed_order_nn_order): in cache double L =
/// 16 on 256 problems n = 9 79-81 -> 108-111, 10 88-90 -> 118-119, 11
/// 93-96 -> 117-118, on 2048 1.10-1.36x; float L = 32 on 512 problems n =
/// 9 162-165 -> 227-232, 10 176-178 -> 240-246, 11 188-190 -> 239-242, on
/// 4096 1.19-1.40x (orders 8 and 12, unchanged, 0.97-1.06x). From memory
/// (ibla_bench, 10^4 problems, 6-8 alternated runs, medians) within the
/// runs' spread: double L = 8 flushed 1.01-1.11x, warm 0.97-1.02x, L = 16
/// 0.90-1.13x; float L = 16 flushed 0.90-1.06x, warm 0.98-1.05x, L = 32
/// 0.85-1.38x, with order 12 (unchanged there) at 0.98-1.16x. Order 12
/// was 1.01-1.04x in cache; with the next-block requests of the one-register
/// blocks as whole blocks (as up to 8) orders 9..12 lost from memory (warm
/// 0.72-0.92x). The tests' GEMM instance unit compiles in 56 s against 29 s.
template <class T, int L>
inline constexpr int gemm_fixed_order =
    L <= 0 || IBLA_IMPL_DEVICE_PASS       ? 0
    : host_has_wide_register_file         ? (host_registers_per_value<T, L> == 1 ? 11 : 0)
    : host_registers_per_value<T, L> == 1 ? 10
    : host_registers_per_value<T, L> == 2 ? 4
                                          : 0;

/// Extent of tile t of a compile-time order N cut in tiles of Size.
KOKKOS_FORCEINLINE_FUNCTION constexpr int tile_extent(const int N, const int Size, const int t) {
  return N - t * Size < Size ? N - t * Size : Size;
}

/// BlockBytes > 0: the prefetch's ranges are whole blocks of that many bytes
/// (BlockPrefetch::step_whole_blocks), requested in Steps steps (0: one a
/// tile) of which the tiles take FirstStep, FirstStep + 1, ...; else
/// planned for the tiles.
template <int N, int MR, int NR, bool ReadC, index_t BlockBytes, int Steps = 0, int FirstStep = 0,
          class Member, class T, class BA, class BB, class BC, int... Tile>
KOKKOS_FORCEINLINE_FUNCTION void gemm_order_tile_sequence(const Member& member, const T alpha,
                                                          const BA& A, const BB& B, const T beta,
                                                          const BC& C, BlockPrefetch& prefetch,
                                                          std::integer_sequence<int, Tile...>) {
  constexpr int row_tiles = (N + MR - 1) / MR;
  constexpr int steps     = Steps > 0 ? Steps : int(sizeof...(Tile));
  ((BlockBytes > 0 ? prefetch.step_whole_blocks<BlockBytes, steps, FirstStep + Tile>()
                   : prefetch.step(),
    gemm_tile<tile_extent(N, MR, Tile % row_tiles), tile_extent(N, NR, Tile / row_tiles), ReadC>(
        member, (Tile % row_tiles) * MR, (Tile / row_tiles) * NR, int(N),
        alpha, A, B, beta, C)),
   ...);
}

/// Orders gemm_fixed_order_nn cuts into panels, gemm_panel_tile_rows (or N, if
/// fewer) x gemm_panel_tile_cols tiles in a compile-time sequence
/// (gemm_order_tiles), instead of gemm_tile_rows x gemm_tile_cols tiles: 7 to
/// 12, with 32 vector registers and one register a lane value (L = 8 doubles,
/// 16 floats on AVX-512), and in the lane groups of two-register blocks
/// (gemm_order_tiles_by_lane_group: L = 16 doubles, 32 floats) up to their
/// largest order, 11. Order 12 thereby joins the sequences (the 4 x 4 ones stop
/// at gemm_fixed_order, 11) for the whole block only. A block is column-major,
/// so a panel reads A's columns (up to 8 lines of each, one column after
/// another) and B's and C's two columns after another, front to back; at orders
/// 7 and 8 the first panel reads all of A's block in address order. The 4 x 4
/// tiles read four lines of each column of A, then of the next, which the
/// hardware prefetcher follows less well from L3 and memory.
/// Measured on AVX-512 Zen 5 (ibla_bench --ops gemm --sizes 7,8,9,10,11,12
/// --impls ibla --reps 31, 10^4 problems, 2 threads, 5 runs alternated with the
/// 4 x 4 tiles, medians, GFLOP/s, and how many of the 5 pairs the panels won):
/// doubles flushed n = 8 26.2 -> 28.1 (4), 10 34.8 -> 37.5 (5), 11 33.9 -> 39.2
/// (5), 12 36.8 -> 41.1 (5), n = 7 and 9 0.98x and 1.01x; warm n = 7 55.0 ->
/// 58.8 (5), 8 1.08x (4), 9 1.05x (4), 10 1.04x (4), 11 52.7 -> 57.8 (5), 12
/// 1.00x; floats flushed n = 8 55.9 -> 60.9, 10 74.6 -> 80.6, 11 75.5 -> 86.0,
/// 12 75.8 -> 85.2 (5 each), 7 and 9 1.01-1.03x, warm 0.92-1.08x. The blocks
/// whose code did not change (L = 16 doubles, 32 floats) flushed 0.98-1.03x,
/// warm 0.84-1.05x (the warm cells' spread). The lane groups (the same runs at
/// --sizes 6,7,8,9,10,11, the whole blocks' panels in both builds): L = 16
/// doubles warm n = 7 53.5 -> 59.7, 10 43.0 -> 49.4, 11 39.1 -> 47.0, 8 and 9
/// 1.05x, 1.06x, flushed n = 11 32.9 -> 36.1, 7..10 1.00-1.04x; L = 32 floats
/// warm 1.04-1.09x, flushed 0.99-1.04x; the unchanged blocks 0.94-1.08x. An
/// earlier set at orders 7 and 8 only (--reps 41, 6 runs): warm doubles n = 7
/// 63.8 -> 69.6, 8 65.6 -> 69.7, floats 1.09x, 1.07x, flushed 0.98-1.02x. In a
/// micro-driver (ibla::gemm NN, alpha 1.5, beta 0.5, 10^4 problems, 2 threads,
/// 61-201 calls, 3 alternated runs, medians, GFLOP/s; operands restored from
/// copies before each call / flushed / repeated calls without the restore),
/// doubles: n = 7 62-68 -> 74-81 / 0.99-1.05x / 1.10-1.17x; 8 (with
/// touch_in_order of B and C only) 66-74 -> 70-79 / 0.98x / 1.10x; 10 (8-row
/// panels) 0.92-1.03x / 35.0-36.0 -> 37.9-38.7 / 1.04x; 11 0.93-1.16x /
/// 35.2-35.9 -> 39.3-40.0 / 1.13x; 12 (as a sequence) 81-84 -> 82-92 /
/// 48.5-48.7 -> 54.3-56.7 / 1.09x (8 x 2 tiles in the runtime grid instead:
/// 1.02x / 1.09x / 0.94x); floats n = 8 141-146 -> 163-166 / 1.05x / 1.15x, 12
/// 171-177 -> 195-197 / 1.06x / 1.10x. Tried there and not kept: N x 3 panels
/// (n = 6, 7, 9: flushed 0.8-0.9x), N x 2 at n = 6 (flushed 0.95x), 12 x 2 at n
/// = 12 (flushed 1.00x), 8 x 2 in the grid at n = 13, 14, 20 (0.85-0.95x) and
/// for floats at 12, 16 (restored 0.9x); the lane groups of L = 16 doubles as a
/// sequence at 12 (4 x 4 tiles, restored 0.85x); 8 x 2 sequences at n = 13, 14,
/// 16 (restored 0.96-1.04x, repeated calls 0.89-1.06x, flushed 1.01-1.10x: not
/// worth their compile time).
/// Variable templates, not constexpr functions: nvcc warns (#20013-D)
/// where a host-device function calls a constexpr host function.
inline constexpr int gemm_panel_first_order = 7;
template <class T, int L>
inline constexpr int gemm_panel_last_order =
    host_has_wide_register_file && host_registers_per_value<T, L> == 1 ? 12 : 0;
template <class T, int L, int N>
inline constexpr bool gemm_panel_tiles =
    N >= gemm_panel_first_order && N <= gemm_panel_last_order<T, L>;
inline constexpr int gemm_panel_tile_rows = 8;
inline constexpr int gemm_panel_tile_cols = 2;

/// The tiles of gemm_order_tiles' sequence of order N for blocks (or lane
/// groups) of L lanes of T: the panels where they take the order, else
/// host_tile_rows x gemm_tile_cols.
template <class T, int L, int N>
inline constexpr int gemm_order_tile_rows =
    !gemm_panel_tiles<T, L, N>  ? host_tile_rows<T, L>(gemm_tile_rows)
    : N < gemm_panel_tile_rows ? N
                               : gemm_panel_tile_rows;
template <class T, int L, int N>
inline constexpr int gemm_order_tile_cols =
    gemm_panel_tiles<T, L, N> ? gemm_panel_tile_cols : gemm_tile_cols;

/// The largest order of gemm_order_tiles whose blocks of compile-time
/// strides request the next block as whole blocks of a known size
/// (step_whole_blocks); above it the requests are planned over the tiles,
/// as in gemm_tile_grid's loops. With 16 registers it is every order (32,
/// the largest; their sequences stop at 10 and were measured so). With 32
/// registers it is 8, the order
/// up to which the sequences were measured with whole blocks: orders
/// 9..12 lost from memory with them (see gemm_fixed_order). The lane
/// groups of gemm_order_tiles_by_lane_group request whole blocks at every
/// order (at 9..11, from memory, within the spread, see gemm_fixed_order).
inline constexpr int gemm_whole_block_prefetch_order = host_has_wide_register_file ? 8 : 32;

/// Batch-level GEMM (GemmBlocks) requests nothing of the next block for
/// square orders up to this one: those of the single tile
/// (gemm_single_tile_order), and 6 and 7 where a lane value is one of 32
/// registers (L = 8 doubles, 16 floats on AVX-512). Their blocks (three
/// operands of 36 or 49 lines) are read in four tiles (order 6: 4 x 4,
/// 2 x 4, 4 x 2, 2 x 2; order 7: 7 x 2 panels, gemm_panel_tiles) in an
/// order the hardware prefetcher follows, and the requests (108 or 147 a
/// block, spread over the tiles) cost more than they saved. Measured on
/// AMD EPYC Zen 4 (micro-driver outside the repo: ibla::gemm NN, alpha
/// 1.5, beta 0.5, 10^4 problems, 2 threads, C restored before each call,
/// flushed with clflushopt or not, medians of 41-61 calls, microseconds,
/// with -> without): order 6, separate binaries, doubles L = 8 flushed 233
/// / 240 / 239 -> 207 / 230 / 216, in L3 95 / 95 / 94 -> 84 / 84 / 84;
/// floats L = 16 flushed 111 / 109 -> 100 / 100, in L3 48 / 48 -> 43 / 43;
/// order 7, the two taking turns call by call in one process, 3 runs:
/// doubles flushed 290-300 -> 256-265, in L3 124-125 -> 103-104; floats
/// flushed 147-148 -> 129, in L3 61-62 -> 51. Not for doubles of L = 16
/// (two registers a value): order 6 flushed 233 -> 352. Order 8 gained in
/// L3 (184 -> 164) but lost flushed (401 -> 462), as 9 (477 -> 554), so
/// they keep their requests. ibla_bench with order 6 alone (--ops gemm
/// --sizes 5,6,7,8 --impls ibla,libxsmm,eigen,kk-simd --reps 21, 10^4
/// problems, 3 runs alternated with the requests, medians, GFLOP/s):
/// doubles n = 6 flushed 18.8 -> 21.1 (0.81-0.82 -> 0.90-0.91 of LIBXSMM),
/// warm 45.5 -> 50.8 (0.91 -> 1.01-1.03); floats (2 runs) n = 6 flushed
/// 38.9 -> 43.6, warm 90.8 -> 100.3; orders 5, 7, 8 (unchanged) 0.97-1.02x.
/// Then order 7 (the same, against order 6 alone): doubles flushed 20.4 ->
/// 22.8 (0.84-0.85 -> 0.88-0.93 of LIBXSMM), warm 48.1 -> 52.2 (0.95-1.01
/// -> 1.03-1.08); floats (2 runs) flushed 1.14x, warm 112 -> 130; orders 6
/// and 8 0.98-1.06x. Only on AMD family 19h: see
/// gemm_leaves_orders_past_single_tile_unrequested.
template <class T, int L>
inline constexpr int gemm_unrequested_order =
    host_has_wide_register_file && host_registers_per_value<T, L> == 1 &&
            gemm_single_tile_order<T, L> < 7
        ? 7
        : gemm_single_tile_order<T, L>;

/// Whether batch-level GEMM leaves the orders past the single tile up to
/// gemm_unrequested_order (6 and 7) without requests of the next block:
/// on AMD family 19h (Zen 4, where that was measured). On an Intel Xeon
/// VM (family 6 model 167, AVX-512, 2 threads) the requests (a few lines
/// each k step, gemm_requests_every_k_step) gained from memory and cost
/// nothing in cache. Micro-driver (outside the repo: ibla::gemm NN, alpha
/// 1.5, beta 0.5, 10^4 problems, C restored before each call, separate
/// binaries alternated, 2 runs, medians of 41 calls flushed with clflushopt
/// and 101 in cache, microseconds, without -> with): doubles L = 8
/// flushed n = 6 307-310 -> 254-256, 7 405-408 -> 348-352, in cache 6
/// 149-151 -> 151, 7 204-205 -> 205-206; floats L = 16 flushed 6 134 ->
/// 111-113, 7 187-188 -> 153-154, in cache 6 68-70 -> 71-72, 7 100-102 ->
/// 101-103. The single tile's orders (up to 5) gained nothing from them
/// (n = 5 181 -> 180 flushed, n = 4 107-108 -> 112), so they stay
/// unrequested everywhere. Zen 5 was not measured. Read once.
inline bool gemm_leaves_orders_past_single_tile_unrequested() { return host_is_amd_family_19h(); }

/// Whether gemm_order_tiles of order N on blocks of compile-time strides
/// requests the next blocks a few lines before every k step of its tiles
/// (gemm_order_tile_sequence_requesting_each_k_step: the lines spread
/// evenly over the tiles' k steps) instead of before every tile (a share
/// of whole blocks, step_whole_blocks, at order 8; a planned step, plan()
/// and step(), at 9..12): with 32 vector registers (AVX-512), orders up to
/// 12, the last of the panels (gemm_panel_last_order); 6 and 7 request
/// nothing on AMD family 19h (gemm_unrequested_order,
/// gemm_leaves_orders_past_single_tile_unrequested). A share a tile is 48
/// lines or more at once, and from memory such a burst held up the tile's
/// own loads: a synthetic stream here (software requests of the next 12 KB
/// chunk while reading the current one, 2 threads) ran 12% slower with
/// bursts of 48 lines than of 16 or 1, and at half the speed with one
/// burst a chunk.
/// Measured on AVX-512 Zen 4, order 8 (ibla_bench --ops gemm --sizes 7,8,10
/// --impls ibla,libxsmm --reps 31, and --float --sizes 8, 10^4 problems, 2
/// threads, 4 runs alternated with the share a tile, GFLOP/s, a tile ->
/// a k step): doubles L = 8 flushed 20.3 -> 23.3, 27.8 -> 33.9, 28.4 ->
/// 24.7 (LIBXSMM 49.4 -> 28.7 in that pair: the VM's memory changed speed),
/// 22.8 -> 24.7; warm 38.7 -> 51.2, 51.5 -> 58.6, 51.0 -> 53.8, 47.5 ->
/// 54.9; floats L = 16 flushed 37.7 -> 65.1, 56.3 -> 67.3, 45.3 -> 50.8,
/// 44.0 -> 50.5, warm 92.3 -> 123.5, 115.3 -> 122.4, 117.0 -> 125.5, 117.8
/// -> 125.6. A first form that read the ranges from the prefetch object
/// and tested each line against its range's end lost warm (doubles
/// 0.95-0.97x, floats 0.88-0.92x, 3 runs), hence the copy in registers and
/// no tests (BlockPrefetch::cursor). Orders 9..12 (micro-driver outside the repo:
/// ibla::gemm NN, alpha 1.5, beta 0.5, 10^4 problems, C restored before
/// each call, 2 threads, the two forms taking turns call by call in one
/// process, medians of 41 calls, 2 runs, time with the k steps' requests
/// over the time with a planned step a tile): doubles L = 8 flushed n = 9
/// 1.01, 0.95; 10 1.00, 0.90; 11 0.96, 0.81; 12 0.92, 0.81; warm 0.84-0.92;
/// floats L = 16 flushed n = 9 1.13, 1.02; 10 1.00, 1.00; 11 0.96, 0.95; 12
/// 0.88, 0.87; warm 0.80-0.92; 2000 problems (in L3) both 0.80-0.91. The
/// runtime-order tiles above 12 (gemm_tile_grid) with a line a k step
/// lost at n = 20, 24, 32 (separate binaries, flushed, 0.80-0.98x the
/// speed; n = 16 gained): that k loop is short of general registers
/// already. With 16 registers (AVX2) not measured.
template <class T, int L, int N>
inline constexpr bool gemm_requests_every_k_step =
    host_has_wide_register_file && N <= gemm_panel_last_order<T, L>;

/// gemm_order_tile_sequence's tiles with the next blocks requested
/// PerStep lines of each a k step (request, BlockPrefetch::cursor)
/// for the first Calls k steps of the sequence: the tiles before them
/// request at every step, the tile where they end counts down, the tiles
/// after request nothing.
template <int N, int MR, int NR, bool ReadC, int Calls, class Member, class T, class BA,
          class BB, class BC, class Request, int... Tile>
KOKKOS_FORCEINLINE_FUNCTION void gemm_order_tile_sequence_requesting_each_k_step(
    const Member& member, const T alpha, const BA& A, const BB& B, const T beta, const BC& C,
    Request& request, std::integer_sequence<int, Tile...>) {
  constexpr int row_tiles = (N + MR - 1) / MR;
  const auto tile = [&](auto t) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
    constexpr int Index = decltype(t)::value;
    constexpr int first = Index * N;  // the tile's first k step in the sequence
    const auto run = [&](auto&& each_step) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
      gemm_tile<tile_extent(N, MR, Index % row_tiles), tile_extent(N, NR, Index / row_tiles),
                ReadC>(member, (Index % row_tiles) * MR, (Index / row_tiles) * NR, int(N), alpha,
                       A, B, beta, C, each_step);
    };
    if constexpr (first + N <= Calls) {
      run(request);
    } else if constexpr (first < Calls) {
      int left = Calls - first;
      run([&]() IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
        if (left > 0) {
          --left;
          request();
        }
      });
    } else {
      run(NothingEachStep{});
    }
  };
  (tile(std::integral_constant<int, Tile>{}), ...);
}

/// A square GEMM of compile-time order N: the tiles of gemm_tiles' loops
/// (columns of tiles outer, rows inner) with their extents known at compile
/// time, so the tile loops and the dispatch on a tile's extents are
/// straight-line code. Blocks of compile-time strides (gemm_fixed_order_nn)
/// are whole blocks of a known size, so their prefetch needs no plan: a
/// few lines before every k step (gemm_requests_every_k_step), else a share
/// before every tile (up to gemm_whole_block_prefetch_order).
template <int N, int MR, int NR, bool ReadC, class Member, class T, class BA, class BB, class BC>
KOKKOS_FORCEINLINE_FUNCTION void gemm_order_tiles(const Member& member, const T alpha,
                                                  const BA& A, const BB& B, const T beta,
                                                  const BC& C, BlockPrefetch& prefetch) {
  constexpr int tiles = ((N + MR - 1) / MR) * ((N + NR - 1) / NR);
  constexpr int L     = fixed_lanes<typename BC::lane_count>::value;
  constexpr bool compile_time_strides = !std::is_same<typename BC::col_stride, index_t>::value;
  if constexpr (compile_time_strides && gemm_requests_every_k_step<T, L, N>) {
    // Lines a k step: an operand's lines over all the tiles' k steps,
    // rounded up, then as many k steps as whole PerStep take (Calls), so
    // that no request reaches past a block; a block that starts inside a
    // line, or lines left over, are left to the tiles' loads.
    constexpr int lines    = int(index_t(N) * N * L * index_t(sizeof(T)) / BlockPrefetch::line);
    constexpr int k_steps  = tiles * N;
    constexpr int per_step = (lines + k_steps - 1) / k_steps;
    if (prefetch.ranges == 3) {  // A, B and C (prefetch_next_block)
      auto next_a  = prefetch.cursor<per_step>(0);
      auto next_b  = prefetch.cursor<per_step>(1);
      auto next_c  = prefetch.cursor<per_step>(2);
      auto request = [&]() IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
        next_a();
        next_b();
        next_c();
      };
      gemm_order_tile_sequence_requesting_each_k_step<N, MR, NR, ReadC, lines / per_step>(
          member, alpha, A, B, beta, C, request, std::make_integer_sequence<int, tiles>{});
      return;
    }
  }
  constexpr index_t block_bytes =
      !compile_time_strides || N > gemm_whole_block_prefetch_order
          ? 0
          : index_t(N) * N * L * index_t(sizeof(T));
  if constexpr (block_bytes == 0) prefetch.plan(tiles);
  gemm_order_tile_sequence<N, MR, NR, ReadC, block_bytes>(
      member, alpha, A, B, beta, C, prefetch, std::make_integer_sequence<int, tiles>{});
}

/// Lanes a group of a full host block of L lanes of T has where
/// gemm_fixed_order_nn runs the block a group at a time: one SIMD register
/// of lanes (host_simd_bytes), where a lane value takes several registers
/// and the block divides into such groups; else L (one group). A group
/// takes the tiles of one register a value (3 x 4 on AVX2) and their
/// compile-time sequences up to gemm_fixed_order (10 on AVX2), where the
/// whole block, two or four registers a value, had 1 x 4 tiles and loops
/// past order 4: at L = 8 doubles (AVX2) orders 5 and 6 ran at half the
/// speed of L = 4. The group's elements are half or a quarter of a line;
/// the other groups find the line in L1. Measured on Zen 3 (micro-driver
/// of ibla::gemm NN, double, 10^4 problems, 2 threads, alternated runs,
/// medians, GFLOP/s), warm (3 runs): L = 8 n = 5 12.8 -> 26.9, 6 17.2 ->
/// 30.4, 8 28.6 -> 37.4, 10 26.0 -> 37.0; L = 16 n = 5 15.7 -> 28.0, 6
/// 21.1 -> 30.4, 8 23.6 -> 32.7, 10 25.5 -> 32.3. Flushed (5 runs, in
/// which L = 4, unchanged, moved by up to 8%): L = 8 n = 5 12.3 -> 14.4, 6
/// 16.4 -> 17.1, 8 22.2 -> 19.6 (9 more runs: 15.8 -> 14.7), 10 17.2 ->
/// 22.2; L = 16 n = 5 13.3 -> 10.0 (9 more runs: 8.8 -> 8.5), 6 14.8 ->
/// 14.0, 8 18.5 -> 17.3, 10 17.5 -> 18.0. Instructions a block
/// (callgrind, 1 thread): L = 8 n = 5 2942 -> 1054, 8 6366 -> 3113, 10
/// 11360 -> 5287; L = 16 n = 5 4697 -> 1897. ibla_bench (7 alternated
/// runs, medians, GFLOP/s), L = 8: warm n = 5 12.9 -> 20.8, 6 12.5 ->
/// 26.0, 8 19.5 -> 27.0, 10 18.7 -> 24.0; flushed 12.4 -> 14.2, 12.0 ->
/// 15.0, 16.0 -> 16.7, 15.3 -> 20.3; L = 16 flushed n = 5 13.8 -> 11.7,
/// while cells whose code is unchanged moved 0.72-0.96x in the same runs.
/// Not measured on AVX-512 (L = 16 doubles there). The tests' GEMM
/// instance unit compiles in 35 s against 32.
template <class T, int L>
inline constexpr int gemm_lane_group_lanes =
    (L > 0 && !IBLA_IMPL_DEVICE_PASS && host_registers_per_value<T, L> > 1 &&
     (host_simd_bytes / int(sizeof(T))) * host_registers_per_value<T, L> == L)
        ? host_simd_bytes / int(sizeof(T))
        : L;

/// gemm_order_tiles (blocks of compile-time strides, whole blocks
/// prefetched) on each group of G lanes of the block in turn (lane_group),
/// the next block's lines spread over all the groups' tiles. Each group's
/// tiles are those of one register a value (gemm_lane_group_lanes). Every
/// element gets the same operations in the same order as in gemm_tiles'
/// loops (k increasing, fused), so the same bits.
template <int N, bool ReadC, int G, class Member, class T, class BA, class BB, class BC,
          int... Group>
KOKKOS_FORCEINLINE_FUNCTION void gemm_order_tiles_by_lane_group(
    const Member& member, const T alpha, const BA& A, const BB& B, const T beta, const BC& C,
    BlockPrefetch& prefetch, std::integer_sequence<int, Group...>) {
  // A group's values are one register each: the tiles of a whole
  // one-register block of G lanes.
  constexpr int MR    = gemm_order_tile_rows<T, G, N>;
  constexpr int NR    = gemm_order_tile_cols<T, G, N>;
  constexpr int tiles = ((N + MR - 1) / MR) * ((N + NR - 1) / NR);
  constexpr int steps = tiles * int(sizeof...(Group));
  constexpr index_t block_bytes =
      index_t(N) * N * fixed_lanes<typename BC::lane_count>::value * index_t(sizeof(T));
  (gemm_order_tile_sequence<N, MR, NR, ReadC, block_bytes, steps, Group * tiles>(
       member, alpha, lane_group<G>(A, Group), lane_group<G>(B, Group), beta,
       lane_group<G>(C, Group), prefetch, std::make_integer_sequence<int, tiles>{}),
   ...);
}

IBLA_IMPL_OPERANDS_IN_REGISTERS_BEGIN
/// Calls f(i0, j0, rows, cols) for the MR x NR tiles of an m x n C, columns
/// of tiles outer, rows inner; rows and cols are the tile's extents as
/// compile-time constants (std::integral_constant), smaller at the edges.
template <int MR, int NR, class F>
KOKKOS_FORCEINLINE_FUNCTION void gemm_for_each_tile(const int m, const int n, F&& f) {
  for (int j0 = 0; j0 < n; j0 += NR) {
    const int nr = n - j0 < NR ? n - j0 : NR;
    for (int i0 = 0; i0 < m; i0 += MR) {
      const int mr = m - i0 < MR ? m - i0 : MR;
      detail::static_switch<MR>(mr, [&](auto rows) {
        detail::static_switch<NR>(nr, [&](auto cols) { f(i0, j0, rows, cols); });
      });
    }
  }
}

/// Whether gemm_tile_grid requests the next block a line of each operand
/// before every k step of its first tiles (BlockPrefetch::cursor), instead
/// of a planned share before and after every tile, for square orders up to
/// gemm_grid_each_k_step_last_order in batches larger than the last-level
/// cache (BlockPrefetch::by_cursors): with 32 vector registers, where an
/// element of a block is one line (L = 8 doubles, 16 floats), so that the
/// first n tiles' n k steps take an operand's n * n lines. A planned share
/// is 24 lines of each range at once (n = 16, doubles), and from memory
/// such bursts held up the tiles' own loads (see gemm_requests_every_k_step).
/// Measured on AVX-512 Zen 4 (micro-driver outside the repo: ibla::gemm NN,
/// alpha 1.5, beta 0.5, 10^4 problems, C restored and the operands flushed
/// with clflushopt before each call, 2 threads, the two forms taking turns
/// call by call in one process, medians of 31 calls, time with the k
/// steps' requests over the time with the planned shares): doubles L = 8, 3
/// runs, n = 13 0.92-0.93, 14 0.95-0.96, 15 0.90-0.92, 16 0.90; floats L =
/// 16, 2 runs, 13 0.93-0.98, 14 0.92-1.01, 15 0.94, 16 0.87-0.88. Not
/// above 16: doubles n = 17, 18, 20 1.05-1.10, and with the requesting
/// tiles spread evenly over the grid (a tile's operands requested each in
/// its own evenly spread set of tiles) n = 17..32 0.89-1.11 by order and
/// run (n = 24, 28 gained, 21, 22, 25, 26, 29, 30, 32 lost). Not in cache:
/// 1500 problems (in L3, doubles, 3 runs) n = 13 1.06-1.15, 14 1.01-1.08,
/// 15 0.99-1.03, 16 1.03-1.05, hence only beyond the last-level cache.
/// With 16 registers (AVX2) not measured.
template <class T, int L>
inline constexpr bool gemm_grid_requests_each_k_step =
    host_has_wide_register_file && L * int(sizeof(T)) == BlockPrefetch::line;
inline constexpr int gemm_grid_each_k_step_last_order = 16;

/// The tiles of a block that is not one tile: square orders up to
/// gemm_fixed_order as a compile-time sequence, the rest in loops of MR x NR
/// tiles (columns of tiles outer, rows inner). Compiled with its operands
/// loaded into registers once per k step (see registers.hpp; AVX-512 Zen 4,
/// GCC 12), against the same code with the loads folded into the FMAs:
///  - 1 thread, ibla::gemm on 16 problems in L2, 400 calls, median, double,
///    L = 8, GFLOP/s: n = 16 23.4 -> 33.8, 24 26.8 -> 41.4, 32 27.5 -> 44.1;
///    on 1024 problems n = 8 22.7 -> 31.8;
///  - ibla_bench (10^4 problems, 2 threads, 3-4 alternated runs, medians of
///    the better L): warm n = 6 38.6 -> 44.5, 8 37.4 -> 50.9, 16 29.5 ->
///    32.7, 32 45.4 -> 53.7; flushed n = 16 29.8 -> 33.9, 32 46.2 -> 52.8.
/// Moving this code out of gemm_tiles also sped up the single tile of
/// n = 3..5 (1 thread, 1024 problems: n = 3 12.3 -> 15.8, 4 19.7 -> 24.5).
template <int MR, int NR, bool ReadC, class Member, class T, class BA, class BB, class BC>
KOKKOS_INLINE_FUNCTION void gemm_tile_grid(const Member& member, const T alpha, const BA& A,
                                           const BB& B, const T beta, const BC& C,
                                           BlockPrefetch& prefetch) {
  const int m = C.rows, n = C.cols, k = A.cols;
  constexpr int single_tile_order =
      gemm_single_tile_order<T, fixed_lanes<typename BC::lane_count>::value>;
  constexpr int fixed_order = gemm_fixed_order<T, fixed_lanes<typename BC::lane_count>::value>;
  if constexpr (fixed_order > single_tile_order) {
    if (m == n && n == k && n > single_tile_order && n <= fixed_order &&
        detail::host_order_compiled(n)) {
      detail::static_switch<fixed_order - single_tile_order>(n - single_tile_order, [&](auto above) {
        constexpr int N = single_tile_order + decltype(above)::value;
        if constexpr (detail::host_order_specialised<N>)
          gemm_order_tiles<N, MR, NR, ReadC>(member, alpha, A, B, beta, C, prefetch);
      });
      return;
    }
  }
  // Doubles: two slices of the next block's requests a tile, one before it
  // and one after its update of C, instead of one before it: half the
  // requests at a time, and the second while no operand load of the tile
  // waits.
  // Measured on AVX-512 Zen 4 (micro-driver: ibla::gemm NN, alpha 1.5, beta
  // 0.5, L = 8 doubles, 2 threads, repeated calls, medians of 30 calls, 6
  // alternated runs, one step -> two): 10^4 problems (from memory) n = 16
  // 1.04-1.54x (6 of 6 runs faster), 20 0.92-1.23x (4 of 6), 24
  // 1.03-1.11x (6), 32 0.99-1.07x (5); in L3 (600-3000 problems, 4 runs)
  // 0.84-1.10x at n = 16, 0.97-1.08x at 13, 24, 32. ibla_bench (--ops gemm
  // --sizes 13,16,20,24,32 --impls ibla --reps 15, 10^4 problems, 3 runs
  // alternated, GFLOP/s): doubles flushed n = 13 32-40 -> 46, 16 38-49 ->
  // 50-51, 20 46-53 -> 55-59, 24 0.98-1.18x, 32 60-65 -> 66-72, warm
  // 0.95-1.30x; but floats (L = 16, 2 runs) n = 13 and 16 0.91-0.97x
  // flushed, 0.94-1.01x warm, 24 and 32 0.98-1.03x: their tiles take half
  // the time for the same lines, so the floats keep one step a tile.
  if constexpr (gemm_grid_requests_each_k_step<T, fixed_lanes<typename BC::lane_count>::value>) {
    if (prefetch.by_cursors && m == n && n == k && n <= gemm_grid_each_k_step_last_order &&
        prefetch.ranges == 3) {
      // The block's n x n elements are n * n lines an operand: a line of
      // each a k step in the first n tiles (n steps each), if the ranges
      // are whole blocks.
      const index_t lines = index_t(n) * n;
      if (prefetch.lines_of_one_run(0) >= lines && prefetch.lines_of_one_run(1) >= lines &&
          prefetch.lines_of_one_run(2) >= lines) {
        auto next_a  = prefetch.cursor<1>(0);
        auto next_b  = prefetch.cursor<1>(1);
        auto next_c  = prefetch.cursor<1>(2);
        auto request = [&]() IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
          next_a();
          next_b();
          next_c();
        };
        int requesting = n;  // tiles left to request
        gemm_for_each_tile<MR, NR>(m, n, [&](const int i0, const int j0, auto rows,
                                             auto cols) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
          constexpr int R = decltype(rows)::value, S = decltype(cols)::value;
          if (requesting > 0) {
            gemm_tile<R, S, ReadC>(member, i0, j0, k, alpha, A, B, beta, C, request);
          } else {
            gemm_tile<R, S, ReadC>(member, i0, j0, k, alpha, A, B, beta, C);
          }
          --requesting;
        });
        return;
      }
    }
  }
  constexpr index_t steps_per_tile = sizeof(T) >= 8 ? 2 : 1;
  prefetch.plan(steps_per_tile * index_t((m + MR - 1) / MR) * ((n + NR - 1) / NR));
  gemm_for_each_tile<MR, NR>(m, n, [&](const int i0, const int j0, auto rows,
                                       auto cols) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
    prefetch.step();
    gemm_tile<decltype(rows)::value, decltype(cols)::value, ReadC>(member, i0, j0, k, alpha, A, B,
                                                                    beta, C);
    if constexpr (steps_per_tile == 2) prefetch.step();
  });
}
IBLA_IMPL_OPERANDS_IN_REGISTERS_END

template <bool ReadC, class Member, class T, class BA, class BB, class BC>
KOKKOS_INLINE_FUNCTION void gemm_tiles(const Member& member, const T alpha, const BA& A,
                                       const BB& B, const T beta, const BC& C,
                                       BlockPrefetch& prefetch) {
  // Blocks whose lane values take two registers (L = 16 doubles on
  // AVX-512): 2 x 4 tiles measured (double, 10^4 problems in cache, 2
  // threads, minimum of 200 calls, 2 runs) against the spilling 4 x 4 n = 8
  // 1.14-1.15x, 12 1.11-1.14x, 16 1.31-1.41x, 32 1.32-1.43x; 3 x 4 was
  // between the two.
  constexpr int MR = IBLA_IMPL_DEVICE_PASS
                         ? gemm_tile_rows
                         : host_tile_rows<T, fixed_lanes<typename BC::lane_count>::value>(
                               gemm_tile_rows);
  constexpr int NR = gemm_tile_cols;
  const int m = C.rows, n = C.cols, k = A.cols;
  constexpr int single_tile_order =
      gemm_single_tile_order<T, fixed_lanes<typename BC::lane_count>::value>;
  if (m == n && n == k && n <= single_tile_order && detail::host_order_compiled(n)) {
    // A tiny square problem is one tile: its order as a compile-time
    // constant makes every trip count one, so the tile is straight-line code.
    // Outside gemm_tile_grid's tuning: the 5 x 5 tile takes B as the FMAs'
    // memory operand, its 25 accumulators and 5 values of A leaving no
    // registers for B's 5 values.
    prefetch.plan(1);
    prefetch.step();
    detail::static_switch<single_tile_order>(n, [&](auto order) {
      constexpr int N = decltype(order)::value;
      if constexpr (detail::host_order_specialised<N>)
        gemm_tile<N, N, ReadC,
                  gemm_single_tile_c_by_columns>(
            member, 0, 0, order, alpha, A, B, beta, C);
    });
    return;
  }
  gemm_tile_grid<MR, NR, ReadC>(member, alpha, A, B, beta, C, prefetch);
}

/// The largest square order that is one tile or a compile-time sequence of
/// tiles (gemm_single_tile_order, gemm_fixed_order).
template <class T, int L>
inline constexpr int gemm_compile_time_order = gemm_fixed_order<T, L> > gemm_single_tile_order<T, L>
                                                   ? gemm_fixed_order<T, L>
                                                   : gemm_single_tile_order<T, L>;

/// The largest square order gemm_fixed_order_nn takes a whole block at:
/// that of its one tile or 4 x 4 sequences, or of its panels
/// (gemm_panel_last_order) where that is larger.
template <class T, int L>
inline constexpr int gemm_whole_block_order =
    gemm_panel_last_order<T, L> > gemm_compile_time_order<T, L> ? gemm_panel_last_order<T, L>
                                                                : gemm_compile_time_order<T, L>;

/// The largest square order gemm_fixed_order_nn takes: that of the block
/// (gemm_whole_block_order), or of its lane groups (gemm_lane_group_lanes)
/// where that is larger.
template <class T, int L>
inline constexpr int gemm_fixed_order_nn_order =
    gemm_compile_time_order<T, gemm_lane_group_lanes<T, L>> > gemm_whole_block_order<T, L>
        ? gemm_compile_time_order<T, gemm_lane_group_lanes<T, L>>
        : gemm_whole_block_order<T, L>;

/// Whether gemm_fixed_order_nn takes blocks of these types: on host, full
/// blocks (a compile-time lane count) whose row strides are compile-time
/// (the block-interleaved layouts).
/// A variable template, not a constexpr function: nvcc warns (#20013-D)
/// where a host-device function calls a constexpr host function.
template <class T, class BA, class BB, class BC>
inline constexpr bool gemm_fixed_order_nn_applies =
    !IBLA_IMPL_DEVICE_PASS && fixed_lanes<typename BC::lane_count>::value > 0 &&
    !std::is_same<typename BA::row_stride, index_t>::value &&
    !std::is_same<typename BB::row_stride, index_t>::value &&
    !std::is_same<typename BC::row_stride, index_t>::value;

/// Whether batch-level GEMM's blocks are cut into panels (gemm_panel_tiles,
/// through gemm_fixed_order_nn), whose A touch_in_order leaves out: of the
/// blocks it touches (4 KB), the panels' first reads A's front to back
/// itself. Touching all three operands before the panels ran at 0.85-0.95x
/// of touching B and C only, in cache and flushed alike (n = 8, doubles,
/// the micro-driver of gemm_panel_tiles).
template <class T, class BA, class BB, class BC>
KOKKOS_INLINE_FUNCTION bool gemm_tiles_read_a_in_order(const Op transA, const Op transB,
                                                        const int n) {
  return gemm_fixed_order_nn_applies<T, BA, BB, BC> && transA == Op::N && transB == Op::N &&
         n >= gemm_panel_first_order &&
         n <= gemm_panel_last_order<T, fixed_lanes<typename BC::lane_count>::value> &&
         detail::host_order_compiled(n);
}

/// C = alpha A B + beta C (alpha != 0) for a block of square matrices of an
/// order up to the compile-time sequence's (gemm_fixed_order, of the block
/// or of its lane groups: gemm_fixed_order_nn_order), with every
/// stride a compile-time constant (fixed_order_block): each operand's
/// element is then the block's origin plus a constant offset. Through
/// apply_op, which makes a block and its transpose one type, the strides
/// were runtime values: at order 5 (AVX2, L = 4 doubles) they and the
/// tiles' pointers took more registers than the 16 GPRs, and GCC spilled
/// them (117 stack moves in the sequence's 1,074 instructions). Its prefetch
/// of the next block is step_whole_blocks up to
/// gemm_whole_block_prefetch_order: plan() and step() had been about 600
/// instructions a block at order 5, as many as the GEMM itself
/// (callgrind). Transposed operands keep the runtime-stride tiles below:
/// one type per combination of ops would compile the sequences four times.
template <class Member, class T, class BA, class BB, class BC>
KOKKOS_INLINE_FUNCTION void gemm_fixed_order_nn(const Member& member, const int n, const T alpha,
                                                const BA& A, const BB& B, const T beta,
                                                const BC& C, BlockPrefetch& prefetch) {
  constexpr int L           = fixed_lanes<typename BC::lane_count>::value;
  constexpr int single_tile = gemm_single_tile_order<T, L>;
  constexpr int whole_block = gemm_whole_block_order<T, L>;
  constexpr int fixed       = gemm_fixed_order_nn_order<T, L>;
  constexpr int G           = gemm_lane_group_lanes<T, L>;
  auto run = [&](auto order, auto read_c) {
    constexpr int N = decltype(order)::value;
    const auto a    = fixed_order_block<N>(A);
    const auto b    = fixed_order_block<N>(B);
    const auto c    = fixed_order_block<N>(C);
    if constexpr (N <= single_tile) {
      if constexpr (gemm_single_tile_reads_b_from_memory<T, L, N>) request_whole_blocks_into_l1(b);
      gemm_tile<N, N, decltype(read_c)::value, gemm_single_tile_c_by_columns>(
          member, 0, 0, order, alpha, a, b, beta, c);
    } else if constexpr (N <= whole_block) {
      gemm_order_tiles<N, gemm_order_tile_rows<T, L, N>, gemm_order_tile_cols<T, L, N>,
                       decltype(read_c)::value>(member, alpha, a, b, beta, c, prefetch);
    } else {
      gemm_order_tiles_by_lane_group<N, decltype(read_c)::value, G>(
          member, alpha, a, b, beta, c, prefetch, std::make_integer_sequence<int, L / G>{});
    }
  };
  auto order_of = [&](auto read_c) {
    // The single tile's orders first, without the compares of every
    // larger order (static_switch counts down from its largest).
    if (n <= single_tile) {
      detail::static_switch<single_tile>(n, [&](auto order) {
        if constexpr (detail::host_order_specialised<decltype(order)::value>) run(order, read_c);
      });
    } else if constexpr (fixed > single_tile) {
      detail::static_switch<fixed - single_tile>(n - single_tile, [&](auto above) {
        constexpr int N = single_tile + decltype(above)::value;
        if constexpr (detail::host_order_specialised<N>)
          run(std::integral_constant<int, N>{}, read_c);
      });
    }
  };
  if (beta == T(0)) {
    order_of(std::false_type{});
  } else {
    order_of(std::true_type{});
  }
}

template <class Member, class Scalar, class BA, class BB, class BC>
KOKKOS_INLINE_FUNCTION void gemm_block(const Member& member, Op transA, Op transB,
                                       const Scalar alpha, const BA& A, const BB& B,
                                       const Scalar beta, const BC& C, BlockPrefetch& prefetch) {
  using T       = std::remove_const_t<typename BC::value_type>;
  const T a = T(alpha), b = T(beta);
  if constexpr (gemm_fixed_order_nn_applies<T, BA, BB, BC>) {
    constexpr int most = gemm_fixed_order_nn_order<T, fixed_lanes<typename BC::lane_count>::value>;
    const int n        = C.rows;
    if (transA == Op::N && transB == Op::N && a != T(0) && n >= 1 && n <= most && C.cols == n &&
        A.cols == n && detail::host_order_compiled(n)) {
      gemm_fixed_order_nn(member, n, a, A, B, b, C, prefetch);
      team_sync(member);
      return;
    }
  }
  const auto opA = apply_op(transA, A);
  const auto opB = apply_op(transB, B);
  if (C.rows == 0 || C.cols == 0) return;
  if (a == T(0) || opA.cols == 0) {
    impl::scale_block(member, b, C);
  } else if (b == T(0)) {
    impl::gemm_tiles<false>(member, a, opA, opB, b, C, prefetch);
  } else {
    impl::gemm_tiles<true>(member, a, opA, opB, b, C, prefetch);
  }
  team_sync(member);
}

}  // namespace impl

namespace team {

/// C = alpha * op(A) * op(B) + beta * C on one block of matrices. A, B, C are
/// blocks from ibla::lane_block over the same matrices of the batch. Every
/// thread of the team calls it; results are visible to the team on return.
template <class Member, class Scalar, class BA, class BB, class BC>
KOKKOS_INLINE_FUNCTION void gemm(const Member& member, Op transA, Op transB, const Scalar alpha,
                                 const BA& A, const BB& B, const Scalar beta, const BC& C) {
  impl::BlockPrefetch none;
  impl::gemm_block(member, transA, transB, alpha, A, B, beta, C, none);
}

}  // namespace team

namespace impl {
/// GEMMs of at least this order (m, n and k), in a batch larger than the
/// last-level cache (GemmBlocks::from_memory), read their three operands'
/// blocks once in address order before the tiles (load_whole_blocks_in_order)
/// instead of requesting the next block's lines over the tiles, where a lane
/// value is one register (L = 8 doubles, 16 floats on AVX-512). The tiles
/// read a block's A four lines of a column at a time, the hardware
/// prefetcher does not follow that, and the software requests were partly
/// lost: flushed at n = 32 the GEMM ran at about the sum of its times from
/// memory and from L2, not the larger. Read in order, the block streams in
/// (the same VM read and wrote such blocks at about 106 GB/s, 2 threads)
/// and the tiles then find it in L2. Measured on AVX-512 Zen 5 (ibla_bench
/// --ops gemm --sizes 12,14,16,20,24,28,32 --impls ibla --reps 21, 10^4
/// problems, 2 threads, 6 runs alternated with the requests, medians,
/// GFLOP/s, pairs won): doubles L = 8 flushed n = 16 46.9 -> 52.4 (6 of 6),
/// 20 56.0 -> 65.2 (6), 24 64.4 -> 75.7 (6), 28 76.4 -> 84.4 (5), 32 78.5 ->
/// 90.3 (6); warm (10^4 problems of these orders do not fit the L3 either)
/// n = 20 1.10x, 24 1.14x, 28 1.08x, 32 79.8 -> 88.3 (6 each), 16 1.05x;
/// floats L = 16 flushed n = 24 1.09x, 28 1.06x, 32 155.2 -> 169.4 (6),
/// warm 0.98x, 1.05x, 1.08x. Floats at n = 16 and 20 lost (a micro-driver,
/// flushed: n = 16 0.87x, 20 1.0x; in ibla_bench 0.83-0.97x, where the
/// unchanged n = 12, 14 and L = 32 floats moved 0.84-1.0x in the same runs),
/// hence 24 for floats. Blocks of two registers a value (L = 16 doubles)
/// moved 0.85-1.10x, within those runs' spread, so they keep the requests.
/// In cache (512 problems, micro-driver) the loads cost 5-9%, hence only for
/// batches larger than the last-level cache. Same tiles, same bits.
/// Not on a Zen 4 (host_is_amd_family_19h), where reading a block in
/// order first and computing it after ran at about the sum of the two
/// times again, and the requests of the next block over the tiles were
/// faster: a micro-driver (ibla::gemm NN, alpha 1.5, beta 0.5, 10^4
/// problems, repeated calls, 2 threads, medians of 40 calls, two runs,
/// GFLOP/s, in order -> requests) doubles L = 8 n = 16 37.3 / 32.9 -> 48.1 /
/// 50.6, 24 44.3 / 38.9 -> 58.7 / 56.3, 32 48.3 / 45.7 -> 61.4 / 63.5;
/// floats L = 16 n = 24 99.7 / 94.7 -> 134.6 / 141.1, 32 105.2 / 104.4 ->
/// 126.2 / 132.8. Both, the loads in order and the requests of the next
/// block, lost to the requests alone (doubles 0.90-1.02x); prefetcht0 in
/// place of prefetcht1 lost too (0.64-0.88x). Not on the Intel Xeon VM
/// (family 6 model 167, AVX-512, 2 threads) either: there too the requests
/// were faster, 10^5 problems (the operands beyond its last-level cache)
/// with the rule forced on and off in turn (micro-driver: ibla::gemm NN,
/// alpha 1.5, beta 0.5, C restored, flushed with clflushopt, medians of 11
/// calls, two runs, GFLOP/s, in order -> requests) doubles L = 8 n = 16
/// 27.3 / 27.4 -> 38.8 / 38.8, 24 36.2 / 36.3 -> 47.4 / 46.0, 32 45.5 /
/// 45.5 -> 56.1 / 54.9 (warm, the same batch: 16 27.4 / 26.1 -> 37.6 /
/// 36.6, 32 45.5 / 46.0 -> 56.5 / 53.2); floats L = 16 n = 24 72.5 / 69.8
/// -> 93.9 / 93.0, 28 75.6 / 74.2 -> 102.0 / 104.2, 32 85.6 / 84.0 ->
/// 107.1 / 108.9. So only on AMD family 1Ah, where it was measured to win.
/// Zen 3 (family 19h, AVX2) and other hosts were not measured.
template <class T>
inline constexpr int gemm_load_in_order_order = sizeof(T) >= 8 ? 16 : 24;

/// Whether batch-level GEMM on a batch larger than the last-level cache
/// reads its blocks in order (see gemm_load_in_order_order): on AMD family
/// 1Ah (Zen 5) only. Read once.
inline bool gemm_reads_blocks_in_order_from_memory() { return host_amd_family() == 0x1au; }

/// Whether batch-level GEMM reads its blocks of one 4 KB page in address order
/// before the tiles (touch_in_order, measured on Zen 5): on host CPUs other
/// than AMD families 19h and 1Ah. On a Zen 4 the loads lost, in cache and out
/// of it: a micro-driver (ibla::gemm NN, alpha 1.5, beta 0.5, n = 8, 10^4
/// problems, C restored before each call, 2 threads, medians of 101 calls, 4-5
/// alternated runs, microseconds, with -> without) doubles L = 8 flushed
/// 378-405 -> 360-368, in L3 210-214 -> 181-186; floats L = 16 in L3 105-137 ->
/// 86-104, flushed 0.93-1.08x. Zen 3 (AVX2) was not measured. On a Zen 5 (AMD
/// family 1Ah) they had won when first measured, and lose since the panel tiles
/// read A in address order themselves (touch_in_order then covers B and C
/// only). Measured there (2026-12-07, 2 threads): the micro-driver (10^4
/// problems of order 8, medians of 101 calls, alternated runs, microseconds,
/// with -> without) floats L = 16 flushed 226-245 -> 196-210, in L3 87-93 ->
/// 72-75; doubles L = 8 in L3 170-209 -> 152-170, flushed 348-430 -> 372-400
/// (the memory's speed moving); 10^5 doubles (out of the L3) even. ibla_bench
/// (--ops gemm --sizes 8 --impls ibla,libxsmm --reps 21, a scratch build with
/// the choice switched, 4 alternated runs, ibla / LIBXSMM in each run, as the
/// DRAM triad moved between 26 and 93 GB/s): floats flushed 1.32-1.79 ->
/// 1.40-2.07, warm 1.37-1.54 -> 1.44-1.84; doubles flushed 0.68-1.16 ->
/// 0.82-1.03, warm 0.65-0.90 -> 0.72-0.92. The Intel Xeon VM keeps them (not
/// remeasured there). Read once.
inline bool gemm_touches_pages_in_order() {
  return !host_is_amd_family_19h() && host_amd_family() != 0x1au;
}

/// The square order (m, n and k) whose NN blocks batch-level GEMM requests
/// whole into L1 before their tiles where gemm_requests_blocks_into_l1: A,
/// B and C, every line in address order (request_whole_blocks_into_l1),
/// besides the next block's requests over the tiles. At this order the
/// tiles (gemm_order_tiles' sequence, 4 x 4 and its edges) read a block's
/// lines out of address order, and from memory ran at two thirds of the
/// speed of ibla's own matrix-at-a-time form (gemm_small_matrix) on the
/// same bytes stored one matrix after another. Measured on AVX-512 Zen 5
/// (2026-12-07; micro-driver outside the repo: ibla::gemm NN, alpha 1.5,
/// beta 0.5, 10^4 problems, C restored, 2 threads, medians of 101 calls,
/// runs alternated, microseconds, without -> with): doubles L = 8 flushed
/// 310-313 -> 219-228 (3 runs), 208-212 -> 180-182 (3 more, the memory
/// faster), in L3 77-80 -> 81-83; L = 16 flushed 194-303 -> 183-191, in L3
/// 65-75 -> 71-83; floats L = 16 flushed 104-106 -> 92-95, in L3 37-39 ->
/// 39. The matrix-at-a-time form ran 178-219 flushed in the same runs.
/// Order 7 flushed 0.93-1.09x and 1.05-1.09x slower in L3, orders 2..5 and
/// 8..12 even or slower: this order only. Loads in place of the requests
/// (load_whole_blocks_in_order) lost (0.8-0.9x), and so did the whole next
/// block requested at once into L2 in place of the requests over the
/// tiles (0.75-0.85x).
inline constexpr int gemm_block_into_l1_order = 6;

/// Whether batch-level GEMM requests blocks of gemm_block_into_l1_order into
/// L1: on AMD family 1Ah (Zen 5), where it was measured. Read once.
inline bool gemm_requests_blocks_into_l1() { return host_amd_family() == 0x1au; }

/// Batch-level GEMM on host packs the blocks of Views whose matrices lie
/// one after another (lanes_apart_v: LayoutRight, LayoutStride) into
/// block-interleaved scratch (pack.hpp) where C has more elements than
/// this; smaller ones run on the Views as they are, gathering their lanes.
/// Measured (ibla::gemm NN, alpha 1.5, beta 0.5, on column-major matrices
/// one after another in a LayoutStride View, 10^4 problems, 2 threads,
/// flushed, medians of 21 calls, AMD EPYC Zen 4, microseconds, gathered
/// -> packed): n = 2 35 -> 95, 3 97 -> 134, 4 156 -> 258, 5 491 -> 301, 6
/// 879 -> 498, 7 1694 -> 636, 8 1907 -> 570, 16 11477 -> 3448, 32 82041
/// -> 16530 (LIBXSMM on the same storage 47, 66, 103, 142, 194, 327, 402,
/// 2070, 17046 in those runs; the memory's speed moved between them).
/// Once the packed rows stayed in registers (pack_block), n = 4 packed
/// took 102 us flushed, 98-99 in cache, against 154-155 and 150 gathered;
/// n = 3 79-82 / 78-109 against 77-78 / 71, n = 2 50-51 against 35-36
/// (same protocol, both forms alternating in two runs; medians of 101
/// calls in cache). Up to a 3 x 3 C the gathers, few and fused into the
/// tile, cost no more than the copies there. Not on an Intel Xeon VM
/// (family 6 model 167, AVX-512, 2 threads; same micro-driver, 10^4
/// problems, medians of 31 calls, 2 runs, gathered -> packed, us, the same
/// sums): n = 3 doubles flushed 105-110 -> 87-89, warm 87-88 -> 70-72;
/// floats (L = 16) flushed 95-96 -> 52-54, warm 91-93 -> 46-50; but n = 2
/// doubles flushed 40-42 -> 49-50, warm 42 -> 64-78, floats warm 33-36 ->
/// 59-62. Once 2 x 2 matrices one after another were packed by
/// deinterleave_runs (pack_block; same driver, 2 runs, gathered -> packed,
/// us): floats n = 2 flushed 43-45 -> 25-26, warm 41 -> 24, doubles
/// flushed 46-48 -> 48-49, warm 39-40 -> 42-44. So there the gathers stop
/// at a 2 x 2 C for doubles, and floats pack every C. Read once.
template <class T>
int gemm_unpacked_elements() {
  if (host_is_amd_family_19h()) return 9;
  return sizeof(T) >= 8 ? 4 : 1;
}

/// The orders (m, n and k: from first to last) at which a GEMM block packed from Views whose
/// matrices lie one after another requests the user's next block over its
/// tiles (GemmBlocks::run_requesting), as a block of a block-interleaved
/// View requests its next block, instead of all of it at once as it packs
/// this one (pack_block). Packing is mostly waiting for memory: without the
/// kernel, the packs and unpacks alone took 9.9 of the 15.7 ms of n = 32
/// (column-major matrices one after another in a LayoutStride View, 10^4
/// doubles, flushed, 2 threads, Intel Xeon VM family 6 model 167), and
/// requested at once the next block came in while this one was packed, not
/// while it was computed. Measured on that VM (micro-driver: ibla::gemm
/// NN, alpha 1.5, beta 0.5 on such Views, 10^4 problems, C restored, medians
/// of 21 calls, 2 runs, microseconds, at once -> over the tiles): doubles
/// (L = 8) flushed n = 7 500 / 498 -> 453 / 457, 8 708 / 672 -> 597 / 587,
/// 10 1108 / 1103 -> 990 / 984, 12 1771 / 1802 -> 1600 / 1590, 16 3603 /
/// 3544 -> 3388 / 3164, 20 5503 / 5500 -> 5595 / 5454, warm 10 856 / 687 ->
/// 644 / 642, 16 2740 / 2697 -> 2314 / 2341, 20 1.05x; floats (L = 16)
/// flushed n = 7 237 / 236 -> 223 / 226, 8 354 / 355 -> 275 / 275, 12 896
/// / 895 -> 785 / 822, 16 1962 / 1970 -> 1681 / 1704, 20 2987 / 2981 ->
/// 2783 / 2783, warm 16 1.12x. Not at n = 4 (the single tile requests all
/// at once before it, at 0.6x the speed, doubles and floats), 6 (0.97x) nor
/// 24 and 32 (0.95-1.0x). Two more runs with this rule (doubles up to 16,
/// floats up to 20), flushed: doubles n = 7 484 / 490 -> 462 / 452, 8 679 /
/// 678 -> 579 / 566, 12 1782 / 1752 -> 1540 / 1478, 16 3514 / 3449 -> 3231
/// / 3160, warm 16 2488 / 2694 -> 2259 / 2224; floats 8 353 / 350 -> 282 /
/// 276, 12 907 / 941 -> 765 / 779, 16 1987 / 1926 -> 1655 / 1655, 20 2954
/// / 2932 -> 2767 / 2735, warm 16 1.12-1.15x. Doubles at n = 20 had gone
/// 0.94-1.02x in the runs, hence 16 for them.
template <class T>
inline constexpr int gemm_packed_requesting_last_order = sizeof(T) >= 8 ? 16 : 20;
inline constexpr int gemm_packed_requesting_first_order = 7;

template <class T, class AV, class BV, class CV>
struct GemmBlocks {
  Op transA, transB;
  T alpha, beta;
  AV A;
  BV B;
  CV C;
  // The operands together are larger than the last-level cache
  // (batch_exceeds_last_level_cache) and this host reads such blocks in
  // order (gemm_reads_blocks_in_order_from_memory): see
  // gemm_load_in_order_order.
  bool from_memory;
  // Blocks of one page are read in order before the tiles
  // (gemm_touches_pages_in_order).
  bool touches_pages_in_order;
  // The operands together are larger than the last-level cache: the
  // runtime-order tiles then request the next block a line each k step
  // (gemm_grid_requests_each_k_step).
  bool exceeds_last_level_cache = false;
  // Square orders past the single tile up to gemm_unrequested_order request
  // nothing ahead (gemm_leaves_orders_past_single_tile_unrequested).
  bool unrequested_past_single_tile = false;
  // Blocks of gemm_block_into_l1_order are requested into L1 before their
  // tiles (gemm_requests_blocks_into_l1).
  bool requests_blocks_into_l1 = false;
  template <class Member, class Lanes>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, index_t first, Lanes lanes) const {
    // A block of square matrices computed as one tile (gemm_single_tile_order)
    // is read front to back, which the hardware prefetcher follows by
    // itself; the software prefetch of the whole next block, issued at once
    // before the tile, cost n = 5 (L = 8 doubles) 7% flushed (15.7 against
    // 16.9 GFLOP/s) and 22% warm (40.1 against 51.5).
    // The same holds up to gemm_unrequested_order where
    // unrequested_past_single_tile. Such blocks request nothing of the
    // blocks ahead.
    constexpr int L = fixed_lanes<Lanes>::value;
    const size_t n  = C.extent(1);
    // The largest square order that requests nothing ahead.
    const size_t unrequested_order = size_t(
        unrequested_past_single_tile ? gemm_unrequested_order<T, L> : gemm_single_tile_order<T, L>);
    const bool requests_nothing_ahead =
        (n <= 4 && C.extent(2) <= 4) ||
        (n <= unrequested_order && C.extent(2) == n && A.extent(1) == n && A.extent(2) == n);
    const auto a = lane_block(A, first, lanes);
    const auto b = lane_block(B, first, lanes);
    const auto c = lane_block(C, first, lanes);
    // m, n and k: A is m x k or k x m, C m x n.
    constexpr int least     = gemm_load_in_order_order<T>;
    const bool in_order     = host_registers_per_value<T, max_lanes<Lanes>::value> == 1 &&
                          from_memory && c.rows >= least && c.cols >= least && a.rows >= least &&
                          a.cols >= least;
    BlockPrefetch prefetch;
    if (!requests_nothing_ahead && !in_order) {
      prefetch_next_block(prefetch, first, lanes, C.extent(0), A, B, C);
      prefetch.by_cursors = exceeds_last_level_cache;
    }
    if (requests_blocks_into_l1 && transA == Op::N && transB == Op::N &&
        n == size_t(gemm_block_into_l1_order) && C.extent(2) == n && A.extent(2) == n)
      request_whole_blocks_into_l1(a, b, c);
    if (in_order) {
      load_whole_blocks_in_order(a, b, c);
    } else if (gemm_tiles_read_a_in_order<T, decltype(a), decltype(b), decltype(c)>(transA, transB,
                                                                                   int(n))) {
      if (touches_pages_in_order) touch_in_order(b, c);
    } else if (touches_pages_in_order) {
      touch_in_order(a, b, c);
    }
    gemm_block(member, transA, transB, alpha, a, b, beta, c, prefetch);
  }
  /// Whether a block packed from the user's Views (PackedBlocks) requests
  /// their next block over its tiles (run_requesting): m, n and k within
  /// gemm_packed_requesting_first_order and _last_order.
  KOKKOS_INLINE_FUNCTION bool requests_next_packed_block() const {
    const size_t k = transA == Op::N ? A.extent(2) : A.extent(1);
    const auto within = [](const size_t order) {
      return order >= size_t(gemm_packed_requesting_first_order) &&
             order <= size_t(gemm_packed_requesting_last_order<T>);
    };
    return within(C.extent(1)) && within(C.extent(2)) && within(k);
  }
  /// The block at first with `next` as its plan of the blocks ahead, in
  /// place of its own (prefetch_next_block): a packed block, whose next
  /// block is in the user's Views. Packed blocks are in cache, so nothing
  /// else reads ahead (from_memory, touches_pages_in_order are false).
  template <class Member, class Lanes>
  KOKKOS_INLINE_FUNCTION void run_requesting(const Member& member, index_t first, Lanes lanes,
                                             BlockPrefetch& next) const {
    gemm_block(member, transA, transB, alpha, lane_block(A, first, lanes),
               lane_block(B, first, lanes), beta, lane_block(C, first, lanes), next);
  }
};
}  // namespace impl

namespace impl {

/// A device GEMM whose teams each take S matrices and give every thread one
/// MR x NR tile of C of one matrix at a time (team rank: the tile, vector
/// thread: the matrix), at most MaxThreads threads a team, requesting the
/// operands PrefetchDistance steps of k ahead into L2 (0: no requests; see
/// gemm_tile_lane_clamped).
template <int MR_, int NR_, int S_, int MaxThreads_, int PrefetchDistance_ = 0>
struct GemmTeamTilesShape {
  static constexpr int MR = MR_, NR = NR_, S = S_, MaxThreads = MaxThreads_;
  static constexpr int PrefetchDistance = PrefetchDistance_;
};

template <class Shape, bool ReadC, class T, class AV, class BV, class CV>
struct GemmTeamTiles {
  Op transA, transB;
  T alpha, beta;
  AV A;
  BV B;
  CV C;
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, const index_t first,
                                         const int count) const {
    constexpr int MR = Shape::MR, NR = Shape::NR;
    const auto a = apply_op(transA, lane_block(A, first, count));
    const auto b = apply_op(transB, lane_block(B, first, count));
    const auto c = lane_block(C, first, count);
    const int l = team_vector_lane(member, Shape::S);
    if (l >= count) return;  // no barrier below: idle lanes may leave
    const int row_tiles = (c.rows + MR - 1) / MR;
    const int tiles     = row_tiles * ((c.cols + NR - 1) / NR);
    // Neighbouring team ranks take the tiles of one column of tiles: they
    // read the same columns of B, and each of A's columns at about the same
    // time, so the team's second reads of an operand hit the SM's L1.
    for (int t = member.team_rank(); t < tiles; t += member.team_size())
      gemm_tile_lane_clamped<MR, NR, ReadC, Shape::PrefetchDistance>(
          (t % row_tiles) * MR, (t / row_tiles) * NR, alpha, a, b, beta, c, l, member.team_rank(),
          member.team_size());
  }
};

/// Runs C = alpha op(A) op(B) + beta C (alpha != 0, k > 0) as GemmTeamTiles
/// of the given shape.
template <class Shape, class ExecSpace, class T, class AV, class BV, class CV>
void gemm_team_tiles(const ExecSpace& exec, Op transA, Op transB, const T alpha, const AV& A,
                     const BV& B, const T beta, const CV& C) {
  const int m = int(C.extent(1)), n = int(C.extent(2));
  const int tiles = ((m + Shape::MR - 1) / Shape::MR) * ((n + Shape::NR - 1) / Shape::NR);
  const int most  = Shape::MaxThreads / Shape::S;
  const int ranks = tiles < most ? tiles : most;
  auto launch = [&](auto read_c) {
    detail::for_each_lane_group<Shape::S, Shape::MaxThreads>(
        exec, "ibla::gemm(team tiles)", index_t(C.extent(0)), ranks, 0,
        GemmTeamTiles<Shape, decltype(read_c)::value, T, AV, BV, CV>{transA, transB, alpha, beta,
                                                                    A, B, C});
  };
  if (beta == T(0)) {
    launch(std::false_type{});
  } else {
    launch(std::true_type{});
  }
}

/// The device GEMMs that run as GemmTeamTiles: both extents of C from this
/// order up. One thread per matrix (gemm_tiles) runs its tiles one after
/// another and re-reads A for every column of tiles; at these orders a
/// warp's block outgrows L1, and with the whole batch in flight the re-reads
/// come from DRAM. A team that computes a matrix's tiles side by side reads
/// each column of A about once. Measured on an H200 (scratch driver, batch
/// 100,000 in LayoutBlockInterleaved<32>, NN, beta 0.5, L2 overwritten
/// before each of 9 calls, median, GFLOP/s; every shape gave the same bits
/// as one thread per matrix), one thread per matrix -> the shape chosen
/// below (cublas<t>gemmStridedBatched in the same run): double n = 12 1050
/// -> 1401, 16 1239 -> 1943 (1743), 20 1319 -> 1569 (2677), 24 1385 -> 2286
/// (4576), 32 1490 -> 2476 (8049); float n = 12 1580 -> 1724, 16 1906 ->
/// 2683 (2574), 20 2106 -> 3100 (4377), 24 2241 -> 2908 (7271), 32 2470 ->
/// 4100 (13169).
inline constexpr int gemm_team_tiles_order = 12;

/// Calls f(Shape{}) with the GemmTeamTiles shape for an m x n C of T and
/// returns true, or returns false where one thread per matrix is used (small
/// orders; a block-interleaved L that S does not divide). The shapes are
/// the fastest of 3 to 6 tried per order in the run above (tiles of 4 x 4 to
/// 8 x 8, S = 8, 16 or 32 matrices a team), taken for the orders around it;
/// from n = 16 in double and n = 14 in float, those of a second sweep with
/// the L2 requests (PrefetchDistance; an H200, the same protocol, every shape
/// the same bits, 2026-11-27). Without them a thread waits on its loads at
/// every step of k. Double, every order 16..32, 10 shapes: 4 x 4, S = 16,
/// 1024 threads, distance 4 was the fastest or within 4% of it (distance 2
/// 2-7% slower, 8 within 2%; the same shape without requests 0.60-0.73 of
/// it). Against the shapes before, in the same run: n = 16 1933 -> 2619
/// GFLOP/s (cuBLAS 1795), 17 1477 -> 1939, 18 1713 -> 2205, 20 1586 -> 2721
/// (2847), 24 2288 -> 2310 (4570), 28 1877 -> 2702 (6349), 32 2478 -> 3336
/// (8103). Float at n = 16, 20, .., 32 (3 shapes): the requests slowed every
/// shape at n >= 20, and sped up 4 x 4, S = 32, 1024 threads at n = 16
/// (3153 -> 3360; the shape before 2491). Without them that shape ran n = 20
/// 3108 (before 3105), 24 2899 (2940), 28 3677 (2648), 32 4401 (4144).
template <class T, int BlockLanes, class F>
bool with_gemm_team_tiles_shape(const index_t m, const index_t n, const F& f) {
  if (m < gemm_team_tiles_order || n < gemm_team_tiles_order) return false;
  const index_t order = m > n ? m : n;
  auto run = [&](auto shape) {
    if (!detail::lane_groups_fit(decltype(shape)::S, BlockLanes)) return false;
    f(shape);
    return true;
  };
  if constexpr (sizeof(T) >= 8) {
    if (order <= 13) return run(GemmTeamTilesShape<6, 6, 16, 256>{});
    if (order <= 15) return run(GemmTeamTilesShape<4, 4, 32, 512>{});
    return run(GemmTeamTilesShape<4, 4, 16, 1024, 4>{});
  } else {
    if (order <= 13) return run(GemmTeamTilesShape<6, 6, 16, 256>{});
    if (detail::lane_groups_fit(32, BlockLanes)) {
      if (order <= 18) return run(GemmTeamTilesShape<4, 4, 32, 1024, 4>{});
      return run(GemmTeamTilesShape<4, 4, 32, 1024>{});
    }
    // Blocks of 16 lanes: the same tiles, 16 matrices a team (same run:
    // 2699, 2780, 2576, 3330, 4129 GFLOP/s at n = 16, 20, .., 32).
    return run(GemmTeamTilesShape<4, 4, 16, 1024>{});
  }
}

/// Square orders from this one to gemm_matrix_rows_last_order of GEMM on
/// host Views whose matrices lie one after another (LayoutRight,
/// LayoutStride) run a matrix at a time (gemm_matrix_rows) instead of
/// packing blocks of L matrices into block-interleaved scratch: C's
/// unit-stride dimension (its columns where the matrices are column-major,
/// its rows where they are row-major) is long enough from here to be the
/// SIMD vector, and each matrix is then read once, from the user's storage,
/// while the packs read it into scratch before the kernel and wrote C back
/// after it, about a pass over memory with no arithmetic to overlap (the
/// packs alone were 9.9 of the 15.7 ms of n = 32, see
/// gemm_packed_requesting_last_order). Measured on an Intel Xeon VM (family
/// 6 model 167, AVX-512, 2 threads; perf_tests/RESULTS.md, 2026-12-06): a
/// prototype of this form outside the repo against LIBXSMM's JIT kernels on
/// the same column-major matrices (10^4 doubles, alpha 1.5, beta 0.5,
/// flushed / warm, GFLOP/s) n = 8 19-21 / 38 against 19.6 / 37, 10 22.5
/// / 43 against 20.5 / 41, 12 28 / 54 against 24 /
/// 47, 16 37 / 65 against 29 / 49, 20 45 / 54 against 33 / 36, 24 53 / 54
/// against 37 / 37, 32 68 / 64 against 44 / 42. This form (with the parts
/// of gemm_matrix_rows_part_lanes) against the packed blocks (micro-driver:
/// ibla::gemm NN on such Views in a LayoutStride View, 10^4 doubles, C
/// restored, medians of 11 calls, the two builds in one run, microseconds,
/// the same sums), flushed: n = 10 1081 -> 954, 11 1385 -> 1218, 12 1622
/// -> 1347, 13 2172 -> 1763, 16 3387 -> 2448, 18 5062 -> 3423, 20 5970 ->
/// 4124, 24 8967 -> 5551, 27 12699 -> 10269, 31 17038 -> 15051, 32 18492
/// -> 10411; warm 0.97x at 11, 1.04x at 13, 1.19-1.95x at the others;
/// with the form from 8 (2 runs), n = 8 flushed 632-686 -> 560-640, warm
/// 362-370 -> 293-296, 9 flushed 822-1136 -> 735-810, warm 525-532 ->
/// 423-424. Below 8 a column is less than a vector: gemm_small_matrix
/// takes those orders. The main benchmark's cells: perf_tests/RESULTS.md
/// (seventeenth session).
inline constexpr int gemm_matrix_rows_first_order = 8;
inline constexpr int gemm_matrix_rows_last_order  = 32;

/// Whether gemm_matrix_rows takes the square order n of T: doubles every
/// order from gemm_matrix_rows_first_order to the last; floats from 16
/// where at most 5 rows are left past the column's last whole vector of 16,
/// or 8 (16..21, 24 and 32). Against the packed blocks (micro-driver:
/// ibla::gemm NN, alpha 1.5, beta 0.5 on column-major matrices one after
/// another in a LayoutStride View, 10^4 problems, C restored, 2 threads,
/// medians of 11 calls, flushed / warm, with the parts of
/// gemm_matrix_rows_part_lanes): floats n = 16 1.52x / 1.99x, 17 1.33x /
/// 1.39x, 18 1.33x / 1.34x, 20 1.24x / 1.32x, 24 1.37x / 1.58x, 32 1.72x
/// / 1.69x (19 and 21, one lane loop a column: 1.21x and 1.16x flushed),
/// but 10..14 0.64-0.85x warm, 22, 23, 26, 28 0.83-0.97x and 27, 31
/// 0.52-0.59x; doubles 1.02-1.75x flushed at every order from 8.
template <class T>
constexpr bool gemm_matrix_rows_order(const index_t n) {
  if (n < gemm_matrix_rows_first_order || n > gemm_matrix_rows_last_order) return false;
  return sizeof(T) >= 8 || (n >= 16 && (n % 16 <= 5 || n % 16 == 8));
}

/// Whether this host compiles gemm_matrix_rows: 64-byte vectors and 32 of
/// them (AVX-512), where it was measured; elsewhere such Views are packed
/// as before.
inline constexpr bool gemm_has_matrix_rows =
    !IBLA_IMPL_DEVICE_PASS && host_simd_bytes >= 64 && host_has_wide_register_file;

/// Columns of C a tile of gemm_matrix_rows of order N: as many as keep the
/// largest tile's accumulators (the whole vectors of a column, N *
/// sizeof(T) / host_simd_bytes) within 24 vector registers, at most 6.
/// Measured at 16, 24, 32 (doubles; the prototype above): 6 columns
/// against 4, flushed 1.04x, 1.06x, 1.11x.
template <class T, int N>
inline constexpr int gemm_matrix_rows_tile_cols = [] {
  constexpr int vectors = N * int(sizeof(T)) / host_simd_bytes;
  constexpr int fit     = 24 / (vectors > 1 ? vectors : 1);
  return fit > 6 ? 6 : fit;
}();

/// Rows [First, N) of a tile column of gemm_matrix_rows (C's columns j0 ..
/// j0 + NR - 1): as many rows of Lanes lanes as fit, one tile, then the
/// rest in halves (Lanes / 2, ...), a tile each, so that every lane loop
/// is one whole vector (or half, quarter of one) of a compile-time length.
/// A lane loop as long as a whole column (12 rows of doubles: 8 + 4) ended
/// in GCC's epilogues, which kept the tile's accumulators on the stack
/// (perf: most of the time in their stores and reloads, and in scalar FMAs).
template <int N, int NR, bool ReadC, int First, int Lanes, class T, class BA, class BB, class BC,
          class EachStep>
KOKKOS_FORCEINLINE_FUNCTION void gemm_matrix_rows_parts(const int j0, const T alpha, const BA& A,
                                                        const BB& B, const T beta, const BC& C,
                                                        EachStep& each_step) {
  if constexpr (First < N && Lanes >= 1) {
    constexpr int groups = (N - First) / Lanes;
    if constexpr (groups > 0) {
      const detail::HostSoloMember member;
      gemm_tile<groups, NR, ReadC>(member, 0, j0, std::integral_constant<int, N>{}, alpha,
                                   rows_as_lanes<Lanes>(A, First, groups),
                                   broadcast_lanes<Lanes>(B), beta,
                                   rows_as_lanes<Lanes>(C, First, groups), each_step);
    }
    gemm_matrix_rows_parts<N, NR, ReadC, First + groups * Lanes, Lanes / 2>(j0, alpha, A, B, beta,
                                                                           C, each_step);
  }
}

/// The lanes of the first parts gemm_matrix_rows_parts cuts a column of
/// order N into: a whole vector of T where the rows past the column's last
/// whole vector are none or one part (a power of two), else N (the column
/// one lane loop). Where that rest takes two parts or more (N = 11, 13, 23,
/// 27, 31 doubles: 8 + 2 + 1, 8 + 4 + 1, ...) the tiles of the small parts,
/// each reloading B's broadcasts, cost more than the epilogues they saved
/// (micro-driver of gemm_matrix_rows_first_order, one run flushed / warm,
/// the whole column -> parts: n = 13 0.96x / 0.83x, 27 0.94x / 0.94x, 31
/// 0.88x / 0.91x; n = 14 1.09x / 1.45x), while one part or none gained: n
/// = 10 1.07x / 0.91x, 12 1.04x / 1.15x, 16 1.00x / 1.18x, 18 1.21x /
/// 1.43x, 20 0.94x / 1.02x, 24 1.16x / 1.32x, 28 0.95x / 1.00x, 32 1.01x /
/// 1.03x.
template <class T, int N>
inline constexpr int gemm_matrix_rows_part_lanes = [] {
  constexpr int vector = host_simd_bytes / int(sizeof(T));
  constexpr int rest   = N % vector;
  return (rest & (rest - 1)) == 0 ? vector : N;
}();

/// Whether GemmMatrixRows of order N runs dense matrices (column stride N,
/// or row stride N where it computes C^T) with their strides as
/// compile-time constants (with_fixed_strides): orders whose column is cut
/// into parts (gemm_matrix_rows_part_lanes) and takes at most two whole
/// vectors. With runtime strides GCC kept the broadcasts' column addresses
/// on the stack and the next-matrix cursors in memory (perf, n = 8: a
/// stack reload between the FMAs of every k step). Measured on an Intel
/// Xeon VM (family 6 model 167, AVX-512, 2 threads; micro-driver outside
/// the repo: ibla::gemm NN, alpha 1.5, beta 0.5 on column-major matrices
/// one after another in a LayoutStride View, 10^4 problems, C restored, 15
/// calls, medians, 2 runs, GFLOP/s flushed / warm, runtime -> compile-time
/// strides, the same sums): doubles n = 8 16.4-16.5 / 26.2-26.7 -> 18.7-19.2
/// / 36.7, 9 16.2-16.8 / 25.8-26.5 -> 20.2-20.4 / 37.7-39.5, 10 22.0 / 35.1-35.3
/// -> 22.6-23.5 / 38.9-43.2, 12 25.5-25.8 / 46.5-47.2 -> 28.4 / 53.1-55.5,
/// 16 35.9-36.5 / 56.8-61.2 -> 37.2-37.6 / 66.7-67.6, 18 33.4-34.2 /
/// 39.9-41.7 -> 37.5-38.4 / 44.9-45.3, 20 38.1-39.3 / 43.2-43.4 ->
/// 40.5-41.5 / 43.6-46.1; floats n = 16 72.4-74.1 / 135.4 -> 76.0-78.0 /
/// 144.9-147.3, 17 63.6-63.8 / 86.9-87.5 -> 72.0-72.9 / 113.0-120.3, 18
/// 62.6-64.2 / 91.6-93.9 -> 66.5-67.8 / 108.7-110.4, 20 70.3-70.9 / 101.5 ->
/// 79.4 / 123.5-123.7, 24 80.8-81.0 / 108.5-113.2 -> 85.5-86.8 /
/// 104.9-121.4, 32 119.3-123.0 / 125.8-129.5 -> 125.9-127.6 / 128.5-136.5.
/// Not where a column takes three or four whole vectors (doubles n = 24
/// 0.92-1.03x, 32 0.93-0.96x; 26 1.04-1.08x, 28 1.01-1.05x and once 1.40x)
/// nor where it is one lane loop (doubles n = 11 0.93-1.00x, 13
/// 0.85-0.95x, 14 0.90-0.99x, 22 0.91-0.99x, but 21 1.08-1.16x; floats 19
/// 0.92-1.01x, 21 1.13-1.26x).
template <class T, int N>
inline constexpr bool gemm_matrix_rows_fixed_strides =
    gemm_matrix_rows_part_lanes<T, N> == host_simd_bytes / int(sizeof(T)) &&
    N / (host_simd_bytes / int(sizeof(T))) <= 2;

/// One matrix of order N: A, B and C are blocks of one lane (lane_block of
/// one matrix, op applied), A and C with unit row stride. Parts of C's
/// columns are the SIMD vectors: gemm_tile's vector form with the matrix's
/// rows as its lanes (rows_as_lanes) and B's elements broadcast over them
/// (broadcast_lanes), tiles of gemm_matrix_rows_tile_cols columns and of
/// the rows gemm_matrix_rows_parts cuts. Every element gets the same
/// operations in the same order as in the blocks of L matrices (k
/// increasing, fused, then alpha and beta), so the same bits. each_step()
/// runs before every k step of the tiles.
template <int N, bool ReadC, class T, class BA, class BB, class BC, class EachStep>
KOKKOS_FORCEINLINE_FUNCTION void gemm_matrix_rows(const T alpha, const BA& A, const BB& B,
                                                  const T beta, const BC& C,
                                                  EachStep& each_step) {
  constexpr int NR    = gemm_matrix_rows_tile_cols<T, N>;
  constexpr int full  = N / NR * NR;
  constexpr int Lanes = gemm_matrix_rows_part_lanes<T, N>;
  for (int j0 = 0; j0 < full; j0 += NR)
    gemm_matrix_rows_parts<N, NR, ReadC, 0, Lanes>(j0, alpha, A, B, beta, C, each_step);
  if constexpr (full < N)
    gemm_matrix_rows_parts<N, N - full, ReadC, 0, Lanes>(full, alpha, A, B, beta, C, each_step);
}

/// gemm_matrix_rows over a batch, a matrix per index. Where C's columns are
/// contiguous (row-major matrices) it computes C^T = op(B)^T op(A)^T, whose
/// columns are C's rows (the products are the same, fused in the same
/// order: the same bits). With requests, each matrix requests the next
/// one's A, B and C over its k steps (a line of each a step, as the blocks
/// of block-interleaved Views do, gemm_requests_every_k_step): the
/// prototype of gemm_matrix_rows_first_order without them ran flushed n =
/// 16 at 30.5 against 36-37 GFLOP/s, 32 at 47-51 against 61-68.
template <int N, class T, class AV, class BV, class CV>
struct GemmMatrixRows {
  Op transA, transB;
  T alpha, beta;
  AV A;
  BV B;
  CV C;
  bool transposed_c;
  bool requests;
  index_t batch;
  KOKKOS_INLINE_FUNCTION void operator()(const index_t m) const {
#if !IBLA_IMPL_DEVICE_PASS
    const auto a = apply_op(transA, lane_block(A, m, lanes_c<1>{}));
    const auto b = apply_op(transB, lane_block(B, m, lanes_c<1>{}));
    const auto c = runtime_strides(lane_block(C, m, lanes_c<1>{}));
    // A line of each of the next matrix's operands a k step, from the
    // lines holding their first elements, for as many steps as an operand
    // reaches into lines (one more where it starts inside a line): a copy
    // of each range's next line in a register (BlockPrefetch::LineCursor)
    // and one count. BlockPrefetch's plan() and step(), which read and
    // write the ranges in memory every step, took the form to 0.9x of this
    // one's speed at n = 20 and 32 (flushed, 10^4 doubles, 2 runs).
    constexpr index_t bytes = index_t(N) * N * index_t(sizeof(T));
    constexpr int lines     = int((bytes + BlockPrefetch::line - 1) / BlockPrefetch::line) + 1;
    constexpr int NR        = gemm_matrix_rows_tile_cols<T, N>;
    static_assert(lines <= N * ((N + NR - 1) / NR),
                  "gemm_matrix_rows: a line of each operand a k step covers the next matrix");
    const auto line_of = [](const auto* p) {
      return BlockPrefetch::line_of(reinterpret_cast<const char*>(p));
    };
    const bool next = requests && m + 1 < batch;
    BlockPrefetch::LineCursor<1> next_a{next ? line_of(&A(m + 1, 0, 0)) : nullptr, {}};
    BlockPrefetch::LineCursor<1> next_b{next ? line_of(&B(m + 1, 0, 0)) : nullptr, {}};
    BlockPrefetch::LineCursor<1> next_c{next ? line_of(&C(m + 1, 0, 0)) : nullptr, {}};
    int left       = next ? lines : 0;
    auto each_step = [&]() IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
      if (left > 0) {
        --left;
        next_a();
        next_b();
        next_c();
      }
    };
    const auto run = [&](const auto& x, const auto& y, const auto& z) {
      if (beta != T(0)) gemm_matrix_rows<N, true>(alpha, x, y, beta, z, each_step);
      else gemm_matrix_rows<N, false>(alpha, x, y, beta, z, each_step);
    };
    // Inlined, so that the cursors and the count stay in registers; run,
    // the runtime-stride form, stays the call it was when it was measured
    // (the orders it keeps lost with compile-time strides).
    const auto run_dense_or = [&](const auto& x, const auto& y,
                                  const auto& z) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
      if constexpr (gemm_matrix_rows_fixed_strides<T, N>) {
        const auto dense = [](const auto& m) { return m.rs == 1 && m.cs == N; };
        if (dense(x) && dense(y) && dense(z)) {
          const auto fx = with_fixed_strides<1, N>(x);
          const auto fy = with_fixed_strides<1, N>(y);
          const auto fz = with_fixed_strides<1, N>(z);
          if (beta != T(0)) gemm_matrix_rows<N, true>(alpha, fx, fy, beta, fz, each_step);
          else gemm_matrix_rows<N, false>(alpha, fx, fy, beta, fz, each_step);
          return;
        }
      }
      run(x, y, z);
    };
    if (transposed_c) run_dense_or(transposed(b), transposed(a), transposed(c));
    else run_dense_or(a, b, c);
#else
    (void)m;
#endif
  }
};

/// Square orders below gemm_matrix_rows_first_order of GEMM on dense
/// matrices one after another (column-major, or row-major computed as C^T)
/// run a matrix at a time by gemm_small_matrix, neither packed nor tiled:
/// measured against both, and against LIBXSMM's JIT kernel called as
/// ibla_bench calls it, on an Intel Xeon VM (family 6 model 167, AVX-512;
/// micro-driver outside the repo with ibla_bench's protocol: 10^4
/// column-major doubles, alpha 1.5, beta 0.5, A, B and C restored by a
/// parallel copy, warm with an untimed call first, 2 threads, medians of
/// 15, the three in turn, the same sums; us, packed / this form / LIBXSMM)
/// warm: n = 2 30.9 / 7.5 / 36.0, 3 57.0 / 24.8 / 53.3, 4 69.7 / 42.0 /
/// 55.3, 5 128.8 / 94.6 / 128.1, 6 182.1 / 146.0 / 146.7, 7 248.7 / 201.7
/// / 200.9 (8: 271 / 268 / 265, where gemm_matrix_rows takes over);
/// flushed: n = 2 43.5 / 28.8 / 56.6, 3 69.1 / 63.7 / 95.0, 4 134.8 / 95.7
/// / 117.8, 5 199.7 / 154.1 / 166.7, 6 294.7 / 218.3 / 233.2, 7 385.1 /
/// 334.0 / 341.2. The packs spend a pass through L1 of shuffles with no
/// arithmetic to overlap; here a column of A is one (masked) vector load,
/// B's elements broadcasts, and the compile-time order leaves no loop.
/// Floats (gemm_matrix_rows_order takes them from 16) up to order 12: the
/// same driver in float, this form's kernel in a plain OpenMP loop against
/// the packs, flushed / warm, n = 8 1.53x / 1.64x (and LIBXSMM's 256.6 /
/// 134.4 us against its 212.1 / 128.6), 9 1.45x / 1.65x, 10 1.26x /
/// 1.30x, 11 1.10x / 0.99x, 12 1.20x / 1.20x, but 13 1.13x / 0.94x and
/// 14 1.03x / 0.74x.
/// Doubles n = 8, 9 and 11 too (dense matrices; padded ones keep
/// gemm_matrix_rows): on AVX-512 Zen 5 (micro-driver outside the repo:
/// ibla::gemm NN, alpha 1.5, beta 0.5 on 10^4 LayoutRight doubles, 2
/// threads, gemm_matrix_rows, this form and LIBXSMM's JIT kernel as
/// ibla_bench calls it, in turn on the same Views, medians of 201 calls
/// in cache and 61-101 flushed with clflushopt, 2 runs, us): in cache n =
/// 8 185 / 182 -> 102 / 100 (LIBXSMM 94 / 94), 9 367 / 372 -> 260 / 268
/// (210 / 215), 11 995 / 939 -> 789 / 714 (614 / 509); flushed n = 8 292 /
/// 334 -> 300 / 347, 9 407 / 410 -> 393 / 407, 11 897 / 1035 -> 663 /
/// 1001. Not n = 10 (in cache 448 / 477 -> 531 / 510, flushed 502 / 509
/// -> 635 / 633) nor 12 and 16 (0.56-0.84x). gemm_matrix_rows' tiles of 6
/// columns reload A's columns for each tile and request the next matrix
/// over the k steps; here A's columns are loaded once and nothing is
/// requested. On the Intel Xeon above, n = 8 ran at the same speed either
/// way (268 against 265 us for LIBXSMM, and the prototype of
/// gemm_matrix_rows at LIBXSMM's speed).
template <class T>
constexpr bool gemm_small_matrix_order(const index_t n) {
  if (sizeof(T) < 8) return n >= 1 && n <= 12;
  return (n >= 1 && n < gemm_matrix_rows_first_order) || n == 8 || n == 9 || n == 11;
}

/// The largest order gemm_small_matrix_order takes (up to
/// gemm_matrix_rows_last_order), derived from it so that the two cannot
/// disagree.
template <class T>
inline constexpr int gemm_small_matrix_last_order = [] {
  int last = 0;
  for (int n = 1; n <= gemm_matrix_rows_last_order; ++n)
    if (gemm_small_matrix_order<T>(n)) last = n;
  return last;
}();

/// One N x N matrix, C = alpha A B + beta C (ReadC: beta nonzero), A and C
/// with unit row stride: every column of C accumulated over k as a vector
/// of A's column times B's element broadcast, then scaled; the same
/// operations in the same order on every element as gemm_tile (k
/// increasing, fused, then alpha and beta): the same bits.
template <int N, bool ReadC, class T, class BA, class BB, class BC>
KOKKOS_FORCEINLINE_FUNCTION void gemm_small_matrix(const T alpha, const BA& A, const BB& B,
                                                   const T beta, const BC& C) {
  T acc[N][N];
  IBLA_IMPL_UNROLL
  for (int j = 0; j < N; ++j)
#pragma omp simd
    for (int i = 0; i < N; ++i) acc[j][i] = T(0);
  IBLA_IMPL_UNROLL
  for (int p = 0; p < N; ++p)
    IBLA_IMPL_UNROLL
    for (int j = 0; j < N; ++j) {
      const T b = B(p, j, 0);
#pragma omp simd
      for (int i = 0; i < N; ++i) acc[j][i] = fused_mul_add(A(i, p, 0), b, acc[j][i]);
    }
  IBLA_IMPL_UNROLL
  for (int j = 0; j < N; ++j)
#pragma omp simd
    for (int i = 0; i < N; ++i) {
      T& out = C(i, j, 0);
      if constexpr (ReadC) {
        out = fused_mul_add(alpha, acc[j][i], beta * out);
      } else {
        out = alpha * acc[j][i];
      }
    }
}

#if !IBLA_IMPL_DEVICE_PASS && IBLA_IMPL_PACK_BY_TRANSPOSES
/// Whether gemm_small_matrix of order N takes its columns of T as one
/// 32-byte vector each (gemm_small_matrix_vector_columns): where a column
/// fills more than half of such a vector and not all of it (floats 5..7,
/// doubles 3) and the vector's masked loads and stores are single
/// instructions (AVX-512VL). GCC compiled those columns' element loops
/// into 16-byte vectors and scalar operations (order 7, floats: 467 xmm
/// FMAs and 62 scalar ones in GemmSmallMatrices' instance, no ymm one).
/// Measured on AVX-512 Zen 5 (micro-driver outside the repo: ibla::gemm
/// NN, alpha 1.5, beta 0.5 on 10^4 LayoutRight matrices, 2 threads, both
/// forms in turn on the same Views, medians of 201 calls in cache and 101
/// flushed with clflushopt, 2 runs, us, element loops -> vector columns):
/// floats n = 5 in cache 106 / 95 -> 72 / 67, flushed 115 / 106 -> 101 /
/// 85; n = 6 186 / 159 -> 93 / 87, flushed 203 / 189 -> 142 / 145; n = 7
/// 341 / 285 -> 114 / 106, flushed 358 / 342 -> 175 / 246; doubles n = 3
/// in cache 54 / 53 -> 43 / 41, flushed 70 / 77 -> 67 / 79; 4 more runs,
/// the memory faster: doubles n = 3 in cache 44-50 -> 40-44, flushed
/// 57-61 -> 56-64, floats flushed n = 5 100-115 -> 92-123, 6 144-161 ->
/// 128-162 (the same in cache either way, 0.93-1.14x). Not kept:
/// 64-byte vectors (doubles n = 5..7: flushed 1.26-1.69x slower, n = 5
/// 172 / 255 -> 217 / 343, 7 382 / 490 -> 537 / 828; floats n = 9..12:
/// 1.3-1.9x slower flushed, 12 529 / 519 -> 933 / 988), floats n = 3 (47
/// / 39 against 54 / 30 flushed), every load masked (floats n = 7 flushed
/// 302 / 414, against 175 / 246 with whole loads), and C read a column at
/// a time between the stores (1.4-3x slower at every order: each load
/// waited on the masked store before it to the same line).
template <class T, int N>
inline constexpr bool gemm_small_matrix_vector_columns = host_has_masked_32_byte_vectors &&
                                                          2 * N > 32 / int(sizeof(T)) &&
                                                          N < 32 / int(sizeof(T));

/// gemm_small_matrix with each column of A and C one 32-byte vector (see
/// gemm_small_matrix_vector_columns): the same fused operations in the same
/// order on every element, so the same bits. whole_loads: the lanes past a
/// column (the next column's, the next matrix's) may be read, A's and C's
/// columns are then whole-vector loads; else masked. Every C store is
/// masked, and C is read whole before the first store.
template <int N, bool ReadC, class T, class BA, class BB, class BC>
KOKKOS_FORCEINLINE_FUNCTION void gemm_small_matrix_vector_columns_form(const T alpha, const BA& A,
                                                                       const BB& B, const T beta,
                                                                       const BC& C,
                                                                       const bool whole_loads) {
  constexpr int W = 32 / int(sizeof(T));
  using V         = typename lane_vector<T, W>::type;
  const auto load = [&](const T* p) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
    V v;
    if (whole_loads) {
      std::memcpy(&v, p, sizeof(V));
    } else {
      v = load_first<T, W>(p, N);
    }
    return v;
  };
  V a[N], acc[N], out[N];
  IBLA_IMPL_UNROLL
  for (int p = 0; p < N; ++p) a[p] = load(&A(0, p, 0));
  IBLA_IMPL_UNROLL
  for (int j = 0; j < N; ++j) acc[j] = V{};
  IBLA_IMPL_UNROLL
  for (int p = 0; p < N; ++p)
    IBLA_IMPL_UNROLL
    for (int j = 0; j < N; ++j) acc[j] = vector_fused_mul_add(a[p], splat<V>(B(p, j, 0)), acc[j]);
  if constexpr (ReadC) {
    IBLA_IMPL_UNROLL
    for (int j = 0; j < N; ++j) out[j] = load(&C(0, j, 0));
  }
  IBLA_IMPL_UNROLL
  for (int j = 0; j < N; ++j) {
    if constexpr (ReadC) {
      out[j] = vector_fused_mul_add(splat<V>(alpha), acc[j], splat<V>(beta) * out[j]);
    } else {
      out[j] = splat<V>(alpha) * acc[j];
    }
  }
  IBLA_IMPL_UNROLL
  for (int j = 0; j < N; ++j) store_first<T, W>(&C(0, j, 0), out[j], N);
}
#else
template <class T, int N>
inline constexpr bool gemm_small_matrix_vector_columns = false;
#endif

/// Whether GemmSmallMatrices of order N requests into L1, as each matrix
/// starts, the matrix two after it (A, B and C whole, request_block_into_l1;
/// batches past prefetch_above_bytes): doubles whose matrix takes more than
/// 8 lines (orders 9 and 11; 10 runs gemm_matrix_rows). Measured on AVX-512
/// Zen 5 with the VM's memory in a slow state (the micro-driver of
/// gemm_small_matrix_order, the form with and without the requests and
/// LIBXSMM in turn, 10^4 LayoutRight doubles, 2 threads, medians of 201
/// calls in cache, 81 flushed, 2 runs, us, without -> with): n = 9 in cache
/// 375 / 332 -> 328 / 306, flushed 793 / 817 -> 568 / 501; n = 11 in cache
/// 1317 / 877 -> 913 / 778, flushed 1507 / 1171 -> 1004 / 914. Not at 8
/// and below, where they lost in cache: n = 8 (4 runs) 181 / 180 / 136 /
/// 136 -> 178 / 187 / 154 / 158, n = 6 126 -> 137, n = 4 31 -> 33,
/// though they gained flushed at 8 (457 / 463 / 382 / 431 -> 416 / 412 /
/// 366 / 388) and 6 (251 -> 207). One matrix ahead lost in cache at 8 too
/// (180 -> 195 / 200). Floats (up to order 12, 576 bytes a matrix) were
/// not measured.
template <class T, int N>
inline constexpr bool gemm_small_matrix_requests_ahead =
    sizeof(T) >= 8 && N * N * int(sizeof(T)) > 8 * int(BlockPrefetch::line);

/// gemm_small_matrix over a batch of dense matrices, their strides
/// compile-time constants (with_fixed_strides),
/// detail::small_matrices_per_index consecutive matrices an index; where C
/// is row-major it computes C^T =
/// op(B)^T op(A)^T (as GemmMatrixRows).
template <int N, class T, class AV, class BV, class CV>
struct GemmSmallMatrices {
  Op transA, transB;
  T alpha, beta;
  AV A;
  BV B;
  CV C;
  bool transposed_c;
  bool y_by_columns;  // the broadcast operand (op(B), or op(A)^T for C^T) column-major
  bool requests;      // past prefetch_above_bytes: see gemm_small_matrix_requests_ahead
  index_t batch;
  template <bool ReadC, int YRowStride, int YColStride>
  KOKKOS_FORCEINLINE_FUNCTION void run(const index_t first, const index_t end) const {
#if !IBLA_IMPL_DEVICE_PASS
    for (index_t m = first; m < end; ++m) {
      if constexpr (gemm_small_matrix_requests_ahead<T, N>) {
        if (requests && m + 2 < batch) {
          constexpr index_t bytes = index_t(N) * N * index_t(sizeof(T));
          request_block_into_l1<bytes>(&A(m + 2, 0, 0));
          request_block_into_l1<bytes>(&B(m + 2, 0, 0));
          request_block_into_l1<bytes>(&C(m + 2, 0, 0));
        }
      }
      const auto a = apply_op(transA, lane_block(A, m, lanes_c<1>{}));
      const auto b = apply_op(transB, lane_block(B, m, lanes_c<1>{}));
      const auto c = runtime_strides(lane_block(C, m, lanes_c<1>{}));
      const auto x = transposed_c ? transposed(b) : a;
      const auto y = transposed_c ? transposed(a) : b;
      const auto z = transposed_c ? transposed(c) : c;
      if constexpr (gemm_small_matrix_vector_columns<T, N>) {
        // A column of the matrix after m is there to be read past, in this
        // index's range (C's, read before this thread writes it).
        gemm_small_matrix_vector_columns_form<N, ReadC>(
            alpha, with_fixed_strides<1, N>(x), with_fixed_strides<YRowStride, YColStride>(y),
            beta, with_fixed_strides<1, N>(z), m + 1 < end);
      } else {
        gemm_small_matrix<N, ReadC>(alpha, with_fixed_strides<1, N>(x),
                                    with_fixed_strides<YRowStride, YColStride>(y), beta,
                                    with_fixed_strides<1, N>(z));
      }
    }
#else
    (void)first, (void)end;
#endif
  }
  KOKKOS_INLINE_FUNCTION void operator()(const index_t index) const {
    const auto [first, end] = detail::small_matrices_of_index(index, batch);
    // y's elements are broadcast one at a time: dense either way.
    if (beta != T(0)) {
      if (y_by_columns) run<true, 1, N>(first, end);
      else run<true, N, 1>(first, end);
    } else {
      if (y_by_columns) run<false, 1, N>(first, end);
      else run<false, N, 1>(first, end);
    }
  }
};

/// Runs GEMM on host Views whose matrices lie one after another with
/// gemm_small_matrix (the orders of gemm_small_matrix_order<T>, dense
/// matrices only) or gemm_matrix_rows and returns true, where it applies:
/// square orders 1 .. gemm_matrix_rows_last_order (compiled,
/// see IBLA_HOST_SPECIALISED_ORDERS), alpha nonzero (alpha = 0 reads
/// neither A nor B), and op(A) and C with the same unit-stride dimension
/// (column-major matrices, op(A) = A; row-major, op(B) = B); else false,
/// nothing done. Requests of the next matrix where the three are dense
/// matrices and larger together than prefetch_above_bytes.
template <class ExecSpace, class T, class AV, class BV, class CV>
bool gemm_matrix_rows_batch(const ExecSpace& exec, const Op transA, const Op transB,
                            const T alpha, const AV& A, const BV& B, const T beta, const CV& C) {
#if IBLA_IMPL_DEVICE_PASS
  // Host only (gemm_has_matrix_rows); matrices_contiguous is not compiled here.
  (void)exec, (void)transA, (void)transB, (void)alpha, (void)A, (void)B, (void)beta, (void)C;
  return false;
#else
  const index_t batch = index_t(C.extent(0));
  const index_t n     = index_t(C.extent(1));
  const index_t k     = index_t(transA == Op::N ? A.extent(2) : A.extent(1));
  const bool small_order = gemm_small_matrix_order<T>(n);
  const bool rows_order  = gemm_matrix_rows_order<T>(n);
  if (batch == 0 || alpha == T(0) || index_t(C.extent(2)) != n || k != n ||
      !(small_order || rows_order) || !detail::host_order_compiled(int(n)))
    return false;
  const auto a = apply_op(transA, lane_block(A, 0, lanes_c<1>{}));
  const auto b = apply_op(transB, lane_block(B, 0, lanes_c<1>{}));
  const auto c = lane_block(C, 0, lanes_c<1>{});
  const bool by_columns = c.rs == 1 && a.rs == 1;
  const bool by_rows    = c.cs == 1 && b.cs == 1;
  if (!by_columns && !by_rows) return false;
  // gemm_small_matrix: every matrix of a View has the strides of the first,
  // dense column-major op(A) and C (or, for C^T, dense row-major op(B) and
  // C), and op(B) (or op(A)) dense either way; else gemm_matrix_rows where
  // it takes the order, else the packs.
  const auto dense = [n](const auto& x) { return x.rs == 1 && x.cs == n; };
  const auto dense_either_way = [&](const auto& x) { return dense(x) || dense(transposed(x)); };
  const bool small = small_order && (by_columns ? dense(a) && dense_either_way(b) && dense(c)
                                                : dense(transposed(b)) && dense_either_way(a) &&
                                                      dense(transposed(c)));
  if (!small && !rows_order) return false;
  if (small) {
    const bool y_by_columns = (by_columns ? b : transposed(a)).rs == 1;
    const bool requests = prefetches_next_block<lanes_c<1>>(0, 1, size_t(batch), A, B, C);
    bool done = false;
    detail::host_static_switch<gemm_small_matrix_last_order<T>>(int(n), [&](auto order) {
      constexpr int N = decltype(order)::value;
      if constexpr (gemm_small_matrix_order<T>(N) && detail::host_order_specialised<N>) {
        Kokkos::parallel_for(
            "ibla::gemm",
            Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Static>,
                                Kokkos::IndexType<index_t>>(
                exec, 0,
                detail::small_matrices_indices(batch)),
            GemmSmallMatrices<N, T, AV, BV, CV>{transA, transB, alpha, beta, A, B, C, !by_columns,
                                                y_by_columns, requests, batch});
        done = true;
      }
    });
    return done;
  }
  bool by = true;  // by columns or by rows: either way one range of bytes a matrix
  const bool requests = matrices_contiguous(a, by) && matrices_contiguous(b, by) &&
                        matrices_contiguous(c, by) &&
                        prefetches_next_block<lanes_c<1>>(0, 1, size_t(batch), A, B, C);
  bool done = false;
  detail::host_static_switch<gemm_matrix_rows_last_order>(int(n), [&](auto order) {
    constexpr int N = decltype(order)::value;
    if constexpr (gemm_matrix_rows_order<T>(N) && detail::host_order_specialised<N>) {
      Kokkos::parallel_for(
          "ibla::gemm",
          Kokkos::RangePolicy<ExecSpace, Kokkos::Schedule<Kokkos::Static>,
                              Kokkos::IndexType<index_t>>(exec, 0, batch),
          GemmMatrixRows<N, T, AV, BV, CV>{transA, transB, alpha, beta, A, B, C, !by_columns,
                                           requests, batch});
      done = true;
    }
  });
  return done;
#endif
}

}  // namespace impl

/// Batched GEMM on rank-3 Views (batch, rows, cols) of any supported layout:
/// LayoutBlockInterleaved<L>, LayoutInterleaved, LayoutLeft, LayoutRight,
/// LayoutStride (on host packed into block-interleaved scratch, or a matrix
/// at a time, see gemm_matrix_rows_batch). op is Op::N or Op::T (Op::C means Op::T for real types).
/// beta == 0 means C is not read. Throws ibla::argument_error, touching no
/// data, when the arguments do not fit together.
template <class ExecSpace, class Scalar, class AV, class BV, class CV>
void gemm(const ExecSpace& exec, Op transA, Op transB, const Scalar alpha, const AV& A,
          const BV& B, const Scalar beta, const CV& C) {
  constexpr const char* routine = "gemm";
  detail::static_check_view<ExecSpace, AV>();
  detail::static_check_view<ExecSpace, BV>();
  detail::static_check_view<ExecSpace, CV>();
  detail::static_check_writable<CV>();
  static_assert(AV::rank == 3 && BV::rank == 3 && CV::rank == 3,
                "ibla::gemm: A, B and C are rank-3 Views (batch, rows, cols)");
  using T = typename CV::non_const_value_type;
  static_assert(std::is_same<typename AV::non_const_value_type, T>::value &&
                    std::is_same<typename BV::non_const_value_type, T>::value,
                "ibla::gemm: A, B and C must have the same value type");

  const index_t batch = index_t(C.extent(0));
  const index_t m = index_t(C.extent(1)), n = index_t(C.extent(2));
  detail::require_extent(routine, "A", 0, index_t(A.extent(0)), batch, "the batch count of C");
  detail::require_extent(routine, "B", 0, index_t(B.extent(0)), batch, "the batch count of C");
  const int a_rows = transA == Op::N ? 1 : 2, a_cols = 3 - a_rows;
  const int b_rows = transB == Op::N ? 1 : 2, b_cols = 3 - b_rows;
  detail::require_extent(routine, "A", a_rows, index_t(A.extent(a_rows)), m,
                         transA == Op::N ? "C.extent(1) (rows of C)"
                                         : "C.extent(1) (rows of C, A transposed)");
  const index_t k = index_t(A.extent(a_cols));
  detail::require_extent(routine, "B", b_rows, index_t(B.extent(b_rows)), k,
                         "the inner dimension k of op(A)");
  detail::require_extent(routine, "B", b_cols, index_t(B.extent(b_cols)), n,
                         "C.extent(2) (columns of C)");
  detail::require_allocated(routine, "A", A);
  detail::require_allocated(routine, "B", B);
  detail::require_allocated(routine, "C", C);
  detail::require_same_block_lanes(
      routine, {detail::named("A", A), detail::named("B", B), detail::named("C", C)});

  if constexpr (detail::block_lanes_agree<CV, AV, BV>()) {
    if (m == 0 || n == 0) return;
    constexpr int L = detail::choose_block_lanes<T, ExecSpace, CV, AV, BV>();
    if constexpr (!is_host_space_v<ExecSpace>) {
      // On device, a team per S matrices that splits each matrix's tiles among
      // its threads, for the orders where one thread per matrix re-reads its
      // operands from DRAM (see gemm_team_tiles_order).
      if (T(alpha) != T(0) && k > 0 &&
          impl::with_gemm_team_tiles_shape<T, L>(m, n, [&](auto shape) {
            impl::gemm_team_tiles<decltype(shape)>(exec, transA, transB, T(alpha), A, B, T(beta),
                                                   C);
          }))
        return;
    }
    if constexpr (is_host_space_v<ExecSpace> && impl::gemm_has_matrix_rows &&
                  lanes_apart_v<AV> && lanes_apart_v<BV> && lanes_apart_v<CV>) {
      if (impl::gemm_matrix_rows_batch(exec, transA, transB, T(alpha), A, B, T(beta), C)) return;
    }
    // Blocks packed into scratch (pack.hpp) are in cache: the choices made
    // for blocks read from the user's Views do not apply to them.
    const bool packs = detail::packs_blocks_v<ExecSpace, AV, BV, CV> &&
                       m * n > index_t(impl::gemm_unpacked_elements<T>());
    const bool exceeds_last_level_cache =
        is_host_space_v<ExecSpace> && !packs && impl::batch_exceeds_last_level_cache(A, B, C);
    const bool touches_pages_in_order =
        is_host_space_v<ExecSpace> && !packs && impl::gemm_touches_pages_in_order();
    const bool from_memory =
        exceeds_last_level_cache && impl::gemm_reads_blocks_in_order_from_memory();
    // Device blocks request nothing ahead (prefetch.hpp): their choice stays as it was.
    const bool unrequested_past_single_tile =
        !is_host_space_v<ExecSpace> || impl::gemm_leaves_orders_past_single_tile_unrequested();
    const bool requests_blocks_into_l1 =
        is_host_space_v<ExecSpace> && !packs && impl::gemm_requests_blocks_into_l1();
    const T alpha_t = T(alpha), beta_t = T(beta);
    detail::for_each_block_of<L>(
        exec, "ibla::gemm", batch, detail::problem_elements(A, B, C), packs,
        [=](const auto& a, const auto& b, const auto& c) {
          return impl::GemmBlocks<T, std::decay_t<decltype(a)>, std::decay_t<decltype(b)>,
                                  std::decay_t<decltype(c)>>{
              transA, transB, alpha_t, beta_t, a, b, c, from_memory, touches_pages_in_order,
              exceeds_last_level_cache, unrequested_past_single_tile, requests_blocks_into_l1};
        },
        impl::read_only(A), impl::read_only(B),
        beta_t != T(0) ? impl::read_written(C) : impl::written_only(C));
  }
}

}  // namespace ibla
