// Kokkos::View support for the interleaved layouts on Kokkos versions whose
// View is built on Kokkos::Impl::ViewOffset (Kokkos 3.x and 4.x before the
// mdspan-based View). All offsets come from ibla::InterleavedIndex.
#pragma once

#include <ibla/layouts/interleaved_index.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

#if defined(KOKKOS_VERSION) && (KOKKOS_VERSION >= 40699) && !defined(KOKKOS_ENABLE_IMPL_VIEW_LEGACY)
#error "ibla: this Kokkos builds View on mdspan: include <ibla/layouts/layouts.hpp>, which uses kokkos_mdspan_mapping.hpp"
#endif

// layout_iterate_type_selector, the same for both View paths, is in layouts.hpp.
namespace Kokkos {
namespace Impl {

template <class Dimension, class Layout>
struct ViewOffset<Dimension, Layout,
                  std::enable_if_t<ibla::is_interleaved_layout<Layout>::value>> {
  static_assert(Dimension::rank >= 1 && Dimension::rank <= 3,
                "ibla interleaved layouts support Views of rank 1 (batch), "
                "2 (batch, n) and 3 (batch, m, n)");

  using is_mapping_plugin = std::true_type;
  using is_regular        = std::false_type;  // no subview support
  using size_type         = size_t;
  using dimension_type    = Dimension;
  using array_layout      = Layout;

  dimension_type m_dim;

  KOKKOS_INLINE_FUNCTION constexpr ibla::InterleavedIndex index() const {
    return ibla::interleaved_index<Layout>(
        ibla::index_t(m_dim.N0), Dimension::rank >= 2 ? ibla::index_t(m_dim.N1) : 1,
        Dimension::rank >= 3 ? ibla::index_t(m_dim.N2) : 1);
  }

  template <typename I0>
  KOKKOS_INLINE_FUNCTION constexpr size_type operator()(I0 const& i0) const {
    return size_type(i0);
  }
  template <typename I0, typename I1>
  KOKKOS_INLINE_FUNCTION constexpr size_type operator()(I0 const& i0, I1 const& i1) const {
    return size_type(index().offset(i0, i1, 0));
  }
  template <typename I0, typename I1, typename I2>
  KOKKOS_INLINE_FUNCTION constexpr size_type operator()(I0 const& i0, I1 const& i1,
                                                        I2 const& i2) const {
    return size_type(index().offset(i0, i1, i2));
  }

  KOKKOS_INLINE_FUNCTION constexpr array_layout layout() const {
    return array_layout(m_dim.N0, m_dim.N1, m_dim.N2, m_dim.N3, m_dim.N4, m_dim.N5, m_dim.N6,
                        m_dim.N7);
  }

  KOKKOS_INLINE_FUNCTION constexpr size_type dimension_0() const { return m_dim.N0; }
  KOKKOS_INLINE_FUNCTION constexpr size_type dimension_1() const { return m_dim.N1; }
  KOKKOS_INLINE_FUNCTION constexpr size_type dimension_2() const { return m_dim.N2; }
  KOKKOS_INLINE_FUNCTION constexpr size_type dimension_3() const { return m_dim.N3; }
  KOKKOS_INLINE_FUNCTION constexpr size_type dimension_4() const { return m_dim.N4; }
  KOKKOS_INLINE_FUNCTION constexpr size_type dimension_5() const { return m_dim.N5; }
  KOKKOS_INLINE_FUNCTION constexpr size_type dimension_6() const { return m_dim.N6; }
  KOKKOS_INLINE_FUNCTION constexpr size_type dimension_7() const { return m_dim.N7; }

  // Widened first: Kokkos 3.x keeps extents in 32 bits, and a batch of
  // 2^32 elements must not wrap.
  KOKKOS_INLINE_FUNCTION constexpr size_type size() const {
    return size_type(m_dim.N0) * m_dim.N1 * m_dim.N2 * m_dim.N3 * m_dim.N4 * m_dim.N5 * m_dim.N6 *
           m_dim.N7;
  }
  KOKKOS_INLINE_FUNCTION constexpr size_type span() const {
    return size_type(index().span(ibla::index_t(m_dim.N0)));
  }
  // False when the last block is padded: Kokkos then copies and fills element
  // by element instead of with memcpy/memset over the span, so no padding
  // element is mistaken for data (and deep_copy(view, scalar) reaches all).
  KOKKOS_INLINE_FUNCTION constexpr bool span_is_contiguous() const { return span() == size(); }

  // Strides inside one block (exact for LayoutInterleaved, whose one block is
  // the whole batch). The layouts are not strided across blocks.
  KOKKOS_INLINE_FUNCTION constexpr size_type stride_0() const {
    return size_type(index().lane_stride());
  }
  KOKKOS_INLINE_FUNCTION constexpr size_type stride_1() const {
    return size_type(index().row_stride());
  }
  KOKKOS_INLINE_FUNCTION constexpr size_type stride_2() const {
    return size_type(index().col_stride());
  }
  KOKKOS_INLINE_FUNCTION constexpr size_type stride_3() const { return span(); }
  KOKKOS_INLINE_FUNCTION constexpr size_type stride_4() const { return span(); }
  KOKKOS_INLINE_FUNCTION constexpr size_type stride_5() const { return span(); }
  KOKKOS_INLINE_FUNCTION constexpr size_type stride_6() const { return span(); }
  KOKKOS_INLINE_FUNCTION constexpr size_type stride_7() const { return span(); }

  template <typename iType>
  KOKKOS_INLINE_FUNCTION void stride(iType* const s) const {
    s[0] = stride_0();
    if (Dimension::rank > 1) s[1] = stride_1();
    if (Dimension::rank > 2) s[2] = stride_2();
    s[Dimension::rank] = span();
  }

  ViewOffset()                  = default;
  ViewOffset(const ViewOffset&) = default;
  ViewOffset& operator=(const ViewOffset&) = default;

  template <unsigned TrivialScalarSize>
  KOKKOS_INLINE_FUNCTION constexpr ViewOffset(
      std::integral_constant<unsigned, TrivialScalarSize> const&, Layout const& arg_layout)
      : m_dim(arg_layout.dimension[0], arg_layout.dimension[1], arg_layout.dimension[2],
              arg_layout.dimension[3], arg_layout.dimension[4], arg_layout.dimension[5],
              arg_layout.dimension[6], arg_layout.dimension[7]) {}

  // const/non-const and static/dynamic extent conversions of the same layout.
  template <class DimRHS>
  KOKKOS_INLINE_FUNCTION constexpr ViewOffset(const ViewOffset<DimRHS, Layout, void>& rhs)
      : m_dim(rhs.m_dim.N0, rhs.m_dim.N1, rhs.m_dim.N2, rhs.m_dim.N3, rhs.m_dim.N4,
              rhs.m_dim.N5, rhs.m_dim.N6, rhs.m_dim.N7) {
    static_assert(int(DimRHS::rank) == int(dimension_type::rank),
                  "ViewOffset assignment requires equal rank");
  }
};

}  // namespace Impl
}  // namespace Kokkos
