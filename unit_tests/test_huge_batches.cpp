// Huge batches: every offset is computed in 64 bits.
//  - Offsets.*: ibla::InterleavedIndex, the Kokkos View mapping
//    (Kokkos::Impl::ViewOffset, or the mdspan mapping where View is built on
//    mdspan) of both interleaved layouts, and the strides
//    kernels get from lane_layout_traits, at indices whose offset passes 2^31
//    and 2^32, against the formula evaluated in __int128. Nothing of that
//    size is allocated.
//  - TenMillion.*: 10^7 2x2 problems through gemm and convert, checked
//    exactly (small integer entries, so every result is exact in float).
//  - HugeRun.*: opt-in (IBLA_HUGE_TESTS=1, ctest label "huge"): one real
//    gemm whose C holds more than 2^31 floats (about 9 GiB in all), checked
//    exactly on every problem. Skipped otherwise.
#include "support/reference.hpp"
#include "support/configs.hpp"  // its gemm calls are instances (instances.hpp)

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

#include <cstdlib>

using namespace ibla_test;
using ibla::index_t;
using ibla::Op;

namespace {

// __extension__: __int128 is a GCC/Clang extension, and the tests build with
// -Wpedantic -Werror (unit_tests/CMakeLists.txt).
__extension__ typedef __int128 i128;

/// The layout formula of interleaved_index.hpp, in 128-bit arithmetic.
i128 ref_offset(i128 lanes, i128 rows, i128 cols, i128 b, i128 i, i128 j) {
  return ((b / lanes) * rows * cols + j * rows + i) * lanes + b % lanes;
}

constexpr index_t two31 = index_t(1) << 31;
constexpr index_t two32 = index_t(1) << 32;

/// Batch indices around and past the points where a 32-bit offset would wrap.
std::vector<index_t> probe_batches(index_t batch) {
  std::vector<index_t> out;
  for (index_t b : {index_t(0), index_t(1), batch / 2, batch - 2, batch - 1})
    if (b >= 0 && b < batch) out.push_back(b);
  return out;
}

/// The mapping a Kokkos View of Layout uses: ViewOffset on Kokkos 3.x/4.x,
/// the mdspan mapping of kokkos_mdspan_mapping.hpp where View is built on
/// mdspan. A rank-3 (batch, rows, cols) or rank-2 (batch, rows) View.
/// Kokkos 3.x stores the extents of Views with 3 or more runtime extents as
/// 32-bit unsigned (ViewDimension), so a rank-3 batch count must stay below
/// 2^32 there; rank-2 and rank-1 Views keep 64-bit extents. Offsets are
/// 64-bit in every case, which is what is tested.
template <class Layout, int Rank>
class ViewMapping {
  static_assert(Rank == 2 || Rank == 3, "rank-2 or rank-3 Views");
#if IBLA_IMPL_MDSPAN_VIEW
  using Map = typename Kokkos::Impl::LayoutFromArrayLayout<Layout>::type::template mapping<
      Kokkos::dextents<size_t, Rank>>;
  static Map make(index_t batch, index_t rows, index_t cols) {
    if constexpr (Rank == 3) return Map(Kokkos::dextents<size_t, 3>(batch, rows, cols));
    else return Map(Kokkos::dextents<size_t, 2>(batch, rows));
  }
#else
  using Map = std::conditional_t<
      Rank == 3, Kokkos::Impl::ViewOffset<Kokkos::Impl::ViewDimension<0, 0, 0>, Layout, void>,
      Kokkos::Impl::ViewOffset<Kokkos::Impl::ViewDimension<0, 0>, Layout, void>>;
  static Map make(index_t batch, index_t rows, index_t cols) {
    if constexpr (Rank == 3)
      return Map(std::integral_constant<unsigned, 0>{}, Layout(size_t(batch), size_t(rows), size_t(cols)));
    else return Map(std::integral_constant<unsigned, 0>{}, Layout(size_t(batch), size_t(rows)));
  }
#endif
  Map map_;

 public:
  ViewMapping(index_t batch, index_t rows, index_t cols) : map_(make(batch, rows, cols)) {}
#if IBLA_IMPL_MDSPAN_VIEW
  i128 batch() const { return i128(map_.extents().extent(0)); }
  i128 span() const { return i128(map_.required_span_size()); }
  i128 size() const {
    i128 n = 1;
    for (int r = 0; r < Rank; ++r) n *= i128(map_.extents().extent(r));
    return n;
  }
  template <class... I>
  i128 operator()(I... i) const { return i128(map_(size_t(i)...)); }
#else
  i128 batch() const { return i128(map_.dimension_0()); }
  i128 span() const { return i128(map_.span()); }
  i128 size() const { return i128(map_.size()); }
  template <class... I>
  i128 operator()(I... i) const { return i128(map_(i...)); }
#endif
};

/// Checks InterleavedIndex and ViewOffset of Layout for a (batch, rows, cols)
/// View (Rank 3) or a (batch, rows) View (Rank 2, cols = 1) against the
/// 128-bit formula.
template <class Layout, int Rank = 3>
void check_offsets(index_t batch, index_t rows, index_t cols) {
  if (Rank == 2) cols = 1;
  SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " rank " << Rank << " batch "
                                    << batch << " rows " << rows << " cols " << cols);
  const auto idx = ibla::interleaved_index<Layout>(batch, rows, cols);
  const i128 lanes = idx.lanes;
  const ViewMapping<Layout, Rank> off(batch, rows, cols);
  ASSERT_TRUE(off.batch() == i128(batch)) << "extent not representable in this Kokkos";
  // The span (padding of the last block included) and the largest offset.
  const i128 blocks = (i128(batch) + lanes - 1) / lanes;
  EXPECT_TRUE(i128(idx.span(batch)) == blocks * lanes * rows * cols);
  EXPECT_TRUE(off.span() == blocks * lanes * rows * cols);
  bool passes_2_31 = false;
  for (index_t b : probe_batches(batch))
    for (index_t i : {index_t(0), rows / 2, rows - 1})
      for (index_t j : {index_t(0), cols / 2, cols - 1}) {
        const i128 want = ref_offset(lanes, rows, cols, b, i, j);
        const index_t got_idx = idx.offset(b, i, j);
        i128 got_view;
        if constexpr (Rank == 3) {
          got_view = off(b, i, j);
        } else {
          got_view = off(b, i);
        }
        ASSERT_TRUE(i128(got_idx) == want) << "InterleavedIndex::offset(" << b << "," << i << "," << j
                                           << ") = " << got_idx;
        ASSERT_TRUE(got_view == want) << "View mapping(" << b << "," << i << "," << j
                                      << ") = " << index_t(got_view);
        passes_2_31 = passes_2_31 || want >= two31;
      }
  EXPECT_TRUE(passes_2_31) << "the probes do not reach 2^31: the test would prove nothing";
  if constexpr (Rank == 3) {
    // The strides a kernel's LaneBlock gets (an unmanaged View over a small
    // buffer: only extents are used, nothing is dereferenced).
    static double buffer[1];
    Kokkos::View<double***, Layout, Kokkos::MemoryTraits<Kokkos::Unmanaged>> v(
        buffer, Layout(size_t(batch), size_t(rows), size_t(cols)));
    using traits = ibla::lane_layout_traits<Layout>;
    EXPECT_TRUE(i128(traits::row_stride(v)) == lanes);
    EXPECT_TRUE(i128(traits::col_stride(v)) == lanes * rows);
    EXPECT_TRUE(i128(v.span()) == blocks * lanes * rows * cols);
  }
}

bool huge_tests_enabled() {
  const char* env = std::getenv("IBLA_HUGE_TESTS");
  return env != nullptr && std::string(env) == "1";
}

/// Small integers: products and sums of a few of them are exact in float.
KOKKOS_INLINE_FUNCTION float entry(index_t b, int i, int j, int salt) {
  return float(int((b * 7 + i * 3 + j * 5 + salt) % 9) - 4);
}

/// C = alpha A B + beta C0 on batch problems of m x k times k x n with the
/// entries above, then counts the problems whose result is not exact.
template <class Layout>
index_t gemm_exact_mismatches(index_t batch, int m, int n, int k) {
  using T = float;
  using Exec = Kokkos::DefaultExecutionSpace;
  Kokkos::View<T***, Layout> A(Kokkos::view_alloc(Kokkos::WithoutInitializing, "A"), batch, m, k);
  Kokkos::View<T***, Layout> B(Kokkos::view_alloc(Kokkos::WithoutInitializing, "B"), batch, k, n);
  Kokkos::View<T***, Layout> C(Kokkos::view_alloc(Kokkos::WithoutInitializing, "C"), batch, m, n);
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Exec, Kokkos::IndexType<index_t>>(0, batch),
      KOKKOS_LAMBDA(const index_t b) {
        for (int i = 0; i < m; ++i)
          for (int p = 0; p < k; ++p) A(b, i, p) = entry(b, i, p, 1);
        for (int p = 0; p < k; ++p)
          for (int j = 0; j < n; ++j) B(b, p, j) = entry(b, p, j, 2);
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) C(b, i, j) = entry(b, i, j, 3);
      });
  const T alpha = 2, beta = -1;
  ibla::gemm(Exec(), Op::N, Op::N, alpha, A, B, beta, C);
  index_t bad = 0;
  Kokkos::parallel_reduce(
      "check", Kokkos::RangePolicy<Exec, Kokkos::IndexType<index_t>>(0, batch),
      KOKKOS_LAMBDA(const index_t b, index_t& count) {
        bool ok = true;
        for (int i = 0; i < m; ++i)
          for (int j = 0; j < n; ++j) {
            T sum = 0;
            for (int p = 0; p < k; ++p) sum += entry(b, i, p, 1) * entry(b, p, j, 2);
            ok = ok && C(b, i, j) == alpha * sum + beta * entry(b, i, j, 3);
          }
        if (!ok) ++count;
      },
      bad);
  // And the same problems through the reference BLAS on a sample (also covers
  // the entry formula itself).
  auto hC = Kokkos::create_mirror_view(C);
  mirror_copy(hC, C);
  for (index_t b = 0; b < batch; b += batch / 97 + 1) {
    std::vector<T> a(size_t(m * k)), bb(size_t(k * n)), c(size_t(m * n));
    for (int i = 0; i < m; ++i)
      for (int p = 0; p < k; ++p) a[size_t(p * m + i)] = entry(b, i, p, 1);
    for (int p = 0; p < k; ++p)
      for (int j = 0; j < n; ++j) bb[size_t(j * k + p)] = entry(b, p, j, 2);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) c[size_t(j * m + i)] = entry(b, i, j, 3);
    ref_gemm(Op::N, Op::N, m, n, k, alpha, a.data(), m, bb.data(), k, beta, c.data(), m);
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        if (hC(b, i, j) != c[size_t(j * m + i)]) {
          ADD_FAILURE() << "problem " << b << " C(" << i << "," << j << ") = " << hC(b, i, j)
                        << ", CBLAS " << c[size_t(j * m + i)];
          return bad + 1;
        }
  }
  return bad;
}

}  // namespace

TEST(Offsets, BlockInterleavedPast2To31And2To32) {
  // 2^31 and 2^32 are crossed inside one matrix, between blocks, and in the
  // padded last block.
  check_offsets<ibla::LayoutBlockInterleaved<8>>(two31 / 4 + 3, 2, 2);
  check_offsets<ibla::LayoutBlockInterleaved<8>>(two32 / 1024 + 5, 32, 32);
  check_offsets<ibla::LayoutBlockInterleaved<5>>(two32 / 7 + 1, 3, 3);
  check_offsets<ibla::LayoutBlockInterleaved<16>>(two32 - 1, 2, 3);
  // Batch counts past 2^32 (rank-2 Views: right-hand sides, pivots).
  check_offsets<ibla::LayoutBlockInterleaved<16>, 2>(3 * two32 + 11, 2, 1);
  check_offsets<ibla::LayoutBlockInterleaved<8>, 2>(two32 + 1, 1, 1);
}

TEST(Offsets, InterleavedPast2To31And2To32) {
  // Here the lane count is the batch itself: the row stride alone passes 2^31.
  check_offsets<ibla::LayoutInterleaved>(two31 + 1, 2, 2);
  check_offsets<ibla::LayoutInterleaved>(two32 / 1000, 32, 32);
  check_offsets<ibla::LayoutInterleaved, 2>(two32 + 7, 3, 1);
}

// View::size() of a rank-3 interleaved View whose element count passes 2^32.
// Kokkos 3.x keeps rank-3 extents as 32-bit unsigned, and ibla's
// ViewOffset::size() must widen before it multiplies (2^22 * 32 * 32 would
// wrap to 0 in 32 bits).
TEST(Offsets, ViewSizePast2To32Elements) {
  using Layout = ibla::LayoutBlockInterleaved<8>;
  const index_t batch = two32 / 1024 + 5, rows = 32, cols = 32;
  const ViewMapping<Layout, 3> off(batch, rows, cols);
  EXPECT_TRUE(off.size() == i128(batch) * rows * cols) << "size() = " << index_t(off.size());
}

TEST(Offsets, LaneBlockOriginOfAHugeBlock) {
  // lane_block's origin for the last block of a batch whose block offset
  // passes 2^32: taken from the View mapping, in 64 bits.
  using Layout = ibla::LayoutBlockInterleaved<8>;
  const index_t batch = two32 / 16 + 9, rows = 4, cols = 4;
  const ViewMapping<Layout, 3> off(batch, rows, cols);
  const index_t first = (batch - 1) / 8 * 8;
  EXPECT_TRUE(off(first, 0, 0) == i128(first) * rows * cols);
  EXPECT_TRUE(off(first, 0, 0) > i128(two32));
}

TEST(TenMillion, Gemm2x2) {
  const index_t batch = 10'000'000;
  EXPECT_EQ(gemm_exact_mismatches<ibla::LayoutBlockInterleaved<16>>(batch, 2, 2, 2), 0);
  EXPECT_EQ(gemm_exact_mismatches<ibla::LayoutInterleaved>(batch, 2, 2, 2), 0);
}

// A free function: nvcc rejects device lambdas inside a TEST body.
index_t convert_round_trip_mismatches(const index_t batch) {
  Kokkos::View<float***, Kokkos::LayoutRight> src("src", batch, 2, 2), back("back", batch, 2, 2);
  Kokkos::View<float***, ibla::LayoutBlockInterleaved<16>> mid("mid", batch, 2, 2);
  Kokkos::parallel_for(
      "fill", Kokkos::RangePolicy<Kokkos::IndexType<index_t>>(0, batch), KOKKOS_LAMBDA(const index_t b) {
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 2; ++j) src(b, i, j) = float(b % 1000003) + 0.25f * float(2 * j + i);
      });
  ibla::convert(Kokkos::DefaultExecutionSpace(), src, mid);
  ibla::convert(Kokkos::DefaultExecutionSpace(), mid, back);
  index_t bad = 0;
  Kokkos::parallel_reduce(
      "check", Kokkos::RangePolicy<Kokkos::IndexType<index_t>>(0, batch),
      KOKKOS_LAMBDA(const index_t b, index_t& count) {
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 2; ++j)
            if (back(b, i, j) != src(b, i, j) || mid(b, i, j) != src(b, i, j)) ++count;
      },
      bad);
  return bad;
}

TEST(TenMillion, Convert2x2) {
  const index_t batch = 10'000'000;
  EXPECT_EQ(convert_round_trip_mismatches(batch), 0);
}

// Opt-in: a C of 2^23 + 3 problems of 16 x 16 floats holds 2^31 + 768
// elements (8 GiB; A and B add 0.5 GiB each). Run with
//   IBLA_HUGE_TESTS=1 ctest -L huge   (or the binary test_huge_batches directly)
TEST(HugeRun, GemmPast2To31Elements) {
  if (!huge_tests_enabled()) GTEST_SKIP() << "set IBLA_HUGE_TESTS=1 to run (needs ~9 GiB)";
  const index_t batch = (index_t(1) << 23) + 3;
  ASSERT_GT(batch * 16 * 16, two31);
  EXPECT_EQ(gemm_exact_mismatches<ibla::LayoutBlockInterleaved<16>>(batch, 16, 16, 1), 0);
  EXPECT_EQ(gemm_exact_mismatches<ibla::LayoutInterleaved>(batch, 16, 16, 1), 0);
}
