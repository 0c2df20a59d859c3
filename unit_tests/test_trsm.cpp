// Batched TRSM against netlib CBLAS: every size 1..32 with all 16
// side/uplo/trans/diag variants, nrhs in {1, 2, n, 33} and batch counts
// {1, L-1, L, L+1, 1001} cycled across the cases, every layout, float and
// double; the unused triangle of A (and the diagonal for Diag::Unit) is NaN
// in every case, so a read of it shows up as NaN in the result; alpha == 0
// with NaN A and B; ill-conditioned triangles (residual only); one
// right-hand side as a rank-2 View; the team-level call in a user kernel;
// argument errors that must leave the data untouched.
//
// Bounds (documented here, used below):
//  * Residual. Triangular solves are backward stable: (T + dT) x = b with
//    |dT| <= gamma_k |T| (Higham, Thm 8.5). Hence
//        ||op(A) X - alpha B||_inf / (||A||_inf ||X||_inf k eps) <= ~1,
//    plus the rounding of alpha * B (<= eps ||alpha B|| <= eps ||A|| ||X||).
//    The bound asserted is 4; the residual is computed in long double.
//  * Element-wise, well-conditioned triangles (cond_inf <= 6, see
//    triangular_batch): both ibla and CBLAS are within cond * gamma_k of the
//    exact X, so |x - x_cblas| <= 2 * 6 * k * eps * max|X|; asserted with
//    16 (k + 1) eps max|X| per problem (ibla multiplies by reciprocals of the
//    diagonal and fuses multiply-adds, so rounding differs from dtrsm).
#include "support/cholesky.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

using namespace ibla_test;
using ibla::Diag;
using ibla::Op;
using ibla::Side;
using ibla::Uplo;

namespace {

struct Variant {
  Side side;
  Uplo uplo;
  Op op;
  Diag diag;
};
Variant variant(int v) {
  return {v & 1 ? Side::Right : Side::Left, v & 2 ? Uplo::Upper : Uplo::Lower, v & 4 ? Op::T : Op::N,
          v & 8 ? Diag::Unit : Diag::NonUnit};
}

constexpr double kResidualBound = 4.0;

/// ||op(A) X - alpha B|| / (||A|| ||X|| k eps) (Left) or with X op(A)
/// (Right), the largest over the problems of the batch. Only the triangle
/// of A is used (the rest is NaN).
template <class T>
double trsm_residual(const Variant& v, T alpha, const HostBatch<T>& A, const HostBatch<T>& B,
                     const HostBatch<T>& X) {
  const int k = int(A.rows), m = int(B.rows), n = int(B.cols);
  double worst = 0;
  for (index_t b = 0; b < A.batch; ++b) {
    auto tri = [&](int i, int j) -> long double {
      if (i == j && v.diag == Diag::Unit) return 1;
      return in_triangle(v.uplo, i, j) ? (long double)A(b, i, j) : 0;
    };
    auto opA = [&](int i, int j) { return v.op == Op::N ? tri(i, j) : tri(j, i); };
    long double rmax = 0;
    std::vector<long double> r(size_t(m) * n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        long double s = -(long double)alpha * B(b, i, j);
        if (v.side == Side::Left)
          for (int p = 0; p < k; ++p) s += opA(i, p) * X(b, p, j);
        else
          for (int p = 0; p < k; ++p) s += X(b, i, p) * opA(p, j);
        r[size_t(j) * m + i] = s;
      }
    rmax = inf_norm(m, n, [&](int i, int j) { return r[size_t(j) * m + i]; });
    const long double an = inf_norm(k, k, opA);
    const long double xn = inf_norm(m, n, [&](int i, int j) { return (long double)X(b, i, j); });
    const long double denom = an * xn * k * eps<T>();
    const double ratio = denom > 0 ? double(rmax / denom) : (rmax == 0 ? 0.0 : INFINITY);
    worst = std::max(worst, std::isnan(ratio) ? INFINITY : ratio);
  }
  return worst;
}

template <class T, class Layout>
void run_trsm(const Variant& v, index_t batch, int m, int n, T alpha, std::uint64_t seed,
              bool graded = false) {
  SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " side " << ibla::to_string(v.side)
                                    << " uplo " << ibla::to_string(v.uplo) << " op "
                                    << ibla::to_string(v.op) << " diag " << ibla::to_string(v.diag)
                                    << " batch " << batch << " m " << m << " nrhs " << n << " alpha "
                                    << alpha << (graded ? " graded" : ""));
  const int k = v.side == Side::Left ? m : n;
  auto hA = triangular_batch<T>(batch, k, v.uplo, v.diag, seed, graded);
  auto hB = random_batch<T>(batch, m, n, seed + 1);
  auto A = make_view<T, Layout>("A", batch, k, k);
  auto B = make_view<T, Layout>("B", batch, m, n);
  fill_view(A, hA);
  fill_view(B, hB);
  ibla::trsm(Kokkos::DefaultExecutionSpace(), v.side, v.uplo, v.op, v.diag, alpha, A, B);
  Kokkos::fence();
  const auto got = read_view(B);
  auto ref       = hB;
  for (index_t b = 0; b < batch; ++b)
    ref_trsm(v.side, v.uplo, v.op, v.diag, m, n, alpha, hA.matrix(b), std::max(1, k), ref.matrix(b),
             std::max(1, m));
  const double res = trsm_residual(v, alpha, hA, hB, got);
  EXPECT_LE(res, kResidualBound) << "residual ||op(A) X - alpha B|| / (||A|| ||X|| k eps)";
  if (!graded) {
    ASSERT_TRUE(close_per_problem(got, ref, 16.0 * (k + 1) * double(eps<T>())));
  }
  // A is input only: unchanged, NaN triangle included.
  ASSERT_TRUE(batches_equal(read_view(A), hA));
}

}  // namespace

template <class C>
class Trsm : public ::testing::Test {};
TYPED_TEST_SUITE(Trsm, SolverSweepConfigs);

// Every size, every variant; nrhs and batch count cycle with the case so
// that every variant meets every nrhs and every batch count.
TYPED_TEST(Trsm, AllSizesAllVariants) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const T alphas[] = {T(1), T(-0.75), T(2.5)};
  int c = 0;
  for (int size : sweep_sizes())
    for (int vi = 0; vi < 16; ++vi, ++c) {
      const Variant v  = variant(vi);
      const int rhs[]  = {1, 2, size, 33};
      const int nrhs   = rhs[(size + vi) % 4];
      const index_t bc = cycled_batch(lanes_of<T, Layout>(), c, 16);
      // Left: A is size x size, B size x nrhs. Right: B is nrhs x size.
      const int m = v.side == Side::Left ? size : nrhs, n = v.side == Side::Left ? nrhs : size;
      run_trsm<T, Layout>(v, bc, m, n, alphas[c % 3], std::uint64_t(100 + c));
      if (::testing::Test::HasFatalFailure()) return;
    }
}

// Random triangular matrices with O(1) off-diagonal entries are ill
// conditioned (cond grows like 2^k): the element-wise comparison does not
// apply, the residual bound does.
TYPED_TEST(Trsm, IllConditionedResidual) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  int c = 0;
  for (int size : {5, 16, 23, 32})
    for (int vi = 0; vi < 16; ++vi, ++c) {
      const int nrhs = c % 2 ? 3 : size;
      const Variant v = variant(vi);
      run_trsm<T, Layout>(v, lanes_of<T, Layout>() + 1, v.side == Side::Left ? size : nrhs,
                          v.side == Side::Left ? nrhs : size, T(1), std::uint64_t(900 + c), true);
      if (::testing::Test::HasFatalFailure()) return;
    }
}

// One right-hand side, every Side::Left variant, every order of TRSM's
// register forms (on host: up to trsm_register_order, and up to 24 for one
// column on block-interleaved layouts, trsm_one_column_register_order) and
// the tile form's orders after them up to 33, where the sweep above gives
// Side::Left one right-hand side at even orders only. Two full blocks and a partial one (which takes the
// tile form).
TYPED_TEST(Trsm, OneRightHandSideEveryRegisterOrder) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const T alphas[]    = {T(1), T(-0.75), T(2.5)};
  const index_t batch = 2 * lanes_of<T, Layout>() + 3;
  int c = 0;
  for (int n = 1; n <= 33; ++n)
    for (int vi = 0; vi < 16; vi += 2, ++c) {
      run_trsm<T, Layout>(variant(vi), batch, n, 1, alphas[c % 3], std::uint64_t(1200 + c));
      if (::testing::Test::HasFatalFailure()) return;
    }
}

// alpha == 0: B = 0 without reading A or B (both all NaN).
TYPED_TEST(Trsm, AlphaZeroReadsNeitherAnorB) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const index_t batch = lanes_of<T, Layout>() + 3;
  for (int vi = 0; vi < 16; ++vi) {
    const Variant v = variant(vi);
    const int m = 7, n = 3, k = v.side == Side::Left ? m : n;
    HostBatch<T> nanA(batch, k, k), nanB(batch, m, n), zero(batch, m, n);
    std::fill(nanA.data.begin(), nanA.data.end(), qnan<T>());
    std::fill(nanB.data.begin(), nanB.data.end(), qnan<T>());
    auto A = make_view<T, Layout>("A", batch, k, k);
    auto B = make_view<T, Layout>("B", batch, m, n);
    fill_view(A, nanA);
    fill_view(B, nanB);
    ibla::trsm(Kokkos::DefaultExecutionSpace(), v.side, v.uplo, v.op, v.diag, T(0), A, B);
    EXPECT_TRUE(batches_equal(read_view(B), zero)) << "variant " << vi;
  }
}

// One right-hand side as a rank-2 View (batch, n): Left with any n, Right
// with a 1 x 1 A.
template <class T, class Layout>
void run_rank2_rhs() {
  const index_t batch = 29;
  for (int vi = 0; vi < 16; ++vi) {
    const Variant v = variant(vi);
    for (int n : {1, 6, 12, 17, 32}) {
      const int k = v.side == Side::Left ? n : 1;
      auto hA = triangular_batch<T>(batch, k, v.uplo, v.diag, 40 + n);
      auto hB = random_batch<T>(batch, n, 1, 41 + n);
      Kokkos::View<T***, Layout> A("A", batch, k, k);
      Kokkos::View<T**, Layout> B("B", batch, n);
      fill_view(A, hA);
      auto hBm = Kokkos::create_mirror_view(B);
      for (index_t b = 0; b < batch; ++b)
        for (int i = 0; i < n; ++i) hBm(b, i) = hB(b, i, 0);
      mirror_copy(B, hBm);
      ibla::trsm(Kokkos::DefaultExecutionSpace(), v.side, v.uplo, v.op, v.diag, T(1.5), A, B);
      mirror_copy(hBm, B);
      HostBatch<T> got(batch, n, 1);
      for (index_t b = 0; b < batch; ++b)
        for (int i = 0; i < n; ++i) got(b, i, 0) = hBm(b, i);
      // B is n x 1 in both cases; Side::Right divides it by the 1 x 1 A.
      auto ref = hB;
      for (index_t b = 0; b < batch; ++b)
        ref_trsm(v.side, v.uplo, v.op, v.diag, n, 1, T(1.5), hA.matrix(b), k, ref.matrix(b), n);
      EXPECT_TRUE(close_per_problem(got, ref, 16.0 * (k + 1) * double(eps<T>())))
          << "variant " << vi << " n " << n;
    }
  }
}
// Several right-hand sides on batches larger than prefetch_above_bytes, so
// that the orders that request the next block a column at a time
// (trsm_requests_next_columns) do, with fewer, as many and more columns
// than the order, a partial last block, and the orders around them.
template <class T, int L>
void run_batches_requesting_next_columns() {
  using Layout = ibla::LayoutBlockInterleaved<L>;
  int c        = 0;
  for (const int n : {3, 4, 6, 8, 9})
    for (const int nrhs : {2, n, n + 3})
      for (const int vi : {0, 4, 2}) {  // left lower N, left lower T, left upper N
        const index_t bytes = index_t(n) * (n + nrhs) * index_t(sizeof(T));
        const index_t batch =
            index_t(2 * ibla::impl::prefetch_above_bytes) / bytes / L * L + L / 2 + 1;
        run_trsm<T, Layout>(variant(vi), batch, n, nrhs, T(1.5), std::uint64_t(2600 + c++));
        if (::testing::Test::HasFatalFailure()) return;
      }
}
TEST(TrsmLargeBatch, SeveralColumnsDouble) { run_batches_requesting_next_columns<double, 8>(); }
TEST(TrsmLargeBatch, SeveralColumnsFloat) { run_batches_requesting_next_columns<float, 16>(); }

TEST(TrsmRank2, OneRightHandSideBlockInterleaved) { run_rank2_rhs<double, ibla::LayoutBlockInterleaved<8>>(); }
TEST(TrsmRank2, OneRightHandSideLayoutRight) { run_rank2_rhs<float, Kokkos::LayoutRight>(); }

// A free function: nvcc rejects device lambdas inside a TEST body.
template <int L, class AV, class BV>
void user_kernel_trsm(const AV& A, const BV& B, index_t batch) {
  using Policy      = Kokkos::TeamPolicy<>;
  const int nblocks = int((batch + L - 1) / L);
  Kokkos::parallel_for(
      "user_kernel", Policy(nblocks, Kokkos::AUTO), KOKKOS_LAMBDA(const Policy::member_type& member) {
        const index_t first = index_t(member.league_rank()) * L;
        const int lanes     = int(batch - first < L ? batch - first : L);
        ibla::team::trsm(member, Side::Left, Uplo::Upper, Op::T, Diag::NonUnit, -2.0,
                         ibla::lane_block(A, first, lanes), ibla::lane_block(B, first, lanes));
      });
  Kokkos::fence();
}

// The team-level TRSM inside a user's own TeamPolicy kernel.
TEST(TrsmTeam, CalledInsideUserKernel) {
  using T             = double;
  constexpr int L     = 8;
  using Layout        = ibla::LayoutBlockInterleaved<L>;
  const index_t batch = 3 * L + 5;
  const int m = 9, n = 4;
  const Variant v{Side::Left, Uplo::Upper, Op::T, Diag::NonUnit};
  auto hA = triangular_batch<T>(batch, m, v.uplo, v.diag, 5);
  auto hB = random_batch<T>(batch, m, n, 6);
  Kokkos::View<T***, Layout> A("A", batch, m, m), B("B", batch, m, n);
  fill_view(A, hA);
  fill_view(B, hB);
  user_kernel_trsm<L>(A, B, batch);
  auto ref = hB;
  for (index_t b = 0; b < batch; ++b)
    ref_trsm(v.side, v.uplo, v.op, v.diag, m, n, -2.0, hA.matrix(b), m, ref.matrix(b), m);
  EXPECT_TRUE(close_per_problem(read_view(B), ref, 16.0 * (m + 1) * eps<T>()));
}

// Mixed layouts in one call: block-interleaved A, strided B.
TEST(TrsmMixed, BlockInterleavedAWithLayoutRightB) {
  using T             = double;
  const index_t batch = 45;
  const int m = 11, n = 5;
  const Variant v{Side::Right, Uplo::Lower, Op::N, Diag::Unit};
  auto hA = triangular_batch<T>(batch, n, v.uplo, v.diag, 7);
  auto hB = random_batch<T>(batch, m, n, 8);
  Kokkos::View<T***, ibla::LayoutBlockInterleaved<8>> A("A", batch, n, n);
  Kokkos::View<T***, Kokkos::LayoutRight> B("B", batch, m, n);
  fill_view(A, hA);
  fill_view(B, hB);
  ibla::trsm(Kokkos::DefaultExecutionSpace(), v.side, v.uplo, v.op, v.diag, 0.5, A, B);
  auto ref = hB;
  for (index_t b = 0; b < batch; ++b)
    ref_trsm(v.side, v.uplo, v.op, v.diag, m, n, 0.5, hA.matrix(b), n, ref.matrix(b), m);
  EXPECT_TRUE(close_per_problem(read_view(B), ref, 16.0 * (n + 1) * eps<T>()));
}

// Bad arguments throw ibla::argument_error naming the argument, and leave
// B as it was.
TEST(TrsmErrors, BadArgumentsThrowAndTouchNothing) {
  using T  = double;
  using BI = Kokkos::View<T***, ibla::LayoutBlockInterleaved<8>>;
  const auto exec = Kokkos::DefaultExecutionSpace();
  auto hB = random_batch<T>(10, 4, 3, 1);
  BI B("B", 10, 4, 3);
  fill_view(B, hB);
  auto expect_error = [&](const char* arg, auto&& call) {
    try {
      call();
      ADD_FAILURE() << "no exception, expected one naming " << arg;
    } catch (const ibla::argument_error& e) {
      EXPECT_EQ(e.argument(), arg) << e.what();
      EXPECT_EQ(e.routine(), "trsm");
    }
    EXPECT_TRUE(batches_equal(read_view(B), hB)) << "B was modified by a rejected call";
  };
  BI A43("A", 10, 4, 3), A44("A", 10, 4, 4), A33("A", 10, 3, 3), A9("A", 9, 4, 4);
  Kokkos::View<T***, ibla::LayoutBlockInterleaved<4>> A4("A", 10, 4, 4);
  BI unallocated;
  Kokkos::View<T***, ibla::LayoutBlockInterleaved<8>> Anull(nullptr, 10, 4, 4);
  expect_error("A", [&] { ibla::trsm(exec, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, 1.0, A43, B); });
  expect_error("B", [&] { ibla::trsm(exec, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, 1.0, A33, B); });
  expect_error("B", [&] { ibla::trsm(exec, Side::Right, Uplo::Lower, Op::N, Diag::NonUnit, 1.0, A44, B); });
  expect_error("A", [&] { ibla::trsm(exec, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, 1.0, A9, B); });
  expect_error("B", [&] { ibla::trsm(exec, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, 1.0, A4, B); });
  expect_error("A", [&] { ibla::trsm(exec, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, 1.0, Anull, B); });
  // A 10-problem B against an unallocated A: the batch count is checked first.
  expect_error("A", [&] { ibla::trsm(exec, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, 1.0, unallocated, B); });
  // Right with a rank-2 B needs a 1 x 1 A.
  Kokkos::View<T**, Kokkos::LayoutRight> b2("b", 10, 4);
  Kokkos::View<T***, Kokkos::LayoutRight> A44r("A", 10, 4, 4);
  try {
    ibla::trsm(exec, Side::Right, Uplo::Lower, Op::N, Diag::NonUnit, 1.0, A44r, b2);
    ADD_FAILURE() << "no exception for Side::Right with a rank-2 B and a 4 x 4 A";
  } catch (const ibla::argument_error& e) {
    EXPECT_EQ(e.argument(), "B") << e.what();
  }
}

TEST(TrsmEmpty, ZeroBatchAndZeroSizesAreNoOps) {
  using BI = Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>>;
  const auto exec = Kokkos::DefaultExecutionSpace();
  BI A("A", 0, 3, 3), B("B", 0, 3, 2), A0("A", 5, 0, 0), B0("B", 5, 0, 4), A3("A", 5, 3, 3),
      B30("B", 5, 3, 0);
  EXPECT_NO_THROW(ibla::trsm(exec, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, 1.0, A, B));
  EXPECT_NO_THROW(ibla::trsm(exec, Side::Left, Uplo::Upper, Op::T, Diag::Unit, 1.0, A0, B0));
  EXPECT_NO_THROW(ibla::trsm(exec, Side::Left, Uplo::Upper, Op::T, Diag::Unit, 1.0, A3, B30));
}
