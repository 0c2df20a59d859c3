// The interleaved layouts as Kokkos layouts: the offset formula and its
// padding, and the Kokkos facilities a user relies on (deep_copy between
// Views and from a scalar, mirrors, const and unmanaged Views, rank-1/2
// Views).
#include "support/batch.hpp"
#include "support/reference.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

using namespace ibla_test;

// The documented formula, written out independently of InterleavedIndex.
index_t block_interleaved_offset(index_t L, index_t m, index_t n, index_t b, index_t i, index_t j) {
  return ((b / L) * m * n + j * m + i) * L + b % L;
}

TEST(InterleavedIndex, FormulaByHand) {
  // L = 8, 3 x 2 matrices: matrix 9 is lane 1 of block 1; element (1,1) is
  // entry j*m+i = 4 of the block, after the 6 entries of block 0.
  const ibla::InterleavedIndex idx{8, 3, 2};
  EXPECT_EQ(idx.offset(9, 1, 1), (6 + 4) * 8 + 1);
  EXPECT_EQ(idx.offset(0, 0, 0), 0);
  EXPECT_EQ(idx.offset(7, 2, 1), 5 * 8 + 7);
  EXPECT_EQ(idx.span(9), 2 * 8 * 6);
  EXPECT_EQ(idx.span(16), 2 * 8 * 6);
  EXPECT_EQ(idx.span(17), 3 * 8 * 6);
  EXPECT_EQ(idx.row_stride(), 8);
  EXPECT_EQ(idx.col_stride(), 24);
}

template <class Layout>
void expect_view_offsets(index_t batch, index_t m, index_t n, index_t lanes) {
  SCOPED_TRACE(layout_name<Layout>() + " batch " + std::to_string(batch));
  Kokkos::View<double***, Layout, Kokkos::HostSpace> A("A", batch, m, n);
  for (index_t b = 0; b < batch; ++b)
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i)
        ASSERT_EQ(&A(b, i, j) - A.data(), block_interleaved_offset(lanes, m, n, b, i, j))
            << "(" << b << "," << i << "," << j << ")";
  const index_t blocks = (batch + lanes - 1) / lanes;
  EXPECT_EQ(index_t(A.span()), blocks * lanes * m * n);
  EXPECT_EQ(index_t(A.size()), batch * m * n);
  EXPECT_EQ(A.span_is_contiguous(), batch % lanes == 0);
  EXPECT_EQ(A.extent(0), size_t(batch));
  EXPECT_EQ(A.extent(1), size_t(m));
  EXPECT_EQ(A.extent(2), size_t(n));

  // Rank 2 (batch, m): vectors interleaved the same way, one column.
  Kokkos::View<double**, Layout, Kokkos::HostSpace> x("x", batch, m);
  for (index_t b = 0; b < batch; ++b)
    for (index_t i = 0; i < m; ++i)
      ASSERT_EQ(&x(b, i) - x.data(), block_interleaved_offset(lanes, m, 1, b, i, 0));
  // Rank 1 (batch): the batch index itself.
  Kokkos::View<int*, Layout, Kokkos::HostSpace> info("info", batch);
  for (index_t b = 0; b < batch; ++b) ASSERT_EQ(&info(b) - info.data(), b);
}

TEST(LayoutBlockInterleaved, OffsetsPaddingAndContiguity) {
  for (index_t batch : {1, 7, 8, 9, 16, 23})
    expect_view_offsets<ibla::LayoutBlockInterleaved<8>>(batch, 3, 4, 8);
  for (index_t batch : {1, 4, 5, 6, 11})
    expect_view_offsets<ibla::LayoutBlockInterleaved<5>>(batch, 2, 5, 5);
  expect_view_offsets<ibla::LayoutBlockInterleaved<1>>(3, 2, 2, 1);
}

TEST(LayoutInterleaved, OffsetsAreTheWholeBatchInterleaved) {
  for (index_t batch : {1, 7, 13})
    expect_view_offsets<ibla::LayoutInterleaved>(batch, 3, 4, batch);
  // Same element order as a LayoutLeft View of extents (batch, m, n).
  Kokkos::View<double***, ibla::LayoutInterleaved, Kokkos::HostSpace> A("A", 5, 3, 2);
  Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace> B("B", 5, 3, 2);
  for (int b = 0; b < 5; ++b)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 3; ++i) EXPECT_EQ(&A(b, i, j) - A.data(), &B(b, i, j) - B.data());
}

template <class Layout>
class LayoutKokkosFacilities : public ::testing::Test {};
using InterleavedLayouts = ::testing::Types<ibla::LayoutBlockInterleaved<8>, ibla::LayoutBlockInterleaved<3>,
                                            ibla::LayoutInterleaved>;
TYPED_TEST_SUITE(LayoutKokkosFacilities, InterleavedLayouts);

TYPED_TEST(LayoutKokkosFacilities, DeepCopyScalarReachesEveryElement) {
  using Layout = TypeParam;
  for (index_t batch : {1, 5, 8, 17}) {
    Kokkos::View<double***, Layout> A("A", batch, 3, 2);
    Kokkos::deep_copy(A, 2.5);
    auto h = read_view(A);
    for (double x : h.data) ASSERT_EQ(x, 2.5) << "batch " << batch;
    Kokkos::View<int**, Layout> p("p", batch, 4);
    Kokkos::deep_copy(p, 7);
    auto hp = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), p);
    for (index_t b = 0; b < batch; ++b)
      for (int i = 0; i < 4; ++i) ASSERT_EQ(hp(b, i), 7);
  }
}

TYPED_TEST(LayoutKokkosFacilities, DeepCopyAndMirrorsRoundTrip) {
  using Layout = TypeParam;
  for (index_t batch : {1, 5, 8, 17}) {
    auto h = random_batch<double>(batch, 4, 3, std::uint64_t(batch));
    Kokkos::View<double***, Layout> A("A", batch, 4, 3), B("B", batch, 4, 3);
    fill_view(A, h);
    Kokkos::deep_copy(B, A);  // same layout: memcpy when contiguous, element-wise when padded
    EXPECT_TRUE(batches_equal(read_view(B), h));

    auto mirror = Kokkos::create_mirror(A);  // a new allocation, rebuilt from extents
    static_assert(std::is_same<typename decltype(mirror)::array_layout, Layout>::value,
                  "mirrors keep the layout");
    EXPECT_EQ(mirror.extent(0), A.extent(0));
    EXPECT_EQ(mirror.span(), A.span());
    Kokkos::deep_copy(mirror, A);
    for (index_t b = 0; b < batch; ++b)
      for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 4; ++i) ASSERT_EQ(mirror(b, i, j), h(b, i, j));

    // Different layouts: Kokkos copies element by element.
    Kokkos::View<double***, Kokkos::LayoutRight> R("R", batch, 4, 3);
    Kokkos::deep_copy(R, A);
    EXPECT_TRUE(batches_equal(read_view(R), h));
  }
}

TYPED_TEST(LayoutKokkosFacilities, ConstAndUnmanagedViews) {
  using Layout        = TypeParam;
  const index_t batch = 11;
  auto h              = random_batch<double>(batch, 2, 3, 3);
  Kokkos::View<double***, Layout> A("A", batch, 2, 3);
  fill_view(A, h);
  Kokkos::View<const double***, Layout> C = A;
  EXPECT_EQ(C.data(), A.data());
  EXPECT_TRUE(batches_equal(read_view(C), h));

  std::vector<double> storage(A.span());
  Kokkos::View<double***, Layout, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> U(
      storage.data(), batch, 2, 3);
  EXPECT_EQ(U.span(), A.span());
  Kokkos::deep_copy(U, A);
  EXPECT_TRUE(batches_equal(read_view(U), h));
}
