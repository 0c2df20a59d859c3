// Test support for TRSM and the Cholesky family (potrf, potrs, posv):
// netlib CBLAS/LAPACK references in both precisions, triangular and SPD test
// matrices (well and ill conditioned, and not positive definite at a chosen
// minor), rank-1 info Views in every layout, and the residual and
// element-wise checks with their documented bounds.
#pragma once

#include "support/configs.hpp"
#include "support/reference.hpp"

#include <cblas.h>
#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

namespace ibla_test {

/// Cycles through the batch counts {1, L-1, L, L+1, 1001}; 1001 only every
/// `big_every`-th case so that the suites stay within their time budget.
/// Short sweeps (support/batch.hpp) take it a quarter as often.
inline index_t cycled_batch(int lanes, int c, int big_every = 10) {
  const auto counts = batch_counts(lanes);  // ends with large_batch
  if (short_sweeps()) big_every *= 4;
  if (c % big_every == big_every - 1) return counts.back();
  return counts[size_t(c) % (counts.size() - 1)];
}

// ---------------------------------------------------------------------------
// info Views poisoned (made, read and filled: support/batch.hpp).
/// Fills info with a value that is never a valid result, so that a kernel
/// which forgets to write info is caught.
template <class View>
void poison_info(const View& v) {
  fill_info(v, -777);
}

// ---------------------------------------------------------------------------
// References (netlib).
inline char uplo_char(ibla::Uplo u) { return u == ibla::Uplo::Lower ? 'L' : 'U'; }

inline void ref_trsm(ibla::Side s, ibla::Uplo u, ibla::Op op, ibla::Diag d, int m, int n, double alpha,
                     const double* A, int lda, double* B, int ldb) {
  cblas_dtrsm(CblasColMajor, s == ibla::Side::Left ? CblasLeft : CblasRight,
              u == ibla::Uplo::Lower ? CblasLower : CblasUpper, op == ibla::Op::N ? CblasNoTrans : CblasTrans,
              d == ibla::Diag::Unit ? CblasUnit : CblasNonUnit, m, n, alpha, A, lda, B, ldb);
}
inline void ref_trsm(ibla::Side s, ibla::Uplo u, ibla::Op op, ibla::Diag d, int m, int n, float alpha,
                     const float* A, int lda, float* B, int ldb) {
  cblas_strsm(CblasColMajor, s == ibla::Side::Left ? CblasLeft : CblasRight,
              u == ibla::Uplo::Lower ? CblasLower : CblasUpper, op == ibla::Op::N ? CblasNoTrans : CblasTrans,
              d == ibla::Diag::Unit ? CblasUnit : CblasNonUnit, m, n, alpha, A, lda, B, ldb);
}
// The _work variants: the high-level LAPACKE wrappers reject NaN input
// (info -5), but NaN in the unused triangle or a NaN pivot are legitimate
// inputs whose LAPACK result is wanted.
inline int ref_potrf(ibla::Uplo u, int n, double* a) {
  return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo_char(u), n, a, std::max(1, n));
}
inline int ref_potrf(ibla::Uplo u, int n, float* a) {
  return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo_char(u), n, a, std::max(1, n));
}
/// LAPACK's unblocked dpotf2: the state a failed factorization leaves.
inline int ref_potf2(ibla::Uplo u, int n, double* a) {
  const char c = uplo_char(u);
  const int lda = std::max(1, n);
  int info = 0;
  LAPACK_dpotf2(&c, &n, a, &lda, &info);
  return info;
}
inline int ref_potf2(ibla::Uplo u, int n, float* a) {
  const char c = uplo_char(u);
  const int lda = std::max(1, n);
  int info = 0;
  LAPACK_spotf2(&c, &n, a, &lda, &info);
  return info;
}
inline int ref_potrs(ibla::Uplo u, int n, int nrhs, const double* a, double* b) {
  return LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, uplo_char(u), n, nrhs, a, std::max(1, n), b, std::max(1, n));
}
inline int ref_potrs(ibla::Uplo u, int n, int nrhs, const float* a, float* b) {
  return LAPACKE_spotrs_work(LAPACK_COL_MAJOR, uplo_char(u), n, nrhs, a, std::max(1, n), b, std::max(1, n));
}
inline int ref_posv(ibla::Uplo u, int n, int nrhs, double* a, double* b) {
  return LAPACKE_dposv_work(LAPACK_COL_MAJOR, uplo_char(u), n, nrhs, a, std::max(1, n), b, std::max(1, n));
}
inline int ref_posv(ibla::Uplo u, int n, int nrhs, float* a, float* b) {
  return LAPACKE_sposv_work(LAPACK_COL_MAJOR, uplo_char(u), n, nrhs, a, std::max(1, n), b, std::max(1, n));
}

// ---------------------------------------------------------------------------
// Test matrices.
template <class T>
constexpr T qnan() {
  return std::numeric_limits<T>::quiet_NaN();
}
inline bool in_triangle(ibla::Uplo u, index_t i, index_t j) {
  return u == ibla::Uplo::Lower ? i >= j : i <= j;
}

/// Triangular matrices whose unused triangle (and, for Diag::Unit, diagonal)
/// is NaN, so that any read of it shows up in the result. Well conditioned:
/// |diagonal| in [1, 2], off-diagonal entries in [-0.5, 0.5] / k, so every
/// row and column of D^{-1} N sums to at most 1/2 and cond_inf(T) <= 6.
/// With `graded`, off-diagonal entries are uniform in [-1, 1] and the
/// diagonal in [0.5, 1.5] (random triangular matrices of this kind are
/// ill conditioned, growing exponentially with k).
template <class T>
HostBatch<T> triangular_batch(index_t batch, int k, ibla::Uplo u, ibla::Diag d, std::uint64_t seed,
                              bool graded = false) {
  HostBatch<T> h(batch, k, k);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (index_t b = 0; b < batch; ++b)
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < k; ++i) {
        const double x = dist(gen);
        if (i == j) {
          h(b, i, j) = d == ibla::Diag::Unit ? qnan<T>()
                                              : T(graded ? (x < 0 ? -1 : 1) * (0.5 + std::abs(x))
                                                         : (x < 0 ? -1 : 1) * (1 + std::abs(x)));
        } else {
          h(b, i, j) = in_triangle(u, i, j) ? T(graded ? x : 0.5 * x / k) : qnan<T>();
        }
      }
  return h;
}

/// Copies the `u` triangle of a symmetric matrix and fills the other with
/// NaN (only the Uplo triangle may be read).
template <class T>
void keep_triangle(HostBatch<T>& h, ibla::Uplo u) {
  for (index_t b = 0; b < h.batch; ++b)
    for (index_t j = 0; j < h.cols; ++j)
      for (index_t i = 0; i < h.rows; ++i)
        if (!in_triangle(u, i, j)) h(b, i, j) = qnan<T>();
}

/// Well-conditioned SPD: A = M M^T + n I with M uniform in [-1, 1]; its
/// eigenvalues lie in [n, n + ||M||^2] with ||M||^2 <~ 4n, so cond_2(A) <~ 5.
template <class T>
HostBatch<T> spd_batch(index_t batch, int n, ibla::Uplo u, std::uint64_t seed) {
  const auto M = random_batch<double>(batch, n, n, seed);
  HostBatch<T> h(batch, n, n);
  for (index_t b = 0; b < batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double s = i == j ? n : 0.0;
        for (int p = 0; p < n; ++p) s += M(b, i, p) * M(b, j, p);
        h(b, i, j) = T(s);
      }
  keep_triangle(h, u);
  return h;
}

/// Condition number used for the ill-conditioned SPD tests: 1e8 in double,
/// 1e3 in float (float Cholesky fails near 1 / (n eps) ~ 2.6e5 at n = 32).
template <class T>
constexpr double ill_condition() {
  return std::is_same<T, double>::value ? 1e8 : 1e3;
}

/// Ill-conditioned SPD: A = Q diag(lambda) Q^T with Q a random orthogonal
/// matrix (Householder QR of a random matrix, in double) and lambda spread
/// geometrically from 1 down to 1 / cond, so cond_2(A) = cond.
template <class T>
HostBatch<T> ill_spd_batch(index_t batch, int n, ibla::Uplo u, double cond, std::uint64_t seed) {
  auto Q = random_batch<double>(batch, n, n, seed);
  HostBatch<T> h(batch, n, n);
  std::vector<double> tau(static_cast<size_t>(n)), lambda(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) lambda[size_t(i)] = n == 1 ? 1.0 : std::pow(cond, -double(i) / (n - 1));
  for (index_t b = 0; b < batch; ++b) {
    double* q = Q.matrix(b);
    LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n, n, q, n, tau.data());
    LAPACKE_dorgqr(LAPACK_COL_MAJOR, n, n, n, q, n, tau.data());
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int p = 0; p < n; ++p) s += Q(b, i, p) * lambda[size_t(p)] * Q(b, j, p);
        h(b, i, j) = T(s);
      }
  }
  keep_triangle(h, u);
  return h;
}

/// Makes the leading minor of order k (1-based) of SPD problem b not
/// positive definite while the minors before it stay positive definite:
/// the k-th pivot is the Schur complement a_kk - l_k^T l_k > 0; subtracting
/// a_kk + 1 from a_kk makes it negative (it only enters minors >= k).
/// With `nan`, a_kk becomes NaN instead.
template <class T>
void break_minor(HostBatch<T>& h, index_t b, int k, bool nan) {
  T& d = h(b, k - 1, k - 1);
  d = nan ? qnan<T>() : T(-1) - T(2) * std::abs(d);
}

// ---------------------------------------------------------------------------
// Checks.

/// Element-wise comparison with a bound per problem: |got - ref| <= tol_b
/// where tol_b = scale * max|ref of problem b| (+ the smallest normal number).
/// NaN must meet NaN. Problems with skip[b] are not compared.
template <class T>
::testing::AssertionResult close_per_problem(const HostBatch<T>& got, const HostBatch<T>& ref,
                                             double scale, const std::vector<bool>* skip = nullptr,
                                             const char* what = "X") {
  index_t bad = 0;
  std::ostringstream os;
  for (index_t b = 0; b < got.batch; ++b) {
    if (skip && (*skip)[size_t(b)]) continue;
    double mx = 0;
    for (index_t j = 0; j < ref.cols; ++j)
      for (index_t i = 0; i < ref.rows; ++i)
        if (!std::isnan(ref(b, i, j))) mx = std::max(mx, std::abs(double(ref(b, i, j))));
    const double tol = scale * mx + double(std::numeric_limits<T>::min());
    for (index_t j = 0; j < ref.cols; ++j)
      for (index_t i = 0; i < ref.rows; ++i) {
        const double x = got(b, i, j), y = ref(b, i, j);
        const bool ok = (std::isnan(x) && std::isnan(y)) || std::abs(x - y) <= tol;
        if (!ok && bad++ < 5)
          os << "\n  " << what << "(" << b << "," << i << "," << j << ") = " << x << ", reference " << y
             << ", |error| " << std::abs(x - y) << " > " << tol;
      }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " elements off" << os.str();
}

/// Infinity norm (max row sum) of a k x k matrix given by element access.
template <class F>
long double inf_norm(int rows, int cols, const F& a) {
  long double best = 0;
  for (int i = 0; i < rows; ++i) {
    long double s = 0;
    for (int j = 0; j < cols; ++j) s += std::abs((long double)a(i, j));
    best = std::max(best, s);
  }
  return best;
}

}  // namespace ibla_test
