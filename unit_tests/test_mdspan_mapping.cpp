// The mdspan layout mapping of ibla's layouts (kokkos_mdspan_mapping.hpp),
// used where Kokkos builds View on mdspan (Kokkos >= 4.6.99 without
// Kokkos_ENABLE_IMPL_VIEW_LEGACY). Checks the mapping's own contract as
// mdspan and Kokkos use it: offsets against the documented formula written
// out here, required_span_size with padding, uniqueness/exhaustiveness/
// strides and their is_always_ forms, equality and extent conversions, the
// View <-> array_layout round trip, and that View really uses this mapping.
// With a ViewOffset-based Kokkos (3.x, 4.x before the mdspan View) the
// mapping is not compiled and the test reports itself skipped; test_layouts
// covers the View behaviour on both paths.
#include "support/batch.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

using namespace ibla_test;

#if IBLA_IMPL_MDSPAN_VIEW

namespace {

index_t formula(index_t L, index_t m, index_t n, index_t b, index_t i, index_t j) {
  return ((b / L) * m * n + j * m + i) * L + b % L;
}

template <class Layout, size_t Rank>
using mapping_t = typename Kokkos::Impl::LayoutFromArrayLayout<Layout>::type::template mapping<
    Kokkos::dextents<size_t, Rank>>;

}  // namespace

TEST(MdspanMapping, KokkosUsesIt) {
  using V = Kokkos::View<double***, ibla::LayoutBlockInterleaved<4>, Kokkos::HostSpace>;
  static_assert(std::is_same<typename V::mdspan_type::layout_type,
                             ibla::InterleavedMdspanLayout<ibla::LayoutBlockInterleaved<4>>>::value,
                "View must use ibla's mdspan layout");
  using W = Kokkos::View<double**, ibla::LayoutInterleaved, Kokkos::HostSpace>;
  static_assert(std::is_same<typename W::mdspan_type::layout_type,
                             ibla::InterleavedMdspanLayout<ibla::LayoutInterleaved>>::value,
                "View must use ibla's mdspan layout");
  SUCCEED();
}

TEST(MdspanMapping, BlockInterleavedOffsetsSpanAndProperties) {
  constexpr index_t L = 4;
  using M             = mapping_t<ibla::LayoutBlockInterleaved<4>, 3>;
  static_assert(M::is_always_unique() && !M::is_always_exhaustive() && !M::is_always_strided(),
                "a padded block layout is neither always exhaustive nor always strided");
  for (index_t batch : {1, 3, 4, 5, 9}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const index_t m = 3, n = 2;
    const M map(Kokkos::dextents<size_t, 3>(batch, m, n));
    for (index_t b = 0; b < batch; ++b)
      for (index_t j = 0; j < n; ++j)
        for (index_t i = 0; i < m; ++i)
          ASSERT_EQ(index_t(map(b, i, j)), formula(L, m, n, b, i, j));
    const index_t blocks = (batch + L - 1) / L;
    EXPECT_EQ(index_t(map.required_span_size()), blocks * L * m * n);
    EXPECT_TRUE(map.is_unique());
    EXPECT_EQ(map.is_exhaustive(), batch % L == 0);
    EXPECT_EQ(map.is_strided(), blocks <= 1);
    // Strides inside a block: lanes contiguous, rows L apart, columns L*m.
    EXPECT_EQ(index_t(map.stride(0)), 1);
    EXPECT_EQ(index_t(map.stride(1)), L);
    EXPECT_EQ(index_t(map.stride(2)), L * m);
    // Where the mapping is strided, the strides reproduce every offset.
    if (map.is_strided()) {
      for (index_t b = 0; b < batch; ++b)
        for (index_t j = 0; j < n; ++j)
          for (index_t i = 0; i < m; ++i)
            EXPECT_EQ(index_t(map(b, i, j)),
                      b * index_t(map.stride(0)) + i * index_t(map.stride(1)) +
                          j * index_t(map.stride(2)));
    }
  }
}

TEST(MdspanMapping, RankOneAndTwo) {
  constexpr index_t L = 4;
  const mapping_t<ibla::LayoutBlockInterleaved<4>, 2> x(Kokkos::dextents<size_t, 2>(7, 5));
  for (index_t b = 0; b < 7; ++b)
    for (index_t i = 0; i < 5; ++i) ASSERT_EQ(index_t(x(b, i)), formula(L, 5, 1, b, i, 0));
  EXPECT_EQ(index_t(x.required_span_size()), 2 * L * 5);
  const mapping_t<ibla::LayoutBlockInterleaved<4>, 1> v(Kokkos::dextents<size_t, 1>(7));
  for (index_t b = 0; b < 7; ++b) ASSERT_EQ(index_t(v(b)), b);
  // A batch of scalars is the batch index itself: strided, but padded.
  EXPECT_TRUE(v.is_strided());
  EXPECT_EQ(index_t(v.required_span_size()), 2 * L);
  EXPECT_FALSE(v.is_exhaustive());
}

TEST(MdspanMapping, InterleavedIsStridedAndExhaustive) {
  using M = mapping_t<ibla::LayoutInterleaved, 3>;
  static_assert(M::is_always_unique() && M::is_always_exhaustive() && M::is_always_strided(),
                "the fully interleaved layout is a plain strided layout");
  const index_t batch = 11, m = 3, n = 4;
  const M map(Kokkos::dextents<size_t, 3>(batch, m, n));
  EXPECT_EQ(index_t(map.required_span_size()), batch * m * n);
  EXPECT_TRUE(map.is_exhaustive());
  EXPECT_TRUE(map.is_strided());
  EXPECT_EQ(index_t(map.stride(0)), 1);
  EXPECT_EQ(index_t(map.stride(1)), batch);
  EXPECT_EQ(index_t(map.stride(2)), batch * m);
  for (index_t b = 0; b < batch; ++b)
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i)
        ASSERT_EQ(index_t(map(b, i, j)), (j * m + i) * batch + b);
}

TEST(MdspanMapping, EqualityAndExtentConversion) {
  using Dyn    = mapping_t<ibla::LayoutBlockInterleaved<4>, 3>;
  using Static = ibla::InterleavedMdspanLayout<ibla::LayoutBlockInterleaved<4>>::mapping<
      Kokkos::extents<size_t, Kokkos::dynamic_extent, 3, 2>>;
  const Static s(Kokkos::extents<size_t, Kokkos::dynamic_extent, 3, 2>(9));
  const Dyn d(s);  // static -> dynamic extents
  EXPECT_TRUE(d == s);
  EXPECT_FALSE(d != s);
  EXPECT_EQ(d.required_span_size(), s.required_span_size());
  EXPECT_EQ(d(8, 2, 1), s(8, 2, 1));
  const Dyn other(Kokkos::dextents<size_t, 3>(9, 3, 3));
  EXPECT_FALSE(d == other);
  EXPECT_TRUE(d != other);
}

TEST(MdspanMapping, ViewLayoutRoundTrip) {
  using Layout = ibla::LayoutBlockInterleaved<4>;
  Kokkos::View<double***, Layout, Kokkos::HostSpace> A("A", 6, 3, 2);
  const Layout l = A.layout();  // array layout from the mapping
  EXPECT_EQ(l.dimension[0], 6u);
  EXPECT_EQ(l.dimension[1], 3u);
  EXPECT_EQ(l.dimension[2], 2u);
  // View from the array layout: same mapping, same span.
  Kokkos::View<double***, Layout, Kokkos::HostSpace> B("B", l);
  EXPECT_EQ(B.span(), A.span());
  EXPECT_EQ(&B(5, 2, 1) - B.data(), &A(5, 2, 1) - A.data());
  using V = Kokkos::View<double***, Layout, Kokkos::HostSpace>;
  EXPECT_EQ(V::required_allocation_size(l), A.span() * sizeof(double));
}

#else

TEST(MdspanMapping, NotUsedByThisKokkos) {
  GTEST_SKIP() << "Kokkos " << KOKKOS_VERSION
               << " builds View on ViewOffset: the mdspan mapping is not compiled";
}

#endif
