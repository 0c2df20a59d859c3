// Batched Cholesky factorization against netlib LAPACK: every size 1..32,
// Lower and Upper, batch counts {1, L-1, L, L+1, 1001} cycled across the
// cases, every layout (info in the same layout family), float and double;
// the triangle that is not Uplo is NaN on input and must still be NaN on
// output (never read, never written); well- and ill-conditioned SPD
// matrices; batches where some problems are not positive definite at the
// first, the last or a middle minor (or have a NaN or zero pivot) while the
// others must still match LAPACK; info equal to LAPACKE's per problem; the
// team-level call in a user kernel; argument errors.
//
// Bounds (documented here, used below):
//  * Residual. Cholesky is backward stable: L L^T = A + dA with
//    |dA| <= gamma_{n+1} |L| |L^T| (Higham, Thm 10.3), and for SPD A
//    (|L||L^T|)_ij <= sqrt(a_ii a_jj), so ||L L^T - A||_inf /
//    (||A||_inf n eps) is at most about n + 1 in theory and about 1 in
//    practice; asserted: <= 4 (kResidualBound), computed in long double.
//  * Element-wise against LAPACKE. The factor's sensitivity is about
//    cond(A) (Sun's perturbation bound ||dL|| / ||L|| <~ cond(A) ||dA|| /
//    ||A||), so both factors are within cond * (n + 1) eps max|L| of the
//    exact one. Well-conditioned inputs (cond <~ 2.5, see spd_batch):
//    asserted |l - l_ref| <= 16 (n + 1) eps max|L|. Ill-conditioned inputs
//    (cond = ill_condition<T>()): <= 2 cond (n + 1) eps max|L|.
//  * Failed problems: the factored columns and the stored pivot use the
//    well-conditioned bound against LAPACK's unblocked dpotf2; the
//    untouched part must be bit-identical to the input.
#include "support/cholesky.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

using namespace ibla_test;
using ibla::Uplo;

namespace {

constexpr double kResidualBound = 4.0;

/// Element (i, j), i >= j, of the factor seen as lower triangular.
template <class T>
T& factor_at(HostBatch<T>& h, Uplo u, index_t b, int i, int j) {
  return u == Uplo::Lower ? h(b, i, j) : h(b, j, i);
}
template <class T>
T factor_at(const HostBatch<T>& h, Uplo u, index_t b, int i, int j) {
  return u == Uplo::Lower ? h(b, i, j) : h(b, j, i);
}

/// ||L L^T - A||_inf / (||A||_inf n eps) of problem b (long double).
template <class T>
double potrf_residual(Uplo u, const HostBatch<T>& A, const HostBatch<T>& F, index_t b) {
  const int n = int(A.rows);
  auto a = [&](int i, int j) -> long double {
    return i >= j ? (long double)factor_at(A, u, b, i, j) : (long double)factor_at(A, u, b, j, i);
  };
  auto l = [&](int i, int j) -> long double { return i >= j ? (long double)factor_at(F, u, b, i, j) : 0; };
  const long double r = inf_norm(n, n, [&](int i, int j) {
    long double s = -a(i, j);
    for (int p = 0; p <= std::min(i, j); ++p) s += l(i, p) * l(j, p);
    return s;
  });
  const long double an = inf_norm(n, n, a);
  return double(r / (an * n * eps<T>()));
}

/// The Uplo triangle must be untouched outside the Uplo triangle: NaN in,
/// NaN out.
template <class T>
::testing::AssertionResult other_triangle_nan(Uplo u, const HostBatch<T>& got) {
  for (index_t b = 0; b < got.batch; ++b)
    for (index_t j = 0; j < got.cols; ++j)
      for (index_t i = 0; i < got.rows; ++i)
        if (!in_triangle(u, i, j) && !std::isnan(got(b, i, j)))
          return ::testing::AssertionFailure()
                 << "element (" << b << "," << i << "," << j << ") outside the " << ibla::to_string(u)
                 << " triangle was written: " << got(b, i, j);
  return ::testing::AssertionSuccess();
}

/// Factors hA with ibla and checks info, the factor and the residual
/// against LAPACK. `scale` is the element-wise bound in units of max|L|.
template <class T, class Layout>
void run_potrf(Uplo u, const HostBatch<T>& hA, double scale) {
  const index_t batch = hA.batch;
  const int n         = int(hA.rows);
  SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " uplo " << ibla::to_string(u) << " batch "
                                    << batch << " n " << n);
  auto A    = make_view<T, Layout>("A", batch, n, n);
  auto info = make_info<Layout>(batch);
  fill_view(A, hA);
  poison_info(info);
  ibla::potrf(Kokkos::DefaultExecutionSpace(), u, A, info);
  Kokkos::fence();
  const auto got   = read_view(A);
  const auto ginfo = read_info(info);
  auto ref         = hA;
  std::vector<bool> failed(size_t(batch), false);
  double worst = 0;
  for (index_t b = 0; b < batch; ++b) {
    const int rinfo = ref_potrf(u, n, ref.matrix(b));
    ASSERT_EQ(ginfo[size_t(b)], rinfo) << "info of problem " << b;
    failed[size_t(b)] = rinfo != 0;
    if (rinfo == 0) worst = std::max(worst, potrf_residual(u, hA, got, b));
  }
  EXPECT_LE(worst, kResidualBound) << "residual ||L L^T - A|| / (||A|| n eps)";
  ASSERT_TRUE(close_per_problem(got, ref, scale, &failed, "L"));
  ASSERT_TRUE(other_triangle_nan(u, got));
}

}  // namespace

template <class C>
class Potrf : public ::testing::Test {};
TYPED_TEST_SUITE(Potrf, SolverSweepConfigs);

TYPED_TEST(Potrf, AllSizesBothTriangles) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  int c = 0;
  for (int n : sweep_sizes())
    for (Uplo u : {Uplo::Lower, Uplo::Upper}) {
      const index_t batch = cycled_batch(lanes_of<T, Layout>(), c++, 8);
      run_potrf<T, Layout>(u, spd_batch<T>(batch, n, u, std::uint64_t(10 * n + c)),
                           16.0 * (n + 1) * double(eps<T>()));
      if (::testing::Test::HasFatalFailure()) return;
    }
}

TYPED_TEST(Potrf, IllConditioned) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const double cond = ill_condition<T>();
  int c = 0;
  for (int n : {2, 3, 7, 16, 25, 32})
    for (Uplo u : {Uplo::Lower, Uplo::Upper}) {
      const index_t batch = cycled_batch(lanes_of<T, Layout>(), c++, 100);
      run_potrf<T, Layout>(u, ill_spd_batch<T>(batch, n, u, cond, std::uint64_t(500 + c)),
                           2.0 * cond * (n + 1) * double(eps<T>()));
      if (::testing::Test::HasFatalFailure()) return;
    }
}

// Some problems of the batch are not positive definite; each stops where
// LAPACK stops and the others finish normally.
TYPED_TEST(Potrf, NotPositiveDefiniteStopsPerProblem) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  int c = 0;
  for (int n : {1, 2, 4, 5, 9, 17, 32})
    for (Uplo u : {Uplo::Lower, Uplo::Upper}) {
      const index_t batch = c++ % 3 == 0 ? large_batch : lanes_of<T, Layout>() + 1;
      SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " uplo " << ibla::to_string(u)
                                        << " batch " << batch << " n " << n);
      auto hA = spd_batch<T>(batch, n, u, std::uint64_t(300 + n));
      // Problem b fails at: 0 none, 1 the first minor, 2 the last, 3 a middle
      // one, 4 a NaN pivot in the middle, 5 none, 6 an exact zero first pivot.
      std::vector<int> expect(static_cast<size_t>(batch), 0);
      for (index_t b = 0; b < batch; ++b) {
        const int mode = int((b * 7 + c) % 7);
        int k = 0;
        if (mode == 1) k = 1;
        if (mode == 2) k = n;
        if (mode == 3 || mode == 4) k = n / 2 + 1;
        if (mode == 6) k = 1;
        if (k == 0) continue;
        break_minor(hA, b, k, mode == 4);
        if (mode == 6) hA(b, 0, 0) = T(0);
        expect[size_t(b)] = k;
      }
      auto A    = make_view<T, Layout>("A", batch, n, n);
      auto info = make_info<Layout>(batch);
      fill_view(A, hA);
      poison_info(info);
      ibla::potrf(Kokkos::DefaultExecutionSpace(), u, A, info);
      const auto got   = read_view(A);
      const auto ginfo = read_info(info);
      auto ref = hA, unblocked = hA;
      const double tol = 16.0 * (n + 1) * double(eps<T>());
      std::vector<bool> ok(static_cast<size_t>(batch));
      for (index_t b = 0; b < batch; ++b) {
        const int rinfo = ref_potrf(u, n, ref.matrix(b));
        ASSERT_EQ(rinfo, expect[size_t(b)]) << "test matrix " << b << " is not what it should be";
        ASSERT_EQ(ref_potf2(u, n, unblocked.matrix(b)), rinfo);
        ASSERT_EQ(ginfo[size_t(b)], rinfo) << "info of problem " << b;
        ok[size_t(b)] = rinfo == 0;
        if (rinfo == 0) continue;
        // Failed at minor k: columns after k-1 and column k-1 below its
        // diagonal are the input, bit for bit.
        for (int j = rinfo - 1; j < n; ++j)
          for (int i = j; i < n; ++i) {
            if (i == j && j == rinfo - 1) continue;
            const T x = factor_at(got, u, b, i, j), y = factor_at(hA, u, b, i, j);
            ASSERT_TRUE(x == y || (std::isnan(x) && std::isnan(y)))
                << "problem " << b << " (info " << rinfo << "): element (" << i << "," << j
                << ") of the factor was touched: " << x << ", input " << y;
          }
      }
      // Failed problems against dpotf2 (factored columns and the stored
      // pivot), the others against dpotrf.
      std::vector<bool> skip_ok(ok.size()), skip_failed(ok.size());
      for (size_t b = 0; b < ok.size(); ++b) {
        skip_ok[b]     = !ok[b];
        skip_failed[b] = ok[b];
      }
      ASSERT_TRUE(close_per_problem(got, ref, tol, &skip_ok, "L"));
      ASSERT_TRUE(close_per_problem(got, unblocked, tol, &skip_failed, "L (failed, vs dpotf2)"));
      ASSERT_TRUE(other_triangle_nan(u, got));
    }
}

// info in another layout than A: only block-interleaved operands must agree.
TEST(PotrfMixed, InfoInOtherLayouts) {
  using T             = double;
  const index_t batch = 37;
  const int n         = 6;
  auto hA = spd_batch<T>(batch, n, Uplo::Lower, 3);
  break_minor(hA, 4, 3, false);
  auto ref = hA;
  std::vector<int> rinfo(static_cast<size_t>(batch));
  for (index_t b = 0; b < batch; ++b) rinfo[size_t(b)] = ref_potrf(Uplo::Lower, n, ref.matrix(b));
  Kokkos::View<T***, ibla::LayoutBlockInterleaved<8>> A("A", batch, n, n);
  Kokkos::View<int*, Kokkos::LayoutRight> info1("info", batch);
  Kokkos::View<int*, Kokkos::LayoutStride> info2("info", Kokkos::LayoutStride(size_t(batch), 2));
  fill_view(A, hA);
  ibla::potrf(Kokkos::DefaultExecutionSpace(), Uplo::Lower, A, info1);
  EXPECT_EQ(read_info(info1), rinfo);
  fill_view(A, hA);
  ibla::potrf(Kokkos::DefaultExecutionSpace(), Uplo::Lower, A, info2);
  EXPECT_EQ(read_info(info2), rinfo);
  std::vector<bool> skip(static_cast<size_t>(batch), false);
  skip[4] = true;
  EXPECT_TRUE(close_per_problem(read_view(A), ref, 16.0 * (n + 1) * eps<T>(), &skip));
}

// A free function: nvcc rejects device lambdas inside a TEST body.
template <int L, class AV, class IV>
void user_kernel_potrf(const AV& A, const IV& info, index_t batch) {
  using Policy      = Kokkos::TeamPolicy<>;
  const int nblocks = int((batch + L - 1) / L);
  Kokkos::parallel_for(
      "user_kernel", Policy(nblocks, Kokkos::AUTO), KOKKOS_LAMBDA(const Policy::member_type& member) {
        const index_t first = index_t(member.league_rank()) * L;
        const int lanes     = int(batch - first < L ? batch - first : L);
        ibla::team::potrf(member, Uplo::Upper, ibla::lane_block(A, first, lanes),
                          ibla::lane_block(info, first, lanes));
      });
  Kokkos::fence();
}

// The team-level POTRF inside a user's own TeamPolicy kernel.
TEST(PotrfTeam, CalledInsideUserKernel) {
  using T             = float;
  constexpr int L     = 16;
  using Layout        = ibla::LayoutBlockInterleaved<L>;
  const index_t batch = 2 * L + 3;
  const int n         = 11;
  auto hA = spd_batch<T>(batch, n, Uplo::Upper, 9);
  break_minor(hA, 17, 5, false);
  Kokkos::View<T***, Layout> A("A", batch, n, n);
  Kokkos::View<int*, Layout> info("info", batch);
  fill_view(A, hA);
  user_kernel_potrf<L>(A, info, batch);
  auto ref = hA;
  std::vector<int> rinfo(static_cast<size_t>(batch));
  std::vector<bool> skip(static_cast<size_t>(batch));
  for (index_t b = 0; b < batch; ++b) {
    rinfo[size_t(b)] = ref_potrf(Uplo::Upper, n, ref.matrix(b));
    skip[size_t(b)]  = rinfo[size_t(b)] != 0;
  }
  EXPECT_EQ(rinfo[17], 5);
  EXPECT_EQ(read_info(info), rinfo);
  EXPECT_TRUE(close_per_problem(read_view(A), ref, 16.0 * (n + 1) * eps<T>(), &skip));
}

TEST(PotrfErrors, BadArgumentsThrowAndTouchNothing) {
  using T  = double;
  using BI = Kokkos::View<T***, ibla::LayoutBlockInterleaved<8>>;
  const auto exec = Kokkos::DefaultExecutionSpace();
  const index_t batch = 10;
  auto hA = spd_batch<T>(batch, 4, Uplo::Lower, 1);
  BI A("A", batch, 4, 4), A43("A", batch, 4, 3);
  fill_view(A, hA);
  Kokkos::View<int*, ibla::LayoutBlockInterleaved<8>> info("info", batch), info9("info", 9);
  Kokkos::View<int*, ibla::LayoutBlockInterleaved<4>> info4("info", batch);
  Kokkos::View<int*, ibla::LayoutBlockInterleaved<8>> info_null(nullptr, batch);
  BI A_null(nullptr, batch, 4, 4);
  poison_info(info);
  auto expect_error = [&](const char* arg, auto&& call) {
    try {
      call();
      ADD_FAILURE() << "no exception, expected one naming " << arg;
    } catch (const ibla::argument_error& e) {
      EXPECT_EQ(e.argument(), arg) << e.what();
      EXPECT_EQ(e.routine(), "potrf");
    }
    EXPECT_TRUE(batches_equal(read_view(A), hA)) << "A was modified by a rejected call";
    EXPECT_EQ(read_info(info), std::vector<int>(size_t(batch), -777)) << "info was modified";
  };
  expect_error("A", [&] { ibla::potrf(exec, Uplo::Lower, A43, info); });
  expect_error("info", [&] { ibla::potrf(exec, Uplo::Lower, A, info9); });
  expect_error("info", [&] { ibla::potrf(exec, Uplo::Upper, A, info4); });
  expect_error("info", [&] { ibla::potrf(exec, Uplo::Lower, A, info_null); });
  expect_error("A", [&] { ibla::potrf(exec, Uplo::Lower, A_null, info); });
}

TEST(PotrfEmpty, ZeroBatchAndZeroOrder) {
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>> A("A", 0, 3, 3), A0("A", 5, 0, 0);
  Kokkos::View<int*, ibla::LayoutBlockInterleaved<8>> info("info", 0), info5("info", 5);
  EXPECT_NO_THROW(ibla::potrf(Kokkos::DefaultExecutionSpace(), Uplo::Lower, A, info));
  poison_info(info5);
  ibla::potrf(Kokkos::DefaultExecutionSpace(), Uplo::Upper, A0, info5);
  EXPECT_EQ(read_info(info5), std::vector<int>(5, 0)) << "n = 0: every info is 0 (LAPACK)";
}
