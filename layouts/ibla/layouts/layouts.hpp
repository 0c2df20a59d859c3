// The custom Kokkos layouts of ibla:
//   Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>> A("A", batch, m, n);
//   Kokkos::View<double***, ibla::LayoutInterleaved>         B("B", batch, m, n);
// indexed A(b, i, j). Rank-2 (batch, n) Views for right-hand sides and pivots,
// and rank-1 (batch) Views, use the same layouts. The index formula is in
// interleaved_index.hpp; the Kokkos mapping in kokkos_view_offset.hpp.
#pragma once

#include <ibla/core/types.hpp>
#include <ibla/layouts/interleaved_index.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace ibla {

namespace detail {
/// Shared by both layout tags: a layout is a small tag that only carries the
/// extents, like Kokkos::LayoutLeft.
template <class Self>
struct InterleavedLayoutBase {
  using array_layout = Self;
  size_t dimension[Kokkos::ARRAY_LAYOUT_MAX_RANK];
  enum : bool { is_extent_constructible = true };

  KOKKOS_INLINE_FUNCTION
  explicit constexpr InterleavedLayoutBase(size_t N0 = 0, size_t N1 = 0, size_t N2 = 0,
                                           size_t N3 = 0, size_t N4 = 0, size_t N5 = 0,
                                           size_t N6 = 0, size_t N7 = 0)
      : dimension{N0, N1, N2, N3, N4, N5, N6, N7} {}
};
}  // namespace detail

/// Blocks of L matrices, interleaved inside each block. L is a compile-time
/// constant so that every View type carries it (create_mirror and friends
/// rebuild layouts from extents alone) and kernels get a constant trip count.
template <unsigned L>
struct LayoutBlockInterleaved : detail::InterleavedLayoutBase<LayoutBlockInterleaved<L>> {
  static_assert(L >= 1, "LayoutBlockInterleaved<L> needs L >= 1");
  static constexpr unsigned lanes_per_block = L;
  using detail::InterleavedLayoutBase<LayoutBlockInterleaved<L>>::InterleavedLayoutBase;
};

/// Element (i, j) of every matrix of the batch side by side: one block that
/// holds the whole batch.
struct LayoutInterleaved : detail::InterleavedLayoutBase<LayoutInterleaved> {
  static constexpr unsigned lanes_per_block = 0;  // = the batch count
  using detail::InterleavedLayoutBase<LayoutInterleaved>::InterleavedLayoutBase;
};

template <class Layout>
struct is_interleaved_layout : std::false_type {};
template <unsigned L>
struct is_interleaved_layout<LayoutBlockInterleaved<L>> : std::true_type {};
template <>
struct is_interleaved_layout<LayoutInterleaved> : std::true_type {};

template <class Layout>
struct is_block_interleaved_layout : std::false_type {};
template <unsigned L>
struct is_block_interleaved_layout<LayoutBlockInterleaved<L>> : std::true_type {};

/// The index object of an interleaved-layout View (or of the extents of one).
template <class Layout>
KOKKOS_INLINE_FUNCTION constexpr InterleavedIndex interleaved_index(index_t batch, index_t rows,
                                                                    index_t cols) {
  return InterleavedIndex{Layout::lanes_per_block != 0 ? index_t(Layout::lanes_per_block)
                                                       : (batch > 0 ? batch : index_t(1)),
                          rows, cols};
}

}  // namespace ibla

// Kokkos builds View on mdspan from 4.6.99 (develop since April 2025; 4.7
// and later) unless configured with Kokkos_ENABLE_IMPL_VIEW_LEGACY; before
// that, on Kokkos::Impl::ViewOffset. Each path has its own mapping file, both
// computing offsets through InterleavedIndex.
#if defined(KOKKOS_VERSION) && (KOKKOS_VERSION >= 40699) && !defined(KOKKOS_ENABLE_IMPL_VIEW_LEGACY)
#define IBLA_IMPL_MDSPAN_VIEW 1
#include <ibla/layouts/kokkos_mdspan_mapping.hpp>
#else
#define IBLA_IMPL_MDSPAN_VIEW 0
#include <ibla/layouts/kokkos_view_offset.hpp>
#endif

// For both paths: deep copies and fills that cannot use memcpy iterate with
// the batch index fastest, which is the contiguous direction of these
// layouts. Kokkos 4.4 moved layout_iterate_type_selector into Kokkos::Impl
// (kokkos PR 7076) and left an alias template in Kokkos, which cannot be
// specialised: ibla did not compile against the Kokkos 4.4-4.6 releases.
#if defined(KOKKOS_VERSION) && (KOKKOS_VERSION >= 40400)
namespace Kokkos::Impl {
#else
namespace Kokkos {
#endif
template <unsigned L>
struct layout_iterate_type_selector<ibla::LayoutBlockInterleaved<L>> {
  static const Kokkos::Iterate outer_iteration_pattern = Kokkos::Iterate::Left;
  static const Kokkos::Iterate inner_iteration_pattern = Kokkos::Iterate::Left;
};
template <>
struct layout_iterate_type_selector<ibla::LayoutInterleaved> {
  static const Kokkos::Iterate outer_iteration_pattern = Kokkos::Iterate::Left;
  static const Kokkos::Iterate inner_iteration_pattern = Kokkos::Iterate::Left;
};
}  // namespace Kokkos::Impl from Kokkos 4.4 on, namespace Kokkos before
