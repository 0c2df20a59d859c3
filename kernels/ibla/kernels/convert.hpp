// Conversions between the storage a user keeps and the layouts ibla computes
// on: any pair of rank-1/2/3 Views (block-interleaved, interleaved,
// LayoutLeft, LayoutRight, LayoutStride) and pointer arrays. One team per block
// of matrices; for each element (i, j) the lanes of the block are copied in one
// vector loop, so the interleaved side is read or written with contiguous
// vectors and the matrix-after-matrix side with gathers or scatters whose
// cache lines are all used within the block.
#pragma once

#include <ibla/core/error.hpp>
#include <ibla/core/lanes.hpp>
#include <ibla/core/types.hpp>
#include <ibla/kernels/dispatch.hpp>
#include <ibla/layouts/lane_block.hpp>
#include <ibla/layouts/pointer_array.hpp>

#include <Kokkos_Core.hpp>

#include <numeric>
#include <type_traits>

namespace ibla {

namespace detail {
/// Lanes of a matrix-after-matrix block this many bytes apart (a multiple)
/// fall into the same L1 set: 64 sets of 64-byte lines on every x86 core
/// ibla has been measured on (Zen 3 to Zen 5, Intel Xeon).
inline constexpr index_t copy_l1_set_period_bytes = 4096;
/// More lanes than this one set cannot hold (the L1's ways: 8 on Zen 3
/// and 4, 12 on Zen 5 and recent Xeons; 8 keeps within the smallest).
inline constexpr int copy_l1_ways = 8;

/// Whether team::copy writes dst lane by lane: dst holds its matrices one
/// after another (not interleaved) a multiple of copy_l1_set_period_bytes
/// apart, with more lanes than copy_l1_ways. Element by element with the
/// lanes as the vector loop, every store of an element went to another
/// lane's line in the same L1 set, more lines than the set holds, so each
/// was evicted before the next row's store reached it. Measured (float,
/// LayoutBlockInterleaved<16> -> LayoutRight, n = 32, so 4 KiB apart, 10^4
/// matrices, 2 threads, Zen 5 VM): 5.7 -> 10.2-12.2 GB/s (double with
/// L = 16, 8 KiB apart: 9.7-10.1 -> 14.0-15.1); at orders where
/// the lanes do not alias (float n = 8, 16, 24, 31, 33; double with L = 8)
/// lane by lane was 0.6-1.0x, hence the test.
template <class T, class C, class S, class R, class CS>
KOKKOS_INLINE_FUNCTION bool copy_lane_by_lane(const LaneBlock<T, C, S, R, CS>& dst) {
#if !IBLA_IMPL_DEVICE_PASS
  if constexpr (!std::is_same<S, unit_stride>::value) {
    const index_t bytes = index_t(value_of(dst.ls)) * index_t(sizeof(T));
    return max_lanes<C>::value > copy_l1_ways && bytes > 0 &&
           bytes % copy_l1_set_period_bytes == 0;
  }
#endif
  (void)dst;
  return false;
}
/// Pointer arrays (matrices allocated apart): the order as before.
template <class BD>
KOKKOS_INLINE_FUNCTION bool copy_lane_by_lane(const BD&) {
  return false;
}
}  // namespace detail

namespace team {
/// dst = src on one block; both are blocks of the same shape.
template <class Member, class BS, class BD>
KOKKOS_INLINE_FUNCTION void copy(const Member& member, const BS& src, const BD& dst) {
  if (detail::copy_lane_by_lane(dst)) {
    // Each lane's column is written whole before the next lane's, so only
    // one of the aliasing lines is being written at a time.
    for (int j = 0; j < dst.cols; ++j)
      for_each_lane(member, dst.lanes, [&](const int l) {
        for (int i = 0; i < dst.rows; ++i) dst(i, j, l) = src(i, j, l);
      });
  } else {
    for (int j = 0; j < dst.cols; ++j)
      for (int i = 0; i < dst.rows; ++i)
        for_each_lane(member, dst.lanes, [&](const int l) { dst(i, j, l) = src(i, j, l); });
  }
  team_sync(member);
}
}  // namespace team

namespace detail {

template <class X>
struct is_pointer_array : std::false_type {};
template <class T>
struct is_pointer_array<PointerArray<T>> : std::true_type {};

/// Shape of a batch operand seen as (batch, rows, cols).
template <class X>
struct BatchShape {
  index_t batch, rows, cols;
};
template <class X>
BatchShape<X> shape_of(const X& x) {
  if constexpr (is_pointer_array<X>::value) {
    return {x.batch, x.rows, x.cols};
  } else {
    return {index_t(x.extent(0)), X::rank >= 2 ? index_t(x.extent(1)) : 1,
            X::rank >= 3 ? index_t(x.extent(2)) : 1};
  }
}

template <class X>
constexpr int block_lanes_of_operand() {
  if constexpr (is_pointer_array<X>::value) {
    return 0;
  } else {
    return block_lanes_of<X>::value;
  }
}

/// Blocks that never cross a block boundary of either side: gcd of their L.
template <class T, class ExecSpace, class S, class D>
constexpr int convert_block_lanes() {
  constexpr int ls = block_lanes_of_operand<S>(), ld = block_lanes_of_operand<D>();
  if constexpr (ls != 0 && ld != 0) {
    return std::gcd(ls, ld);
  } else if constexpr (ls != 0 || ld != 0) {
    return ls != 0 ? ls : ld;
  } else {
    return default_block_lanes<T, ExecSpace>;
  }
}

template <class ExecSpace, class T>
void require_pointer_array(const ExecSpace& exec, const char* name, const PointerArray<T>& p) {
  const char* routine = "convert";
  require(p.batch >= 0 && p.rows >= 0 && p.cols >= 0, routine, name,
          "negative size (batch = ", p.batch, ", rows = ", p.rows, ", cols = ", p.cols, ")");
  require(p.ld >= (p.rows > 1 ? p.rows : 1), routine, name, "leading dimension ld = ", p.ld,
          " is smaller than max(1, rows = ", p.rows, ")");
  if (p.batch == 0) return;
  require(p.ptrs != nullptr, routine, name, "the pointer array itself is null");
  // Find the first null matrix pointer; the array may live in device memory.
  // (The Min reducer starts from the largest index_t: no null leaves it there.)
  index_t first_null = 0;
  T* const* ptrs     = p.ptrs;
  Kokkos::parallel_reduce(
      "ibla::convert::check_pointers", Kokkos::RangePolicy<ExecSpace>(exec, 0, p.batch),
      KOKKOS_LAMBDA(const index_t b, index_t& found) {
        if (ptrs[b] == nullptr && b < found) found = b;
      },
      Kokkos::Min<index_t>(first_null));
  require(first_null >= p.batch, routine, name, "pointer of matrix ", first_null, " is null");
}

template <class S, class D>
struct CopyBlocks {
  S src;
  D dst;
  template <class Member, class Lanes>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, index_t first, Lanes lanes) const {
    team::copy(member, lane_block(src, first, lanes), lane_block(dst, first, lanes));
  }
};

}  // namespace detail

/// dst = src for every matrix of the batch, between any two supported storage
/// forms of equal shape and value type: Kokkos Views of rank 1, 2 or 3 in any
/// layout ibla supports, and PointerArray batches (ibla::pointer_array).
template <class ExecSpace, class S, class D>
void convert(const ExecSpace& exec, const S& src, const D& dst) {
  constexpr const char* routine = "convert";
  using T = std::remove_const_t<typename S::value_type>;
  static_assert(std::is_same<std::remove_const_t<typename D::value_type>, T>::value,
                "ibla::convert: src and dst must have the same value type");
  static_assert(!std::is_const<typename D::value_type>::value,
                "ibla::convert: dst has a const value type");
  if constexpr (!detail::is_pointer_array<S>::value) detail::static_check_view<ExecSpace, S>();
  if constexpr (!detail::is_pointer_array<D>::value) detail::static_check_view<ExecSpace, D>();
  if constexpr (!detail::is_pointer_array<S>::value && !detail::is_pointer_array<D>::value) {
    static_assert(int(S::rank) == int(D::rank), "ibla::convert: src and dst must have the same rank");
  }

  if constexpr (detail::is_pointer_array<S>::value) {
    detail::require_pointer_array(exec, "src", src);
  } else {
    detail::require_allocated(routine, "src", src);
  }
  if constexpr (detail::is_pointer_array<D>::value) {
    detail::require_pointer_array(exec, "dst", dst);
  } else {
    detail::require_allocated(routine, "dst", dst);
  }
  const auto s = detail::shape_of(src);
  const auto d = detail::shape_of(dst);
  detail::require_extent(routine, "dst", 0, d.batch, s.batch, "the batch count of src");
  detail::require_extent(routine, "dst", 1, d.rows, s.rows, "the row count of src");
  detail::require_extent(routine, "dst", 2, d.cols, s.cols, "the column count of src");
  if (s.rows == 0 || s.cols == 0) return;

  constexpr int L = detail::convert_block_lanes<T, ExecSpace, S, D>();
  detail::for_each_block<L>(exec, "ibla::convert", s.batch, 2 * s.rows * s.cols,
                            detail::CopyBlocks<S, D>{src, dst});
}

}  // namespace ibla
