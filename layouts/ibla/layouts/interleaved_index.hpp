// The index formula of the interleaved layouts, and nothing else. Every other
// piece of ibla (the Kokkos View mapping, the mdspan mapping for newer Kokkos,
// the lane-block accessors used by kernels) asks this struct for offsets.
//
// Element (b, i, j) of a batch of `batch` matrices of rows x cols, stored in
// blocks of `lanes` matrices, each block column-major with the matrices of the
// block side by side:
//     offset = ((b / lanes) * rows * cols + j * rows + i) * lanes + b % lanes
// Block-interleaved: lanes = L (compile time), the last block padded to L.
// Interleaved: lanes = batch (one block holding the whole batch), which gives
// (j * rows + i) * batch + b, the layout of a LayoutLeft View of extents
// (batch, rows, cols).
// Rank-2 Views (batch, n) use rows = n, cols = 1; rank-1 Views (batch) use
// rows = cols = 1, so offset = b.
#pragma once

#include <ibla/core/types.hpp>

#include <Kokkos_Macros.hpp>

namespace ibla {

struct InterleavedIndex {
  index_t lanes;  // matrices per block, >= 1
  index_t rows;
  index_t cols;

  KOKKOS_INLINE_FUNCTION constexpr index_t block_size() const { return lanes * rows * cols; }
  KOKKOS_INLINE_FUNCTION constexpr index_t num_blocks(index_t batch) const {
    return (batch + lanes - 1) / lanes;
  }
  KOKKOS_INLINE_FUNCTION constexpr index_t offset(index_t b, index_t i, index_t j) const {
    return ((b / lanes) * rows * cols + j * rows + i) * lanes + b % lanes;
  }
  /// Elements the storage of `batch` matrices occupies, padding included.
  KOKKOS_INLINE_FUNCTION constexpr index_t span(index_t batch) const {
    return num_blocks(batch) * block_size();
  }
  // Distances between neighbours inside one block.
  KOKKOS_INLINE_FUNCTION constexpr index_t lane_stride() const { return 1; }
  KOKKOS_INLINE_FUNCTION constexpr index_t row_stride() const { return lanes; }
  KOKKOS_INLINE_FUNCTION constexpr index_t col_stride() const { return lanes * rows; }
};

}  // namespace ibla
