// Batched Cholesky solves against netlib LAPACKE: potrs on LAPACK's own
// factors and posv (factor + both solves in one pass), every size 1..32,
// Lower and Upper, nrhs in {1, 2, n, 33} and batch counts
// {1, L-1, L, L+1, 1001} cycled across the cases, every layout, float and
// double, the unused triangle NaN; ill-conditioned SPD matrices; batches
// where some problems are not SPD (their B must be left untouched, as
// dposv leaves it) while the others match LAPACK; info equal to LAPACKE's;
// one right-hand side (rank-3 at every order up to 17, both triangles, and
// as a rank-2 View); a factor's diagonal so small that 1 / d overflows;
// team-level calls in a user kernel; argument errors.
//
// Bounds (documented here, used below):
//  * Residual. The Cholesky solve is backward stable: (A + dA) x = b with
//    |dA| <= gamma_{3n+1} |L| |L^T| (Higham, Thm 10.4), so
//    ||A X - B||_inf / (||A||_inf ||X||_inf n eps) is about 1 in practice
//    (at most ~3n in theory); asserted <= 8 (kResidualBound), computed in
//    long double.
//  * Element-wise against LAPACKE: both solutions are within about
//    cond(A) * 3 (n + 1) eps max|X| of the exact one. Well-conditioned
//    inputs (cond <~ 2.5): asserted 32 (n + 1) eps max|X| per problem;
//    ill-conditioned ones (cond = ill_condition<T>()): 8 cond (n + 1) eps
//    max|X|.
#include "support/cholesky.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace ibla_test;
using ibla::Uplo;

namespace {

constexpr double kResidualBound = 8.0;

/// Largest ||A X - B||_inf / (||A||_inf ||X||_inf n eps) over the problems
/// that were solved (skip[b] false). A holds one triangle of a symmetric A.
template <class T>
double solve_residual(Uplo u, const HostBatch<T>& A, const HostBatch<T>& B, const HostBatch<T>& X,
                      const std::vector<bool>* skip = nullptr) {
  const int n = int(A.rows), nrhs = int(B.cols);
  double worst = 0;
  for (index_t b = 0; b < A.batch; ++b) {
    if (skip && (*skip)[size_t(b)]) continue;
    auto a = [&](int i, int j) -> long double {
      return in_triangle(u, i, j) ? (long double)A(b, i, j) : (long double)A(b, j, i);
    };
    const long double r = inf_norm(n, nrhs, [&](int i, int j) {
      long double s = -(long double)B(b, i, j);
      for (int p = 0; p < n; ++p) s += a(i, p) * X(b, p, j);
      return s;
    });
    const long double an = inf_norm(n, n, a);
    const long double xn = inf_norm(n, nrhs, [&](int i, int j) { return (long double)X(b, i, j); });
    const double ratio = double(r / (an * xn * n * eps<T>()));
    worst = std::max(worst, std::isnan(ratio) ? INFINITY : ratio);
  }
  return worst;
}

/// posv through ibla on hA, hB; checks info, X, the factor and the residual
/// against LAPACKE_?posv; B of failed problems must be bit-identical.
template <class T, class Layout>
void run_posv(Uplo u, const HostBatch<T>& hA, const HostBatch<T>& hB, double x_scale) {
  const index_t batch = hA.batch;
  const int n = int(hA.rows), nrhs = int(hB.cols);
  SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " uplo " << ibla::to_string(u) << " batch "
                                    << batch << " n " << n << " nrhs " << nrhs);
  auto A    = make_view<T, Layout>("A", batch, n, n);
  auto B    = make_view<T, Layout>("B", batch, n, nrhs);
  auto info = make_info<Layout>(batch);
  fill_view(A, hA);
  fill_view(B, hB);
  poison_info(info);
  ibla::posv(Kokkos::DefaultExecutionSpace(), u, A, B, info);
  Kokkos::fence();
  const auto gotX = read_view(B), gotA = read_view(A);
  const auto ginfo = read_info(info);
  auto refA = hA, refX = hB;
  std::vector<bool> failed(static_cast<size_t>(batch));
  for (index_t b = 0; b < batch; ++b) {
    const int rinfo = ref_posv(u, n, nrhs, refA.matrix(b), refX.matrix(b));
    ASSERT_EQ(ginfo[size_t(b)], rinfo) << "info of problem " << b;
    failed[size_t(b)] = rinfo != 0;
    if (rinfo != 0) {
      // dposv leaves B alone: bit for bit.
      for (int j = 0; j < nrhs; ++j)
        for (int i = 0; i < n; ++i)
          ASSERT_EQ(gotX(b, i, j), hB(b, i, j)) << "B of failed problem " << b << " was written";
    }
  }
  EXPECT_LE(solve_residual(u, hA, hB, gotX, &failed), kResidualBound)
      << "residual ||A X - B|| / (||A|| ||X|| n eps)";
  ASSERT_TRUE(close_per_problem(gotX, refX, x_scale, &failed, "X"));
  ASSERT_TRUE(close_per_problem(gotA, refA, x_scale, &failed, "factor"));
}

}  // namespace

template <class C>
class Posv : public ::testing::Test {};
TYPED_TEST_SUITE(Posv, SolverSweepConfigs);

TYPED_TEST(Posv, AllSizesBothTriangles) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  int c = 0;
  for (int n : sweep_sizes())
    for (Uplo u : {Uplo::Lower, Uplo::Upper}) {
      const int rhs[]     = {1, 2, n, 33};
      const int nrhs      = rhs[(c + c / 8) % 4];
      const index_t batch = cycled_batch(lanes_of<T, Layout>(), c, 10);
      ++c;
      run_posv<T, Layout>(u, spd_batch<T>(batch, n, u, std::uint64_t(20 * n + c)),
                          random_batch<T>(batch, n, nrhs, std::uint64_t(7 * n + c)),
                          32.0 * (n + 1) * double(eps<T>()));
      if (::testing::Test::HasFatalFailure()) return;
    }
}

TYPED_TEST(Posv, IllConditioned) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const double cond = ill_condition<T>();
  int c = 0;
  for (int n : {2, 5, 12, 24, 32})
    for (Uplo u : {Uplo::Lower, Uplo::Upper}) {
      const index_t batch = lanes_of<T, Layout>() + 1;
      const int nrhs      = c % 2 ? 2 : n;
      ++c;
      run_posv<T, Layout>(u, ill_spd_batch<T>(batch, n, u, cond, std::uint64_t(600 + c)),
                          random_batch<T>(batch, n, nrhs, std::uint64_t(650 + c)),
                          8.0 * cond * (n + 1) * double(eps<T>()));
      if (::testing::Test::HasFatalFailure()) return;
    }
}

// Problems that are not SPD (first, last, middle minor, NaN pivot) keep
// their B; the rest of the batch is solved.
TYPED_TEST(Posv, NotPositiveDefiniteLeavesBUntouched) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  int c = 0;
  for (int n : {1, 3, 8, 13, 32})
    for (Uplo u : {Uplo::Lower, Uplo::Upper}) {
      const index_t batch = c % 4 == 0 ? large_batch : lanes_of<T, Layout>() + 2;
      const int nrhs      = c % 3 == 0 ? 33 : (c % 3 == 1 ? 1 : n);
      ++c;
      auto hA = spd_batch<T>(batch, n, u, std::uint64_t(70 + c));
      for (index_t b = 0; b < batch; ++b) {
        const int mode = int((b * 3 + c) % 5);
        if (mode == 1) break_minor(hA, b, 1, false);
        if (mode == 2) break_minor(hA, b, n, false);
        if (mode == 3) break_minor(hA, b, n / 2 + 1, true);
      }
      run_posv<T, Layout>(u, hA, random_batch<T>(batch, n, nrhs, std::uint64_t(80 + c)),
                          32.0 * (n + 1) * double(eps<T>()));
      if (::testing::Test::HasFatalFailure()) return;
    }
}

/// potrs on the factors LAPACK computed, against LAPACK's potrs on them.
template <class T, class Layout>
void run_potrs_on_lapack_factors(Uplo u, int n, int nrhs, index_t batch) {
  SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " uplo " << ibla::to_string(u)
                                    << " batch " << batch << " n " << n << " nrhs " << nrhs);
  auto hA = spd_batch<T>(batch, n, u, std::uint64_t(40 + n));
  auto hF = hA;
  for (index_t b = 0; b < batch; ++b) ASSERT_EQ(ref_potrf(u, n, hF.matrix(b)), 0);
  const auto hB = random_batch<T>(batch, n, nrhs, std::uint64_t(41 + n));
  auto A = make_view<T, Layout>("A", batch, n, n);
  auto B = make_view<T, Layout>("B", batch, n, nrhs);
  fill_view(A, hF);
  fill_view(B, hB);
  ibla::potrs(Kokkos::DefaultExecutionSpace(), u, A, B);
  const auto got = read_view(B);
  auto ref       = hB;
  for (index_t b = 0; b < batch; ++b) ref_potrs(u, n, nrhs, hF.matrix(b), ref.matrix(b));
  EXPECT_LE(solve_residual(u, hA, hB, got), kResidualBound);
  ASSERT_TRUE(close_per_problem(got, ref, 32.0 * (n + 1) * double(eps<T>())));
  ASSERT_TRUE(batches_equal(read_view(A), hF)) << "potrs wrote to A";
}

TYPED_TEST(Posv, PotrsOnLapackFactors) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  int c = 0;
  for (int n = 1; n <= 32; ++n, ++c) {
    if (!sweep_size(n)) continue;
    const Uplo u        = c % 2 ? Uplo::Upper : Uplo::Lower;
    const int rhs[]     = {1, 2, n, 33};
    const int nrhs      = rhs[(c + c / 4) % 4];
    const index_t batch = cycled_batch(lanes_of<T, Layout>(), c, 8);
    run_potrs_on_lapack_factors<T, Layout>(u, n, nrhs, batch);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// One right-hand side, both triangles, every order of POTRS's register
// forms (on host: up to trsm_register_order, and up to 16 for one column
// on block-interleaved layouts, one_column_register_order), where the
// sweeps above give each order one right-hand side in some cases only.
// Two full blocks and a partial one (which takes the tile form).
TYPED_TEST(Posv, OneRightHandSideEveryRegisterOrder) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const index_t batch = 2 * lanes_of<T, Layout>() + 3;
  for (int n = 1; n <= 17; ++n)
    for (Uplo u : {Uplo::Lower, Uplo::Upper}) {
      run_posv<T, Layout>(u, spd_batch<T>(batch, n, u, std::uint64_t(900 + n)),
                          random_batch<T>(batch, n, 1, std::uint64_t(950 + n)),
                          32.0 * (n + 1) * double(eps<T>()));
      if (::testing::Test::HasFatalFailure()) return;
      run_potrs_on_lapack_factors<T, Layout>(u, n, 1, batch);
      if (::testing::Test::HasFatalFailure()) return;
    }
}

// A factor whose diagonal entry d is so small that 1 / d overflows (row and
// column k otherwise zero, in 2 of every 3 problems; full blocks mix both
// kinds), with B(k) = 0: dpotrs's two dtrsm calls leave X(k) = 0 (0 / d),
// where a multiply by 1 / d gives 0 * Inf = NaN and spreads it. POTRS's
// register forms compute the reciprocals first and leave such a block to
// the solves that divide.
TYPED_TEST(Posv, PotrsDividesByATinyDiagonalLikeLapack) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const T tiny = std::numeric_limits<T>::denorm_min() * T(48);
  const T eps  = std::numeric_limits<T>::epsilon();
  for (int n : {1, 3, 8, 9, 12, 16})
    for (Uplo u : {Uplo::Lower, Uplo::Upper})
      for (int nrhs : {1, 2}) {
        const index_t batch = 2 * lanes_of<T, Layout>() + 3;
        auto f  = random_batch<T>(batch, n, n, std::uint64_t(800 + n));
        auto hB = random_batch<T>(batch, n, nrhs, std::uint64_t(810 + n));
        for (index_t b = 0; b < batch; ++b) {
          for (int i = 0; i < n; ++i) f(b, i, i) = std::abs(f(b, i, i)) + T(n);
          if (b % 3 == 1) continue;
          const int k = int(b % n);
          for (int j = 0; j < n; ++j) f(b, k, j) = f(b, j, k) = T(0);
          f(b, k, k) = tiny;
          for (int c = 0; c < nrhs; ++c) hB(b, k, c) = T(0);
        }
        auto A = make_view<T, Layout>("A", batch, n, n);
        auto B = make_view<T, Layout>("B", batch, n, nrhs);
        fill_view(A, f);
        fill_view(B, hB);
        ibla::potrs(Kokkos::DefaultExecutionSpace(), u, A, B);
        Kokkos::fence();
        const auto got = read_view(B);
        HostBatch<T> ref = hB;
        for (index_t b = 0; b < batch; ++b)
          ASSERT_EQ(ref_potrs(u, n, nrhs, f.matrix(b), ref.matrix(b)), 0);
        SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " tiny diagonal n " << n
                                          << " uplo " << ibla::to_string(u) << " nrhs " << nrhs);
        for (index_t b = 0; b < batch; ++b)
          for (int c = 0; c < nrhs; ++c)
            for (int i = 0; i < n; ++i) {
              const T want = ref(b, i, c), have = got(b, i, c);
              ASSERT_TRUE(std::isfinite(want)) << "problem " << b << " (" << i << "," << c << ")";
              ASSERT_TRUE(std::isfinite(have)) << "problem " << b << " (" << i << "," << c << ")";
              if (b % 3 != 1 && i == int(b % n)) {
                ASSERT_EQ(have, T(0)) << "problem " << b << " row " << i;
              } else {
                ASSERT_LE(std::abs(have - want), T(64) * T(n) * eps * (std::abs(want) + T(1)))
                    << "problem " << b << " (" << i << "," << c << ")";
              }
            }
      }
}

// One right-hand side as a rank-2 View (batch, n).
template <class T, class Layout>
void run_rank2_posv() {
  const index_t batch = 27;
  for (int n : {1, 4, 9, 12, 16, 32})
    for (Uplo u : {Uplo::Lower, Uplo::Upper}) {
      auto hA = spd_batch<T>(batch, n, u, std::uint64_t(n));
      break_minor(hA, 3, 1, false);
      auto hB = random_batch<T>(batch, n, 1, std::uint64_t(n + 1));
      Kokkos::View<T***, Layout> A("A", batch, n, n);
      Kokkos::View<T**, Layout> B("B", batch, n);
      Kokkos::View<int*, Layout> info("info", batch);
      fill_view(A, hA);
      auto hBm = Kokkos::create_mirror_view(B);
      for (index_t b = 0; b < batch; ++b)
        for (int i = 0; i < n; ++i) hBm(b, i) = hB(b, i, 0);
      mirror_copy(B, hBm);
      ibla::posv(Kokkos::DefaultExecutionSpace(), u, A, B, info);
      mirror_copy(hBm, B);
      HostBatch<T> got(batch, n, 1);
      for (index_t b = 0; b < batch; ++b)
        for (int i = 0; i < n; ++i) got(b, i, 0) = hBm(b, i);
      auto refA = hA, ref = hB;
      std::vector<int> rinfo(static_cast<size_t>(batch));
      for (index_t b = 0; b < batch; ++b) rinfo[size_t(b)] = ref_posv(u, n, 1, refA.matrix(b), ref.matrix(b));
      EXPECT_EQ(rinfo[3], 1);
      EXPECT_EQ(read_info(info), rinfo);
      // Problem 3 failed: its B is untouched, and so equal to ref there.
      EXPECT_TRUE(close_per_problem(got, ref, 32.0 * (n + 1) * double(eps<T>())))
          << "n " << n << " uplo " << ibla::to_string(u);
    }
}
TEST(PosvRank2, OneRightHandSideBlockInterleaved) { run_rank2_posv<double, ibla::LayoutBlockInterleaved<8>>(); }
TEST(PosvRank2, OneRightHandSideLayoutLeft) { run_rank2_posv<float, Kokkos::LayoutLeft>(); }

// A free function: nvcc rejects device lambdas inside a TEST body.
template <int L, class V0, class V1, class V2, class V3>
void user_kernel_posv(const V0& A, const V1& B, const V2& B2, const V3& info, index_t batch) {
  user_kernel_posv<L>(A, B, B2, info, batch);
}

// A free function: nvcc rejects device lambdas inside a TEST body.
template <int L, class AV, class BV, class IV>
void user_kernel_posv(const AV& A, const BV& B, const BV& B2, const IV& info, index_t batch) {
  using Policy      = Kokkos::TeamPolicy<>;
  const int nblocks = int((batch + L - 1) / L);
  Kokkos::parallel_for(
      "user_kernel", Policy(nblocks, Kokkos::AUTO), KOKKOS_LAMBDA(const Policy::member_type& member) {
        const index_t first = index_t(member.league_rank()) * L;
        const int lanes     = int(batch - first < L ? batch - first : L);
        const auto a        = ibla::lane_block(A, first, lanes);
        ibla::team::posv(member, Uplo::Lower, a, ibla::lane_block(B, first, lanes),
                         ibla::lane_block(info, first, lanes));
        // A second solve with the factor now in A.
        ibla::team::potrs(member, Uplo::Lower, a, ibla::lane_block(B2, first, lanes));
      });
  Kokkos::fence();
}

// team::posv and team::potrs inside a user's own TeamPolicy kernel.
TEST(PosvTeam, CalledInsideUserKernel) {
  using T             = double;
  constexpr int L     = 8;
  using Layout        = ibla::LayoutBlockInterleaved<L>;
  const index_t batch = 3 * L + 1;
  const int n = 10, nrhs = 3;
  auto hA = spd_batch<T>(batch, n, Uplo::Lower, 11);
  break_minor(hA, 9, 4, false);
  auto hB = random_batch<T>(batch, n, nrhs, 12);
  Kokkos::View<T***, Layout> A("A", batch, n, n), B("B", batch, n, nrhs), B2("B2", batch, n, nrhs);
  Kokkos::View<int*, Layout> info("info", batch);
  fill_view(A, hA);
  fill_view(B, hB);
  fill_view(B2, hB);
  user_kernel_posv<L>(A, B, B2, info, batch);
  auto refA = hA, ref = hB;
  std::vector<int> rinfo(static_cast<size_t>(batch));
  std::vector<bool> skip(static_cast<size_t>(batch));
  for (index_t b = 0; b < batch; ++b) {
    rinfo[size_t(b)] = ref_posv(Uplo::Lower, n, nrhs, refA.matrix(b), ref.matrix(b));
    skip[size_t(b)]  = rinfo[size_t(b)] != 0;
  }
  EXPECT_EQ(rinfo[9], 4);
  EXPECT_EQ(read_info(info), rinfo);
  EXPECT_TRUE(close_per_problem(read_view(B), ref, 32.0 * (n + 1) * eps<T>()));
  EXPECT_TRUE(close_per_problem(read_view(B2), ref, 32.0 * (n + 1) * eps<T>(), &skip));
}

TEST(PosvErrors, BadArgumentsThrowAndTouchNothing) {
  using T  = double;
  using BI = Kokkos::View<T***, ibla::LayoutBlockInterleaved<8>>;
  const auto exec     = Kokkos::DefaultExecutionSpace();
  const index_t batch = 10;
  auto hA = spd_batch<T>(batch, 4, Uplo::Lower, 1);
  auto hB = random_batch<T>(batch, 4, 2, 2);
  BI A("A", batch, 4, 4), A43("A", batch, 4, 3), B("B", batch, 4, 2), B3("B", batch, 3, 2),
      B9("B", 9, 4, 2), B_null(nullptr, batch, 4, 2);
  Kokkos::View<T***, ibla::LayoutBlockInterleaved<4>> B4("B", batch, 4, 2);
  Kokkos::View<int*, ibla::LayoutBlockInterleaved<8>> info("info", batch), info9("info", 9);
  Kokkos::View<int*, ibla::LayoutBlockInterleaved<16>> info16("info", batch);
  fill_view(A, hA);
  fill_view(B, hB);
  poison_info(info);
  auto expect_error = [&](const char* routine, const char* arg, auto&& call) {
    try {
      call();
      ADD_FAILURE() << routine << ": no exception, expected one naming " << arg;
    } catch (const ibla::argument_error& e) {
      EXPECT_EQ(e.argument(), arg) << e.what();
      EXPECT_EQ(e.routine(), routine);
    }
    EXPECT_TRUE(batches_equal(read_view(A), hA)) << "A was modified by a rejected call";
    EXPECT_TRUE(batches_equal(read_view(B), hB)) << "B was modified by a rejected call";
    EXPECT_EQ(read_info(info), std::vector<int>(static_cast<size_t>(batch), -777)) << "info was modified";
  };
  expect_error("posv", "A", [&] { ibla::posv(exec, Uplo::Lower, A43, B, info); });
  expect_error("posv", "B", [&] { ibla::posv(exec, Uplo::Lower, A, B3, info); });
  expect_error("posv", "B", [&] { ibla::posv(exec, Uplo::Lower, A, B9, info); });
  expect_error("posv", "info", [&] { ibla::posv(exec, Uplo::Lower, A, B, info9); });
  expect_error("posv", "B", [&] { ibla::posv(exec, Uplo::Lower, A, B4, info); });
  expect_error("posv", "info", [&] { ibla::posv(exec, Uplo::Upper, A, B, info16); });
  expect_error("posv", "B", [&] { ibla::posv(exec, Uplo::Upper, A, B_null, info); });
  expect_error("potrs", "A", [&] { ibla::potrs(exec, Uplo::Lower, A43, B); });
  expect_error("potrs", "B", [&] { ibla::potrs(exec, Uplo::Lower, A, B3); });
  expect_error("potrs", "B", [&] { ibla::potrs(exec, Uplo::Lower, A, B9); });
  expect_error("potrs", "B", [&] { ibla::potrs(exec, Uplo::Upper, A, B4); });
}

TEST(PosvEmpty, ZeroBatchZeroOrderZeroRhs) {
  using BI = Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>>;
  const auto exec = Kokkos::DefaultExecutionSpace();
  BI A("A", 0, 3, 3), B("B", 0, 3, 2), A0("A", 5, 0, 0), B0("B", 5, 0, 2), A3("A", 5, 3, 3),
      B30("B", 5, 3, 0);
  Kokkos::View<int*, ibla::LayoutBlockInterleaved<8>> info0("info", 0), info("info", 5);
  EXPECT_NO_THROW(ibla::posv(exec, Uplo::Lower, A, B, info0));
  EXPECT_NO_THROW(ibla::potrs(exec, Uplo::Lower, A0, B0));
  poison_info(info);
  ibla::posv(exec, Uplo::Upper, A0, B0, info);
  EXPECT_EQ(read_info(info), std::vector<int>(5, 0));
  // nrhs = 0 still factors A (dposv does).
  auto hA = spd_batch<double>(5, 3, Uplo::Lower, 4);
  break_minor(hA, 2, 2, false);
  fill_view(A3, hA);
  ibla::posv(exec, Uplo::Lower, A3, B30, info);
  std::vector<int> rinfo(5);
  for (index_t b = 0; b < 5; ++b) rinfo[size_t(b)] = ref_potrf(Uplo::Lower, 3, hA.matrix(b));
  EXPECT_EQ(read_info(info), rinfo);
}
