// Pointer-array (P2P) batches, as cblas_dgemm_batch and cublasDgemmBatched
// take them: matrix b is column-major at ptrs[b] with leading dimension ld.
// ibla's kernels work on Views; P2P batches reach them through
// ibla::convert, which reads and writes them through the block below.
#pragma once

#include <ibla/core/types.hpp>

#include <Kokkos_Core.hpp>

namespace ibla {

template <class T>
struct PointerArray {
  using value_type = T;
  T* const* ptrs = nullptr;  // batch pointers, readable from the execution space used
  index_t batch  = 0;
  int rows       = 0;
  int cols       = 0;
  int ld         = 0;  // leading dimension (>= rows)
};

/// A P2P batch of `batch` column-major rows x cols matrices, matrix b at ptrs[b].
template <class T>
PointerArray<T> pointer_array(T* const* ptrs, index_t batch, int rows, int cols, int ld) {
  return PointerArray<T>{ptrs, batch, rows, cols, ld};
}
template <class T>
PointerArray<T> pointer_array(T* const* ptrs, index_t batch, int rows, int cols) {
  return PointerArray<T>{ptrs, batch, rows, cols, rows > 1 ? rows : 1};
}

template <class T, class LaneCount>
struct PointerArrayBlock {
  using value_type = T;
  T* const* ptrs;  // pointer of the first lane
  index_t ld;
  LaneCount lanes;
  int rows;
  int cols;
  KOKKOS_FORCEINLINE_FUNCTION T& operator()(int i, int j, int l) const {
    return ptrs[l][i + j * ld];
  }
};

template <class T, class LaneCount>
KOKKOS_INLINE_FUNCTION PointerArrayBlock<T, LaneCount> lane_block(const PointerArray<T>& p,
                                                                  index_t first, LaneCount count) {
  return PointerArrayBlock<T, LaneCount>{p.ptrs + first, index_t(p.ld), count, p.rows, p.cols};
}

}  // namespace ibla
