// Batched LU with partial pivoting against netlib LAPACKE_{d,s}getrf on the
// same inputs: every square size 1..32 with batch counts {1, L-1, L, L+1,
// 1001}, rectangular shapes, every layout (pivots in the same layout as A),
// float and double; random matrices, matrices that force a row swap with the
// last row at every step, diagonally dominant ones (no swaps), ill-conditioned
// ones (graded U), exactly singular problems mixed with regular ones, NaN
// input, the team-level call inside a user kernel. ipiv and info must equal
// LAPACKE's; A is compared element-wise and checked for backward stability
// (tolerances documented in support/lu.hpp).
#include "support/lu.hpp"
#include "support/configs.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

#include <tuple>

using namespace ibla_test;

template <class C>
class Getrf : public ::testing::Test {};

TYPED_TEST_SUITE(Getrf, SweepConfigs);

/// ibla::getrf's answer for hA in Layout, read back.
template <class T>
struct GetrfResult {
  HostBatch<T> lu;
  std::vector<int> ipiv, info;
};

template <class T, class Layout>
GetrfResult<T> ibla_getrf(const HostBatch<T>& hA) {
  const index_t batch = hA.batch;
  const int m = int(hA.rows), n = int(hA.cols), k = std::min(m, n);
  auto A    = make_view<T, Layout>("A", batch, m, n);
  auto ipiv = make_rank2_view<int, Layout>("ipiv", batch, k);
  auto info = make_info<Layout>(batch);
  fill_view(A, hA);
  // Garbage in the outputs: getrf must write every entry.
  fill_rank2(ipiv, std::vector<int>(size_t(batch * k), -7));
  Kokkos::deep_copy(info, -7);
  ibla::getrf(Kokkos::DefaultExecutionSpace(), A, ipiv, info);
  Kokkos::fence();
  return {read_view(A), read_rank2(ipiv), read_info(info)};
}

/// Factors hA with ibla::getrf and checks it against LAPACKE. Returns the
/// number of problems compared element-wise.
template <class T, class Layout>
index_t run_getrf(const HostBatch<T>& hA, const char* what) {
  SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " " << what << " batch "
                                    << hA.batch << " m " << hA.rows << " n " << hA.cols);
  const auto got = ibla_getrf<T, Layout>(hA);
  return check_getrf(hA, got.lu, got.ipiv, got.info, ref_getrf_batch(hA));
}

TYPED_TEST(Getrf, SquareSizesAndBatchCounts) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  index_t random_total = 0, random_exact = 0;
  int c = 0;
  // 1001 problems only for a spread of sizes: the host-side checks are
  // O(n^3) per problem and the executable must stay within its time budget.
  auto big_batch_size = [](int n) { return n == 1 || n == 3 || n == 8 || n == 32; };
  for (int n : sweep_sizes())
    for (index_t batch : batch_counts(lanes_of<T, Layout>())) {
      if (batch == large_batch && !(big_batch_size(n) && large_batch_size(n))) continue;
      const auto seed = std::uint64_t(100 + c++);
      random_exact += run_getrf<T, Layout>(random_batch<T>(batch, n, n, seed), "random");
      random_total += batch;
      if (::testing::Test::HasFailure()) return;
      const index_t exact =
          run_getrf<T, Layout>(forced_swap_batch<T>(batch, n, n, seed), "forced swaps");
      EXPECT_EQ(exact, batch) << "forced-swap problems are built without near ties";
      if (::testing::Test::HasFailure()) return;
    }
  // Near ties (compared with the relaxed rule) are a minority: over 90 % of
  // the random problems are compared in full in double, about 80 % in float
  // (measured; n eps is 5e8 times larger).
  const double min_fraction = std::is_same<T, double>::value ? 0.9 : 0.7;
  EXPECT_GE(double(random_exact), min_fraction * double(random_total));
}

TYPED_TEST(Getrf, RectangularShapes) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const std::pair<int, int> shapes[] = {{1, 32}, {32, 1}, {3, 17}, {17, 3}, {31, 30}, {30, 31},
                                        {2, 9},  {9, 2},  {1, 1},  {32, 5}, {5, 32},  {16, 24}};
  int c = 0;
  for (auto [m, n] : shapes) {
    const index_t batch = (c % 2) ? lanes_of<T, Layout>() + 1 : 37;
    const auto seed     = std::uint64_t(500 + c++);
    run_getrf<T, Layout>(random_batch<T>(batch, m, n, seed), "random");
    const index_t exact =
        run_getrf<T, Layout>(forced_swap_batch<T>(batch, m, n, seed), "forced swaps");
    EXPECT_EQ(exact, batch);
    if (::testing::Test::HasFailure()) return;
  }
}

TYPED_TEST(Getrf, DiagonallyDominantNeverSwaps) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // 13, 16 and 17: the pass without interchanges in two and three lane
  // loops on AVX-512 (getrf_crout_part_end); 17 its largest order there.
  for (int n : {1, 2, 5, 8, 13, 16, 17, 32}) {
    const index_t batch = 3 * lanes_of<T, Layout>() + 2;
    const auto hA       = diagonally_dominant_batch<T>(batch, n, std::uint64_t(n));
    EXPECT_EQ((run_getrf<T, Layout>(hA, "diagonally dominant")), batch);
    const auto ref = ref_getrf_batch(hA);
    for (index_t b = 0; b < batch; ++b)
      for (int s = 0; s < n; ++s) ASSERT_EQ(ref.ipiv[size_t(b * n + s)], s + 1);
  }
}

TYPED_TEST(Getrf, OneInterchangeInDominantBlocks) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // One block of diagonally dominant problems where one lane has row j + 1
  // made the larger in column j: LAPACK swaps rows j and j + 1 at step j and
  // nowhere else. The host tries its pass without interchanges
  // (getrf_crout_host) on a block after one that swapped nothing, so a clean
  // block is factored first. That pass must hand the block to the forms
  // with interchanges whichever of its lane loops (getrf_crout_part_end)
  // column j falls in, although the later columns of the lane pass its
  // check. Past that pass's orders (n = 20, 32) the general form
  // (getrf_lanes_host) only checks, after a step without interchanges,
  // whether a row beats the diagonal: it must take the search at step j
  // and the check again from the step after it.
  const index_t batch = lanes_of<T, Layout>();
  for (int n : {2, 5, 8, 12, 13, 16, 17, 20, 32})
    for (int j = 0; j + 1 < n; ++j) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " step " << j);
      const std::uint64_t seed = std::uint64_t(300 + 40 * n + j);
      EXPECT_EQ((run_getrf<T, Layout>(diagonally_dominant_batch<T>(batch, n, seed), "clean")),
                batch);
      auto hA         = diagonally_dominant_batch<T>(batch, n, seed + 1);
      const index_t b = j % batch;
      hA(b, j + 1, j) = T(1.25) * hA(b, j, j);
      const auto ref  = ref_getrf_batch(hA);
      for (int s = 0; s < n; ++s)  // guards the test itself
        ASSERT_EQ(ref.ipiv[size_t(b * n + s)], s == j ? s + 2 : s + 1) << "step " << s;
      EXPECT_EQ((run_getrf<T, Layout>(hA, "dominant, one interchange")), batch);
      if (::testing::Test::HasFailure()) return;
    }
}

TYPED_TEST(Getrf, IllConditioned) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // cond(A) ~ 1e12 (double) / 1e5 (float), two ways:
  // - columns graded geometrically down to `smallest` on top of forced swaps
  //   (partial pivoting is invariant under column scaling, so the pivots stay
  //   separated by a factor of two);
  // - the last column a combination of the others plus `smallest` noise, so
  //   that U(n, n) is tiny and computed with cancellation.
  const double smallest = std::is_same<T, double>::value ? 1e-12 : 1e-5;
  index_t dependent_exact = 0, dependent_total = 0;
  for (int n : {2, 4, 7, 16, 25, 32}) {
    const index_t batch = 2 * lanes_of<T, Layout>() + 3;
    auto hA = forced_swap_batch<T>(batch, n, n, std::uint64_t(40 + n));
    for (index_t b = 0; b < batch; ++b)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) hA(b, i, j) *= T(std::pow(smallest, double(j) / double(n - 1)));
    EXPECT_EQ((run_getrf<T, Layout>(hA, "graded columns")), batch);
    auto hB = random_batch<T>(batch, n, n, std::uint64_t(80 + n));
    std::mt19937_64 gen(n);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (index_t b = 0; b < batch; ++b) {
      std::vector<double> x(static_cast<size_t>(n));
      for (auto& v : x) v = unit(gen);
      for (int i = 0; i < n; ++i) {
        double s = smallest * unit(gen);
        for (int j = 0; j + 1 < n; ++j) s += x[size_t(j)] * double(hB(b, i, j));
        hB(b, i, n - 1) = T(s);
      }
    }
    dependent_exact += run_getrf<T, Layout>(hB, "nearly dependent last column");
    dependent_total += batch;
    if (::testing::Test::HasFailure()) return;
  }
  // The random leading columns may hold near ties (relaxed rule), more in
  // float; still many problems are compared exactly.
  EXPECT_GE(double(dependent_exact),
            (std::is_same<T, double>::value ? 0.5 : 0.1) * double(dependent_total));
}

/// A batch in which problem b % 6 is: 0 regular, 1 zero first column, 2 zero
/// last column, 3 zero column in the middle, 4 all zero, 5 regular. A zero
/// column k of A whose rows of U above it are zero too keeps the reduced
/// column exactly zero in any rounding, so LAPACK and ibla both meet an exact
/// zero pivot at step k (info = k + 1) and go on.
template <class T>
HostBatch<T> singular_mix(index_t batch, int m, int n, std::uint64_t seed) {
  auto A = forced_swap_batch<T>(batch, m, n, seed);
  const int k = std::min(m, n);
  for (index_t b = 0; b < batch; ++b) {
    const int kind = int(b % 6);
    int col        = -1;
    if (kind == 1) col = 0;
    if (kind == 2) col = k - 1;
    if (kind == 3) col = k / 2;
    if (col >= 0)
      for (int i = 0; i < m; ++i) A(b, i, col) = T(0);
    if (kind == 4)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) A(b, i, j) = T(0);
  }
  return A;
}

TYPED_TEST(Getrf, SingularProblemsInABatch) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const std::pair<int, int> shapes[] = {{1, 1}, {2, 2}, {3, 3}, {6, 6}, {11, 11}, {32, 32},
                                        {7, 4}, {4, 7}};
  for (auto [m, n] : shapes) {
    const index_t batch = 4 * lanes_of<T, Layout>() + 3;
    const auto hA       = singular_mix<T>(batch, m, n, std::uint64_t(m * 100 + n));
    run_getrf<T, Layout>(hA, "singular mix");
    const auto ref   = ref_getrf_batch(hA);
    const int k      = std::min(m, n);
    int singular_seen = 0;
    for (index_t b = 0; b < batch; ++b) {
      const int kind = int(b % 6);
      const int want = kind == 1 || kind == 4 ? 1 : kind == 2 ? k : kind == 3 ? k / 2 + 1 : 0;
      // The construction does what it says (guards the test itself).
      ASSERT_EQ(ref.info[size_t(b)], want) << "problem " << b;
      singular_seen += want > 0;
    }
    EXPECT_GT(singular_seen, 0);
    if (::testing::Test::HasFailure()) return;
  }
}

TYPED_TEST(Getrf, ZeroPivotsInDiagonallyDominantBlocks) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // Diagonally dominant problems, every third with column b % n zeroed: U's
  // part above it is zero, so the reduced column is exactly zero, LAPACK
  // meets a zero pivot there (info = its step + 1, no interchange, no
  // scaling) and goes on. The host's pass without interchanges
  // (getrf_crout_host) hands such blocks to the forms with them, which must
  // give LAPACK's info and pivots; the other lanes of the block too. At n
  // = 20 and 32 the general form meets the zero pivot after steps without
  // interchanges (no row beats a zero diagonal there).
  for (int n : {1, 2, 3, 4, 5, 6, 8, 12, 16, 17, 20, 32}) {
    const index_t batch = 3 * lanes_of<T, Layout>() + 2;
    auto hA = diagonally_dominant_batch<T>(batch, n, std::uint64_t(900 + n));
    for (index_t b = 0; b < batch; b += 3)
      for (int i = 0; i < n; ++i) hA(b, i, int(b % n)) = T(0);
    const auto got = ibla_getrf<T, Layout>(hA);
    const auto ref = ref_getrf_batch(hA);
    SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " zero column n " << n);
    for (index_t b = 0; b < batch; b += 3)
      ASSERT_EQ(ref.info[size_t(b)], int(b % n) + 1) << "problem " << b;  // guards the test
    // Pivots up to the first near tie, info, backward error, and the
    // factors element-wise where there is no near tie: most problems.
    EXPECT_GE(check_getrf(hA, got.lu, got.ipiv, got.info, ref), batch / 2);
    if (::testing::Test::HasFailure()) return;
  }
}

TYPED_TEST(Getrf, NonFiniteInputPropagatesAsInLapack) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // NaN below the diagonal of the first column is never picked as pivot by
  // idamax (NaN > x is false) unless it comes first; ipiv, info and the NaN
  // pattern must match LAPACK's. n = 3 runs the host's register form for
  // small orders (getrf_registers_host), n = 6 too where the host has 32
  // vector registers, the general one with 16. On diagonally dominant input
  // the host first tries the pass without interchanges (getrf_crout_host),
  // which hands a block with a NaN to the forms with them; at n = 20 the
  // general form checks each column for a row beating the diagonal, where
  // a NaN beats nothing and nothing beats a NaN diagonal.
  for (const bool dominant : {false, true})
  for (int n : {3, 6, 20}) {
    const index_t batch = lanes_of<T, Layout>() + 3;
    auto hA = dominant ? diagonally_dominant_batch<T>(batch, n, std::uint64_t(70 + n))
                       : forced_swap_batch<T>(batch, n, n, 77);
    const T nan = std::numeric_limits<T>::quiet_NaN();
    for (index_t b = 0; b < batch; ++b) hA(b, int(b % n), int(b % 3)) = nan;
    const auto got = ibla_getrf<T, Layout>(hA);
    const auto ref = ref_getrf_batch(hA);
    SCOPED_TRACE(::testing::Message() << "n " << n << (dominant ? " dominant" : " random"));
    EXPECT_EQ(got.ipiv, ref.ipiv);
    EXPECT_EQ(got.info, ref.info);
    for (index_t b = 0; b < batch; ++b)
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
          EXPECT_EQ(std::isnan(got.lu(b, i, j)), std::isnan(ref.lu(b, i, j)))
              << "problem " << b << " (" << i << "," << j << ")";
  }
}

TYPED_TEST(Getrf, SubnormalPivotDividesLikeLapack) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // A first column of small multiples of a subnormal: its pivot is below
  // sfmin, so LAPACK divides (x / pivot, exact here) where 1 / pivot would
  // overflow to Inf. In two of every three problems only, so that full
  // blocks mix lanes that divide with lanes that multiply; batch not a
  // multiple of the block. Column 0 below the diagonal must be LAPACK's
  // bits, everything else within check_getrf's tolerances.
  const T unit = std::numeric_limits<T>::denorm_min() * T(16);
  for (int n : {1, 2, 6, 9}) {
    const index_t batch = 2 * lanes_of<T, Layout>() + 3;
    auto hA = random_batch<T>(batch, n, n, std::uint64_t(500 + n));
    for (index_t b = 0; b < batch; ++b) {
      if (b % 3 == 1) continue;
      for (int i = 0; i < n; ++i) hA(b, i, 0) = T(int((3 * i + b) % 5) - 2) * unit;
      hA(b, int(b % n), 0) = (b % 2 ? T(-3) : T(3)) * unit;
    }
    const auto got = ibla_getrf<T, Layout>(hA);
    const auto ref = ref_getrf_batch(hA);
    SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " subnormal pivot n " << n);
    check_getrf(hA, got.lu, got.ipiv, got.info, ref);
    for (index_t b = 0; b < batch; ++b) {
      if (b % 3 == 1) continue;  // the problems with an ordinary first column
      ASSERT_LT(std::abs(ref.lu(b, 0, 0)), std::numeric_limits<T>::min()) << "problem " << b;
      for (int i = 1; i < n; ++i) {
        ASSERT_TRUE(std::isfinite(got.lu(b, i, 0))) << "problem " << b << " row " << i;
        ASSERT_EQ(got.lu(b, i, 0), ref.lu(b, i, 0)) << "problem " << b << " row " << i;
      }
    }
  }
}

TYPED_TEST(Getrf, SubnormalLastPivotIsLapacksResult) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // The last pivot U(n-1, n-1) subnormal: nothing lies below it to scale, so
  // the host forms with interchanges do not test it against sfmin
  // (getrf_tests_last_pivot) and the block is not handed to the forms that
  // divide (the pass without them, getrf_crout_host, hands it to those). The result must still
  // be LAPACK's: that pivot bit for bit, info 0, the same pivots. The last
  // row is zero left of the diagonal, so U(n-1, n-1) is the input's entry
  // exactly. Diagonally dominant (the form without interchanges) and random
  // (the forms with them) inputs; every other problem, so that blocks mix
  // such lanes with ordinary ones; batch not a multiple of the block.
  const T unit = std::numeric_limits<T>::denorm_min() * T(16);
  for (const bool dominant : {true, false}) {
    for (int n : {1, 2, 3, 4, 5, 6, 9}) {
      const index_t batch = 2 * lanes_of<T, Layout>() + 3;
      auto hA = dominant ? diagonally_dominant_batch<T>(batch, n, std::uint64_t(700 + n))
                         : random_batch<T>(batch, n, n, std::uint64_t(800 + n));
      for (index_t b = 0; b < batch; b += 2) {
        for (int j = 0; j + 1 < n; ++j) hA(b, n - 1, j) = T(0);
        hA(b, n - 1, n - 1) = (b % 4 ? T(-3) : T(5)) * unit;
      }
      const auto got = ibla_getrf<T, Layout>(hA);
      const auto ref = ref_getrf_batch(hA);
      SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " subnormal last pivot n "
                                        << n << (dominant ? " dominant" : " random"));
      check_getrf(hA, got.lu, got.ipiv, got.info, ref);
      EXPECT_EQ(got.ipiv, ref.ipiv);
      for (index_t b = 0; b < batch; b += 2) {
        ASSERT_EQ(ref.lu(b, n - 1, n - 1), hA(b, n - 1, n - 1)) << "problem " << b;
        ASSERT_LT(std::abs(ref.lu(b, n - 1, n - 1)), std::numeric_limits<T>::min());
        EXPECT_EQ(got.lu(b, n - 1, n - 1), ref.lu(b, n - 1, n - 1)) << "problem " << b;
        EXPECT_EQ(got.info[size_t(b)], 0) << "problem " << b;
      }
    }
  }
}

TEST(GetrfEmpty, ZeroSizesWriteInfoZero) {
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>> A("A", 13, 0, 4);
  Kokkos::View<int**, ibla::LayoutBlockInterleaved<8>> ipiv("ipiv", 13, 0);
  Kokkos::View<int*, ibla::LayoutBlockInterleaved<8>> info("info", 13);
  Kokkos::deep_copy(info, 5);
  ibla::getrf(Kokkos::DefaultExecutionSpace(), A, ipiv, info);
  EXPECT_EQ(read_info(info), std::vector<int>(13, 0));
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>> A0("A", 0, 3, 3);
  Kokkos::View<int**, ibla::LayoutBlockInterleaved<8>> ipiv0("ipiv", 0, 3);
  Kokkos::View<int*, ibla::LayoutBlockInterleaved<8>> info0("info", 0);
  EXPECT_NO_THROW(ibla::getrf(Kokkos::DefaultExecutionSpace(), A0, ipiv0, info0));
}

// Pivots in another layout than A: a plain (batch, n) LayoutRight View.
TEST(GetrfMixed, PivotsInLayoutRightWithBlockInterleavedA) {
  using T             = double;
  const index_t batch = 29;
  const int n         = 9;
  const auto hA       = forced_swap_batch<T>(batch, n, n, 3);
  Kokkos::View<T***, ibla::LayoutBlockInterleaved<8>> A("A", batch, n, n);
  Kokkos::View<int**, Kokkos::LayoutRight> ipiv("ipiv", batch, n);
  Kokkos::View<int*, Kokkos::LayoutRight> info("info", batch);
  fill_view(A, hA);
  ibla::getrf(Kokkos::DefaultExecutionSpace(), A, ipiv, info);
  const auto ref = ref_getrf_batch(hA);
  EXPECT_EQ(check_getrf(hA, read_view(A), read_rank2(ipiv), read_info(info), ref),
            batch);
}

// A user kernel calling the team-level getrf on each block of its own policy.
// A free function: nvcc rejects device lambdas inside a TEST body.
template <int L, class AV, class PV, class IV>
void user_kernel_getrf(const AV& A, const PV& ipiv, const IV& info, index_t batch) {
  using Policy      = Kokkos::TeamPolicy<>;
  const int nblocks = int((batch + L - 1) / L);
  Kokkos::parallel_for(
      "user_kernel", Policy(nblocks, Kokkos::AUTO),
      KOKKOS_LAMBDA(const Policy::member_type& member) {
        const index_t first = index_t(member.league_rank()) * L;
        const int lanes     = int(batch - first < L ? batch - first : L);
        ibla::team::getrf(member, ibla::lane_block(A, first, lanes),
                          ibla::lane_block(ipiv, first, lanes), ibla::lane_block(info, first, lanes));
      });
  Kokkos::fence();
}

TEST(GetrfTeam, CalledInsideUserKernel) {
  using T             = double;
  constexpr int L     = 8;
  using Layout        = ibla::LayoutBlockInterleaved<L>;
  const index_t batch = 3 * L + 5;
  const int n         = 12;
  const auto hA       = forced_swap_batch<T>(batch, n, n, 11);
  Kokkos::View<T***, Layout> A("A", batch, n, n);
  Kokkos::View<int**, Layout> ipiv("ipiv", batch, n);
  Kokkos::View<int*, Layout> info("info", batch);
  fill_view(A, hA);
  user_kernel_getrf<L>(A, ipiv, info, batch);
  const auto ref = ref_getrf_batch(hA);
  EXPECT_EQ(check_getrf(hA, read_view(A), read_rank2(ipiv), read_info(info), ref),
            batch);
}

TEST(GetrfErrors, BadArgumentsThrowAndTouchNothing) {
  using V = Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>>;
  using P = Kokkos::View<int**, ibla::LayoutBlockInterleaved<8>>;
  const auto exec = Kokkos::DefaultExecutionSpace();
  V A("A", 10, 4, 6);
  Kokkos::deep_copy(A, 3.0);
  P ipiv("ipiv", 10, 4);
  Kokkos::View<int*, ibla::LayoutBlockInterleaved<8>> info("info", 10);
  Kokkos::deep_copy(ipiv, 9);
  Kokkos::deep_copy(info, 9);
  auto untouched = [&] {
    auto hA = read_view(A);
    for (double x : hA.data)
      if (x != 3.0) return false;
    for (int x : read_rank2(ipiv))
      if (x != 9) return false;
    for (int x : read_info(info))
      if (x != 9) return false;
    return true;
  };
  auto expect_error = [&](auto&& call, const char* argument) {
    try {
      call();
      ADD_FAILURE() << "no exception for a bad " << argument;
    } catch (const ibla::argument_error& e) {
      EXPECT_EQ(e.argument(), argument) << e.what();
      EXPECT_EQ(e.routine(), "getrf");
    }
    EXPECT_TRUE(untouched());
  };
  expect_error([&] { ibla::getrf(exec, A, P("p", 10, 6), info); }, "ipiv");   // min(m, n) = 4
  expect_error([&] { ibla::getrf(exec, A, P("p", 9, 4), info); }, "ipiv");    // batch
  expect_error([&] { ibla::getrf(exec, A, ipiv, decltype(info)("i", 11)); }, "info");
  expect_error([&] { ibla::getrf(exec, A, P(), info); }, "ipiv");
  expect_error([&] { ibla::getrf(exec, A, ipiv, decltype(info)()); }, "info");
  expect_error(
      [&] {
        ibla::getrf(exec, A, Kokkos::View<int**, ibla::LayoutBlockInterleaved<4>>("p", 10, 4), info);
      },
      "ipiv");
  // Unallocated A with nonzero extents is impossible to build with Kokkos'
  // constructors; an unmanaged View on a null pointer is the same mistake.
  expect_error([&] { ibla::getrf(exec, V(static_cast<double*>(nullptr), 10, 4, 6), ipiv, info); },
               "A");
  // The exception type is std::invalid_argument-derived.
  EXPECT_THROW(ibla::getrf(exec, A, P("p", 9, 4), info), std::invalid_argument);
}
