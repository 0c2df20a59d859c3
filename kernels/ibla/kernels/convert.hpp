// Conversions between the storage a user keeps and the layouts ibla computes
// on: any pair of rank-1/2/3 Views (block-interleaved, interleaved,
// LayoutLeft, LayoutRight, LayoutStride) and pointer arrays. One team per block
// of matrices; for each element (i, j) the lanes of the block are copied in one
// vector loop, so the interleaved side is read or written with contiguous
// vectors and the matrix-after-matrix side with gathers or scatters whose
// cache lines are all used within the block (team::copy). On host, a full
// block from lanes side by side to contiguous matrices one after another
// (the usual conversion out of block-interleaved storage) is transposed in
// registers instead (impl::unpack_by_transposes, the packs' transposes).
#pragma once

#include <ibla/core/error.hpp>
#include <ibla/core/lanes.hpp>
#include <ibla/core/types.hpp>
#include <ibla/kernels/block_copy.hpp>
#include <ibla/kernels/dispatch.hpp>
#include <ibla/layouts/lane_block.hpp>
#include <ibla/layouts/pointer_array.hpp>

#include <Kokkos_Core.hpp>

#include <numeric>
#include <type_traits>

namespace ibla {

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

/// The blocks of a conversion. Transposes: on host, a full block from
/// lanes side by side to matrices one after another is copied by
/// transposes in registers (impl::unpack_by_transposes). Measured
/// (ibla::convert micro-driver outside the repo: LayoutBlockInterleaved<8>
/// -> LayoutStride column-major, doubles, 2 threads, medians of 11-21
/// calls, 2 runs, Intel Xeon VM, us, scatters -> transposes): 10^5
/// flushed n = 2 256-283 -> 246-253, 4 1294-1305 -> 1072-1251, 8
/// 7466-7506 -> 5388-5623, 12 16671-17063 -> 12540-12939, 16 29012-30625
/// -> 23528-24318, 32 76374-77454 -> 64339-65059; 10^4 in cache n = 2
/// 7.4-7.7 -> 5.9-6.1, 4 32.5-34.5 -> 23.0-26.4, 5 58.0-59.4 ->
/// 59.8-61.2, 8 208-212 -> 182, 16 1160-1553 -> 915-958, 32 7921-7981 ->
/// 6660-6789.
template <class S, class D, bool Transposes>
struct CopyBlocks {
  S src;
  D dst;
  template <class Member, class Lanes>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, index_t first, Lanes lanes) const {
    const auto s = lane_block(src, first, lanes);
    const auto d = lane_block(dst, first, lanes);
#if !IBLA_IMPL_DEVICE_PASS
    if constexpr (Transposes)
      if (impl::unpack_by_transposes(s, d)) return;
#endif
    team::copy(member, s, d);
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
                            detail::CopyBlocks<S, D, is_host_space_v<ExecSpace>>{src, dst});
}

}  // namespace ibla
