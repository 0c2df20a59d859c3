// Edge cases of the solvers against netlib LAPACKE/CBLAS:
//  - POTRF: not positive definite at the first and at the last leading minor
//    (negative pivot, NaN on the diagonal, Inf off the diagonal), mixed in
//    one batch with SPD problems, for Lower and Upper: info per problem
//    equal to LAPACKE's, the columns factored before the failure equal to
//    LAPACKE's, the other problems of the block unaffected; n = 0 and
//    batch = 0 are no-ops with info = 0.
//  - POSV: where info > 0, B is bit for bit unchanged (dposv does not solve);
//    nrhs = 0 is valid (info still computed).
//  - TRSM: alpha = 0 gives B = 0 without reading A (NaN in A does not reach
//    B), m = 0 / nrhs = 0 / batch = 0 are no-ops, NaN/Inf in B propagate with
//    the reference's NaN/+Inf/-Inf pattern.
// Tolerances: the matrices are A = M M^T + n I with M in [-1, 1] (condition
// number below ~ 2n), so the Cholesky factor's entries are within
// 16 (n + 1) eps max|L| of the reference (componentwise backward error
// (n + 1) eps |L||L^T|, times the condition number, generously).
#include "support/reference.hpp"
#include "support/configs.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>
#include <lapacke.h>

#include <cstring>
#include <limits>

using namespace ibla_test;
using ibla::Diag;
using ibla::Op;
using ibla::Side;
using ibla::Uplo;

namespace {

// The _work variants: the plain LAPACKE calls reject NaN inputs (info -5)
// instead of running LAPACK on them.
inline lapack_int ref_potrf(char uplo, int n, double* a, int lda) {
  return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, std::max(1, lda));
}
inline lapack_int ref_potrf(char uplo, int n, float* a, int lda) {
  return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo, n, a, std::max(1, lda));
}
inline void ref_trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n,
                     double alpha, const double* a, int lda, double* b, int ldb) {
  cblas_dtrsm(CblasColMajor, s, u, t, d, m, n, alpha, a, lda, b, ldb);
}
inline void ref_trsm(CBLAS_SIDE s, CBLAS_UPLO u, CBLAS_TRANSPOSE t, CBLAS_DIAG d, int m, int n,
                     float alpha, const float* a, int lda, float* b, int ldb) {
  cblas_strsm(CblasColMajor, s, u, t, d, m, n, alpha, a, lda, b, ldb);
}

/// 0 finite, 1 NaN, 2 +Inf, 3 -Inf.
template <class T>
int klass(T x) {
  if (std::isnan(x)) return 1;
  if (std::isinf(x)) return x > 0 ? 2 : 3;
  return 0;
}

template <class T>
HostBatch<T> spd_batch(index_t batch, int n, std::uint64_t seed) {
  const auto M = random_batch<T>(batch, n, n, seed);
  HostBatch<T> A(batch, n, n);
  for (index_t b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double s = i == j ? n : 0;
        for (int p = 0; p < n; ++p) s += double(M(b, i, p)) * M(b, j, p);
        A(b, i, j) = T(s);
      }
  return A;
}

/// Kinds of problem planted in a POTRF batch.
enum Kind { Spd, NegFirst, NegLast, NanLastDiag, NanFirstDiag, InfOffDiagLast, ZeroFirst, Kinds };

/// Makes problem b of A of the given kind (symmetric changes: both triangles).
template <class T>
void plant(HostBatch<T>& A, index_t b, int n, Kind kind) {
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  switch (kind) {
    case NegFirst: A(b, 0, 0) = T(-1); break;
    case ZeroFirst: A(b, 0, 0) = T(0); break;
    case NegLast: A(b, n - 1, n - 1) = n > 1 ? T(0) : T(-2); break;  // Schur complement < 0
    case NanLastDiag: A(b, n - 1, n - 1) = nan; break;
    case NanFirstDiag: A(b, 0, 0) = nan; break;
    case InfOffDiagLast:
      if (n > 1) A(b, n - 1, 0) = A(b, 0, n - 1) = inf;
      else A(b, 0, 0) = -inf;
      break;
    default: break;
  }
}

}  // namespace

template <class C>
class EdgeSolvers : public ::testing::Test {};
using Configs = ::testing::Types<Config<double, ibla::LayoutBlockInterleaved<8>>,
                                 Config<float, ibla::LayoutInterleaved>,
                                 Config<double, Kokkos::LayoutRight>>;
TYPED_TEST_SUITE(EdgeSolvers, Configs);

TYPED_TEST(EdgeSolvers, PotrfFailsAtFirstAndLastMinorLikeLapacke) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const index_t batch = 2 * Kinds + 3;  // every kind in a full block and in the tail
  for (int n : {1, 2, 3, 5, 8, 17, 32})
    for (Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
      SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " n " << n << " "
                                        << ibla::to_string(uplo));
      auto hA = spd_batch<T>(batch, n, 100 + n);
      for (index_t b = 0; b < batch; ++b) plant(hA, b, n, Kind(b % Kinds));
      auto A = make_view<T, Layout>("A", batch, n, n);
      Kokkos::View<int*, Layout> info("info", batch);
      fill_view(A, hA);
      fill_info(info, -7);
      ibla::potrf(Kokkos::DefaultExecutionSpace(), uplo, A, info);
      Kokkos::fence();
      const auto got  = read_view(A);
      const auto ginf = read_info(info);
      auto ref = hA;
      const char u = uplo == Uplo::Lower ? 'L' : 'U';
      for (index_t b = 0; b < batch; ++b) {
        const int rinfo = ref_potrf(u, n, ref.matrix(b), n);
        ASSERT_EQ(ginf[size_t(b)], rinfo) << "info of problem " << b << " (kind " << b % Kinds << ")";
        // Columns factored before the failure (all of them when info = 0):
        // entry (r, c) of the Uplo triangle belongs to column min(r, c) of
        // the factor (a row of U for Upper).
        const int done = rinfo == 0 ? n : rinfo - 1;
        auto compared = [&](int r, int c) {
          return (uplo == Uplo::Lower ? r >= c : r <= c) && std::min(r, c) < done;
        };
        T scale = 0;
        for (int c = 0; c < n; ++c)
          for (int r = 0; r < n; ++r)
            if (compared(r, c) && std::isfinite(ref(b, r, c)))
              scale = std::max(scale, std::abs(ref(b, r, c)));
        const double tol = 16.0 * (n + 1) * double(eps<T>()) * double(scale);
        for (int c = 0; c < n; ++c)
          for (int r = 0; r < n; ++r) {
            if (!compared(r, c)) continue;
            const T g = got(b, r, c), w = ref(b, r, c);
            if (klass(g) != 0 || klass(w) != 0) {
              ASSERT_EQ(klass(g), klass(w)) << "problem " << b << " (" << r << "," << c << ")";
            } else {
              ASSERT_LE(std::abs(double(g) - double(w)), tol)
                  << "problem " << b << " (" << r << "," << c << ") " << g << " vs " << w;
            }
          }
        // The other triangle is not touched.
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i)
            if (uplo == Uplo::Lower ? i < j : i > j) {
              ASSERT_EQ(std::memcmp(&got(b, i, j), &hA(b, i, j), sizeof(T)), 0)
                  << "problem " << b << " strict other triangle (" << i << "," << j << ") written";
            }
      }
    }
}

TYPED_TEST(EdgeSolvers, PotrfZeroSizes) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const auto exec = Kokkos::DefaultExecutionSpace();
  {
    auto A = make_view<T, Layout>("A", 11, 0, 0);
    Kokkos::View<int*, Layout> info("info", 11);
    fill_info(info, 5);
    ASSERT_NO_THROW(ibla::potrf(exec, Uplo::Lower, A, info));
    Kokkos::fence();
    for (int i : read_info(info)) EXPECT_EQ(i, 0);  // LAPACK: n = 0 gives info = 0
  }
  {
    auto A = make_view<T, Layout>("A", 0, 4, 4);
    Kokkos::View<int*, Layout> info("info", 0);
    ASSERT_NO_THROW(ibla::potrf(exec, Uplo::Upper, A, info));
  }
}

// POSV: problems whose factorization fails keep their B bit for bit; the
// others are solved (residual check against the original A); nrhs = 0.
TYPED_TEST(EdgeSolvers, PosvLeavesFailedProblemsUntouched) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const index_t batch = 2 * Kinds + 5;
  for (int n : {1, 4, 9, 32})
    for (int nrhs : {0, 1, 3}) {
      SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " n " << n << " nrhs " << nrhs);
      auto hA = spd_batch<T>(batch, n, 7 + n);
      for (index_t b = 0; b < batch; ++b) plant(hA, b, n, Kind(b % Kinds));
      auto hB = random_batch<T>(batch, n, nrhs, 9 + n);
      auto A = make_view<T, Layout>("A", batch, n, n);
      auto B = make_view<T, Layout>("B", batch, n, nrhs);
      Kokkos::View<int*, Layout> info("info", batch);
      fill_view(A, hA);
      fill_view(B, hB);
      ibla::posv(Kokkos::DefaultExecutionSpace(), Uplo::Lower, A, B, info);
      Kokkos::fence();
      const auto got  = read_view(B);
      const auto ginf = read_info(info);
      for (index_t b = 0; b < batch; ++b) {
        auto a = std::vector<T>(hA.matrix(b), hA.matrix(b) + n * n);
        const int rinfo = ref_potrf('L', n, a.data(), n);
        ASSERT_EQ(ginf[size_t(b)], rinfo) << "problem " << b;
        if (rinfo > 0) {
          // (no memcmp of zero bytes: the pointers may be null when nrhs = 0)
          ASSERT_TRUE(nrhs == 0 ||
                      std::memcmp(got.matrix(b), hB.matrix(b), sizeof(T) * size_t(n * nrhs)) == 0)
              << "B of failed problem " << b << " was written";
          continue;
        }
        // Solved: ||A x - b|| small relative to ||A|| ||x|| (backward stable).
        for (int c = 0; c < nrhs; ++c)
          for (int i = 0; i < n; ++i) {
            double r = -double(hB(b, i, c)), mag = std::abs(double(hB(b, i, c)));
            for (int p = 0; p < n; ++p) {
              const double aip = p <= i ? hA(b, i, p) : hA(b, p, i);  // lower triangle only
              r += aip * got(b, p, c);
              mag += std::abs(aip * got(b, p, c));
            }
            ASSERT_LE(std::abs(r), 8.0 * (n + 1) * double(eps<T>()) * mag)
                << "residual of problem " << b << " row " << i << " rhs " << c;
          }
      }
    }
}

// TRSM with alpha = 0: B = 0 and A is not read (BLAS quick return).
TYPED_TEST(EdgeSolvers, TrsmAlphaZeroAndZeroSizes) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const auto exec = Kokkos::DefaultExecutionSpace();
  const index_t batch = 13;
  const int m = 6, nrhs = 4;
  HostBatch<T> hA(batch, m, m);
  for (auto& x : hA.data) x = std::numeric_limits<T>::quiet_NaN();
  auto hB = random_batch<T>(batch, m, nrhs, 3);
  auto A = make_view<T, Layout>("A", batch, m, m);
  auto B = make_view<T, Layout>("B", batch, m, nrhs);
  fill_view(A, hA);
  for (Side side : {Side::Left, Side::Right}) {
    const int k = side == Side::Left ? m : nrhs;
    auto Ak = make_view<T, Layout>("Ak", batch, k, k);
    HostBatch<T> hAk(batch, k, k);
    for (auto& x : hAk.data) x = std::numeric_limits<T>::quiet_NaN();
    fill_view(Ak, hAk);
    fill_view(B, hB);
    ibla::trsm(exec, side, Uplo::Lower, Op::N, Diag::NonUnit, T(0), Ak, B);
    Kokkos::fence();
    auto ref = hB;
    for (index_t b = 0; b < batch; ++b)
      ref_trsm(side == Side::Left ? CblasLeft : CblasRight, CblasLower, CblasNoTrans, CblasNonUnit,
               m, nrhs, T(0), hAk.matrix(b), k, ref.matrix(b), m);
    EXPECT_TRUE(batches_equal(read_view(B), ref)) << ibla::to_string(side);
    for (T x : read_view(B).data) EXPECT_EQ(x, T(0));
  }
  // m = 0, nrhs = 0, batch = 0: no-ops.
  auto A0 = make_view<T, Layout>("A0", batch, 0, 0);
  auto B0 = make_view<T, Layout>("B0", batch, 0, 3);
  ASSERT_NO_THROW(ibla::trsm(exec, Side::Left, Uplo::Upper, Op::T, Diag::Unit, T(2), A0, B0));
  auto B1 = make_view<T, Layout>("B1", batch, m, 0);
  ASSERT_NO_THROW(ibla::trsm(exec, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, T(2), A, B1));
  auto Ae = make_view<T, Layout>("Ae", 0, nrhs, nrhs);
  auto Be = make_view<T, Layout>("Be", 0, m, nrhs);
  ASSERT_NO_THROW(ibla::trsm(exec, Side::Right, Uplo::Lower, Op::N, Diag::NonUnit, T(2), Ae, Be));
  Kokkos::fence();
}

// NaN/Inf in B propagate through the substitution as in the reference. A is
// diagonally dominant (no growth, no overflow), so the pattern does not
// depend on the order of operations.
TYPED_TEST(EdgeSolvers, TrsmNonFiniteRightHandSides) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const index_t batch = 23;
  const T specials[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                        -std::numeric_limits<T>::infinity()};
  for (int m : {1, 3, 8, 13})
    for (Side side : {Side::Left, Side::Right})
      for (Uplo uplo : {Uplo::Lower, Uplo::Upper})
        for (Op op : {Op::N, Op::T})
          for (Diag diag : {Diag::NonUnit, Diag::Unit}) {
            const int nrhs = 3, k = side == Side::Left ? m : nrhs;
            SCOPED_TRACE(::testing::Message()
                         << layout_name<Layout>() << " m " << m << " " << ibla::to_string(side) << " "
                         << ibla::to_string(uplo) << " " << ibla::to_string(op) << " "
                         << ibla::to_string(diag));
            auto hA = random_batch<T>(batch, k, k, 40 + m);
            for (index_t b = 0; b < batch; ++b)
              for (int i = 0; i < k; ++i) hA(b, i, i) = T(k + 1);
            auto hB = random_batch<T>(batch, m, nrhs, 50 + m);
            for (index_t b = 0; b < batch; ++b) hB(b, b % m, b % nrhs) = specials[b % 3];
            auto A = make_view<T, Layout>("A", batch, k, k);
            auto B = make_view<T, Layout>("B", batch, m, nrhs);
            fill_view(A, hA);
            fill_view(B, hB);
            ibla::trsm(Kokkos::DefaultExecutionSpace(), side, uplo, op, diag, T(1.5), A, B);
            Kokkos::fence();
            const auto got = read_view(B);
            auto ref = hB;
            for (index_t b = 0; b < batch; ++b)
              ref_trsm(side == Side::Left ? CblasLeft : CblasRight,
                       uplo == Uplo::Lower ? CblasLower : CblasUpper,
                       op == Op::N ? CblasNoTrans : CblasTrans,
                       diag == Diag::Unit ? CblasUnit : CblasNonUnit, m, nrhs, T(1.5), hA.matrix(b),
                       k, ref.matrix(b), m);
            for (index_t b = 0; b < batch; ++b)
              for (int c = 0; c < nrhs; ++c)
                for (int i = 0; i < m; ++i)
                  ASSERT_EQ(klass(got(b, i, c)), klass(ref(b, i, c)))
                      << "B(" << b << "," << i << "," << c << ") = " << got(b, i, c) << ", reference "
                      << ref(b, i, c);
          }
}

// GETRF: an exactly zero pivot at the first step (zero first column) and at
// the last (zero last column: every update of that column is 0 - l * 0), a
// NaN entry, mixed in one batch with regular problems: info and ipiv equal
// to LAPACKE's (LAPACK goes on after a zero pivot), and P A = L U to the
// componentwise backward error gamma_n |L||U| (Higham, Thm 9.3, times 2).
// m = 0 / n = 0 / batch = 0 are no-ops with info = 0.
namespace {
inline lapack_int ref_getrf(int m, int n, double* a, int lda, lapack_int* ipiv) {
  return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, a, std::max(1, lda), ipiv);
}
inline lapack_int ref_getrf(int m, int n, float* a, int lda, lapack_int* ipiv) {
  return LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, m, n, a, std::max(1, lda), ipiv);
}
}  // namespace

TYPED_TEST(EdgeSolvers, GetrfSingularAtFirstAndLastPivot) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const index_t batch = 21;
  struct Shape {
    int m, n;
  };
  for (Shape s : {Shape{1, 1}, Shape{2, 2}, Shape{5, 5}, Shape{8, 8}, Shape{17, 17}, Shape{32, 32},
                  Shape{7, 4}, Shape{4, 7}}) {
    const int m = s.m, n = s.n, steps = std::min(m, n);
    SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " m " << m << " n " << n);
    auto hA = random_batch<T>(batch, m, n, 300 + m * 40 + n);
    for (index_t b = 0; b < batch; ++b) {
      switch (b % 4) {
        case 1:
          for (int i = 0; i < m; ++i) hA(b, i, 0) = T(0);  // zero first pivot
          break;
        case 2:
          for (int i = 0; i < m; ++i) hA(b, i, steps - 1) = T(0);  // zero last pivot
          break;
        case 3: hA(b, b % m, (b / 2) % n) = std::numeric_limits<T>::quiet_NaN(); break;
        default: break;
      }
    }
    auto A = make_view<T, Layout>("A", batch, m, n);
    Kokkos::View<int**, Layout> ipiv("ipiv", batch, steps);
    Kokkos::View<int*, Layout> info("info", batch);
    fill_view(A, hA);
    fill_info(info, -3);
    ibla::getrf(Kokkos::DefaultExecutionSpace(), A, ipiv, info);
    Kokkos::fence();
    const auto got  = read_view(A);
    const auto ginf = read_info(info);
    auto hpiv = Kokkos::create_mirror_view(ipiv);
    mirror_copy(hpiv, ipiv);
    for (index_t b = 0; b < batch; ++b) {
      std::vector<T> ref(hA.matrix(b), hA.matrix(b) + m * n);
      std::vector<lapack_int> rpiv(size_t(std::max(1, steps)));
      const int rinfo = int(ref_getrf(m, n, ref.data(), m, rpiv.data()));
      ASSERT_EQ(ginf[size_t(b)], rinfo) << "info of problem " << b;
      for (int k = 0; k < steps; ++k)
        ASSERT_EQ(hpiv(b, k), int(rpiv[size_t(k)])) << "ipiv(" << k << ") of problem " << b;
      if (b % 4 == 1) {
        EXPECT_EQ(rinfo, 1);
      }
      if (b % 4 == 2 && m >= n) {
        EXPECT_EQ(rinfo, steps);
      }
      if (b % 4 == 3) continue;  // NaN: info and pivots only
      // P A = L U: apply the interchanges to a copy of A, compare with L U.
      std::vector<T> pa(hA.matrix(b), hA.matrix(b) + m * n);
      for (int k = 0; k < steps; ++k) {
        const int p = hpiv(b, k) - 1;
        for (int j = 0; j < n; ++j) std::swap(pa[size_t(j * m + k)], pa[size_t(j * m + p)]);
      }
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          double s = 0, mag = 0;
          for (int p = 0; p <= std::min({i, j, steps - 1}); ++p) {
            const double l = p == i ? 1.0 : double(got(b, i, p));
            const double x = l * double(got(b, p, j));
            s += x;
            mag += std::abs(x);
          }
          ASSERT_LE(std::abs(s - double(pa[size_t(j * m + i)])),
                    2.0 * (steps + 1) * double(eps<T>()) * mag + double(std::numeric_limits<T>::min()))
              << "(P A - L U)(" << i << "," << j << ") of problem " << b;
        }
    }
  }
  // Zero sizes.
  const auto exec = Kokkos::DefaultExecutionSpace();
  for (Shape s : {Shape{0, 3}, Shape{3, 0}, Shape{0, 0}}) {
    auto A = make_view<T, Layout>("A", 6, s.m, s.n);
    Kokkos::View<int**, Layout> ipiv("ipiv", 6, std::min(s.m, s.n));
    Kokkos::View<int*, Layout> info("info", 6);
    fill_info(info, 9);
    ASSERT_NO_THROW(ibla::getrf(exec, A, ipiv, info));
    Kokkos::fence();
    for (int i : read_info(info)) EXPECT_EQ(i, 0) << "m " << s.m << " n " << s.n;
  }
  auto A = make_view<T, Layout>("A", 0, 4, 4);
  Kokkos::View<int**, Layout> ipiv("ipiv", 0, 4);
  Kokkos::View<int*, Layout> info("info", 0);
  ASSERT_NO_THROW(ibla::getrf(exec, A, ipiv, info));
}

// A denormal diagonal: 1 / d overflows, netlib's B(k,j) / A(k,k) does not.
// Diagonal A (every fourth entry denormal, in some problems only, full block
// and tail; n = 3, 6, 12 and 24) so that ibla and dtrsm do the same single operation per element:
// x = b / d exactly where d is denormal (finite, equal bits), and b * (1/d)
// within one rounding of b / d elsewhere.
TYPED_TEST(EdgeSolvers, TrsmDenormalDiagonalMatchesNetlibDivision) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // n = 3 and 6: the host's register forms for small triangles
  // (trsm_registers_fixed_order_host on block-interleaved layouts, then
  // trsm_registers_host), which leave such a block to the tiles; n = 12
  // and 24 with one right-hand side: trsm_registers_fixed_order_host on
  // block-interleaved layouts, which leaves such a block to the tiles;
  // nrhs = 3 and 5 at n = 12: the same form on block-interleaved layouts
  // (trsm_several_columns_register_order), the tiles on the others; at n =
  // 24: the tiles with the block's reciprocals computed once (trsm_left),
  // which leave such a block to reciprocals per tile row.
  for (int n : {3, 6, 12, 24})
    for (int nrhs : {1, 3, 5}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << " nrhs " << nrhs);
      const index_t batch = index_t(lanes_of<T, Layout>()) + 3;
      auto hA = random_batch<T>(batch, n, n, 4242);
      auto hB = random_batch<T>(batch, n, nrhs, 4343);
      const T tiny = std::numeric_limits<T>::denorm_min() * T(4);
      for (index_t b = 0; b < batch; ++b)
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {
            if (i != j) {
              hA(b, i, j) = T(0);
            } else if (b % 3 != 1 && i % 4 == int(b % 4)) {
              hA(b, i, j) = (b % 2 ? -tiny : tiny);
              for (int c = 0; c < nrhs; ++c) hB(b, i, c) *= tiny;  // x of order 1
            } else {
              hA(b, i, j) = T(1.5) + hA(b, i, j);
            }
          }
      auto A = make_view<T, Layout>("A", batch, n, n);
      auto B = make_view<T, Layout>("B", batch, n, nrhs);
      fill_view(A, hA);
      fill_view(B, hB);
      ibla::trsm(Kokkos::DefaultExecutionSpace(), Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, T(1),
                 A, B);
      Kokkos::fence();
      const auto got = read_view(B);
      auto ref       = hB;
      for (index_t b = 0; b < batch; ++b) {
        if constexpr (std::is_same<T, double>::value) {
          cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, nrhs, 1.0,
                      hA.matrix(b), n, ref.matrix(b), n);
        } else {
          cblas_strsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, nrhs, 1.0f,
                      hA.matrix(b), n, ref.matrix(b), n);
        }
      }
      const T eps = std::numeric_limits<T>::epsilon();
      for (index_t b = 0; b < batch; ++b)
        for (int c = 0; c < nrhs; ++c)
          for (int i = 0; i < n; ++i) {
            const T x = got(b, i, c), r = ref(b, i, c);
            ASSERT_TRUE(std::isfinite(r)) << "reference not finite at " << b << "," << i << "," << c;
            ASSERT_TRUE(std::isfinite(x)) << "problem " << b << " x(" << i << "," << c << ") = " << x
                                          << ", netlib " << r << " (diagonal " << hA(b, i, i) << ")";
            if (std::abs(hA(b, i, i)) < std::numeric_limits<T>::min()) {
              ASSERT_EQ(x, r) << "problem " << b << " row " << i << " (denormal diagonal)";
            } else {
              ASSERT_LE(std::abs(x - r), T(2) * eps * std::abs(r)) << "problem " << b << " row " << i;
            }
          }
    }
}
