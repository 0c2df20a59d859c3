// ibla::convert between every pair of storage forms: Views of every layout
// (rank 3 and rank 2), and pointer arrays with a padded leading dimension.
// A conversion is a copy, so results must be bit-identical.
#include "support/batch.hpp"
#include "support/reference.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

using namespace ibla_test;

template <class T, class From, class To>
void round_trip(index_t batch, index_t m, index_t n) {
  SCOPED_TRACE(layout_name<From>() + " -> " + layout_name<To>() + " batch " + std::to_string(batch) +
               " " + std::to_string(m) + "x" + std::to_string(n));
  const auto h = random_batch<T>(batch, m, n, std::uint64_t(batch * 31 + m * 7 + n));
  auto src     = make_view<T, From>("src", batch, m, n);
  auto mid     = make_view<T, To>("mid", batch, m, n);
  auto back    = make_view<T, From>("back", batch, m, n);
  fill_view(src, h);
  ibla::convert(Kokkos::DefaultExecutionSpace(), src, mid);
  ASSERT_TRUE(batches_equal(read_view(mid), h));
  ibla::convert(Kokkos::DefaultExecutionSpace(), mid, back);
  ASSERT_TRUE(batches_equal(read_view(back), h));
}

template <class T, class From>
void round_trips_from() {
  for (index_t batch : {1, 4, 5, 8, 9, 13, 1001})
    for (auto [m, n] : {std::pair<index_t, index_t>{1, 1}, {2, 2}, {2, 4}, {3, 3}, {7, 2}, {2, 9},
                          {32, 32}}) {
      if (batch == 1001 && m == 32) continue;  // size is not what this test is about
      round_trip<T, From, ibla::LayoutBlockInterleaved<8>>(batch, m, n);
      round_trip<T, From, ibla::LayoutBlockInterleaved<12>>(batch, m, n);
      round_trip<T, From, ibla::LayoutInterleaved>(batch, m, n);
      round_trip<T, From, Kokkos::LayoutLeft>(batch, m, n);
      round_trip<T, From, Kokkos::LayoutRight>(batch, m, n);
      round_trip<T, From, LayoutStrideColMajor>(batch, m, n);
      if (::testing::Test::HasFatalFailure()) return;
    }
}

TEST(Convert, FromBlockInterleavedToEveryLayout) {
  round_trips_from<double, ibla::LayoutBlockInterleaved<8>>();
  round_trips_from<float, ibla::LayoutBlockInterleaved<16>>();
}
TEST(Convert, FromStridedToEveryLayout) {
  round_trips_from<double, Kokkos::LayoutRight>();
  round_trips_from<float, LayoutStrideColMajor>();
}
TEST(Convert, FromInterleavedToEveryLayout) {
  round_trips_from<double, ibla::LayoutInterleaved>();
  round_trips_from<float, Kokkos::LayoutLeft>();
}

TEST(Convert, RankTwoVectors) {
  const index_t batch = 21, n = 6;
  Kokkos::View<double**, Kokkos::LayoutRight> x("x", batch, n), back("back", batch, n);
  Kokkos::View<double**, ibla::LayoutBlockInterleaved<8>> xi("xi", batch, n);
  auto hx = Kokkos::create_mirror_view(x);
  for (index_t b = 0; b < batch; ++b)
    for (index_t i = 0; i < n; ++i) hx(b, i) = double(b * 100 + i);
  ibla::deep_copy(x, hx);
  ibla::convert(Kokkos::DefaultExecutionSpace(), x, xi);
  auto hxi = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), xi);
  for (index_t b = 0; b < batch; ++b)
    for (index_t i = 0; i < n; ++i) ASSERT_EQ(hxi(b, i), double(b * 100 + i));
  ibla::convert(Kokkos::DefaultExecutionSpace(), xi, back);
  auto hb = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), back);
  for (index_t b = 0; b < batch; ++b)
    for (index_t i = 0; i < n; ++i) ASSERT_EQ(hb(b, i), double(b * 100 + i));
}

template <class T>
void pointer_array_round_trip(index_t batch, int m, int n, int ld) {
  SCOPED_TRACE(::testing::Message() << "P2P batch " << batch << " " << m << "x" << n << " ld " << ld);
  // Separately allocated matrices, as an application holding its own storage.
  std::vector<std::vector<T>> mats(size_t(batch), std::vector<T>(size_t(ld) * n + 1));
  std::vector<T*> ptrs(static_cast<size_t>(batch));
  HostBatch<T> h = random_batch<T>(batch, m, n, 77);
  for (index_t b = 0; b < batch; ++b) {
    ptrs[size_t(b)] = mats[size_t(b)].data();
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) mats[size_t(b)][size_t(i + j * ld)] = h(b, i, j);
  }
  Kokkos::View<T***, ibla::LayoutBlockInterleaved<8>, Kokkos::HostSpace> A("A", batch, m, n);
  const Kokkos::DefaultHostExecutionSpace exec;
  ibla::convert(exec, ibla::pointer_array(ptrs.data(), batch, m, n, ld), A);
  ASSERT_TRUE(batches_equal(read_view(A), h));

  // Back into fresh matrices; the padding rows beyond m must stay untouched.
  std::vector<std::vector<T>> out(size_t(batch), std::vector<T>(size_t(ld) * n + 1, T(-7)));
  std::vector<T*> out_ptrs(static_cast<size_t>(batch));
  for (index_t b = 0; b < batch; ++b) out_ptrs[size_t(b)] = out[size_t(b)].data();
  ibla::convert(exec, A, ibla::pointer_array(out_ptrs.data(), batch, m, n, ld));
  for (index_t b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < ld; ++i) {
        const T want = i < m ? h(b, i, j) : T(-7);
        ASSERT_EQ(out[size_t(b)][size_t(i + j * ld)], want) << b << " " << i << " " << j;
      }
}

TEST(Convert, PointerArraysBothWays) {
  for (index_t batch : {1, 7, 8, 9, 100}) {
    pointer_array_round_trip<double>(batch, 5, 3, 5);
    pointer_array_round_trip<double>(batch, 5, 3, 9);
    pointer_array_round_trip<float>(batch, 32, 32, 33);
    pointer_array_round_trip<float>(batch, 1, 4, 1);
  }
}

TEST(Convert, EmptyBatchesAreNoOps) {
  Kokkos::View<double***, Kokkos::LayoutRight> a("a", 0, 3, 3);
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>> b("b", 0, 3, 3);
  EXPECT_NO_THROW(ibla::convert(Kokkos::DefaultExecutionSpace(), a, b));
  Kokkos::View<double***, Kokkos::LayoutRight> c("c", 4, 0, 3);
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>> d("d", 4, 0, 3);
  EXPECT_NO_THROW(ibla::convert(Kokkos::DefaultExecutionSpace(), c, d));
}
