// Batched LU solves against netlib LAPACKE_{d,s}gesv / getrs on the same
// inputs: every size 1..32 with nrhs in {1, 2, n, 33} and batch counts
// {1, L-1, L, L+1} (1001 for a spread of sizes), rank-2 right-hand sides,
// every layout (pivots and B in the layout of A), float and double, random
// matrices and matrices that force a row swap at every step, singular
// problems mixed with regular ones (B untouched where info > 0, as dgesv),
// getrs with Op::N and Op::T on LAPACK's own factors, the team-level calls
// inside a user kernel, and the argument checks.
//
// Solutions. The factors and pivots of gesv are checked as for getrf
// (support/lu.hpp). X is checked two ways:
//  - residual: GEPP solves (A + dA) x = b with |dA| <= gamma_3n |L||U|
//    (Higham, Thm 9.4), so ||b - A x||_inf / (||A||_inf ||x||_inf n eps)
//    <= 3 || |L||U| ||_inf / ||A||_inf =: rho; the test allows 2 rho (FMA,
//    and the 1 / (1 - 3 n eps) factor);
//  - against LAPACK's X: both are backward stable with eta <= 2 rho n eps,
//    so they differ by at most 2 kappa_inf(A) eta / (1 - kappa eta) relative
//    to ||x||_inf; kappa = max(kappa_inf, kappa_1) (Op::T solves with A^T)
//    from LAPACK's inverse (dgetri). Checked where kappa eta < 1/2.
#include "support/lu.hpp"
#include "support/configs.hpp"
#include "support/reference.hpp"

#include <ibla/ibla.hpp>
#include <ibla/kernels/gesv.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <tuple>
#include <vector>

using namespace ibla_test;
using ibla::Op;

template <class C>
class Gesv : public ::testing::Test {};

TYPED_TEST_SUITE(Gesv, SolverSweepConfigs);

inline lapack_int ref_getri(int n, double* a, const int* ipiv) {
  std::vector<double> work(size_t(std::max(1, 64 * n)));
  return LAPACKE_dgetri_work(LAPACK_COL_MAJOR, n, a, std::max(1, n), ipiv, work.data(),
                             int(work.size()));
}

/// max(kappa_inf(A), kappa_1(A)) of problem b (kappa_1(A) = kappa_inf(A^T),
/// for Op::T), the inverse from LAPACK's factors (in double).
template <class T>
double condition_number(const HostBatch<T>& A, const HostBatch<T>& lu, const std::vector<int>& ipiv,
             index_t b) {
  const int n = int(A.rows);
  std::vector<double> inv(size_t(n) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) inv[size_t(j) * n + i] = double(lu(b, i, j));
  if (ref_getri(n, inv.data(), ipiv.data() + b * n) != 0) return INFINITY;
  double a_inf = 0, i_inf = 0, a_one = 0, i_one = 0;
  for (int i = 0; i < n; ++i) {
    double ra = 0, ri = 0, ca = 0, ci = 0;
    for (int j = 0; j < n; ++j) {
      ra += std::abs(double(A(b, i, j)));
      ri += std::abs(inv[size_t(j) * n + i]);
      ca += std::abs(double(A(b, j, i)));
      ci += std::abs(inv[size_t(i) * n + j]);
    }
    a_inf = std::max(a_inf, ra);
    i_inf = std::max(i_inf, ri);
    a_one = std::max(a_one, ca);
    i_one = std::max(i_one, ci);
  }
  return std::max(a_inf * i_inf, a_one * i_one);
}

/// The residual and forward checks above for op(A) X = B0 of problem b,
/// with ibla's factors lu (for rho) and LAPACK's solution xref.
template <class T>
::testing::AssertionResult solution_ok(Op trans, const HostBatch<T>& A, const HostBatch<T>& lu,
                                       const std::vector<int>& ipiv, const HostBatch<T>& B0,
                                       const HostBatch<T>& X, const HostBatch<T>& xref, index_t b) {
  const int n = int(A.rows), nrhs = int(B0.cols);
  auto opA = [&](int i, int j) { return double(trans == Op::N ? A(b, i, j) : A(b, j, i)); };
  double normA = 0, normLU = 0;
  for (int i = 0; i < n; ++i) {
    double ra = 0, rlu = 0;
    for (int j = 0; j < n; ++j) {
      ra += std::abs(opA(i, j));
      // (|L||U|)(i, j), transposed for Op::T: || |U^T||L^T| ||_inf.
      const int r = trans == Op::N ? i : j, c = trans == Op::N ? j : i;
      for (int p = 0; p <= std::min(r, c); ++p)
        rlu += std::abs((p == r ? 1.0 : double(lu(b, r, p))) * double(lu(b, p, c)));
    }
    normA  = std::max(normA, ra);
    normLU = std::max(normLU, rlu);
  }
  const double rho   = normA > 0 ? 3.0 * normLU / normA : 0.0;
  const double neps  = double(n) * double(eps<T>());
  const double kappa = condition_number(A, lu, ipiv, b);
  for (int j = 0; j < nrhs; ++j) {
    long double rmax = 0, xmax = 0, dmax = 0, xrmax = 0;
    for (int i = 0; i < n; ++i) {
      long double r = (long double)B0(b, i, j);
      for (int p = 0; p < n; ++p) r -= (long double)opA(i, p) * (long double)X(b, p, j);
      rmax  = std::max(rmax, std::fabs(r));
      xmax  = std::max(xmax, (long double)std::abs(double(X(b, i, j))));
      xrmax = std::max(xrmax, (long double)std::abs(double(xref(b, i, j))));
      dmax  = std::max(dmax, (long double)std::abs(double(X(b, i, j)) - double(xref(b, i, j))));
    }
    const double ratio = xmax > 0 ? double(rmax / (normA * xmax * neps)) : double(rmax);
    if (!(ratio <= 2.0 * rho + 1e-300))
      return ::testing::AssertionFailure() << "problem " << b << " rhs " << j << ": residual ratio "
                                           << ratio << " > 2 rho = " << 2.0 * rho;
    const double eta = 2.0 * rho * neps;
    if (kappa * eta < 0.5 && xrmax > 0) {
      const double fwd = double(dmax / xrmax), tol = 2.0 * kappa * eta / (1.0 - kappa * eta);
      if (!(fwd <= tol))
        return ::testing::AssertionFailure() << "problem " << b << " rhs " << j
                                             << ": |X - X_lapack| / |X_lapack| = " << fwd
                                             << " > 2 kappa eta / (1 - kappa eta) = " << tol;
    }
  }
  return ::testing::AssertionSuccess();
}

/// One gesv call through ibla on hA, hB (rank-3 B, or rank-2 when Rank2)
/// checked against LAPACKE_gesv. Returns the number of problems compared
/// element-wise (no near tie, see support/lu.hpp).
template <class T, class Layout, bool Rank2 = false>
index_t run_gesv(const HostBatch<T>& hA, const HostBatch<T>& hB, const char* what) {
  const index_t batch = hA.batch;
  const int n = int(hA.rows), nrhs = int(hB.cols);
  SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " " << what << " batch " << batch
                                    << " n " << n << " nrhs " << nrhs << (Rank2 ? " rank-2 B" : ""));
  auto A    = make_view<T, Layout>("A", batch, n, n);
  auto ipiv = make_rank2_view<int, Layout>("ipiv", batch, n);
  auto info = make_info<Layout>(batch);
  fill_view(A, hA);
  HostBatch<T> got_x;
  if constexpr (Rank2) {
    auto B = make_rank2_view<T, Layout>("B", batch, n);
    fill_rank2(B, hB.data);
    ibla::gesv(Kokkos::DefaultExecutionSpace(), A, ipiv, B, info);
    Kokkos::fence();
    got_x      = HostBatch<T>(batch, n, 1);
    got_x.data = read_rank2(B);
  } else {
    auto B = make_view<T, Layout>("B", batch, n, nrhs);
    fill_view(B, hB);
    ibla::gesv(Kokkos::DefaultExecutionSpace(), A, ipiv, B, info);
    Kokkos::fence();
    got_x = read_view(B);
  }
  // Reference: LAPACKE_gesv on the same inputs.
  LuRef<T> ref{hA, std::vector<int>(size_t(batch * n)), std::vector<int>(size_t(batch))};
  HostBatch<T> xref = hB;
  for (index_t b = 0; b < batch; ++b)
    ref.info[size_t(b)] = ref_gesv(n, nrhs, ref.lu.matrix(b), ref.ipiv.data() + b * n, xref.matrix(b));
  const auto got_lu   = read_view(A);
  const auto got_ipiv = read_rank2(ipiv);
  const index_t exact = check_getrf(hA, got_lu, got_ipiv, read_info(info), ref);
  for (index_t b = 0; b < batch && !::testing::Test::HasFailure(); ++b) {
    if (ref.info[size_t(b)] > 0) {
      // dgesv factors but does not solve: B as it came in, bit for bit.
      for (int j = 0; j < nrhs; ++j)
        for (int i = 0; i < n; ++i)
          if (!(got_x(b, i, j) == hB(b, i, j) && xref(b, i, j) == hB(b, i, j))) {
            ADD_FAILURE() << "B(" << i << "," << j << ") of singular problem " << b << " is "
                          << got_x(b, i, j) << ", LAPACK " << xref(b, i, j) << ", input "
                          << hB(b, i, j);
            return exact;
          }
    } else {
      EXPECT_TRUE(solution_ok(Op::N, hA, got_lu, got_ipiv, hB, got_x, xref, b));
    }
  }
  return exact;
}

TYPED_TEST(Gesv, SquareSizesNrhsAndBatchCounts) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // Every batch count for nrhs = 1 (1001 for a spread of sizes); the other
  // nrhs take the batch counts in turn: the host-side checks are O(n^3) per
  // problem and this executable must stay within its time budget.
  auto big_batch_size = [](int n) { return n == 2 || n == 9 || n == 32; };
  const auto counts   = batch_counts(lanes_of<T, Layout>());
  int c = 0, turn = 0;
  for (int n : sweep_sizes())
    for (int nrhs : {1, 2, n, 33}) {
      if (nrhs == n && n <= 2) continue;  // already covered
      for (index_t batch : counts) {
        if (batch == large_batch && !(big_batch_size(n) && large_batch_size(n) && nrhs == 1)) continue;
        if (nrhs != 1 && batch != counts[size_t(turn) % (counts.size() - 1)]) continue;
        const auto seed = std::uint64_t(300 + c++);
        const auto hB   = random_batch<T>(batch, n, nrhs, seed + 1);
        // Alternate the inputs: forced swaps (no near ties: everything
        // compared exactly) and random matrices.
        if (c % 2) {
          const index_t exact =
              run_gesv<T, Layout>(forced_swap_batch<T>(batch, n, n, seed), hB, "forced swaps");
          EXPECT_EQ(exact, batch);
        } else {
          run_gesv<T, Layout>(random_batch<T>(batch, n, n, seed), hB, "random");
        }
        if (::testing::Test::HasFailure()) return;
      }
      turn += nrhs != 1;
    }
}

// A rank-2 B is only another lane_block of B: two layouts (a compile-time
// and a runtime lane stride), as in test_trsm and test_posv. Each layout
// here is a full instantiation of GESV with one more B type: run over the
// five sweep configurations, it made this file the largest unit of every
// build (main, sanitizers, CUDA); with two, test_gesv.cpp compiled in 34 s
// instead of 43 s (main build, 2026-11-25).
template <class T, class Layout>
void run_rank2_gesv() {
  for (int n : {1, 2, 3, 5, 8, 13, 32})
    for (index_t batch : batch_counts(lanes_of<T, Layout>())) {
      if (batch == large_batch) continue;
      const auto hB = random_batch<T>(batch, n, 1, std::uint64_t(n + 5));
      EXPECT_EQ((run_gesv<T, Layout, true>(forced_swap_batch<T>(batch, n, n, std::uint64_t(n)), hB,
                                           "forced swaps")),
                batch);
      if (::testing::Test::HasFailure()) return;
    }
}
TEST(GesvRank2, OneRightHandSideBlockInterleaved) { run_rank2_gesv<double, ibla::LayoutBlockInterleaved<8>>(); }
TEST(GesvRank2, OneRightHandSideLayoutStride) { run_rank2_gesv<float, ibla_test::LayoutStrideColMajor>(); }

/// Problem b % 5: 0 regular, 1 zero first column, 2 zero last column, 3 zero
/// middle column, 4 regular (see test_getrf.cpp for why these are exact).
template <class T>
HostBatch<T> singular_mix(index_t batch, int n, std::uint64_t seed) {
  auto A = forced_swap_batch<T>(batch, n, n, seed);
  for (index_t b = 0; b < batch; ++b) {
    const int kind = int(b % 5);
    const int col  = kind == 1 ? 0 : kind == 2 ? n - 1 : kind == 3 ? n / 2 : -1;
    if (col >= 0)
      for (int i = 0; i < n; ++i) A(b, i, col) = T(0);
  }
  return A;
}

TYPED_TEST(Gesv, SingularProblemsKeepTheirRightHandSide) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  for (int n : {1, 2, 5, 16, 32})
    for (int nrhs : {1, 3}) {
      const index_t batch = 3 * lanes_of<T, Layout>() + 4;
      const auto hA       = singular_mix<T>(batch, n, std::uint64_t(n * 7 + nrhs));
      const auto hB       = random_batch<T>(batch, n, nrhs, std::uint64_t(n));
      run_gesv<T, Layout>(hA, hB, "singular mix");
      const auto ref = ref_getrf_batch(hA);
      int singular = 0, expected = 0;
      for (index_t b = 0; b < batch; ++b) {
        singular += ref.info[size_t(b)] > 0;
        expected += (b % 5 >= 1 && b % 5 <= 3);
      }
      // The construction does what it says (guards the test itself).
      EXPECT_EQ(singular, expected);
      if (::testing::Test::HasFailure()) return;
    }
}

/// getrs on LAPACK's own factorization, both ops, against LAPACKE_getrs.
template <class T, class Layout>
void run_getrs(Op trans, const HostBatch<T>& hA, const HostBatch<T>& hB) {
  const index_t batch = hA.batch;
  const int n = int(hA.rows), nrhs = int(hB.cols);
  SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " getrs op " << ibla::to_string(trans)
                                    << " batch " << batch << " n " << n << " nrhs " << nrhs);
  const auto ref = ref_getrf_batch(hA);
  auto LU   = make_view<T, Layout>("LU", batch, n, n);
  auto ipiv = make_rank2_view<int, Layout>("ipiv", batch, n);
  auto B    = make_view<T, Layout>("B", batch, n, nrhs);
  fill_view(LU, ref.lu);
  fill_rank2(ipiv, ref.ipiv);
  fill_view(B, hB);
  ibla::getrs(Kokkos::DefaultExecutionSpace(), trans, LU, ipiv, B);
  Kokkos::fence();
  const auto got = read_view(B);
  HostBatch<T> xref = hB;
  for (index_t b = 0; b < batch; ++b)
    ASSERT_EQ(ref_getrs(trans == Op::N ? 'N' : 'T', n, nrhs, ref.lu.matrix(b),
                        ref.ipiv.data() + b * n, xref.matrix(b)),
              0);
  for (index_t b = 0; b < batch; ++b) {
    ASSERT_EQ(ref.info[size_t(b)], 0);
    ASSERT_TRUE(solution_ok(trans, hA, ref.lu, ref.ipiv, hB, got, xref, b));
  }
  // The factors and pivots are inputs: getrs must leave them alone.
  EXPECT_TRUE(batches_equal(read_view(LU), ref.lu));
  EXPECT_EQ(read_rank2(ipiv), ref.ipiv);
}

TYPED_TEST(Gesv, DiagonallyDominantBlocksSolveWithoutInterchanges) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // Diagonally dominant input: LAPACK swaps no rows, so every block's
  // pivots are k + 1 and the host's solve skips the interchanges
  // (getrs_registers_host_skipping_swaps); every third problem of the
  // second batch has column b % n zeroed, a zero pivot without an
  // interchange (see Getrf.ZeroPivotsInDiagonallyDominantBlocks), whose B
  // the solve must leave as it came in, in blocks that still swap nothing.
  for (int n : {1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 16})
    for (int nrhs : {1, 3})
      for (const bool zero_columns : {false, true}) {
        const index_t batch = 3 * lanes_of<T, Layout>() + 2;
        auto hA = diagonally_dominant_batch<T>(batch, n, std::uint64_t(40 * n + nrhs));
        if (zero_columns)
          for (index_t b = 0; b < batch; b += 3)
            for (int i = 0; i < n; ++i) hA(b, i, int(b % n)) = T(0);
        const auto hB = random_batch<T>(batch, n, nrhs, std::uint64_t(n + 17 * nrhs));
        const auto ref = ref_getrf_batch(hA);
        int swaps = 0, singular = 0;
        for (index_t b = 0; b < batch; ++b) {
          singular += ref.info[size_t(b)] > 0;
          for (int k = 0; k < n; ++k) swaps += ref.ipiv[size_t(b * n + k)] != k + 1;
        }
        // The input does what it says (guards the test itself).
        ASSERT_EQ(swaps, 0);
        ASSERT_EQ(singular, zero_columns ? int((batch + 2) / 3) : 0);
        const index_t exact =
            run_gesv<T, Layout>(hA, hB, zero_columns ? "dominant, zero columns" : "dominant");
        EXPECT_GE(exact, batch / 2);
        if (::testing::Test::HasFailure()) return;
      }
}

TYPED_TEST(Gesv, GetrsBothOpsOnLapackFactors) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  int c = 0;
  for (int n : {1, 2, 3, 4, 7, 8, 16, 17, 31, 32})
    for (int nrhs : {1, 2, n, 33})
      for (Op trans : {Op::N, Op::T}) {
        const index_t batch = (c % 3 == 0) ? 1 : lanes_of<T, Layout>() + (c % 3 == 1 ? 1 : -1);
        const auto seed     = std::uint64_t(900 + c++);
        // Random A: LAPACK's pivots, near ties or not, are simply inputs here.
        run_getrs<T, Layout>(trans, random_batch<T>(std::max<index_t>(batch, 1), n, n, seed),
                             random_batch<T>(std::max<index_t>(batch, 1), n, nrhs, seed + 1));
        if (::testing::Test::HasFailure()) return;
      }
}

TYPED_TEST(Gesv, GetrsDividesByATinyDiagonalLikeLapack) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // Factors given directly, no interchanges, U(k, k) a small multiple of a
  // subnormal whose reciprocal overflows, in 2 of every 3 problems (full
  // blocks mix both kinds; batch not a multiple of the block). Row k has no
  // other entries and B(k, c) = 5 (c + 1) U(k, k): dtrsm divides, so X(k, c)
  // is 5 (c + 1) exactly, where a multiply by 1 / U(k, k) gives Inf.
  const T tiny = std::numeric_limits<T>::denorm_min() * T(48);
  const T eps  = std::numeric_limits<T>::epsilon();
  // One right-hand side too: GETRS's register form takes orders up to 24
  // for it on block-interleaved layouts (getrs_register_order), two up to
  // trsm_register_order.
  for (int n : {1, 2, 3, 4, 6, 10, 12, 13, 16, 17, 20, 24})
  for (int nrhs : {1, 2}) {
    const index_t batch = 2 * lanes_of<T, Layout>() + 3;
    auto lu = random_batch<T>(batch, n, n, std::uint64_t(700 + n));
    auto hB = random_batch<T>(batch, n, nrhs, std::uint64_t(710 + n));
    std::vector<int> piv(size_t(batch) * n);
    for (index_t b = 0; b < batch; ++b) {
      for (int i = 0; i < n; ++i) {
        piv[size_t(b) * n + i] = i + 1;
        lu(b, i, i) += lu(b, i, i) < 0 ? -T(n) : T(n);  // a well-conditioned U
      }
      if (b % 3 == 1) continue;
      const int k = int(b % n);
      for (int j = 0; j < n; ++j) lu(b, k, j) = T(0);
      lu(b, k, k) = (b % 2 ? T(-1) : T(1)) * tiny;
      for (int c = 0; c < nrhs; ++c) hB(b, k, c) = T(5 * (c + 1)) * lu(b, k, k);
    }
    auto LU   = make_view<T, Layout>("LU", batch, n, n);
    auto ipiv = make_rank2_view<int, Layout>("ipiv", batch, n);
    auto B    = make_view<T, Layout>("B", batch, n, nrhs);
    fill_view(LU, lu);
    fill_rank2(ipiv, piv);
    fill_view(B, hB);
    ibla::getrs(Kokkos::DefaultExecutionSpace(), Op::N, LU, ipiv, B);
    Kokkos::fence();
    const auto got = read_view(B);
    HostBatch<T> xref = hB;
    for (index_t b = 0; b < batch; ++b)
      ASSERT_EQ(ref_getrs('N', n, nrhs, lu.matrix(b), piv.data() + b * n, xref.matrix(b)), 0);
    SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " tiny diagonal n " << n
                                      << " nrhs " << nrhs);
    for (index_t b = 0; b < batch; ++b)
      for (int c = 0; c < nrhs; ++c)
        for (int i = 0; i < n; ++i) {
          const T want = xref(b, i, c), have = got(b, i, c);
          ASSERT_TRUE(std::isfinite(want)) << "problem " << b << " (" << i << "," << c << ")";
          ASSERT_TRUE(std::isfinite(have)) << "problem " << b << " (" << i << "," << c << ")";
          if (b % 3 != 1 && i == int(b % n)) {
            ASSERT_EQ(have, T(5 * (c + 1))) << "problem " << b << " row " << i;
          } else {
            ASSERT_LE(std::abs(have - want), T(64) * T(n) * eps * (std::abs(want) + T(1)))
                << "problem " << b << " (" << i << "," << c << ")";
          }
        }
  }
}

// A free function: nvcc rejects device lambdas inside a TEST body.
template <int L, class V0, class V1, class V2, class V3, class V4>
void user_kernel_gesv(const V0& A, const V1& ipiv, const V2& B, const V3& B2, const V4& info, index_t batch) {
  using Policy      = Kokkos::TeamPolicy<>;
  const int nblocks = int((batch + L - 1) / L);
  Kokkos::parallel_for(
      "user_kernel", Policy(nblocks, Kokkos::AUTO),
      KOKKOS_LAMBDA(const Policy::member_type& member) {
        const index_t first = index_t(member.league_rank()) * L;
        const int lanes     = int(batch - first < L ? batch - first : L);
        const auto a = ibla::lane_block(A, first, lanes);
        const auto p = ibla::lane_block(ipiv, first, lanes);
        ibla::team::gesv(member, a, p, ibla::lane_block(B, first, lanes),
                         ibla::lane_block(info, first, lanes));
        // A second solve with the factors just computed, transposed.
        ibla::team::getrs(member, Op::T, a, p, ibla::lane_block(B2, first, lanes));
      });
  Kokkos::fence();
}

// A user kernel that factors and solves each block with the team-level calls.
TEST(GesvTeam, CalledInsideUserKernel) {
  using T             = double;
  constexpr int L     = 8;
  using Layout        = ibla::LayoutBlockInterleaved<L>;
  const index_t batch = 3 * L + 5;
  const int n = 10, nrhs = 3;
  const auto hA = forced_swap_batch<T>(batch, n, n, 21);
  const auto hB = random_batch<T>(batch, n, nrhs, 22);
  Kokkos::View<T***, Layout> A("A", batch, n, n), B("B", batch, n, nrhs), B2("B2", batch, n, nrhs);
  Kokkos::View<int**, Layout> ipiv("ipiv", batch, n);
  Kokkos::View<int*, Layout> info("info", batch);
  fill_view(A, hA);
  fill_view(B, hB);
  fill_view(B2, hB);
  user_kernel_gesv<L>(A, ipiv, B, B2, info, batch);
  const auto ref = ref_getrf_batch(hA);
  HostBatch<T> x = hB, xt = hB;
  for (index_t b = 0; b < batch; ++b) {
    ref_getrs('N', n, nrhs, ref.lu.matrix(b), ref.ipiv.data() + b * n, x.matrix(b));
    ref_getrs('T', n, nrhs, ref.lu.matrix(b), ref.ipiv.data() + b * n, xt.matrix(b));
  }
  EXPECT_EQ(read_rank2(ipiv), ref.ipiv);
  EXPECT_EQ(read_info(info), ref.info);
  const auto got = read_view(A), gx = read_view(B), gxt = read_view(B2);
  for (index_t b = 0; b < batch; ++b) {
    EXPECT_TRUE(solution_ok(Op::N, hA, got, ref.ipiv, hB, gx, x, b));
    EXPECT_TRUE(solution_ok(Op::T, hA, got, ref.ipiv, hB, gxt, xt, b));
  }
}

// GESV's register form (orders up to 4 on AVX-512) stores the pivots and
// info by streaming stores where a block's row of lanes starts on a
// multiple of the vector, by plain stores otherwise
// (kernels/streaming_stores.hpp). Pivots and info in unmanaged Views one
// int past an aligned address take the plain stores: every output the same
// as with the managed (aligned) Views, which the sweeps above check
// against LAPACK, and checked against LAPACK here too.
template <class T, int L, class Exec>
void run_gesv_on_unaligned_pivots_and_info() {
  using Layout   = ibla::LayoutBlockInterleaved<L>;
  using Host     = Kokkos::HostSpace;
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  for (int n : {1, 2, 3, 4})
    for (index_t batch : {index_t(L), index_t(3 * L + 1), index_t(1001)}) {
      SCOPED_TRACE(::testing::Message() << "L " << L << " n " << n << " batch " << batch);
      const auto seed = std::uint64_t(900 + 7 * n + batch);
      const auto hA   = n % 2 ? random_batch<T>(batch, n, n, seed)
                              : diagonally_dominant_batch<T>(batch, n, seed);
      const auto hB   = random_batch<T>(batch, n, 1, seed + 1);
      // The test suite's View types (host memory: a host build's default),
      // whose operations support/instances.hpp instantiates, the unmanaged
      // pivots and info too.
      view_t<T, Layout> A("A", batch, n, n), A2("A2", batch, n, n);
      view_t<T, Layout> B("B", batch, n, 1), B2("B2", batch, n, 1);
      rank2_view_t<int, Layout> ipiv("ipiv", batch, n);
      info_view_t<Layout> info("info", batch);
      // One int past a 64-byte boundary: no row of lanes is aligned.
      std::vector<int> storage(ipiv.span() + info.span() + 64);
      int* aligned = storage.data();
      while (reinterpret_cast<std::uintptr_t>(aligned) % 64 != 0) ++aligned;
      Kokkos::View<int**, Layout, Host, Unmanaged> ipiv2(aligned + 1, batch, n);
      Kokkos::View<int*, Layout, Host, Unmanaged> info2(aligned + 1 + 16 + ipiv.span(), batch);
      ASSERT_LE(size_t(aligned + 1 + 16 + ipiv.span() + info.span() - storage.data()),
                storage.size());
      fill_view(A, hA);
      fill_view(A2, hA);
      fill_view(B, hB);
      fill_view(B2, hB);
      const Exec exec;
      ibla::gesv(exec, A, ipiv, B, info);
      ibla::gesv(exec, A2, ipiv2, B2, info2);
      exec.fence();
      EXPECT_TRUE(batches_equal(read_view(A2), read_view(A)));
      EXPECT_TRUE(batches_equal(read_view(B2), read_view(B)));
      EXPECT_EQ(read_rank2(ipiv2), read_rank2(ipiv));
      EXPECT_EQ(read_info(info2), read_info(info));
      LuRef<T> ref{hA, std::vector<int>(size_t(batch * n)), std::vector<int>(size_t(batch))};
      HostBatch<T> xref = hB;
      for (index_t b = 0; b < batch; ++b)
        ref.info[size_t(b)] = ref_gesv(n, 1, ref.lu.matrix(b), ref.ipiv.data() + b * n, xref.matrix(b));
      const auto got_lu   = read_view(A);
      const auto got_ipiv = read_rank2(ipiv);
      check_getrf(hA, got_lu, got_ipiv, read_info(info), ref);
      const auto got_x = read_view(B);
      for (index_t b = 0; b < batch && !::testing::Test::HasFailure(); ++b) {
        if (ref.info[size_t(b)] == 0) {
          EXPECT_TRUE(solution_ok(Op::N, hA, got_lu, got_ipiv, hB, got_x, xref, b));
        }
      }
      if (::testing::Test::HasFailure()) return;
    }
}

// Host Views and a host execution space: the streaming stores are a host
// form, and a device build compiles no host GESV for this test alone.
template <class Exec>
void run_gesv_on_unaligned_pivots_and_info_on_host() {
  if constexpr (ibla::is_host_space_v<Exec>) {
    run_gesv_on_unaligned_pivots_and_info<double, 8, Exec>();
    run_gesv_on_unaligned_pivots_and_info<float, 16, Exec>();
  } else {
    GTEST_SKIP() << "host forms only";
  }
}
TEST(GesvStreamedOutputs, UnalignedPivotsAndInfoGetTheSameValues) {
  run_gesv_on_unaligned_pivots_and_info_on_host<Kokkos::DefaultExecutionSpace>();
}

TEST(GesvErrors, BadArgumentsThrowAndTouchNothing) {
  using V  = Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>>;
  using V2 = Kokkos::View<double**, ibla::LayoutBlockInterleaved<8>>;
  using P  = Kokkos::View<int**, ibla::LayoutBlockInterleaved<8>>;
  using I  = Kokkos::View<int*, ibla::LayoutBlockInterleaved<8>>;
  const auto exec = Kokkos::DefaultExecutionSpace();
  V A("A", 10, 5, 5), B("B", 10, 5, 2);
  P ipiv("ipiv", 10, 5);
  I info("info", 10);
  Kokkos::deep_copy(A, 3.0);
  Kokkos::deep_copy(B, 4.0);
  Kokkos::deep_copy(ipiv, 9);
  Kokkos::deep_copy(info, 9);
  auto untouched = [&] {
    for (double x : read_view(A).data)
      if (x != 3.0) return false;
    for (double x : read_view(B).data)
      if (x != 4.0) return false;
    for (int x : read_rank2(ipiv))
      if (x != 9) return false;
    for (int x : read_info(info))
      if (x != 9) return false;
    return true;
  };
  auto expect_error = [&](auto&& call, const char* routine, const char* argument) {
    try {
      call();
      ADD_FAILURE() << "no exception from " << routine << " for a bad " << argument;
    } catch (const ibla::argument_error& e) {
      EXPECT_EQ(e.argument(), argument) << e.what();
      EXPECT_EQ(e.routine(), routine) << e.what();
    }
    EXPECT_TRUE(untouched());
  };
  // gesv
  expect_error([&] { ibla::gesv(exec, V("A", 10, 5, 6), P("p", 10, 5), B, info); }, "gesv", "A");
  expect_error([&] { ibla::gesv(exec, A, ipiv, V("B", 10, 4, 2), info); }, "gesv", "B");
  expect_error([&] { ibla::gesv(exec, A, ipiv, V("B", 11, 5, 2), info); }, "gesv", "B");
  expect_error([&] { ibla::gesv(exec, A, ipiv, V2("B", 10, 6), info); }, "gesv", "B");
  expect_error([&] { ibla::gesv(exec, A, P("p", 10, 4), B, info); }, "gesv", "ipiv");
  expect_error([&] { ibla::gesv(exec, A, P("p", 9, 5), B, info); }, "gesv", "ipiv");
  expect_error([&] { ibla::gesv(exec, A, ipiv, B, I("i", 9)); }, "gesv", "info");
  expect_error([&] { ibla::gesv(exec, A, ipiv, V(), info); }, "gesv", "B");
  expect_error([&] { ibla::gesv(exec, A, ipiv, V(static_cast<double*>(nullptr), 10, 5, 2), info); },
               "gesv", "B");
  expect_error(
      [&] {
        ibla::gesv(exec, A, ipiv, Kokkos::View<double***, ibla::LayoutBlockInterleaved<4>>("B", 10, 5, 2),
                   info);
      },
      "gesv", "B");
  // getrs
  expect_error([&] { ibla::getrs(exec, Op::N, V("A", 10, 5, 6), ipiv, B); }, "getrs", "A");
  expect_error([&] { ibla::getrs(exec, Op::T, A, ipiv, V("B", 10, 6, 2)); }, "getrs", "B");
  expect_error([&] { ibla::getrs(exec, Op::N, A, P("p", 10, 6), B); }, "getrs", "ipiv");
  expect_error([&] { ibla::getrs(exec, Op::N, A, P(), B); }, "getrs", "ipiv");
  expect_error(
      [&] {
        ibla::getrs(exec, Op::N, A, Kokkos::View<int**, ibla::LayoutBlockInterleaved<16>>("p", 10, 5), B);
      },
      "getrs", "ipiv");
  EXPECT_THROW(ibla::gesv(exec, A, ipiv, V("B", 10, 4, 2), info), std::invalid_argument);
}

TEST(GesvEmpty, ZeroSizesAreNoOps) {
  using V = Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>>;
  using P = Kokkos::View<int**, ibla::LayoutBlockInterleaved<8>>;
  Kokkos::View<int*, ibla::LayoutBlockInterleaved<8>> info("info", 6);
  Kokkos::deep_copy(info, 3);
  EXPECT_NO_THROW(ibla::gesv(Kokkos::DefaultExecutionSpace(), V("A", 6, 0, 0), P("p", 6, 0),
                             V("B", 6, 0, 2), info));
  EXPECT_EQ(read_info(info), std::vector<int>(6, 0));
  EXPECT_NO_THROW(ibla::getrs(Kokkos::DefaultExecutionSpace(), Op::N, V("A", 0, 3, 3),
                              P("p", 0, 3), V("B", 0, 3, 1)));
}
