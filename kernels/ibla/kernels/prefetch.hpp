// Software prefetch of the block a host thread computes next, for the
// batch-level kernels (GEMM, TRSM).
//
// Within a block the kernels read a matrix a tile row at a time (GEMM NN,
// n = 32: 256 bytes out of every 2 KB of A per step; TRSM one triangle),
// which the hardware prefetcher does not follow, so a batch out of cache ran
// at a third of the memory bandwidth. The next block is contiguous in
// LayoutBlockInterleaved; its cache lines are requested a slice per tile,
// spread over the current block's work.
#pragma once

#include <ibla/core/lanes.hpp>
#include <ibla/core/types.hpp>
#include <ibla/layouts/lane_block.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>

namespace ibla {
namespace impl {

/// Batches smaller than this (all operands) stay in the private caches: on
/// data already in cache the prefetch instructions cost more than they save
/// (GEMM n = 8, 64 matrices: 18 -> 13 GFLOP/s measured).
inline constexpr size_t prefetch_above_bytes = size_t(1) << 20;

struct BlockPrefetch {
  static constexpr int max_ranges = 3;
  static constexpr int line       = 64;
  const char* next[max_ranges] = {};  // next line to request
  const char* end[max_ranges]  = {};
  index_t chunk[max_ranges]    = {};  // bytes requested per step
  int ranges                   = 0;

  template <class Block>
  KOKKOS_FORCEINLINE_FUNCTION void add(const Block& b) {
    const index_t n = b.contiguous_size();
    if (n == 0 || ranges == max_ranges) return;
    next[ranges] = reinterpret_cast<const char*>(b.data);
    end[ranges]  = next[ranges] + n * index_t(sizeof(*b.data));
    ++ranges;
  }
  /// Spreads the lines over about `steps` calls of step(): steps is rounded
  /// down to a power of two, so the lines are all requested within the
  /// first steps (at most twice as fast as planned) and the plan costs a
  /// shift, not a division per range (three integer divisions per block
  /// were 15% of a 2 x 2 GEMM's time).
  KOKKOS_INLINE_FUNCTION void plan(const index_t steps) {
    int shift = 0;
    while (shift < 62 && (index_t(2) << shift) <= steps) ++shift;
    for (int r = 0; r < ranges; ++r) {
      const index_t lines = (index_t(end[r] - next[r]) + line - 1) / line;
      chunk[r]            = ((lines + (index_t(1) << shift) - 1) >> shift) * line;
    }
  }
  KOKKOS_FORCEINLINE_FUNCTION void step() {
#if !IBLA_IMPL_DEVICE_PASS && (defined(__GNUC__) || defined(__clang__))
    for (int r = 0; r < ranges; ++r) {
      const char* stop = next[r] + chunk[r] < end[r] ? next[r] + chunk[r] : end[r];
      for (const char* p = next[r]; p < stop; p += line) __builtin_prefetch(p, 0, 2);
      next[r] = stop;
    }
#endif
  }
};

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
#if !IBLA_IMPL_DEVICE_PASS
  const index_t next = first + max_lanes<Lanes>::value;
  const size_t bytes = ((views.span() * sizeof(typename Views::value_type)) + ...);
  if (next < index_t(batch) && bytes > prefetch_above_bytes) {
    (prefetch.add(lane_block(views, next, lanes)), ...);
  }
#else
  (void)prefetch;
  (void)first;
  (void)lanes;
  (void)batch;
  ((void)views, ...);
#endif
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

}  // namespace impl
}  // namespace ibla
