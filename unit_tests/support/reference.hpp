// Reference results from netlib CBLAS/LAPACKE, and the element-wise checks
// that compare ibla against them.
#pragma once

#include "support/batch.hpp"

#include <cblas.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace ibla_test {

inline CBLAS_TRANSPOSE cblas_op(ibla::Op op) { return op == ibla::Op::N ? CblasNoTrans : CblasTrans; }

inline void ref_gemm(ibla::Op ta, ibla::Op tb, int m, int n, int k, double alpha, const double* A,
                     int lda, const double* B, int ldb, double beta, double* C, int ldc) {
  cblas_dgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, alpha, A, lda, B, ldb, beta, C,
              ldc);
}
inline void ref_gemm(ibla::Op ta, ibla::Op tb, int m, int n, int k, float alpha, const float* A,
                     int lda, const float* B, int ldb, float beta, float* C, int ldc) {
  cblas_sgemm(CblasColMajor, cblas_op(ta), cblas_op(tb), m, n, k, alpha, A, lda, B, ldb, beta, C,
              ldc);
}

/// Reference GEMM on every matrix of a host batch; returns the new C.
template <class T>
HostBatch<T> ref_gemm_batch(ibla::Op ta, ibla::Op tb, T alpha, const HostBatch<T>& A,
                            const HostBatch<T>& B, T beta, HostBatch<T> C) {
  const int m = int(C.rows), n = int(C.cols);
  const int k = int(ta == ibla::Op::N ? A.cols : A.rows);
  for (index_t b = 0; b < C.batch; ++b) {
    ref_gemm(ta, tb, m, n, k, alpha, A.matrix(b), std::max<int>(1, int(A.rows)), B.matrix(b),
             std::max<int>(1, int(B.rows)), beta, C.matrix(b), std::max(1, m));
  }
  return C;
}

/// Element-wise GEMM check. The bound is the standard forward error bound of
/// a dot product of length k, |fl(c) - c| <= gamma_{k+2} (|alpha| |op(A)||op(B)|
/// + |beta| |C0|), with gamma_k = k eps, times 2 for the reordering of sums
/// (FMA, tiles) between ibla and the reference.
template <class T>
::testing::AssertionResult gemm_close(ibla::Op ta, ibla::Op tb, T alpha, const HostBatch<T>& A,
                                      const HostBatch<T>& B, T beta, const HostBatch<T>& C0,
                                      const HostBatch<T>& got, const HostBatch<T>& ref) {
  const index_t k = ta == ibla::Op::N ? A.cols : A.rows;
  auto opA = [&](index_t b, index_t i, index_t p) { return ta == ibla::Op::N ? A(b, i, p) : A(b, p, i); };
  auto opB = [&](index_t b, index_t p, index_t j) { return tb == ibla::Op::N ? B(b, p, j) : B(b, j, p); };
  index_t bad = 0;
  std::ostringstream os;
  for (index_t b = 0; b < got.batch; ++b)
    for (index_t j = 0; j < got.cols; ++j)
      for (index_t i = 0; i < got.rows; ++i) {
        double mag = 0;
        if (alpha != T(0))
          for (index_t p = 0; p < k; ++p) mag += std::abs(double(opA(b, i, p)) * double(opB(b, p, j)));
        mag = std::abs(double(alpha)) * mag + (beta != T(0) ? std::abs(double(beta) * double(C0(b, i, j))) : 0.0);
        const double bound = 2.0 * double(k + 2) * double(eps<T>()) * mag +
                             double(std::numeric_limits<T>::min());
        const double err = std::abs(double(got(b, i, j)) - double(ref(b, i, j)));
        if (!(err <= bound)) {
          if (bad++ < 5)
            os << "\n  C(" << b << "," << i << "," << j << ") = " << got(b, i, j) << ", reference "
               << ref(b, i, j) << ", |error| " << err << " > bound " << bound;
        }
      }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << " elements off" << os.str();
}

/// Exact equality, element by element.
template <class T>
::testing::AssertionResult batches_equal(const HostBatch<T>& got, const HostBatch<T>& want) {
  if (got.batch != want.batch || got.rows != want.rows || got.cols != want.cols)
    return ::testing::AssertionFailure() << "shapes differ";
  for (index_t b = 0; b < got.batch; ++b)
    for (index_t j = 0; j < got.cols; ++j)
      for (index_t i = 0; i < got.rows; ++i) {
        const T x = got(b, i, j), y = want(b, i, j);
        if (!(x == y || (std::isnan(x) && std::isnan(y))))
          return ::testing::AssertionFailure() << "element (" << b << "," << i << "," << j
                                               << ") is " << x << ", expected " << y;
      }
  return ::testing::AssertionSuccess();
}

}  // namespace ibla_test
