// Test support for the LU family (getrf, getrs, gesv): int Views for pivots
// in every layout, netlib LAPACKE references, matrices with known pivoting
// behaviour, and the checks.
//
// Pivot equality. ibla and netlib compute every element of L and U with the
// same sequence of operations, but not the same rounding (FMA contraction),
// so when two pivot candidates are equal up to rounding either choice is
// right and the two may differ. lu_difference_bound() estimates, by running
// error analysis on LAPACK's factors, how far the two may be apart in every
// element and finds the first step whose pivot choice that uncertainty could
// flip; ipiv must equal LAPACKE's exactly up to that step (everywhere when
// there is none), and the elements of A are compared, within four times that
// estimate, only for problems without a near tie. Every problem is checked
// for backward stability regardless (|PA - LU| <= 2 n eps |L||U|).
// Structured inputs (forced swaps, dominant diagonals, graded columns, exact
// zero columns) have no near ties by construction and are asserted to be
// compared in full; for random inputs the tests assert the fraction compared
// in full, so that the relaxation can not hide a broken kernel.
#pragma once

#include "support/batch.hpp"

#include <gtest/gtest.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

namespace ibla_test {

/// Host copy of a rank-2 View, problem after problem.
template <class View>
std::vector<typename View::non_const_value_type> read_rank2(const View& v) {
  auto m = Kokkos::create_mirror_view(v);
  mirror_copy(m, v);
  std::vector<typename View::non_const_value_type> out(v.extent(0) * v.extent(1));
  for (size_t b = 0; b < v.extent(0); ++b)
    for (size_t i = 0; i < v.extent(1); ++i) out[b * v.extent(1) + i] = m(b, i);
  return out;
}
template <class View, class V>
void fill_rank2(const View& v, const std::vector<V>& h) {
  auto m = Kokkos::create_mirror_view(v);
  for (size_t b = 0; b < v.extent(0); ++b)
    for (size_t i = 0; i < v.extent(1); ++i) m(b, i) = h[b * v.extent(1) + i];
  mirror_copy(v, m);
}

// ---------------------------------------------------------------------------
// netlib LAPACKE references, problem by problem on a host batch (column-major).
// The _work entry points: the plain ones reject NaN input (info = -4) instead
// of calling LAPACK, and non-finite input is not an argument error here.
inline lapack_int ref_getrf(int m, int n, double* a, int* ipiv) {
  return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, a, std::max(1, m), ipiv);
}
inline lapack_int ref_getrf(int m, int n, float* a, int* ipiv) {
  return LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, m, n, a, std::max(1, m), ipiv);
}
inline lapack_int ref_getrs(char trans, int n, int nrhs, const double* a, const int* ipiv,
                            double* b) {
  return LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, trans, n, nrhs, a, std::max(1, n), ipiv, b,
                        std::max(1, n));
}
inline lapack_int ref_getrs(char trans, int n, int nrhs, const float* a, const int* ipiv,
                            float* b) {
  return LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, trans, n, nrhs, a, std::max(1, n), ipiv, b,
                        std::max(1, n));
}
inline lapack_int ref_gesv(int n, int nrhs, double* a, int* ipiv, double* b) {
  return LAPACKE_dgesv_work(LAPACK_COL_MAJOR, n, nrhs, a, std::max(1, n), ipiv, b, std::max(1, n));
}
inline lapack_int ref_gesv(int n, int nrhs, float* a, int* ipiv, float* b) {
  return LAPACKE_sgesv_work(LAPACK_COL_MAJOR, n, nrhs, a, std::max(1, n), ipiv, b, std::max(1, n));
}

template <class T>
struct LuRef {
  HostBatch<T> lu;
  std::vector<int> ipiv;  // batch x min(m, n)
  std::vector<int> info;
};
template <class T>
LuRef<T> ref_getrf_batch(const HostBatch<T>& A) {
  const int m = int(A.rows), n = int(A.cols), k = std::min(m, n);
  LuRef<T> r{A, std::vector<int>(size_t(A.batch * k)), std::vector<int>(size_t(A.batch))};
  for (index_t b = 0; b < A.batch; ++b) {
    if (m == 0 || n == 0) continue;
    r.info[size_t(b)] = ref_getrf(m, n, r.lu.matrix(b), r.ipiv.data() + b * k);
  }
  return r;
}

// ---------------------------------------------------------------------------
// How far two correct factorizations may be apart.

/// An estimate of |ibla - LAPACK| for every element of the factors, by
/// running error analysis on LAPACK's factors: each element of U is
/// a(i, j) - sum_p L(i, p) U(p, j) and each element of L such a sum divided by
/// U(j, j); both codes evaluate these in the same order, so they differ by the
/// rounding of each evaluation (<= gamma (|L||U|)(i, j) for either, gamma =
/// 2 n eps: the n eps of Higham Thm 9.3 doubled for FMA) plus what the
/// differences of the operands already computed propagate:
///   dU(i, j) = 2 gamma M(i, j) (+) sum_{p<i} dL(i, p) |U(p, j)| (+) |L(i, p)| dU(p, j)
///   dL(i, j) = (2 gamma M(i, j) (+) sum_{p<j} (same) (+) |L(i, j)| dU(j, j)) / |U(j, j)|
/// with M = |L||U| at (i, j). The propagated terms (+) add in quadrature: the
/// rounding errors of different operations are independent, and adding their
/// worst cases linearly grows like (3/2)^n (a bound of 1e4 on entries of
/// size 1 at n = 32 in float), far beyond any observed difference
/// (probabilistic error analysis, Higham & Mary 2019). The estimate still
/// grows where the factorization is sensitive (small pivots).
///
/// Pivot choice. The candidates at step k are U(k, k) and the numerators
/// L(i, k) U(k, k), i > k, each known to within its estimate. When the
/// winner does not beat every other candidate by more than four times the
/// sum of the two, rounding may decide either way: the step is a near tie.
/// Returns the first near-tie step (min(m, n) when there is none) and fills
/// `bound`.
template <class T>
int lu_difference_bound(const HostBatch<T>& ref, index_t b, std::vector<double>& bound) {
  const int m = int(ref.rows), n = int(ref.cols), k = std::min(m, n);
  const double gamma = 2.0 * double(std::max(1, k)) * double(eps<T>());
  bound.assign(size_t(m) * n, 0.0);
  std::vector<double> numerator(size_t(m) * n, 0.0);  // bound before the division by U(j, j)
  auto L = [&](int i, int p) { return p == i ? 1.0 : (p > i ? 0.0 : double(ref(b, i, p))); };
  auto U = [&](int p, int j) { return p > j ? 0.0 : double(ref(b, p, j)); };
  auto d = [&](int i, int j) -> double& { return bound[size_t(j) * m + i]; };
  // In the order of the right-looking algorithm: column by column of the
  // steps, rows below before the columns to the right need them.
  int first_tie = k;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const int top = std::min(std::min(i, j), k - 1);
      double mag = 0, prop2 = 0;  // prop2: squared propagated difference
      for (int p = 0; p <= top; ++p) {
        if (p < std::min(i, j)) {
          mag += std::abs(L(i, p) * U(p, j));
          const double x = d(i, p) * U(p, j), y = L(i, p) * d(p, j);
          prop2 += x * x + y * y;
        }
      }
      if (i <= j) {  // U(i, j), i < min(m, n)
        mag += std::abs(U(i, j));
        d(i, j) = 2 * gamma * mag + std::sqrt(prop2);
        numerator[size_t(j) * m + i] = d(i, j);
      } else {  // L(i, j) = numerator / U(j, j)
        mag += std::abs(L(i, j) * U(j, j));
        const double num = 2 * gamma * mag + std::sqrt(prop2);
        numerator[size_t(j) * m + i] = num;
        const double ujj = std::abs(U(j, j)), y = L(i, j) * d(j, j);
        d(i, j) = ujj != 0 ? std::sqrt(num * num + y * y) / ujj : num;
      }
    }
  for (int s = 0; s < k && first_tie == k; ++s) {
    const double win = std::abs(U(s, s)), dwin = numerator[size_t(s) * m + s];
    for (int i = s + 1; i < m; ++i) {
      const double other = std::abs(L(i, s) * U(s, s)), dother = numerator[size_t(s) * m + i];
      if (dwin + dother == 0) continue;  // both exact: both codes see the same values
      if (!(win - other > 4 * (dwin + dother))) {
        first_tie = s;
        break;
      }
    }
  }
  return first_tie;
}

// ---------------------------------------------------------------------------
// Inputs with known pivoting.

/// A = P^T L U with |L(i, k)| <= 1/2 below the diagonal, so partial pivoting
/// recovers exactly P: every pivot beats the other candidates by a factor of
/// two. P swaps row k with the last row at every step (LAPACK ipiv = m
/// throughout): the pivot is always at the bottom, the worst case for the row
/// interchanges. u_diag(k) gives |U(k, k)| (graded for ill-conditioned inputs).
template <class T, class Diag>
HostBatch<T> forced_swap_batch(index_t batch, int m, int n, std::uint64_t seed, Diag u_diag) {
  HostBatch<T> A(batch, m, n);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> half(-0.5, 0.5), unit(-1.0, 1.0);
  const int k = std::min(m, n);
  std::vector<double> L(size_t(m) * k), U(size_t(k) * n), LU(size_t(m) * n);
  for (index_t b = 0; b < batch; ++b) {
    for (int j = 0; j < k; ++j)
      for (int i = 0; i < m; ++i) L[size_t(j) * m + i] = i == j ? 1.0 : (i > j ? half(gen) : 0.0);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < k; ++i) {
        double u = 0;
        if (i == j) u = (unit(gen) < 0 ? -1.0 : 1.0) * u_diag(i);
        else if (i < j) u = unit(gen);
        U[size_t(j) * k + i] = u;
      }
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double s = 0;
        for (int p = 0; p < k; ++p) s += L[size_t(p) * m + i] * U[size_t(j) * k + p];
        LU[size_t(j) * m + i] = s;
      }
    // A = S_0 S_1 ... S_{k-1} (L U), S_s swapping rows s and m - 1.
    for (int s = k - 1; s >= 0; --s)
      for (int j = 0; j < n; ++j) std::swap(LU[size_t(j) * m + s], LU[size_t(j) * m + m - 1]);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) A(b, i, j) = T(LU[size_t(j) * m + i]);
  }
  return A;
}
template <class T>
HostBatch<T> forced_swap_batch(index_t batch, int m, int n, std::uint64_t seed) {
  return forced_swap_batch<T>(batch, m, n, seed, [](int) { return 1.0 + 0.0; });
}

/// Random entries in [-1, 1] and a diagonal of magnitude n + 1: every column
/// is strictly diagonally dominant, so partial pivoting never swaps.
template <class T>
HostBatch<T> diagonally_dominant_batch(index_t batch, int n, std::uint64_t seed) {
  auto A = random_batch<T>(batch, n, n, seed);
  for (index_t b = 0; b < batch; ++b)
    for (int i = 0; i < n; ++i) A(b, i, i) = T((A(b, i, i) < 0 ? -1 : 1) * (n + 1));
  return A;
}

// ---------------------------------------------------------------------------
// Checks.

/// Backward error of one computed factorization (ibla's): component-wise,
/// |P A - L U| <= gamma (|L| |U|) with gamma = 2 n eps (Higham, Thm 9.3, gives
/// gamma_n = n eps / (1 - n eps); the factor 2 covers FMA and the order of
/// the updates). Also checks that every pivot is a row at or below its step.
template <class T>
::testing::AssertionResult lu_backward_stable(const HostBatch<T>& A, const HostBatch<T>& lu,
                                              const std::vector<int>& ipiv, index_t b) {
  const int m = int(A.rows), n = int(A.cols), k = std::min(m, n);
  std::vector<double> pa(size_t(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) pa[size_t(j) * m + i] = A(b, i, j);
  for (int s = 0; s < k; ++s) {
    const int p = ipiv[size_t(b * k + s)] - 1;
    if (p < s || p >= m)
      return ::testing::AssertionFailure() << "problem " << b << ": ipiv(" << s << ") = " << p + 1
                                           << " outside [" << s + 1 << ", " << m << "]";
    for (int j = 0; j < n; ++j) std::swap(pa[size_t(j) * m + s], pa[size_t(j) * m + p]);
  }
  const double gamma = 2.0 * double(std::max(1, k)) * double(eps<T>());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double s = 0, mag = 0;
      for (int p = 0; p <= std::min(i, std::min(j, k - 1)); ++p) {
        const double l = p == i ? 1.0 : double(lu(b, i, p));
        s += l * double(lu(b, p, j));
        mag += std::abs(l * double(lu(b, p, j)));
      }
      if (i >= k) {  // rows of L beyond min(m, n) when m > n: all of row i of L U
        s = 0;
        mag = 0;
        for (int p = 0; p <= std::min(j, k - 1); ++p) {
          s += double(lu(b, i, p)) * double(lu(b, p, j));
          mag += std::abs(double(lu(b, i, p)) * double(lu(b, p, j)));
        }
      }
      const double err = std::abs(pa[size_t(j) * m + i] - s);
      if (!(err <= gamma * mag + double(std::numeric_limits<T>::min())))
        return ::testing::AssertionFailure()
               << "problem " << b << ": |PA - LU|(" << i << "," << j << ") = " << err
               << " > 2 n eps (|L||U|) = " << gamma * mag;
    }
  return ::testing::AssertionSuccess();
}

/// Element-wise distance of ibla's factors from LAPACK's, same pivots, within
/// four times the estimate of lu_difference_bound.
template <class T>
::testing::AssertionResult lu_factors_close(const HostBatch<T>& got, const HostBatch<T>& ref,
                                            const std::vector<double>& bound, index_t b) {
  const int m = int(got.rows), n = int(got.cols);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const double tol = 4.0 * bound[size_t(j) * m + i] + double(std::numeric_limits<T>::min());
      const double err = std::abs(double(got(b, i, j)) - double(ref(b, i, j)));
      if (!(err <= tol) && !(std::isnan(got(b, i, j)) && std::isnan(ref(b, i, j))))
        return ::testing::AssertionFailure()
               << "problem " << b << ": LU(" << i << "," << j << ") = " << got(b, i, j)
               << ", LAPACK " << ref(b, i, j) << ", |error| " << err << " > bound " << tol;
    }
  return ::testing::AssertionSuccess();
}

/// Everything a getrf result must satisfy against LAPACKE on the same input.
/// Returns how many problems were compared element-wise (no near tie).
template <class T>
index_t check_getrf(const HostBatch<T>& A, const HostBatch<T>& got_lu,
                    const std::vector<int>& got_ipiv, const std::vector<int>& got_info,
                    const LuRef<T>& ref) {
  const int m = int(A.rows), n = int(A.cols), k = std::min(m, n);
  index_t exact = 0;
  std::vector<double> bound;
  // Stops at the first problem that fails (one report, not thousands).
  for (index_t b = 0; b < A.batch; ++b) {
    bool bad = false;
    if (got_info[size_t(b)] != ref.info[size_t(b)]) {
      ADD_FAILURE() << "info of problem " << b << " is " << got_info[size_t(b)] << ", LAPACK "
                    << ref.info[size_t(b)];
      bad = true;
    }
    const int upto = lu_difference_bound(ref.lu, b, bound);
    for (int s = 0; s < upto && !bad; ++s)
      if (got_ipiv[size_t(b * k + s)] != ref.ipiv[size_t(b * k + s)]) {
        ADD_FAILURE() << "ipiv(" << s << ") of problem " << b << " is "
                      << got_ipiv[size_t(b * k + s)] << ", LAPACK " << ref.ipiv[size_t(b * k + s)]
                      << " (first near tie at step " << upto << ")";
        bad = true;
      }
    if (!bad) {
      const auto stable = lu_backward_stable(A, got_lu, got_ipiv, b);
      if (!stable) {
        ADD_FAILURE() << stable.message();
        bad = true;
      }
    }
    if (!bad && upto == k) {
      const auto close = lu_factors_close(got_lu, ref.lu, bound, b);
      if (!close) {
        ADD_FAILURE() << close.message();
        bad = true;
      }
      ++exact;
    }
    if (bad) return exact;
  }
  return exact;
}

}  // namespace ibla_test
