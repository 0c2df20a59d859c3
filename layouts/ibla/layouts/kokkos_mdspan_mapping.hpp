// Kokkos::View support for the interleaved layouts on Kokkos versions whose
// View is built on mdspan (Kokkos 4.6.99 develop from April 2025 on, 4.7 and
// later, unless Kokkos was configured with Kokkos_ENABLE_IMPL_VIEW_LEGACY).
// There View<T***, ArrayLayout> is an mdspan whose layout policy Kokkos looks
// up in Kokkos::Impl::LayoutFromArrayLayout<ArrayLayout>; ViewOffset
// specialisations are ignored. This file provides that policy: its
// mapping<Extents> answers every offset and span through
// ibla::InterleavedIndex, exactly as the ViewOffset path
// (kokkos_view_offset.hpp) does on older Kokkos. layouts.hpp includes one of
// the two files.
#pragma once

#include <ibla/layouts/interleaved_index.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>
#include <utility>

namespace ibla {

/// The mdspan layout policy of an ibla array layout (LayoutBlockInterleaved<L>
/// or LayoutInterleaved). Extents are (batch), (batch, n) or (batch, m, n).
template <class ArrayLayout>
struct InterleavedMdspanLayout {
  template <class Extents>
  class mapping {
   public:
    using extents_type = Extents;
    using index_type   = typename extents_type::index_type;
    using size_type    = typename extents_type::size_type;
    using rank_type    = typename extents_type::rank_type;
    using layout_type  = InterleavedMdspanLayout;

    static_assert(extents_type::rank() >= 1 && extents_type::rank() <= 3,
                  "ibla interleaved layouts support Views of rank 1 (batch), "
                  "2 (batch, n) and 3 (batch, m, n)");

    constexpr mapping() noexcept               = default;
    constexpr mapping(const mapping&) noexcept = default;
    constexpr mapping& operator=(const mapping&) noexcept = default;

    KOKKOS_INLINE_FUNCTION constexpr mapping(const extents_type& e) noexcept : m_extents(e) {}

    // Static <-> dynamic extents and const <-> non-const Views of one layout.
    template <class OtherExtents,
              std::enable_if_t<std::is_constructible<extents_type, OtherExtents>::value, int> = 0>
    KOKKOS_INLINE_FUNCTION constexpr mapping(const mapping<OtherExtents>& other) noexcept
        : m_extents(other.extents()) {}

    KOKKOS_INLINE_FUNCTION constexpr const extents_type& extents() const noexcept {
      return m_extents;
    }

    /// The one index formula, for these extents.
    KOKKOS_INLINE_FUNCTION constexpr InterleavedIndex index() const noexcept {
      return interleaved_index<ArrayLayout>(
          index_t(m_extents.extent(0)),
          extents_type::rank() >= 2 ? index_t(m_extents.extent(1)) : index_t(1),
          extents_type::rank() >= 3 ? index_t(m_extents.extent(2)) : index_t(1));
    }

    template <class... Indices>
    KOKKOS_INLINE_FUNCTION constexpr index_type operator()(Indices... idx) const noexcept {
      static_assert(sizeof...(Indices) == extents_type::rank(),
                    "ibla: one index per View dimension");
      return offset(index_t(idx)...);
    }

    /// Elements the storage occupies, padding of the last block included.
    KOKKOS_INLINE_FUNCTION constexpr index_type required_span_size() const noexcept {
      return index_type(index().span(index_t(m_extents.extent(0))));
    }

    // LayoutInterleaved (one block) and blocks of one matrix are plain
    // strided layouts; LayoutBlockInterleaved<L> in general is neither
    // strided across blocks nor exhaustive when the last block is padded.
    KOKKOS_INLINE_FUNCTION static constexpr bool is_always_unique() noexcept { return true; }
    KOKKOS_INLINE_FUNCTION static constexpr bool is_always_exhaustive() noexcept {
      return ArrayLayout::lanes_per_block <= 1;
    }
    KOKKOS_INLINE_FUNCTION static constexpr bool is_always_strided() noexcept {
      return ArrayLayout::lanes_per_block <= 1;
    }
    KOKKOS_INLINE_FUNCTION static constexpr bool is_unique() noexcept { return true; }
    // Kokkos reads span_is_contiguous() from this: false when the last block
    // is padded, so copies and fills go element by element and no padding
    // element is mistaken for data (deep_copy(view, scalar) reaches all).
    KOKKOS_INLINE_FUNCTION constexpr bool is_exhaustive() const noexcept {
      return required_span_size() == size();
    }
    KOKKOS_INLINE_FUNCTION constexpr bool is_strided() const noexcept {
      const InterleavedIndex ix = index();
      return ix.num_blocks(index_t(m_extents.extent(0))) <= 1 || ix.rows * ix.cols == 1;
    }

    /// Distance between neighbours along dimension r inside one block of
    /// matrices (exact for the whole View when is_strided()). Dimensions
    /// beyond the rank get the span, as Kokkos' legacy stride queries expect.
    KOKKOS_INLINE_FUNCTION constexpr index_type stride(rank_type r) const noexcept {
      const InterleavedIndex ix = index();
      if (r >= extents_type::rank()) return required_span_size();
      return index_type(r == 0 ? ix.lane_stride() : r == 1 ? ix.row_stride() : ix.col_stride());
    }

    template <class OtherExtents>
    KOKKOS_INLINE_FUNCTION friend constexpr bool operator==(
        const mapping& a, const mapping<OtherExtents>& b) noexcept {
      return a.extents() == b.extents();
    }
    template <class OtherExtents>
    KOKKOS_INLINE_FUNCTION friend constexpr bool operator!=(
        const mapping& a, const mapping<OtherExtents>& b) noexcept {
      return !(a.extents() == b.extents());
    }

   private:
    KOKKOS_INLINE_FUNCTION constexpr index_type size() const noexcept {
      index_type n = 1;
      for (rank_type r = 0; r < extents_type::rank(); ++r) n *= m_extents.extent(r);
      return n;
    }
    KOKKOS_INLINE_FUNCTION constexpr index_type offset(index_t b, index_t i = 0,
                                                       index_t j = 0) const noexcept {
      return index_type(index().offset(b, i, j));
    }

    extents_type m_extents{};
  };
};

// Kokkos builds the mdspan mapping from an array layout through
// Kokkos::Impl::mapping_from_array_layout_impl<MappingType>(layout, seq),
// whose generic version reads a `stride` member that only LayoutLeft/Right
// have. These overloads are found by argument-dependent lookup and are more
// specialised: the mapping of an ibla layout is defined by its extents alone.
// (The reverse direction, View::layout(), builds the array layout from the
// extents, which fits ibla's layouts as they are.)
template <class MappingType, unsigned L, std::size_t... Idx>
KOKKOS_INLINE_FUNCTION constexpr MappingType mapping_from_array_layout_impl(
    const LayoutBlockInterleaved<L>& layout, std::index_sequence<Idx...>) {
  return MappingType(typename MappingType::extents_type(layout.dimension[Idx]...));
}
template <class MappingType, std::size_t... Idx>
KOKKOS_INLINE_FUNCTION constexpr MappingType mapping_from_array_layout_impl(
    const LayoutInterleaved& layout, std::index_sequence<Idx...>) {
  return MappingType(typename MappingType::extents_type(layout.dimension[Idx]...));
}

}  // namespace ibla

namespace Kokkos::Impl {

template <unsigned L>
struct LayoutFromArrayLayout<ibla::LayoutBlockInterleaved<L>> {
  using type = ibla::InterleavedMdspanLayout<ibla::LayoutBlockInterleaved<L>>;
};
template <>
struct LayoutFromArrayLayout<ibla::LayoutInterleaved> {
  using type = ibla::InterleavedMdspanLayout<ibla::LayoutInterleaved>;
};

}  // namespace Kokkos::Impl
