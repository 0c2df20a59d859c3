// The interleaved layouts as Kokkos layouts: the offset formula and its
// padding, and the Kokkos facilities a user relies on (deep_copy between
// Views and from a scalar, mirrors, const and unmanaged Views, rank-1/2
// Views), and the prefetch of a block's lines, which the kernels derive
// from the layout's contiguity.
#include "support/batch.hpp"
#include "support/reference.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <type_traits>
#include <vector>

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
    auto hp = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), p);
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
    ibla::deep_copy(mirror, A);  // = Kokkos::deep_copy where one space reaches the other
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
  ibla::deep_copy(U, A);
  EXPECT_TRUE(batches_equal(read_view(U), h));
}

// ibla::deep_copy / ibla::create_mirror_view_and_copy: Kokkos::deep_copy
// between two memory spaces that cannot reach each other (CudaSpace and
// HostSpace) throws for a non-contiguous span, which a padded last block
// makes (H100, Kokkos 3.4). On a host backend the public calls are
// Kokkos::deep_copy itself; the cross-space algorithm is also run directly
// on host Views (DeepCopy.EveryPathOfTheCrossSpaceCopy) so every branch of
// it is exercised on every backend.
namespace {

/// A value that differs for every element of every operand.
KOKKOS_INLINE_FUNCTION double tag_value(index_t b, int i, int j, int salt) {
  return double(b) * 1000.0 + double(i) * 10.0 + double(j) + 0.25 * double(salt);
}

template <class V>
void fill_tagged(const V& v, int salt) {
  using Exec = typename V::execution_space;
  Kokkos::parallel_for(
      "fill_tagged",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>>({0, 0, 0}, {index_t(v.extent(0)), index_t(v.extent(1)),
                                                               index_t(v.extent(2))}),
      KOKKOS_LAMBDA(const index_t b, const index_t i, const index_t j) {
        v(b, i, j) = tag_value(b, int(i), int(j), salt);
      });
  Kokkos::fence();
}

/// Elements of v (in its own space) that differ from tag_value(salt).
template <class V>
index_t count_mismatches(const V& v, int salt) {
  using Exec = typename V::execution_space;
  index_t bad = 0;
  Kokkos::parallel_reduce(
      "count_mismatches",
      Kokkos::MDRangePolicy<Exec, Kokkos::Rank<3>>({0, 0, 0}, {index_t(v.extent(0)), index_t(v.extent(1)),
                                                               index_t(v.extent(2))}),
      KOKKOS_LAMBDA(const index_t b, const index_t i, const index_t j, index_t& n) {
        if (v(b, i, j) != tag_value(b, int(i), int(j), salt)) ++n;
      },
      bad);
  return bad;
}

/// src in the default execution space's memory, host in HostSpace, and back.
template <class SrcView, class HostView>
void round_trip_through_host(const SrcView& src, const HostView& host) {
  SCOPED_TRACE(::testing::Message() << layout_name<typename SrcView::array_layout>() << " -> "
                                    << layout_name<typename HostView::array_layout>() << ", batch "
                                    << src.extent(0));
  fill_tagged(src, 1);
  ibla::deep_copy(host, src);
  ASSERT_EQ(count_mismatches(host, 1), 0);
  fill_tagged(host, 2);
  ibla::deep_copy(Kokkos::DefaultExecutionSpace(), src, host);  // the execution-space form
  Kokkos::fence();
  ASSERT_EQ(count_mismatches(src, 2), 0);
}

template <class Layout>
Kokkos::View<double***, Layout, Kokkos::HostSpace> on_host(index_t batch, int m, int n) {
  return Kokkos::View<double***, Layout, Kokkos::HostSpace>("host", batch, m, n);
}

/// info(b) = b + 1, ipiv(b, i) = 10 b + i, on the Views' own space (a device
/// lambda cannot sit in a TEST body, a private member function).
template <class Info, class Pivots>
void tag_info_and_pivots(const Info& info, const Pivots& ipiv) {
  Kokkos::parallel_for(
      "tag", Kokkos::RangePolicy<typename Info::execution_space>(0, index_t(info.extent(0))),
      KOKKOS_LAMBDA(const index_t b) {
        info(b) = int(b) + 1;
        for (int i = 0; i < int(ipiv.extent(1)); ++i) ipiv(b, i) = int(b) * 10 + i;
      });
  Kokkos::fence();
}

}  // namespace

TEST(DeepCopy, AcrossSpacesEveryLayoutPair) {
  for (index_t batch : {1, 5, 8, 17}) {
    Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>> b8("b8", batch, 3, 2);
    round_trip_through_host(b8, on_host<ibla::LayoutBlockInterleaved<8>>(batch, 3, 2));
    round_trip_through_host(b8, on_host<ibla::LayoutBlockInterleaved<3>>(batch, 3, 2));
    round_trip_through_host(b8, on_host<Kokkos::LayoutRight>(batch, 3, 2));
    round_trip_through_host(b8, on_host<ibla::LayoutInterleaved>(batch, 3, 2));
    Kokkos::View<double***, ibla::LayoutInterleaved> il("il", batch, 3, 2);
    round_trip_through_host(il, on_host<Kokkos::LayoutLeft>(batch, 3, 2));
    Kokkos::View<double***, Kokkos::LayoutRight> right("right", batch, 3, 2);
    round_trip_through_host(right, on_host<ibla::LayoutBlockInterleaved<8>>(batch, 3, 2));
    // Padded column-major matrices seen through LayoutStride.
    auto strided = make_view<double, LayoutStrideColMajor>("strided", batch, 3, 2);
    round_trip_through_host(strided, on_host<ibla::LayoutBlockInterleaved<3>>(batch, 3, 2));
    round_trip_through_host(
        strided, Kokkos::View<double***, Kokkos::LayoutStride, Kokkos::HostSpace>("host", strided.layout()));
  }
}

TEST(DeepCopy, RankOneAndTwoViews) {
  const index_t batch = 13;
  Kokkos::View<int*, ibla::LayoutBlockInterleaved<8>> info("info", batch);
  Kokkos::View<int**, ibla::LayoutBlockInterleaved<8>> ipiv("ipiv", batch, 5);
  tag_info_and_pivots(info, ipiv);
  auto hinfo = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), info);
  auto hpiv  = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), ipiv);
  for (index_t b = 0; b < batch; ++b) {
    ASSERT_EQ(hinfo(b), int(b) + 1);
    for (int i = 0; i < 5; ++i) ASSERT_EQ(hpiv(b, i), int(b) * 10 + i);
  }
  // A mirror in the View's own space is the View itself, as in Kokkos.
  auto same = ibla::create_mirror_view_and_copy(typename decltype(info)::memory_space(), info);
  EXPECT_EQ(same.data(), info.data());
}

TEST(DeepCopy, ExtentMismatchNamesDstAndCopiesNothing) {
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>, Kokkos::HostSpace> dst("dst", 17, 3, 2);
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>> src("src", 16, 3, 2);
  Kokkos::deep_copy(dst, 7.0);
  Kokkos::deep_copy(src, 1.0);
  try {
    ibla::deep_copy(dst, src);
    FAIL() << "no exception";
  } catch (const ibla::argument_error& e) {
    EXPECT_EQ(e.argument(), "dst");
    EXPECT_EQ(e.routine(), "deep_copy");
    EXPECT_NE(std::string(e.what()).find("extent(0) = 17"), std::string::npos) << e.what();
  }
  for (index_t b = 0; b < 17; ++b)
    for (int j = 0; j < 2; ++j)
      for (int i = 0; i < 3; ++i) ASSERT_EQ(dst(b, i, j), 7.0);
}

TEST(DeepCopy, EveryPathOfTheCrossSpaceCopy) {
  using ibla::detail::CopyPath;
  using ibla::detail::deep_copy_across_spaces;
  using Host = Kokkos::HostSpace;
  const index_t batch = 17;  // a padded last block for L = 8 and L = 3
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>, Host> b8("b8", batch, 3, 2),
      b8_copy("b8_copy", batch, 3, 2);
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<3>, Host> b3("b3", batch, 3, 2);
  Kokkos::View<double***, Kokkos::LayoutRight, Host> right("right", batch, 3, 2);
  fill_tagged(b8, 3);

  EXPECT_EQ(deep_copy_across_spaces(b8_copy, b8), CopyPath::span);
  EXPECT_EQ(count_mismatches(b8_copy, 3), 0);
  EXPECT_EQ(deep_copy_across_spaces(b3, b8), CopyPath::staged_beside_dst);
  EXPECT_EQ(count_mismatches(b3, 3), 0);
  EXPECT_EQ(deep_copy_across_spaces(right, b3), CopyPath::staged_beside_dst);
  EXPECT_EQ(count_mismatches(right, 3), 0);

  // LayoutStride with padding on both sides, the same strides: one span.
  auto s1 = make_view<double, LayoutStrideColMajor>("s1", batch, 3, 2);
  Kokkos::View<double***, Kokkos::LayoutStride, Host> s2("s2", s1.layout());
  fill_tagged(s1, 4);
  EXPECT_EQ(deep_copy_across_spaces(s2, s1), CopyPath::span);
  EXPECT_EQ(count_mismatches(s2, 4), 0);

  // A LayoutStride source aliasing the upper half of every matrix of a
  // larger allocation: its layout() rebuilds the same strides beside dst.
  Kokkos::View<double***, Kokkos::LayoutLeft, Host> wide("wide", batch, 6, 2);
  Kokkos::View<double***, Kokkos::LayoutStride, Host> upper =
      Kokkos::subview(wide, Kokkos::ALL(), Kokkos::make_pair(0, 3), Kokkos::ALL());
  fill_tagged(upper, 5);
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>, Host> from_upper("from_upper", batch, 3, 2);
  EXPECT_EQ(deep_copy_across_spaces(from_upper, upper), CopyPath::staged_beside_dst);
  EXPECT_EQ(count_mismatches(from_upper, 5), 0);
  EXPECT_EQ(deep_copy_across_spaces(upper, b8), CopyPath::staged_beside_dst);
  EXPECT_EQ(count_mismatches(upper, 3), 0);

  // A source whose mapping its layout() does not rebuild: Kokkos 3.4's
  // LayoutLeft forgets the padding of a padded View (newer Kokkos keeps it
  // in LayoutLeft::stride). The copy is then converted beside the source,
  // into the destination's mapping.
  const index_t big = 37;  // Kokkos pads a leading extent > 32 doubles to a multiple of 8
  using Left = Kokkos::View<double***, Kokkos::LayoutLeft, Host>;
  Left padded(Kokkos::view_alloc(std::string("padded"), Kokkos::AllowPadding), big, 3, 2);
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>, Host> from_padded("from_padded", big, 3, 2);
  fill_tagged(padded, 6);
  const bool layout_keeps_padding = ibla::detail::same_mapping(Left("rebuilt", padded.layout()), padded);
  EXPECT_EQ(deep_copy_across_spaces(from_padded, padded),
            layout_keeps_padding ? CopyPath::staged_beside_dst : CopyPath::staged_beside_src)
      << "padded stride(1) = " << padded.stride(1);
  EXPECT_EQ(count_mismatches(from_padded, 6), 0);
#if KOKKOS_VERSION < 40000
  EXPECT_FALSE(layout_keeps_padding) << "the staged_beside_src path went untested";
#endif
}

// fixed_order_block<n> (the column stride as the compile-time n * L that
// the kernels of order n index with) addresses exactly the elements that
// lane_block does, in a block-interleaved batch of n x m matrices and of
// n-vectors; a block with a runtime row stride comes back unchanged.
template <class T, unsigned L, int N>
void expect_fixed_order_block_addresses(const int m) {
  Kokkos::View<T***, ibla::LayoutBlockInterleaved<L>, Kokkos::HostSpace> A("A", 3 * L, N, m);
  Kokkos::View<T**, ibla::LayoutBlockInterleaved<L>, Kokkos::HostSpace> v("v", 3 * L, N);
  const auto block = ibla::lane_block(A, L, ibla::lanes_c<int(L)>{});
  const auto fixed = ibla::fixed_order_block<N>(block);
  // Host code: on the device pass of a CUDA build (which compiles this file
  // too) blocks keep runtime strides (lane_block_row_stride_t).
#if !IBLA_IMPL_DEVICE_PASS
  static_assert(std::is_same<typename decltype(fixed)::col_stride,
                             std::integral_constant<ibla::index_t, N * ibla::index_t(L)>>::value,
                "a block-interleaved block of order N has the column stride N * L");
#endif
  for (int j = 0; j < m; ++j)
    for (int i = 0; i < N; ++i)
      for (int l = 0; l < int(L); ++l) {
        EXPECT_EQ(&fixed(i, j, l), &A(L + l, i, j)) << i << " " << j << " " << l;
        EXPECT_EQ(&fixed(i, j, l), &block(i, j, l));
      }
  const auto vector =
      ibla::fixed_order_block<N>(ibla::lane_block(v, 2 * L, ibla::lanes_c<int(L)>{}));
  for (int i = 0; i < N; ++i)
    for (int l = 0; l < int(L); ++l) EXPECT_EQ(&vector(i, 0, l), &v(2 * L + l, i));
}

TEST(LaneBlock, FixedOrderBlockAddressesTheSameElements) {
  expect_fixed_order_block_addresses<double, 4, 3>(3);
  expect_fixed_order_block_addresses<double, 8, 7>(7);
  expect_fixed_order_block_addresses<double, 8, 7>(2);
  expect_fixed_order_block_addresses<float, 16, 12>(12);
  expect_fixed_order_block_addresses<float, 5, 1>(4);
  Kokkos::View<double***, Kokkos::LayoutLeft, Kokkos::HostSpace> left("left", 20, 5, 5);
  const auto block = ibla::lane_block(left, 8, ibla::lanes_c<8>{});
  static_assert(std::is_same<decltype(ibla::fixed_order_block<5>(block)),
                             std::remove_const_t<decltype(block)>>::value,
                "a block with a runtime row stride keeps its runtime strides");
}

// The line that holds p, as the prefetch requests count lines.
static std::uintptr_t line_of(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) / ibla::impl::BlockPrefetch::line;
}

// BlockPrefetch (kernels/prefetch.hpp) on the block after the first of a
// block-interleaved batch: after `steps` calls of step() planned for
// `steps`, exactly the lines that hold an element of the requested part
// (the uplo triangle, or the whole block, which small blocks take for their
// triangle too) have been requested, spread over the steps, and nothing
// more comes after. Element widths below, at and above a 64-byte line.
template <class T, unsigned L>
void expect_prefetch_lines(const int n) {
  using View = Kokkos::View<T***, ibla::LayoutBlockInterleaved<L>, Kokkos::HostSpace>;
  View A("A", 3 * L, n, n);
  const auto block = ibla::lane_block(A, L, ibla::lanes_c<int(L)>{});
  // A block within prefetch_whole_triangle_bytes is requested whole.
  const bool small = ibla::index_t(n) * n * L * ibla::index_t(sizeof(T)) <=
                     ibla::impl::prefetch_whole_triangle_bytes;
  for (const int part : {0, 1, 2}) {  // lower, upper, whole block
    std::set<std::uintptr_t> want;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i)
        if (part == 2 || small || (part == 0 ? i >= j : i <= j))
          for (unsigned l = 0; l < L; ++l) want.insert(line_of(&A(L + l, i, j)));
    for (const ibla::index_t steps : {1, 2, 3, 7, 36, 1000}) {
      SCOPED_TRACE("L " + std::to_string(L) + " sizeof " + std::to_string(sizeof(T)) + " n " +
                   std::to_string(n) + " part " + std::to_string(part) + " steps " +
                   std::to_string(steps));
      ibla::impl::BlockPrefetch prefetch;
      if (part == 2) prefetch.add(block);
      else prefetch.add_triangle(block, part == 0 ? ibla::Uplo::Lower : ibla::Uplo::Upper);
      prefetch.plan(steps);
      std::set<std::uintptr_t> got;
      ibla::index_t last_requesting_step = -1;
      for (ibla::index_t s = 0; s < steps; ++s)
        prefetch.step([&](const char* p) {
          got.insert(line_of(p));
          last_requesting_step = s;
        });
      EXPECT_EQ(got, want);
      // Spread over the steps, not finished early: with many lines a step,
      // the requests reach the last fifth of the steps (rounding steps down
      // to a power of two, as plan() once did, ended them at step 1 of 3
      // and 3 of 7).
      if (ibla::index_t(want.size()) >= 16 * steps) {
        EXPECT_GE(last_requesting_step, (4 * steps + 4) / 5 - 1);
      }
      int after = 0;
      prefetch.step([&](const char*) { ++after; });
      EXPECT_EQ(after, 0);
    }
  }
}

// BlockPrefetch::step_whole_blocks, which the GEMM of compile-time order
// and strides calls instead of plan() and step(): its Steps calls request
// exactly the lines of every whole block added (here the same block twice
// and another), whatever the blocks' offsets within a line, and a call past
// the last step requests nothing.
template <class T, unsigned L, int N, int Steps, int... Step>
void expect_whole_block_lines(std::integer_sequence<int, Step...>) {
  using View = Kokkos::View<T***, ibla::LayoutBlockInterleaved<L>, Kokkos::HostSpace>;
  View A("A", 4 * L, N, N);
  constexpr ibla::index_t bytes = ibla::index_t(N) * N * L * sizeof(T);
  for (const ibla::index_t first : {ibla::index_t(L), ibla::index_t(2 * L)}) {
    SCOPED_TRACE("L " + std::to_string(L) + " sizeof " + std::to_string(sizeof(T)) + " n " +
                 std::to_string(N) + " steps " + std::to_string(Steps) + " first " +
                 std::to_string(first));
    std::set<std::uintptr_t> want;
    for (const ibla::index_t b : {first, first + ibla::index_t(L)})
      for (int j = 0; j < N; ++j)
        for (int i = 0; i < N; ++i)
          for (unsigned l = 0; l < L; ++l) want.insert(line_of(&A(b + l, i, j)));
    ibla::impl::BlockPrefetch prefetch;
    const auto block = ibla::lane_block(A, first, ibla::lanes_c<int(L)>{});
    ASSERT_EQ(block.contiguous_size() * ibla::index_t(sizeof(T)), bytes);
    prefetch.add(block);
    prefetch.add(block);
    prefetch.add(ibla::lane_block(A, first + L, ibla::lanes_c<int(L)>{}));
    std::set<std::uintptr_t> got;
    const auto record = [&](const char* p) { got.insert(line_of(p)); };
    (prefetch.step_whole_blocks<bytes, Steps, Step>(record), ...);
    EXPECT_EQ(got, want);
    int after = 0;
    prefetch.step_whole_blocks<bytes, Steps, Steps>([&](const char*) { ++after; });
    EXPECT_EQ(after, 0);
  }
}

template <class T, unsigned L, int... N>
void expect_whole_block_lines_for_orders(std::integer_sequence<int, N...>) {
  ((expect_whole_block_lines<T, L, N, 1>(std::make_integer_sequence<int, 1>{}),
    expect_whole_block_lines<T, L, N, 3>(std::make_integer_sequence<int, 3>{}),
    expect_whole_block_lines<T, L, N, 9>(std::make_integer_sequence<int, 9>{})),
   ...);
}

TEST(BlockPrefetch, WholeBlockStepsRequestExactlyTheBlocksLines) {
  // Orders where a block is less than a line, ends inside one, or fills
  // whole lines (n = 2, L = 4 doubles: 128 bytes); one lane stride of 24
  // bytes (L = 3 doubles), whose blocks start anywhere within a line.
  using orders = std::integer_sequence<int, 1, 2, 3, 5, 10>;
  expect_whole_block_lines_for_orders<double, 4>(orders{});
  expect_whole_block_lines_for_orders<float, 8>(orders{});
  expect_whole_block_lines_for_orders<double, 3>(orders{});
}

// BlockPrefetch::cursor, which GEMM's sequences of compile-time order call
// before every k step (a cursor per operand) and TRSM's register form on
// several right-hand sides before every column: over lines / Lines calls,
// where the blocks fill whole lines, a cursor requests exactly the lines of
// its range, Lines a call in address order, from the range's first line,
// and leaves the prefetch's own state as it was; each range its own cursor
// (here the same block twice and the next).
template <class T, unsigned L, int N, int Lines>
void expect_cursor_lines() {
  using View = Kokkos::View<T***, ibla::LayoutBlockInterleaved<L>, Kokkos::HostSpace>;
  View A("A", 4 * L, N, N);
  SCOPED_TRACE("L " + std::to_string(L) + " sizeof " + std::to_string(sizeof(T)) + " n " +
               std::to_string(N) + " lines a call " + std::to_string(Lines));
  constexpr ibla::index_t line  = ibla::impl::BlockPrefetch::line;
  constexpr ibla::index_t bytes = ibla::index_t(N) * N * L * sizeof(T);
  static_assert(bytes % (line * Lines) == 0, "whole lines, a whole number of calls");
  const auto block = ibla::lane_block(A, L, ibla::lanes_c<int(L)>{});
  const auto next  = ibla::lane_block(A, 2 * L, ibla::lanes_c<int(L)>{});
  ASSERT_EQ(reinterpret_cast<std::uintptr_t>(block.data) % line, 0u);
  ibla::impl::BlockPrefetch prefetch;
  prefetch.add(block);
  prefetch.add(block);
  prefetch.add(next);
  const char* const starts[3] = {reinterpret_cast<const char*>(block.data),
                                 reinterpret_cast<const char*>(block.data),
                                 reinterpret_cast<const char*>(next.data)};
  for (int r = 0; r < 3; ++r) {
    std::vector<const char*> got;
    auto cursor = prefetch.cursor<Lines>(r, [&](const char* p) { got.push_back(p); });
    for (ibla::index_t call = 0; call < bytes / (line * Lines); ++call) {
      got.clear();
      cursor();
      ASSERT_EQ(got.size(), size_t(Lines));
      for (int i = 0; i < Lines; ++i) EXPECT_EQ(got[size_t(i)], starts[r] + (call * Lines + i) * line);
    }
  }
  std::vector<const char*> got;
  prefetch.plan(1);  // all of every range in one step: still all of it
  prefetch.step([&](const char* p) { got.push_back(p); });
  EXPECT_EQ(got.size(), size_t(3 * bytes / line));
}

TEST(BlockPrefetch, CursorsRequestTheirRangesLinesInOrder) {
  expect_cursor_lines<double, 8, 8, 2>();   // GEMM order 8, L = 8 doubles: 32 k steps
  expect_cursor_lines<float, 16, 8, 2>();
  expect_cursor_lines<double, 8, 10, 1>();  // order 10's panels: 100 k steps
  expect_cursor_lines<double, 8, 6, 6>();   // TRSM order 6: a column a call
  expect_cursor_lines<double, 16, 5, 10>(); // two lines an element
}

// LineCursor::part(from, to), which TRSM's register form calls for the
// lines of A's triangle in each column of the next block: lines [from, to)
// of the next Lines, in order, and then the cursor is past all Lines of
// them, whatever part was requested (none, some, all).
// lines_of_one_run, which GEMM's runtime-order tiles check before their
// cursors: a contiguous block's lines; 0 for a range that is not there or
// a triangle (a run per column).
TEST(BlockPrefetch, CursorPartsRequestTheirLinesAndMoveAWholeColumn) {
  using View = Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>, Kokkos::HostSpace>;
  constexpr int N = 6;
  View A("A", 32, N, N);
  constexpr ibla::index_t line = ibla::impl::BlockPrefetch::line;
  const auto block = ibla::lane_block(A, 8, ibla::lanes_c<8>{});
  ibla::impl::BlockPrefetch prefetch;
  prefetch.add(block);
  prefetch.add_triangle(ibla::lane_block(A, 16, ibla::lanes_c<8>{}), ibla::Uplo::Lower);
  EXPECT_EQ(prefetch.lines_of_one_run(0), ibla::index_t(N) * N);
  EXPECT_EQ(prefetch.lines_of_one_run(1), 0);  // a triangle of 2304 bytes is a run per column
  EXPECT_EQ(prefetch.lines_of_one_run(2), 0);  // not there
  const char* const start = reinterpret_cast<const char*>(block.data);
  std::vector<const char*> got;
  auto cursor = prefetch.cursor<N>(0, [&](const char* p) { got.push_back(p); });
  for (int j = 0; j < N; ++j) {
    got.clear();
    cursor.part(j, N);  // a lower triangle's column j: rows j..N-1
    ASSERT_EQ(got.size(), size_t(N - j));
    for (int i = j; i < N; ++i) EXPECT_EQ(got[size_t(i - j)], start + (j * N + i) * line);
  }
  got.clear();
  cursor.part(0, 0);
  cursor();
  ASSERT_EQ(got.size(), size_t(N));
  EXPECT_EQ(got.front(), start + (N + 1) * N * line);  // the column after the skipped one
}

TEST(BlockPrefetch, RequestsExactlyTheLinesOfATriangleOrBlock) {
  for (int n = 1; n <= 32; ++n) {
    expect_prefetch_lines<double, 8>(n);
    expect_prefetch_lines<float, 16>(n);
    expect_prefetch_lines<double, 4>(n);
    expect_prefetch_lines<float, 8>(n);
    expect_prefetch_lines<double, 16>(n);
    expect_prefetch_lines<double, 3>(n);
  }
}

// for_each_line_of_triangle (kernels/prefetch.hpp), the lines TRSM requests
// of its own A's block: where an element is whole lines, every line of the
// uplo triangle's elements once and no line of the other triangle's; other
// element widths take the whole block (here blocks that start and end on a
// line). Blocks after the first of a batch, every order of the tests.
template <class T, unsigned L>
void expect_triangle_lines(const int n) {
  using View = Kokkos::View<T***, ibla::LayoutBlockInterleaved<L>, Kokkos::HostSpace>;
  View A("A", 3 * L, n, n);
  const bool whole_lines = (L * sizeof(T)) % ibla::impl::BlockPrefetch::line == 0;
  for (const ibla::index_t first : {ibla::index_t(L), ibla::index_t(2 * L)}) {
    const auto block = ibla::lane_block(A, first, ibla::lanes_c<int(L)>{});
    for (const ibla::Uplo uplo : {ibla::Uplo::Lower, ibla::Uplo::Upper}) {
      SCOPED_TRACE("L " + std::to_string(L) + " sizeof " + std::to_string(sizeof(T)) + " n " +
                   std::to_string(n) + " first " + std::to_string(first) +
                   (uplo == ibla::Uplo::Lower ? " lower" : " upper"));
      std::set<std::uintptr_t> want;
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          if (!whole_lines || (uplo == ibla::Uplo::Lower ? i >= j : i <= j))
            for (unsigned l = 0; l < L; ++l) want.insert(line_of(&A(first + l, i, j)));
      std::vector<std::uintptr_t> got;
      ibla::impl::for_each_line_of_triangle(block, uplo,
                                            [&](const char* p) { got.push_back(line_of(p)); });
      EXPECT_EQ(std::set<std::uintptr_t>(got.begin(), got.end()), want);
      EXPECT_EQ(got.size(), want.size());  // each line once
    }
  }
}

TEST(BlockPrefetch, OwnTriangleRequestsExactlyItsLines) {
  for (int n = 1; n <= 32; ++n) {
    expect_triangle_lines<double, 8>(n);
    expect_triangle_lines<double, 16>(n);
    expect_triangle_lines<float, 16>(n);
    expect_triangle_lines<float, 32>(n);
  }
  // 32-byte elements: the whole block, where it is whole lines.
  for (int n = 2; n <= 32; n += 2) {
    expect_triangle_lines<double, 4>(n);
    expect_triangle_lines<float, 8>(n);
  }
}
