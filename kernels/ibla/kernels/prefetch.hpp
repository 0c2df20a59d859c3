// Software prefetch of the block a host thread computes next, for the
// batch-level kernels (GEMM, TRSM, and the factorizations past one pass).
//
// Within a block the kernels read a matrix a tile row at a time (GEMM NN,
// n = 32: 256 bytes out of every 2 KB of A per step; TRSM one triangle),
// which the hardware prefetcher does not follow, so a batch out of cache ran
// at a third of the memory bandwidth. The next block is contiguous in
// LayoutBlockInterleaved; its cache lines are requested a slice per tile,
// spread over the current block's work.
//
// Where a kernel reads one triangle of a square operand (TRSM's A, POTRF
// and POSV), only that triangle is requested, a run of lines per column: the
// whole block had doubled the lines read from memory for A at n = 32, and
// with one right-hand side, where A is nearly all the traffic, TRSM had lost
// more with the prefetch than it gained (blocks within
// prefetch_whole_triangle_bytes are still requested whole). Measured
// (double, 10^4 problems, 2 threads, ibla_bench, sets of 5-8 alternated
// runs, medians, GFLOP/s whole block -> triangle), flushed: POTRF n = 20 21.1 -> 31.2, 24 27.7 ->
// 34.5, 32 35.5 -> 41.5 (1.08-1.32x at n = 24, 32 in two more sets); POSV
// n = 12..32 1.06-1.30x; TRSM nrhs = 1, n = 5..32 1.03-1.43x (n > 8 had no
// prefetch before). Warm, n = 24 and 32: POTRF 1.07-1.35x, POSV 1.12-1.26x.
// POTRF and POSV at n = 5..10 moved 0.83-1.24x from set to set, around 1,
// and TRSM nrhs = n 0.87-1.22x, as GEMM (unchanged) moved 0.92-1.07x in
// the same runs.
#pragma once

#include <ibla/core/lanes.hpp>
#include <ibla/core/types.hpp>
#include <ibla/layouts/lane_block.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#include <cpuid.h>
#endif
#include <fstream>
#include <string>

namespace ibla {
namespace impl {

/// Batches smaller than this (all operands) stay in the private caches: on
/// data already in cache the prefetch instructions cost more than they save
/// (GEMM n = 8, 64 matrices: 18 -> 13 GFLOP/s measured). Larger batches
/// may be in the caches too, but neither a probe of a few of their lines
/// per call nor timing each thread's teams with and without the requests
/// chose well enough to keep (both lost flushed cells; perf_tests/RESULTS.md).
inline constexpr size_t prefetch_above_bytes = size_t(1) << 20;

/// A read prefetch of one line into the caches below L1 (where the compiler
/// has the builtin): prefetcht1. The lines into L1 as well (prefetcht0,
/// hint 3) were tried on two VMs and measured neutral on both: on Intel
/// Xeon TRSM within the spread, and on Zen 5, where the T1/T2 hints have
/// fetched into L2 only since Zen 4 (and have been seen dropped there), a
/// geometric mean of 0.995 over the 216 cells of 5 alternated
/// `ibla_bench --impls ibla` runs, with whole operations moving 0.8-1.15x
/// both ways (perf_tests/RESULTS.md, 2026-12-02).
struct PrefetchLine {
  KOKKOS_FORCEINLINE_FUNCTION void operator()(const char* p) const {
#if !IBLA_IMPL_DEVICE_PASS && (defined(__GNUC__) || defined(__clang__))
    __builtin_prefetch(p, 0, 2);
#else
    (void)p;
#endif
  }
};

/// A read prefetch of the line holding p into a GPU's L2 (PTX
/// prefetch.global.L2), for device kernels whose threads wait on global
/// loads with too few warps an SM to hide them (GemmTeamTiles). Nothing on
/// host or other devices.
KOKKOS_FORCEINLINE_FUNCTION void prefetch_line_to_l2(const void* p) {
#if defined(__CUDA_ARCH__)
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}

/// Blocks of at most this size are requested whole where a kernel reads one
/// triangle (add_triangle): a run per column cost more instructions than
/// the lines it saves. TRSM, one right-hand side, L = 4 doubles (callgrind,
/// 1 thread, 10^4 problems; instructions per block): n = 5 728 -> 624, 6
/// 811 -> 693, 8 1015 -> 870; its micro-driver (2 threads, 5 alternated
/// runs, medians, GFLOP/s) warm n = 5 2.2 -> 2.4, 6 2.8 -> 3.0, 8 3.4 ->
/// 4.0, flushed 2.2 -> 2.3, 2.8 -> 2.8, 3.0 -> 3.2.
inline constexpr index_t prefetch_whole_triangle_bytes = 2048;

struct BlockPrefetch {
  static constexpr int max_ranges = 3;
  static constexpr int line       = 64;
  // A range is `runs` runs of bytes, requested one after another: the
  // current run is [next, end); the run after it starts start_step bytes
  // after the current one's start (first) and ends end_step bytes after its
  // end. A contiguous block is one run; one triangle of a block-interleaved
  // matrix is a run per column (see add_triangle).
  // Only the first `ranges` entries are ever read, so only the count is
  // initialised: zeroing the arrays, a memset call for every block, was half
  // the time of a 2 x 2 GEMM (perf, L = 4 doubles, batch in L3).
  const char* next[max_ranges];   // next line to request
  const char* end[max_ranges];
  const char* first[max_ranges];  // start of the current run
  index_t start_step[max_ranges];
  index_t end_step[max_ranges];
  index_t runs_left[max_ranges];  // runs after the current one
  index_t chunk[max_ranges];      // bytes requested per step
  // A chunk no range reaches: step() then requests the whole range.
  static constexpr index_t all_of_a_range = index_t(1) << 48;
  int ranges = 0;
  // The kernel requests the ranges at its own pace through cursors, not by
  // plan() and step(): TRSM's A and B a column at a time
  // (trsm_requests_next_columns), GEMM's runtime-order tiles A, B and C a
  // line each a k step where the batch is larger than the last-level cache
  // (gemm_grid_requests_each_k_step). Set by the batch-level kernel that
  // added the ranges.
  bool by_cursors = false;

  template <class Block>
  KOKKOS_FORCEINLINE_FUNCTION void add(const Block& b) {
    const index_t n = b.contiguous_size();
    if (n == 0 || ranges == max_ranges) return;
    add_runs(reinterpret_cast<const char*>(b.data), n * index_t(sizeof(*b.data)), 0, 0, 0);
  }
  /// The Uplo triangle of a square block (diagonal included), where the
  /// kernel reads only that one: a column's rows are contiguous in a
  /// contiguous block, so the triangle is a run per column, and the other
  /// triangle's lines are never requested.
  template <class Block>
  KOKKOS_FORCEINLINE_FUNCTION void add_triangle(const Block& b, const Uplo uplo) {
    if (b.contiguous_size() == 0 || ranges == max_ranges) return;
    if (b.contiguous_size() * index_t(sizeof(*b.data)) <= prefetch_whole_triangle_bytes) {
      add(b);
      return;
    }
    // In a contiguous block an element's lanes are `row` bytes, one after
    // another down a column.
    const index_t size = index_t(sizeof(*b.data));
    const index_t row  = index_t(b.ptr(1, 0) - b.ptr(0, 0)) * size;
    const index_t col  = index_t(b.ptr(0, 1) - b.ptr(0, 0)) * size;
    const char* origin = reinterpret_cast<const char*>(b.ptr(0, 0));
    const index_t more = index_t(b.cols) - 1;
    if (uplo == Uplo::Lower) {
      add_runs(origin, index_t(b.rows) * row, col + row, col, more);  // column j: rows j..n-1
    } else {
      add_runs(origin, row, col, col + row, more);  // column j: rows 0..j
    }
  }
  KOKKOS_FORCEINLINE_FUNCTION void add_runs(const char* start, index_t run_bytes,
                                            index_t start_by, index_t end_by, index_t more) {
    first[ranges]      = start;
    next[ranges]       = line_of(start);
    end[ranges]        = start + run_bytes;
    start_step[ranges] = start_by;
    end_step[ranges]   = end_by;
    runs_left[ranges]  = more;
    ++ranges;
  }
  /// The start of p's line: a run is requested from there, so that a run
  /// starting inside a line (elements narrower than a line) gets its last
  /// line too.
  KOKKOS_FORCEINLINE_FUNCTION static const char* line_of(const char* p) {
    return p - (reinterpret_cast<std::uintptr_t>(p) & std::uintptr_t(line - 1));
  }
  /// Spreads the lines over the `steps` calls of step() that follow: each
  /// range requests ceil(lines / steps) lines a step (at most one more), so
  /// all are requested within those steps, the last of them near the last
  /// step. One division a block (a fixed-point reciprocal of steps), not one
  /// a range: three integer divisions per block had been 15% of a 2 x 2
  /// GEMM's time. Rounding steps down to a power of two instead, as this
  /// did before, finished the requests early where the tiles are not a
  /// power of two: GEMM n = 20 (25 tiles, 4 x 4) had its next block
  /// requested in 16 of them. Measured against that (10^4 problems, double,
  /// 2 threads, the two compiled into one process and taking turns call by
  /// call, 21-31 rounds, medians of the per-round ratios, same checksums;
  /// Intel Xeon VM with AVX-512), flushed: GEMM L = 8 n = 18, 20, 26, 28
  /// 1.15x, 1.16x, 1.13x, 1.12x, L = 16 n = 10, 14, 20 1.19x, 1.17x,
  /// 1.16x, the other orders 0.98-1.06x (16 and 32, powers of two, the
  /// same plan; n = 9 0.92x once, 0.98x twice in 41 rounds); warm GEMM n =
  /// 20, 28 1.12x, 1.13x, L = 16 n = 10, 20 1.22x, 1.14x; TRSM, POTRF, POSV,
  /// GETRF and GESV 0.95-1.17x, around 1.
  KOKKOS_INLINE_FUNCTION void plan(const index_t steps) {
    if (ranges == 0) return;
    if (steps <= 1) {
      // All of every range in the one step, whatever its size: no estimate
      // of the ranges' bytes, whose multiplications GCC vectorised into a
      // long sequence. Callgrind, 1 thread, 10^4 problems, instructions a
      // block: TRSM one right-hand side, L = 4 doubles, n = 5, 6, 8 779 ->
      // 722, 880 -> 818, 1121 -> 1065; GETRF diagonally dominant, L = 8,
      // 750 -> 721, 1003 -> 975, 1643 -> 1613.
      for (int r = 0; r < ranges; ++r) chunk[r] = all_of_a_range;
      return;
    }
    // ceil(2^32 / steps): lines * per_step / 2^32, rounded up, is at least
    // lines / steps and less than lines / steps + 1 for lines below 2^32.
    constexpr int fraction_bits = 32;
    constexpr index_t one       = index_t(1) << fraction_bits;
    const index_t per_step      = (one + steps - 1) / steps;
    for (int r = 0; r < ranges; ++r) {
      // What is left of the current run, and the runs after it: each is
      // end_step - start_step bytes longer than the one before; a run is
      // requested in whole lines, so it may take up to a line more at
      // either end.
      const index_t after = runs_left[r];
      const index_t bytes = index_t(end[r] - next[r]) + line +
                            after * (index_t(end[r] - first[r]) + 2 * line) +
                            (end_step[r] - start_step[r]) * (after * (after + 1) / 2);
      const index_t lines = (bytes + line - 1) / line;
      chunk[r]            = ((lines * per_step + one - 1) >> fraction_bits) * line;
    }
  }
  /// Requests the next slice of every range: request(p) for the line at p
  /// (the prefetch instruction; the tests pass a recorder). A slice inside
  /// the range's current run is the whole work of most steps (a block added
  /// whole is one run), so only that is inline; moving on to the next runs
  /// of a triangle is step_into_next_runs.
  template <class Request = PrefetchLine>
  KOKKOS_FORCEINLINE_FUNCTION void step(const Request& request = Request{}) {
#if !IBLA_IMPL_DEVICE_PASS
    for (int r = 0; r < ranges; ++r) {
      const char* const from = next[r];
      const char* const stop = end[r] - from > chunk[r] ? from + chunk[r] : end[r];
      for (const char* p = from; p < stop; p += line) request(p);
      next[r] = stop;
      if (stop == end[r] && runs_left[r] > 0)
        step_into_next_runs(r, chunk[r] - whole_lines(stop - from), request);
    }
#else
    (void)request;
#endif
  }
  /// step() without plan() for ranges that are whole blocks (add) of
  /// Bytes bytes each, requested in Steps steps, of which this is step
  /// Step: every count is then a compile-time constant, so a step is its
  /// prefetch instructions at constant offsets from the blocks' first lines
  /// (step() and plan() were about 600 instructions a block for a GEMM of
  /// order 5, as many as its arithmetic). A block starting inside a line
  /// reaches into one more line than Bytes fill; only that last line is
  /// checked against the block's end.
  template <index_t Bytes, int Steps, int Step, class Request = PrefetchLine>
  KOKKOS_FORCEINLINE_FUNCTION void step_whole_blocks(const Request& request = Request{}) {
#if !IBLA_IMPL_DEVICE_PASS
    constexpr int full  = int((Bytes + line - 1) / line);  // lines every block reaches into
    constexpr int per   = (full + 1 + Steps - 1) / Steps;
    constexpr int begin = Step * per < full + 1 ? Step * per : full + 1;
    constexpr int stop  = begin + per < full + 1 ? begin + per : full + 1;
    IBLA_IMPL_UNROLL
    for (int r = 0; r < max_ranges; ++r) {
      if (r >= ranges) break;
      IBLA_IMPL_UNROLL
      for (int i = begin; i < stop; ++i) {
        const char* const p = next[r] + i * line;
        if (i < full || p < end[r]) request(p);
      }
    }
#else
    (void)request;
#endif
  }
  /// Range r's lines Lines at a time: each call requests the next Lines
  /// lines (request(p), as step()), from the range's first line, for
  /// kernels that spread a block's requests finer than step() does (GEMM's
  /// k steps, gemm_requests_every_k_step; TRSM's columns,
  /// trsm_requests_next_columns). A copy of the range's next line, so that
  /// in the kernel's loop it is a register, not the prefetch object's
  /// memory (a form that read the ranges from the object and tested every
  /// line against its range's end cost GEMM 3-12% in cache, TRSM 7-9%);
  /// so no test of the range's end either: the caller makes no more calls
  /// than the range has lines for. A range that is not there gives a
  /// cursor the caller must not call.
  template <int Lines, class Request = PrefetchLine>
  struct LineCursor {
    const char* next;
    Request request;
    KOKKOS_FORCEINLINE_FUNCTION void operator()() {
#if !IBLA_IMPL_DEVICE_PASS
      IBLA_IMPL_UNROLL
      for (int i = 0; i < Lines; ++i) request(next + i * line);
      next += Lines * line;
#endif
    }
    /// Lines [from, to) of the next Lines only, then past them all: the
    /// part of a column that a triangle holds (trsm_registers_fixed_order_host).
    KOKKOS_FORCEINLINE_FUNCTION void part(const int from, const int to) {
#if !IBLA_IMPL_DEVICE_PASS
      for (int i = from; i < to; ++i) request(next + i * line);
      next += Lines * line;
#else
      (void)from;
      (void)to;
#endif
    }
  };
  /// Whole lines of range r from its next one, where the range is one run
  /// (a contiguous block, add); 0 where it is not there or has more runs.
  KOKKOS_FORCEINLINE_FUNCTION index_t lines_of_one_run(const int r) const {
    return r < ranges && runs_left[r] == 0 ? whole_lines(end[r] - next[r]) / line : 0;
  }
  template <int Lines, class Request = PrefetchLine>
  KOKKOS_FORCEINLINE_FUNCTION LineCursor<Lines, Request> cursor(
      const int r, const Request& request = Request{}) const {
    return {r < ranges ? next[r] : nullptr, request};
  }
  /// Bytes of the whole lines that `bytes` (>= 0) from a line's start reach
  /// into: a run ends inside a line where elements are narrower. A mask,
  /// not a signed division with its sign fix-ups (TRSM of order 6, L = 4:
  /// 849 -> 811 instructions a block).
  KOKKOS_FORCEINLINE_FUNCTION static index_t whole_lines(const index_t bytes) {
    return (bytes + line - 1) & ~index_t(line - 1);
  }
  /// The rest of step() for range r once its current run is requested:
  /// the runs after it, `budget` bytes more of them.
  template <class Request>
  KOKKOS_INLINE_FUNCTION void step_into_next_runs(const int r, index_t budget,
                                                   const Request& request) {
    while (budget > 0 && runs_left[r] > 0) {
      --runs_left[r];
      first[r] += start_step[r];
      end[r] += end_step[r];
      next[r]                = line_of(first[r]);
      const char* const stop = end[r] - next[r] > budget ? next[r] + budget : end[r];
      for (const char* p = next[r]; p < stop; p += line) request(p);
      budget -= whole_lines(stop - next[r]);
      next[r] = stop;
      if (stop < end[r]) break;
    }
  }
};

/// Contiguous blocks of exactly this size, one 4 KB page, are read once in
/// address order before batch-level GEMM's tiles (touch_in_order): one load
/// a line, so that the hardware prefetcher sees the page front to back. The
/// tiles read it otherwise (A's rows and B's columns a tile at a time, then
/// C's tile), and a standalone driver streamed three operands of such
/// blocks from memory at 0.52-0.57x of reading them in order (41.6
/// against 73.6-80.5 GB/s), and at 1.38x with the loads in order first
/// (AMD EPYC Zen 5 VM, 2 threads, 12,500 blocks). Measured in ibla
/// (ibla_bench, GEMM NN, 2 threads, the tree and the change alternated,
/// 3-4 runs each, medians of the per-run ratios; Zen 5 only): n = 8 with L
/// = 8 doubles, 10^4 problems flushed 1.20x, 1.28x in two sets and warm
/// 1.06x, 1.07x; 10^5 problems 1.14x flushed and 1.24x warm (from memory
/// as well); floats with L = 16 (also 4 KB) flushed 1.32x, warm 0.99x.
/// Smaller blocks gained flushed and lost warm: n = 7 (3136 bytes) 1.17x
/// / 0.94x doubles, 1.15x / 0.87x floats; n = 2..6 up to 1.32x flushed,
/// 0.79-0.93x warm; so only the one size.
inline constexpr index_t touch_in_order_block_bytes = 4096;

/// line(p) for the start p of every line of each contiguous block, in
/// address order; nothing for blocks that are not contiguous. The walk of
/// load_whole_blocks_in_order and request_whole_blocks_into_l1 (host only).
template <class Line, class... Blocks>
KOKKOS_FORCEINLINE_FUNCTION void for_each_line_of_whole_blocks(const Line& line,
                                                               const Blocks&... blocks) {
  const auto one = [&](const auto& b) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
    const char* p       = reinterpret_cast<const char*>(b.data);
    const index_t bytes = b.contiguous_size() * index_t(sizeof(*b.data));
    for (index_t o = 0; o < bytes; o += BlockPrefetch::line) line(p + o);
  };
  (one(blocks), ...);
}

/// One load of every line of each contiguous block, in address order:
/// only the line's arrival matters, the loaded byte is discarded (a
/// volatile read, which the compiler keeps). For blocks read from memory,
/// where the hardware prefetcher then fetches the block with all the memory
/// parallelism it has (see touch_in_order, gemm_load_in_order_order).
/// Nothing for blocks that are not contiguous, and nothing on device.
template <class... Blocks>
KOKKOS_FORCEINLINE_FUNCTION void load_whole_blocks_in_order(const Blocks&... blocks) {
#if !IBLA_IMPL_DEVICE_PASS
  for_each_line_of_whole_blocks(
      [](const char* p) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
        (void)*reinterpret_cast<const volatile char*>(p);
      },
      blocks...);
#else
  ((void)blocks, ...);
#endif
}

/// A request into L1 (prefetcht0) of every line of each contiguous block,
/// in address order, for a block about to be read by a kernel that takes
/// its values as the FMAs' memory operands (GEMM's single tile, see
/// gemm_single_tile_reads_b_from_memory); nothing for blocks that are not
/// contiguous, and nothing on device.
template <class... Blocks>
KOKKOS_FORCEINLINE_FUNCTION void request_whole_blocks_into_l1(const Blocks&... blocks) {
#if !IBLA_IMPL_DEVICE_PASS && (defined(__GNUC__) || defined(__clang__))
  for_each_line_of_whole_blocks(
      [](const char* p) IBLA_IMPL_ALWAYS_INLINE_LAMBDA { __builtin_prefetch(p, 0, 3); },
      blocks...);
#else
  ((void)blocks, ...);
#endif
}

/// request_whole_blocks_into_l1 for one contiguous block of a compile-time
/// size, Bytes from data: its prefetch instructions at constant offsets,
/// without the loop and its runtime count, for blocks solved in a few dozen
/// cycles (TRSM's kernels of one order, see trsm_requests_own_block). A
/// block that starts inside a line (elements narrower than a line) has
/// its last line left out: a request is a hint.
template <index_t Bytes, class T>
KOKKOS_FORCEINLINE_FUNCTION void request_block_into_l1(const T* data) {
#if !IBLA_IMPL_DEVICE_PASS && (defined(__GNUC__) || defined(__clang__))
  const char* p = reinterpret_cast<const char*>(data);
  IBLA_IMPL_UNROLL
  for (index_t o = 0; o < Bytes; o += BlockPrefetch::line) __builtin_prefetch(p + o, 0, 3);
#else
  (void)data;
#endif
}

/// Calls line(p) for each line of the Uplo triangle (diagonal included) of
/// a square contiguous block whose elements are whole lines (L = 8 or 16
/// doubles, 16 or 32 floats), once a line, column by column in address
/// order; for other contiguous blocks, for each line of the whole block
/// (for_each_line_of_whole_blocks). Host only.
template <class Block, class Line>
KOKKOS_FORCEINLINE_FUNCTION void for_each_line_of_triangle(const Block& b, const Uplo uplo,
                                                           const Line& line) {
  using T                     = std::remove_const_t<typename Block::value_type>;
  constexpr int L             = fixed_lanes<typename Block::lane_count>::value;
  constexpr int element_bytes = L * int(sizeof(T));
  if constexpr (L > 0 && element_bytes % BlockPrefetch::line == 0 &&
                std::is_same<typename Block::lane_stride, unit_stride>::value) {
    if (b.contiguous_size() == 0) return;
    const int n      = b.rows;
    const bool lower = uplo == Uplo::Lower;
    for (int j = 0; j < n; ++j)
      for (int i = lower ? j : 0; i < (lower ? n : j + 1); ++i) {
        const char* p = reinterpret_cast<const char*>(b.ptr(i, j));
        IBLA_IMPL_UNROLL
        for (int o = 0; o < element_bytes; o += BlockPrefetch::line) line(p + o);
      }
  } else {
    for_each_line_of_whole_blocks(line, b);
  }
}

/// request_whole_blocks_into_l1 for the Uplo triangle of a square block, for
/// a kernel that reads only that triangle (TRSM's A): the other triangle's
/// lines, which it never reads, are not requested where the elements are
/// whole lines (for_each_line_of_triangle). Measured in TRSM (see
/// trsm_own_triangle_first_order).
template <class Block>
KOKKOS_FORCEINLINE_FUNCTION void request_triangle_into_l1(const Block& b, const Uplo uplo) {
#if !IBLA_IMPL_DEVICE_PASS && (defined(__GNUC__) || defined(__clang__))
  for_each_line_of_triangle(
      b, uplo, [](const char* p) IBLA_IMPL_ALWAYS_INLINE_LAMBDA { __builtin_prefetch(p, 0, 3); });
#else
  (void)b;
  (void)uplo;
#endif
}

/// load_whole_blocks_in_order for each block that is contiguous and
/// touch_in_order_block_bytes long (see there); nothing for other blocks.
template <class... Blocks>
KOKKOS_FORCEINLINE_FUNCTION void touch_in_order(const Blocks&... blocks) {
#if !IBLA_IMPL_DEVICE_PASS
  const auto one = [](const auto& b) {
    if (b.contiguous_size() * index_t(sizeof(*b.data)) == touch_in_order_block_bytes)
      load_whole_blocks_in_order(b);
  };
  (one(blocks), ...);
#else
  ((void)blocks, ...);
#endif
}

/// The family of the AMD CPU this process starts on (cpuid leaf 1, base
/// plus extended family: 19h for Zen 3 and Zen 4, 1Ah for Zen 5), read
/// once; 0 on other CPUs, other architectures and compilers without
/// <cpuid.h>. For the choices measured to go one way on one of these
/// families and the other way elsewhere, which GCC 12 cannot tell apart at
/// compile time: its -march=native tunes Zen 4 and Zen 5 both as znver3
/// (see gemm_reads_blocks_in_order_from_memory).
inline unsigned host_amd_family() {
#if !IBLA_IMPL_DEVICE_PASS && (defined(__GNUC__) || defined(__clang__)) && \
    (defined(__x86_64__) || defined(__i386__))
  static const unsigned family = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid(0, &a, &b, &c, &d)) return 0u;
    // "AuthenticAMD" in ebx, edx, ecx.
    const bool amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;
    if (!amd || !__get_cpuid(1, &a, &b, &c, &d)) return 0u;
    const unsigned base = (a >> 8) & 0xfu;
    return base == 0xfu ? base + ((a >> 20) & 0xffu) : base;
  }();
  return family;
#else
  return 0;
#endif
}

/// Whether the CPU this process starts on is an AMD family 19h core (Zen 3,
/// Zen 4): host_amd_family.
inline bool host_is_amd_family_19h() { return host_amd_family() == 0x19u; }

/// The size of the last-level cache of the CPU this process starts on:
/// the highest cache level Linux lists for cpu0 in sysfs, and 32 MiB where
/// there is none to read (not Linux, a container without sysfs). Read once.
/// Not glibc's sysconf(_SC_LEVEL3_CACHE_SIZE): on the Zen 5 VM that ran
/// the measurements it said 384 MiB, the host's, where sysfs and lscpu say
/// 32 MiB.
inline size_t last_level_cache_bytes() {
  static const size_t bytes = [] {
    size_t best_level = 0, size = size_t(32) << 20;
    for (int index = 0; index < 16; ++index) {
      const std::string dir =
          "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
      std::ifstream level_file(dir + "level"), size_file(dir + "size");
      size_t level = 0, kib = 0;
      std::string unit;
      if (!(level_file >> level) || !(size_file >> kib)) continue;
      // sysfs writes the size as "32768K".
      size_file >> unit;
      const size_t scale = unit == "M" ? (size_t(1) << 20) : unit == "K" ? 1024 : 1;
      if (level > best_level && kib > 0) {
        best_level = level;
        size       = kib * scale;
      }
    }
    return size;
  }();
  return bytes;
}

/// Whether the operands of a batch together are larger than the last-level
/// cache (last_level_cache_bytes): then most of their lines come from
/// memory, however warm the caches are.
template <class... Views>
bool batch_exceeds_last_level_cache(const Views&... views) {
  const size_t bytes = ((views.span() * sizeof(typename Views::value_type)) + ...);
  return bytes > last_level_cache_bytes();
}

/// Whether the block `ahead` blocks after the one at `first` is prefetched
/// (see prefetch_next_block): on host, within the batch, for operands
/// beyond prefetch_above_bytes.
template <class Lanes, class... Views>
KOKKOS_INLINE_FUNCTION bool prefetches_next_block(const index_t first, const index_t ahead,
                                                  const size_t batch, const Views&... views) {
#if !IBLA_IMPL_DEVICE_PASS
  const size_t bytes = ((views.span() * sizeof(typename Views::value_type)) + ...);
  return first + ahead * max_lanes<Lanes>::value < index_t(batch) && bytes > prefetch_above_bytes;
#else
  (void)first;
  (void)ahead;
  (void)batch;
  ((void)views, ...);
  return false;
#endif
}

/// Plans in `prefetch` (empty, default-constructed) the prefetch of the
/// block after the one at `first` (of a batch of `batch` matrices) for the
/// operand Views: nothing on device, for batches within
/// prefetch_above_bytes, after the last block, and for operands whose
/// blocks are not contiguous. A host thread runs a contiguous range of
/// blocks (Kokkos' static schedule), so the next block is most likely its
/// next.
/// Filled in place, not returned: the copy of a returned BlockPrefetch (a
/// 64-byte and a 16-byte vector load of fields just written one by one)
/// missed store-to-load forwarding at every block, 57% of the per-block
/// wrapper's time and about 8% of a 4 x 4 TRSM's (perf, cpu-clock).
template <class Lanes, class... Views>
KOKKOS_INLINE_FUNCTION void prefetch_next_block(BlockPrefetch& prefetch, const index_t first,
                                                const Lanes lanes, const size_t batch,
                                                const Views&... views) {
  if (prefetches_next_block<Lanes>(first, 1, batch, views...))
    (prefetch.add(lane_block(views, first + max_lanes<Lanes>::value, lanes)), ...);
}

/// prefetch_next_block for a factorization of the n x n matrices of A (and
/// the other operands of its block), or nothing when n <= one_pass_order: a
/// factorization whose first panel or step is the whole block reads it front
/// to back, which the hardware prefetcher follows (see potrf_prefetch_order).
template <class Lanes, class AV, class... Views>
KOKKOS_INLINE_FUNCTION void prefetch_next_block_of_factorization(
    BlockPrefetch& prefetch, const int one_pass_order, const index_t first, const Lanes lanes,
    const AV& A, const Views&... others) {
  if (A.extent(1) <= size_t(one_pass_order)) return;
  prefetch_next_block(prefetch, first, lanes, A.extent(0), A, others...);
}

/// prefetch_next_block for an operation that reads only the uplo triangle
/// of the square A (POTRF, POSV's factorization, TRSM): that triangle of A's
/// block `ahead` blocks after the one at `first`, the whole block of the
/// other operands. ahead is 1, the next block, but for the forms that
/// request it all at once and take a block in less time than its lines
/// take to come from memory (see one_column_prefetch_ahead).
template <class Lanes, class AV, class... Views>
KOKKOS_INLINE_FUNCTION void prefetch_block_triangle_ahead(BlockPrefetch& prefetch,
                                                          const index_t first, const index_t ahead,
                                                          const Lanes lanes, const size_t batch,
                                                          const Uplo uplo, const AV& A,
                                                          const Views&... others) {
  if (prefetches_next_block<Lanes>(first, ahead, batch, A, others...)) {
    const index_t next = first + ahead * max_lanes<Lanes>::value;
    prefetch.add_triangle(lane_block(A, next, lanes), uplo);
    (prefetch.add(lane_block(others, next, lanes)), ...);
  }
}

/// prefetch_next_block_of_factorization for a factorization that reads
/// only the uplo triangle of A (Cholesky).
template <class Lanes, class AV, class... Views>
KOKKOS_INLINE_FUNCTION void prefetch_next_triangle_of_factorization(
    BlockPrefetch& prefetch, const int one_pass_order, const index_t first, const Lanes lanes,
    const Uplo uplo, const AV& A, const Views&... others) {
  if (A.extent(1) <= size_t(one_pass_order)) return;
  prefetch_block_triangle_ahead(prefetch, first, 1, lanes, A.extent(0), uplo, A, others...);
}

}  // namespace impl
}  // namespace ibla
