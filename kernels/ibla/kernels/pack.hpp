// Host batch-level kernels on Views whose matrices lie one after another
// (LayoutRight, LayoutStride: lanes_apart_v) copy each block into this
// thread's scratch in block-interleaved order, run the kernel of the
// block-interleaved layouts there, and copy the outputs back. Run on such
// Views directly, every vector of a block's lanes was a gather and every
// store a scatter, and the vector forms fixed at compile time (the
// register tiles, the fixed orders), which need the block-interleaved
// strides, did not apply: GEMM on column-major matrices one after another
// in a LayoutStride View took 1907 us at n = 8 and 82 ms at n = 32, where
// LIBXSMM took 349 us and 10.3 ms on the same storage (flushed, 10^4
// problems, 2 threads, AMD EPYC Zen 4; packed: see gemm_unpacked_elements).
// A block packed this way gives the same bits as the block-interleaved
// layout of the same L.
// Device kernels keep the Views as they are: there a lane is a thread.
#pragma once

#include <ibla/core/lanes.hpp>
#include <ibla/core/types.hpp>
#include <ibla/kernels/convert.hpp>
#include <ibla/kernels/prefetch.hpp>
#include <ibla/layouts/lane_block.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

namespace ibla {
namespace impl {

#if !IBLA_IMPL_DEVICE_PASS
/// This thread's scratch of at least count elements of T, aligned to a
/// cache line; kept for the thread's life and grown as needed (never
/// shrunk), so that a kernel allocates once per thread, not per block.
template <class T>
T* host_thread_scratch(const std::size_t count) {
  constexpr std::size_t line = 64;
  thread_local std::unique_ptr<unsigned char[]> memory;
  thread_local std::size_t held = 0;
  if (held < count) {
    memory.reset(new unsigned char[count * sizeof(T) + line]);
    held = count;
  }
  const auto address = reinterpret_cast<std::uintptr_t>(memory.get());
  return reinterpret_cast<T*>((address + line - 1) / line * line);
}

#if defined(__GNUC__) && !defined(__clang__)
/// W values of T as one GCC vector (W * sizeof(T) bytes: one or two SIMD
/// registers of the block's lanes), and its shuffle index vector.
template <class T, int W>
struct lane_vector {
  typedef T type __attribute__((vector_size(W * sizeof(T))));
  using index_type = std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>;
  typedef index_type index __attribute__((vector_size(W * sizeof(T))));
};

/// Element p of the two shuffles of transpose_step: pairs of runs of D
/// elements of two rows x and y, the even runs (lo) or the odd ones (hi),
/// x's run first; indices into x then y (__builtin_shuffle).
KOKKOS_INLINE_FUNCTION constexpr int transpose_index(const int D, const int W, const int p,
                                                     const bool hi) {
  const int pair = p / (2 * D), t = p % (2 * D);
  return (t < D ? 0 : W) + 2 * D * pair + (hi ? D : 0) + (t < D ? t : t - D);
}

/// One step of the W x W transpose of rows r[0..W): rows i and i + D (i
/// without the bit D) swap their odd runs of D elements with the other's
/// even ones.
template <class T, int W, int D, int... P>
KOKKOS_FORCEINLINE_FUNCTION void transpose_step(typename lane_vector<T, W>::type* r,
                                                std::integer_sequence<int, P...>) {
  using index = typename lane_vector<T, W>::index;
  constexpr index lo{transpose_index(D, W, P, false)...}, hi{transpose_index(D, W, P, true)...};
  for (int i = 0; i < W; ++i)
    if ((i & D) == 0) {
      const auto x = r[i], y = r[i + D];
      r[i]         = __builtin_shuffle(x, y, lo);
      r[i + D]     = __builtin_shuffle(x, y, hi);
    }
}

/// r[i][k] <- r[k][i] for W rows of W values (W a power of two): log2(W)
/// steps of W shuffles, 24 for eight doubles. GCC does not find this for a
/// copy loop written element by element: its loop for eight lanes of eight
/// elements was 64 scalar loads and stores.
template <class T, int W, int D = 1>
KOKKOS_FORCEINLINE_FUNCTION void transpose_rows(typename lane_vector<T, W>::type* r) {
  if constexpr (D < W) {
    transpose_step<T, W, D>(r, std::make_integer_sequence<int, W>{});
    transpose_rows<T, W, 2 * D>(r);
  }
}
#define IBLA_IMPL_PACK_BY_TRANSPOSES 1
#else
#define IBLA_IMPL_PACK_BY_TRANSPOSES 0
#endif

/// (i, j) of the elements of a matrix in the order they are stored when it
/// lies contiguously, column after column (by_columns) or row after row;
/// next() steps to the following one.
struct StorageOrder {
  int rows, cols;
  bool by_columns;
  int i = 0, j = 0;
  KOKKOS_FORCEINLINE_FUNCTION void next() {
    if (by_columns) {
      if (++i == rows) i = 0, ++j;
    } else {
      if (++j == cols) j = 0, ++i;
    }
  }
};

/// Whether every matrix of a block with lanes apart lies contiguously, by
/// columns (rows adjacent) or by rows: the storage pack_block and
/// unpack_block transpose; by_columns says which.
template <class B>
KOKKOS_FORCEINLINE_FUNCTION bool matrices_contiguous(const B& b, bool& by_columns) {
  const index_t rs = index_t(value_of(b.rs)), cs = index_t(value_of(b.cs));
  by_columns = rs == 1 && (cs == b.rows || b.cols == 1);
  return by_columns || (cs == 1 && (rs == b.cols || b.rows == 1));
}

/// dst = src, src a block whose lanes lie apart, dst a packed block
/// (packed_block). A full block of matrices each stored contiguously: L
/// consecutive elements of each of the L matrices read as vectors and
/// transposed in registers, every line read used at once; else (the
/// partial last block, other strides) team::copy: each element's lanes in
/// one vector loop (a gather). request_next: the transposes also request into L2 the
/// lines of the next L matrices of src that they will read for the next
/// block, as they read this one's: the lanes of a block lie a matrix apart,
/// which the hardware prefetcher did not follow from memory (GEMM n = 8,
/// 10^4 problems, 2 threads, flushed: about 2.8x LIBXSMM's time without).
template <class Member, class BS, class BD>
KOKKOS_FORCEINLINE_FUNCTION void pack_block(const Member& member, const BS& src, const BD& dst,
                                            const bool request_next = false) {
  using T         = std::remove_const_t<typename BS::value_type>;
  constexpr int L = fixed_lanes<typename BD::lane_count>::value;
  bool by_columns = true;
#if IBLA_IMPL_PACK_BY_TRANSPOSES
  if constexpr (L > 1 && (L & (L - 1)) == 0) {
    if (matrices_contiguous(src, by_columns)) {
      using V          = typename lane_vector<T, L>::type;
      const index_t n  = index_t(src.rows) * src.cols;
      const index_t whole = n - n % L;
      StorageOrder at{src.rows, src.cols, by_columns};
      const index_t next = request_next ? index_t(L) * index_t(value_of(src.ls)) : 0;
      for (index_t e0 = 0; e0 < whole; e0 += L) {
        V r[L];
        for (int l = 0; l < L; ++l) std::memcpy(&r[l], &src(0, 0, l) + e0, sizeof(V));
        if (request_next)
          for (int l = 0; l < L; ++l)
            for (int o = 0; o < int(sizeof(V)); o += int(BlockPrefetch::line))
              PrefetchLine{}(reinterpret_cast<const char*>(&src(0, 0, l) + e0 + next) + o);
        transpose_rows<T, L>(r);
        for (int k = 0; k < L; ++k, at.next()) std::memcpy(dst.ptr(at.i, at.j), &r[k], sizeof(V));
      }
      for (index_t e = whole; e < n; ++e, at.next()) {
        const int i = at.i, j = at.j;
        for_each_lane(member, dst.lanes, [&](const int l) { dst(i, j, l) = src(i, j, l); });
      }
      return;
    }
  }
#endif
  (void)by_columns;
  team::copy(member, src, dst);
}

/// dst = src, src a packed block, dst a block whose lanes lie apart: the
/// transposes of pack_block the other way; else a matrix at a time, so
/// that the stores go to one matrix's lines after another.
template <class BS, class BD>
KOKKOS_FORCEINLINE_FUNCTION void unpack_block(const BS& src, const BD& dst) {
  using T         = std::remove_const_t<typename BS::value_type>;
  constexpr int L = fixed_lanes<typename BS::lane_count>::value;
  bool by_columns = true;
#if IBLA_IMPL_PACK_BY_TRANSPOSES
  if constexpr (L > 1 && (L & (L - 1)) == 0) {
    if (matrices_contiguous(dst, by_columns)) {
      using V             = typename lane_vector<T, L>::type;
      const index_t n     = index_t(dst.rows) * dst.cols;
      const index_t whole = n - n % L;
      StorageOrder at{dst.rows, dst.cols, by_columns};
      for (index_t e0 = 0; e0 < whole; e0 += L) {
        V r[L];
        for (int k = 0; k < L; ++k, at.next()) std::memcpy(&r[k], src.ptr(at.i, at.j), sizeof(V));
        transpose_rows<T, L>(r);
        for (int l = 0; l < L; ++l) std::memcpy(&dst(0, 0, l) + e0, &r[l], sizeof(V));
      }
      for (index_t e = whole; e < n; ++e, at.next())
        for (int l = 0; l < L; ++l) dst(at.i, at.j, l) = src(at.i, at.j, l);
      return;
    }
  }
#endif
  (void)by_columns;
  const int lanes = int(value_of(src.lanes));
  for (int l = 0; l < lanes; ++l)
    for (int j = 0; j < dst.cols; ++j)
      for (int i = 0; i < dst.rows; ++i) dst(i, j, l) = src(i, j, l);
}
#endif

}  // namespace impl
}  // namespace ibla
