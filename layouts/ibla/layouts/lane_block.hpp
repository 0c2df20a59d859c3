// LaneBlock: what a kernel sees of one block of a batched View. A block is a
// run of consecutive matrices [first, first + lanes) of the batch; element
// (i, j) of lane l is at data[i * rs + j * cs + l * ls]. For the interleaved
// layouts (and LayoutLeft, which is the interleaved layout of Kokkos) the lane
// stride is the compile-time constant 1, so the lanes of one element are a
// contiguous vector; for matrix-after-matrix layouts (LayoutRight,
// LayoutStride) it is a runtime stride and the lane loop gathers. For the
// block-interleaved layouts the row stride is the compile-time L too (a
// matrix column is L-lane vectors one after another), so that an element's
// address is a column's address plus a constant, where a runtime row stride
// took a register per row: with n^2 addresses live in an unrolled kernel,
// GCC spilled them to vector registers (GETRF's n = 4 form: 85 of its 280
// instructions were mov, lea, add and vmovq).
// Kernels index blocks with (i, j, l) only; the strides come from the layout
// traits below, which ask InterleavedIndex or the View itself.
#pragma once

#include <ibla/core/lanes.hpp>
#include <ibla/core/types.hpp>
#include <ibla/layouts/layouts.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace ibla {

using unit_stride = std::integral_constant<index_t, 1>;

template <class T, class LaneCount, class LaneStride, class RowStride = index_t,
          class ColStride = index_t>
struct LaneBlock {
  using value_type  = T;
  using lane_count  = LaneCount;
  using lane_stride = LaneStride;
  using row_stride  = RowStride;
  using col_stride  = ColStride;

  T* data;            // element (0, 0) of the first lane
  RowStride rs;       // distance between rows (index_t, or a std::integral_constant)
  ColStride cs;       // distance between columns (index_t, or see fixed_order_block)
  LaneStride ls;      // distance between lanes
  LaneCount lanes;    // number of matrices in this block
  int rows;
  int cols;

  KOKKOS_FORCEINLINE_FUNCTION T& operator()(int i, int j, int l) const {
    return data[i * index_t(value_of(rs)) + j * index_t(value_of(cs)) +
                l * index_t(value_of(ls))];
  }
  /// Element (i, j) of lane 0: lane l of it is at ptr(i, j)[l * ls]. For
  /// kernels that walk a block with pointers (one add per step instead of a
  /// multiply of runtime strides per access).
  KOKKOS_FORCEINLINE_FUNCTION T* ptr(int i, int j) const {
    return data + i * index_t(value_of(rs)) + j * index_t(value_of(cs));
  }
  /// n when the block is exactly the elements [data, data + n) (lanes, rows
  /// and columns follow each other without gaps, as in LayoutBlockInterleaved;
  /// a partial last block counts its padding lanes), else 0. For kernels that
  /// prefetch a whole block.
  KOKKOS_FORCEINLINE_FUNCTION index_t contiguous_size() const {
    constexpr int L = max_lanes<LaneCount>::value;
    if constexpr (L > 0 && std::is_same<LaneStride, unit_stride>::value) {
      if (index_t(value_of(rs)) == L && index_t(value_of(cs)) == index_t(rows) * L)
        return index_t(rows) * cols * L;
    }
    return 0;
  }
  /// Rank-1 use (vectors, pivots): element i of lane l.
  KOKKOS_FORCEINLINE_FUNCTION T& operator()(int i, int l) const {
    return data[i * index_t(value_of(rs)) + l * index_t(value_of(ls))];
  }
};

/// Whether X is a LaneBlock (not, say, a block of a pointer array).
template <class X>
struct is_lane_block : std::false_type {};
template <class T, class C, class S, class R, class CS>
struct is_lane_block<LaneBlock<T, C, S, R, CS>> : std::true_type {};
template <class X>
inline constexpr bool is_lane_block_v = is_lane_block<X>::value;

/// The same block with its row stride held at run time: one type for a
/// block and its transpose (transposed, apply_op), for kernels that choose
/// between them at run time or would otherwise be compiled once per row
/// stride type.
template <class T, class C, class S, class R, class CS>
KOKKOS_FORCEINLINE_FUNCTION LaneBlock<T, C, S> runtime_strides(const LaneBlock<T, C, S, R, CS>& b) {
  return LaneBlock<T, C, S>{b.data, index_t(value_of(b.rs)), index_t(value_of(b.cs)), b.ls, b.lanes,
                            b.rows, b.cols};
}

/// op(X) as a block: the transpose swaps the strides, nothing moves. Both
/// with runtime strides (see runtime_strides).
template <class T, class C, class S, class R, class CS>
KOKKOS_FORCEINLINE_FUNCTION LaneBlock<T, C, S> transposed(const LaneBlock<T, C, S, R, CS>& b) {
  return LaneBlock<T, C, S>{b.data, index_t(value_of(b.cs)), index_t(value_of(b.rs)), b.ls, b.lanes,
                            b.cols, b.rows};
}

/// The transpose with each stride keeping its type (a compile-time stride
/// stays one, see fixed_order_block): for kernels instantiated once for a
/// block and once for its transpose.
template <class T, class C, class S, class R, class CS>
KOKKOS_FORCEINLINE_FUNCTION LaneBlock<T, C, S, CS, R> transposed_keeping_strides(
    const LaneBlock<T, C, S, R, CS>& b) {
  return LaneBlock<T, C, S, CS, R>{b.data, b.cs, b.rs, b.ls, b.lanes, b.cols, b.rows};
}
template <class T, class C, class S, class R, class CS>
KOKKOS_FORCEINLINE_FUNCTION LaneBlock<T, C, S> apply_op(Op op, const LaneBlock<T, C, S, R, CS>& b) {
  return op == Op::N ? runtime_strides(b) : transposed(b);
}

/// The same block with another lane-count type (e.g. lanes_c<L> for a full block).
template <class NewCount, class T, class C, class S, class R, class CS>
KOKKOS_FORCEINLINE_FUNCTION LaneBlock<T, NewCount, S, R, CS> with_lanes(
    const LaneBlock<T, C, S, R, CS>& b, NewCount n) {
  return LaneBlock<T, NewCount, S, R, CS>{b.data, b.rs, b.cs, b.ls, n, b.rows, b.cols};
}

/// Lanes [g * G, g * G + G) of a block as a block of G lanes (lanes_c<G>),
/// the same strides: a kernel's vector form run on a group of the block's
/// lanes at a time (see gemm_lane_group_lanes).
template <int G, class T, class C, class S, class R, class CS>
KOKKOS_FORCEINLINE_FUNCTION LaneBlock<T, lanes_c<G>, S, R, CS> lane_group(
    const LaneBlock<T, C, S, R, CS>& b, int g) {
  return LaneBlock<T, lanes_c<G>, S, R, CS>{&b(0, 0, g * G), b.rs, b.cs, b.ls, {}, b.rows, b.cols};
}

/// Lane l of a block as a block of one lane (lanes_c<1>): a kernel's vector
/// form run one matrix at a time, its lane loops of trip count 1 (see
/// team::getrf for the partial last block on host).
template <class T, class C, class S, class R, class CS>
KOKKOS_FORCEINLINE_FUNCTION LaneBlock<T, lanes_c<1>, S, R, CS> single_lane(
    const LaneBlock<T, C, S, R, CS>& b, int l) {
  return lane_group<1>(b, l);
}

/// The row stride of rows_as_lanes' block: Lanes, held at compile time
/// where the matrix's column stride is (with_fixed_strides).
template <int Lanes, class CS>
using rows_as_lanes_row_stride =
    std::conditional_t<std::is_same<CS, index_t>::value, index_t,
                       std::integral_constant<index_t, Lanes>>;

/// Rows [first, first + groups * Lanes) of a matrix (a block of one lane)
/// whose rows are contiguous (row stride 1: a column of a column-major
/// matrix is a vector) as a block of `groups` rows whose lanes are Lanes
/// consecutive rows of the matrix: lane l of element (r, j) is the
/// matrix's element (first + r * Lanes + l, j). A kernel's vector form then
/// runs on the rows of one matrix, a part of a column a SIMD vector
/// (gemm_matrix_rows). A compile-time column stride stays one.
template <int Lanes, class T, class S, class R, class CS>
KOKKOS_FORCEINLINE_FUNCTION LaneBlock<T, lanes_c<Lanes>, unit_stride,
                                      rows_as_lanes_row_stride<Lanes, CS>, CS>
rows_as_lanes(const LaneBlock<T, lanes_c<1>, S, R, CS>& m, const int first, const int groups) {
  KOKKOS_ASSERT(index_t(value_of(m.rs)) == 1 && first + groups * Lanes <= m.rows);
  using RS = rows_as_lanes_row_stride<Lanes, CS>;
  RS rs{};
  if constexpr (std::is_same<RS, index_t>::value) rs = Lanes;
  return LaneBlock<T, lanes_c<Lanes>, unit_stride, RS, CS>{m.ptr(first, 0), rs, m.cs, unit_stride{},
                                                           {}, groups, m.cols};
}

/// Lane stride 0: every lane of a block sees the same matrix.
using zero_stride = std::integral_constant<index_t, 0>;

/// A matrix (a block of one lane) as a block of Lanes lanes that all see it
/// (lane stride 0): each of its elements is one value broadcast over the
/// lanes of a rows_as_lanes block. Its strides keep their types.
template <int Lanes, class T, class S, class R, class CS>
KOKKOS_FORCEINLINE_FUNCTION LaneBlock<T, lanes_c<Lanes>, zero_stride, R, CS> broadcast_lanes(
    const LaneBlock<T, lanes_c<1>, S, R, CS>& m) {
  return LaneBlock<T, lanes_c<Lanes>, zero_stride, R, CS>{m.data, m.rs, m.cs, zero_stride{}, {},
                                                          m.rows, m.cols};
}

/// The same block with its row and column strides the compile-time RS and
/// CS, which its runtime strides equal: a kernel of a compile-time order
/// then addresses every element as the block's origin plus a constant (a
/// dense column-major matrix: RS = 1, CS = its order; see
/// gemm_matrix_rows_fixed_strides).
template <index_t RS, index_t CS, class T, class C, class S, class R, class CS0>
KOKKOS_FORCEINLINE_FUNCTION LaneBlock<T, C, S, std::integral_constant<index_t, RS>,
                                      std::integral_constant<index_t, CS>>
with_fixed_strides(const LaneBlock<T, C, S, R, CS0>& b) {
  KOKKOS_ASSERT(index_t(value_of(b.rs)) == RS && index_t(value_of(b.cs)) == CS);
  return LaneBlock<T, C, S, std::integral_constant<index_t, RS>,
                   std::integral_constant<index_t, CS>>{b.data, {}, {}, b.ls, b.lanes, b.rows,
                                                         b.cols};
}

/// The same block with its column stride a compile-time constant, for a
/// kernel instance of a compile-time row count Rows: in the block-interleaved
/// layouts (the blocks whose row stride is the compile-time L) a column is
/// Rows vectors of L lanes, so the column stride is Rows * L. Every element's
/// address is then the block's origin plus a constant: with a runtime column
/// stride, an unrolled kernel of order N kept N column addresses live, and
/// GCC spilled them to the stack (AVX2, GETRF's left-looking form of order
/// 10: a stack reload before most of its loads). Other layouts: unchanged.
template <int Rows, class T, class C, class S, class R, class CS>
KOKKOS_FORCEINLINE_FUNCTION auto fixed_order_block(const LaneBlock<T, C, S, R, CS>& b) {
  if constexpr (std::is_same<R, index_t>::value) {
    return b;
  } else {
    using fixed_cs = std::integral_constant<index_t, index_t(Rows) * R::value>;
    // A block of vectors (rank-2 View: one column, column stride 0) never
    // uses its column stride.
    KOKKOS_ASSERT(b.rows == Rows &&
                  (b.cols <= 1 || index_t(value_of(b.cs)) == fixed_cs::value));
    return LaneBlock<T, C, S, R, fixed_cs>{b.data, b.rs, fixed_cs{}, b.ls, b.lanes, b.rows, b.cols};
  }
}

// ---------------------------------------------------------------------------
// Per-layout strides. The interleaved layouts answer from InterleavedIndex;
// Kokkos' own layouts from the View's strides.
template <class Layout, class Enable = void>
struct lane_layout_traits {
  // LayoutRight, LayoutStride: matrices one after another, lanes gathered.
  using lane_stride_type = index_t;
  template <class V>
  KOKKOS_INLINE_FUNCTION static index_t lane_stride(const V& v) { return index_t(v.stride_0()); }
  template <class V>
  KOKKOS_INLINE_FUNCTION static index_t row_stride(const V& v) {
    return V::rank >= 2 ? index_t(v.stride_1()) : 0;
  }
  template <class V>
  KOKKOS_INLINE_FUNCTION static index_t col_stride(const V& v) {
    return V::rank >= 3 ? index_t(v.stride_2()) : 0;
  }
};

template <>
struct lane_layout_traits<Kokkos::LayoutLeft> {
  // LayoutLeft (batch, m, n) is the fully interleaved layout: lanes contiguous.
  using lane_stride_type = unit_stride;
  template <class V>
  KOKKOS_INLINE_FUNCTION static unit_stride lane_stride(const V&) { return {}; }
  template <class V>
  KOKKOS_INLINE_FUNCTION static index_t row_stride(const V& v) {
    return V::rank >= 2 ? index_t(v.stride_1()) : 0;
  }
  template <class V>
  KOKKOS_INLINE_FUNCTION static index_t col_stride(const V& v) {
    return V::rank >= 3 ? index_t(v.stride_2()) : 0;
  }
};

template <class Layout>
struct lane_layout_traits<Layout, std::enable_if_t<is_interleaved_layout<Layout>::value>> {
  using lane_stride_type = unit_stride;
  template <class V>
  KOKKOS_INLINE_FUNCTION static InterleavedIndex index(const V& v) {
    return interleaved_index<Layout>(index_t(v.extent(0)), V::rank >= 2 ? index_t(v.extent(1)) : 1,
                                     V::rank >= 3 ? index_t(v.extent(2)) : 1);
  }
  template <class V>
  KOKKOS_INLINE_FUNCTION static unit_stride lane_stride(const V&) { return {}; }
  template <class V>
  KOKKOS_INLINE_FUNCTION static index_t row_stride(const V& v) {
    return V::rank >= 2 ? index(v).row_stride() : 0;
  }
  template <class V>
  KOKKOS_INLINE_FUNCTION static index_t col_stride(const V& v) {
    return V::rank >= 3 ? index(v).col_stride() : 0;
  }
};

/// L of a block-interleaved View type, 0 for every other layout.
template <class Layout>
struct block_lanes_of_layout : std::integral_constant<int, 0> {};
template <unsigned L>
struct block_lanes_of_layout<LayoutBlockInterleaved<L>> : std::integral_constant<int, int(L)> {};
template <class View>
struct block_lanes_of : block_lanes_of_layout<typename View::array_layout> {};

/// The row stride type of View's blocks: InterleavedIndex::row_stride() is
/// the block's lane count, which LayoutBlockInterleaved<L> fixes at compile
/// time (rank-2 and rank-3 Views); index_t for every other layout, whose row
/// stride depends on the extents, and for rank-1 Views (no rows). index_t on
/// device too: the device kernels' register counts and occupancy were
/// measured with runtime strides (see with_getrf_device_order), and no GPU
/// was at hand to measure what the constant would change there.
template <class View, int L = block_lanes_of<View>::value>
using lane_block_row_stride_t =
    std::conditional_t<(L > 0 && View::rank >= 2 && !IBLA_IMPL_DEVICE_PASS),
                       std::integral_constant<index_t, L>, index_t>;

template <class View, class LaneCount>
using lane_block_t =
    LaneBlock<typename View::value_type, LaneCount,
              typename lane_layout_traits<typename View::array_layout>::lane_stride_type,
              lane_block_row_stride_t<View>>;

/// The block of matrices [first, first + count) of a rank-1, -2 or -3 View.
/// For a block-interleaved View the run must not cross a block boundary of
/// its layout (ibla's kernels choose runs that never do).
template <class View, class LaneCount>
KOKKOS_FORCEINLINE_FUNCTION lane_block_t<View, LaneCount> lane_block(const View& v,
                                                                     index_t first,
                                                                     LaneCount count) {
  using traits = lane_layout_traits<typename View::array_layout>;
  static_assert(View::rank >= 1 && View::rank <= 3, "ibla works on Views of rank 1, 2 or 3");
  const int rows = View::rank >= 2 ? int(v.extent(1)) : 1;
  const int cols = View::rank >= 3 ? int(v.extent(2)) : 1;
  typename View::value_type* origin;
  if constexpr (View::rank == 1) {
    origin = &v(first);
  } else if constexpr (View::rank == 2) {
    origin = &v(first, 0);
  } else {
    origin = &v(first, 0, 0);
  }
  lane_block_row_stride_t<View> rs{};
  if constexpr (std::is_same<decltype(rs), index_t>::value) rs = traits::row_stride(v);
  return lane_block_t<View, LaneCount>{origin, rs, traits::col_stride(v), traits::lane_stride(v),
                                       count, rows, cols};
}

/// Whether a View's blocks hold their lanes apart (matrix after matrix:
/// LayoutRight, LayoutStride), so that a kernel's lane loop gathers them.
template <class View>
inline constexpr bool lanes_apart_v =
    std::is_same<typename lane_layout_traits<typename View::array_layout>::lane_stride_type,
                 index_t>::value;

}  // namespace ibla
