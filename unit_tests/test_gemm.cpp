// Batched GEMM against netlib CBLAS: every square size 1..32 with every op
// combination and batch counts {1, L-1, L, L+1, 1001}, rectangular shapes
// (k = 0 included), alpha/beta in {0, 1, -1, random}, beta = 0 with a NaN C,
// alpha = 0 with NaN A and B, every layout, float and double, the team-level
// call inside a user kernel, and mixed layouts in one call.
#include "support/reference.hpp"
#include "support/configs.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

#include <tuple>

using namespace ibla_test;
using ibla::Op;

template <class C>
class Gemm : public ::testing::Test {};

TYPED_TEST_SUITE(Gemm, SweepConfigs);

constexpr Op kOps[] = {Op::N, Op::T};

/// Runs one batched GEMM through ibla and checks it against CBLAS.
template <class T, class Layout>
void run_case(Op ta, Op tb, index_t batch, int m, int n, int k, T alpha, T beta, std::uint64_t seed,
              bool nan_c = false) {
  SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " op(" << ibla::to_string(ta) << ","
                                    << ibla::to_string(tb) << ") batch " << batch << " m " << m
                                    << " n " << n << " k " << k << " alpha " << alpha << " beta "
                                    << beta);
  const int ar = ta == Op::N ? m : k, ac = ta == Op::N ? k : m;
  const int br = tb == Op::N ? k : n, bc = tb == Op::N ? n : k;
  auto hA = random_batch<T>(batch, ar, ac, seed);
  auto hB = random_batch<T>(batch, br, bc, seed + 1);
  auto hC = random_batch<T>(batch, m, n, seed + 2);
  if (nan_c)
    for (auto& x : hC.data) x = std::numeric_limits<T>::quiet_NaN();
  auto A = make_view<T, Layout>("A", batch, ar, ac);
  auto B = make_view<T, Layout>("B", batch, br, bc);
  auto C = make_view<T, Layout>("C", batch, m, n);
  fill_view(A, hA);
  fill_view(B, hB);
  fill_view(C, hC);
  ibla::gemm(Kokkos::DefaultExecutionSpace(), ta, tb, alpha, A, B, beta, C);
  Kokkos::fence();
  const auto got = read_view(C);
  const auto ref = ref_gemm_batch(ta, tb, alpha, hA, hB, beta, hC);
  ASSERT_TRUE(gemm_close(ta, tb, alpha, hA, hB, beta, hC, got, ref));
}

template <class T>
std::vector<std::pair<T, T>> alpha_betas() {
  return {{T(1), T(0)}, {T(1), T(1)}, {T(-1), T(-1)}, {T(0.7), T(-0.3)}, {T(0), T(0.5)},
          {T(-1.3), T(0)}, {T(0), T(0)}, {T(1), T(-1)}};
}

TYPED_TEST(Gemm, SquareSizesAllOpsAndBatchCounts) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const auto ab = alpha_betas<T>();
  int c = 0;
  for (int n : sweep_sizes())
    for (Op ta : kOps)
      for (Op tb : kOps)
        for (index_t batch : batch_counts(lanes_of<T, Layout>())) {
          if (batch == large_batch && !large_batch_size(n)) continue;
          const auto [alpha, beta] = ab[size_t(c++) % ab.size()];
          run_case<T, Layout>(ta, tb, batch, n, n, n, alpha, beta, std::uint64_t(1000 + c));
          if (::testing::Test::HasFatalFailure()) return;
        }
}

TYPED_TEST(Gemm, RectangularShapesAllAlphaBeta) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const std::tuple<int, int, int> shapes[] = {{1, 32, 7}, {32, 1, 5},  {3, 17, 29}, {17, 3, 2},
                                              {31, 30, 1}, {2, 9, 16}, {5, 6, 0},   {7, 1, 1},
                                              {1, 1, 33}, {40, 3, 9}};
  int c = 0;
  for (auto [m, n, k] : shapes)
    for (Op ta : kOps)
      for (Op tb : kOps)
        for (auto [alpha, beta] : alpha_betas<T>()) {
          const index_t batch = (c++ % 2) ? lanes_of<T, Layout>() + 1 : 37;
          run_case<T, Layout>(ta, tb, batch, m, n, k, alpha, beta, std::uint64_t(7000 + c));
          if (::testing::Test::HasFatalFailure()) return;
        }
}

TYPED_TEST(Gemm, BetaZeroDoesNotReadC) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  for (int n : {1, 3, 8, 13, 32})
    for (Op ta : kOps)
      run_case<T, Layout>(ta, Op::N, 19, n, n, n, T(1.5), T(0), 99, /*nan_c=*/true);
}

TYPED_TEST(Gemm, AlphaZeroDoesNotReadAOrB) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const index_t batch = 11;
  const int n         = 6;
  HostBatch<T> nanA(batch, n, n), nanB(batch, n, n);
  for (auto& x : nanA.data) x = std::numeric_limits<T>::quiet_NaN();
  for (auto& x : nanB.data) x = std::numeric_limits<T>::quiet_NaN();
  auto hC = random_batch<T>(batch, n, n, 5);
  auto A = make_view<T, Layout>("A", batch, n, n);
  auto B = make_view<T, Layout>("B", batch, n, n);
  auto C = make_view<T, Layout>("C", batch, n, n);
  fill_view(A, nanA);
  fill_view(B, nanB);
  fill_view(C, hC);
  ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, T(0), A, B, T(-2), C);
  auto got = read_view(C);
  for (auto& x : hC.data) x *= T(-2);
  EXPECT_TRUE(batches_equal(got, hC));
}

// A user kernel that calls the team-level GEMM on each block of its own
// TeamPolicy, as an application would inside a larger kernel. A free function:
// nvcc rejects device lambdas inside a TEST body (TestBody is private).
template <int L, class V>
void user_kernel_gemm(const V& A, const V& B, const V& C, index_t batch) {
  using Policy      = Kokkos::TeamPolicy<>;
  const int nblocks = int((batch + L - 1) / L);
  Kokkos::parallel_for(
      "user_kernel", Policy(nblocks, Kokkos::AUTO),
      KOKKOS_LAMBDA(const Policy::member_type& member) {
        const index_t first = index_t(member.league_rank()) * L;
        const int lanes     = int(batch - first < L ? batch - first : L);
        ibla::team::gemm(member, Op::N, Op::N, 2.0, ibla::lane_block(A, first, lanes),
                         ibla::lane_block(B, first, lanes), 0.5, ibla::lane_block(C, first, lanes));
      });
  Kokkos::fence();
}

TEST(GemmTeam, CalledInsideUserKernel) {
  using T                = double;
  constexpr int L        = 8;
  using Layout           = ibla::LayoutBlockInterleaved<L>;
  const index_t batch    = 3 * L + 5;
  const int m = 7, n = 5, k = 6;
  auto hA = random_batch<T>(batch, m, k, 1), hB = random_batch<T>(batch, k, n, 2),
       hC = random_batch<T>(batch, m, n, 3);
  Kokkos::View<T***, Layout> A("A", batch, m, k), B("B", batch, k, n), C("C", batch, m, n);
  fill_view(A, hA);
  fill_view(B, hB);
  fill_view(C, hC);
  user_kernel_gemm<L>(A, B, C, batch);
  const auto ref = ref_gemm_batch(Op::N, Op::N, T(2), hA, hB, T(0.5), hC);
  EXPECT_TRUE(gemm_close(Op::N, Op::N, T(2), hA, hB, T(0.5), hC, read_view(C), ref));
}

TEST(GemmMixed, BlockInterleavedWithStridedOperands) {
  using T             = double;
  const index_t batch = 45;
  const int m = 9, n = 4, k = 11;
  auto hA = random_batch<T>(batch, k, m, 1), hB = random_batch<T>(batch, k, n, 2),
       hC = random_batch<T>(batch, m, n, 3);
  Kokkos::View<T***, ibla::LayoutBlockInterleaved<8>> A("A", batch, k, m), C("C", batch, m, n);
  Kokkos::View<T***, Kokkos::LayoutRight> B("B", batch, k, n);
  fill_view(A, hA);
  fill_view(B, hB);
  fill_view(C, hC);
  ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::T, Op::N, -1.0, A, B, 2.0, C);
  const auto ref = ref_gemm_batch(Op::T, Op::N, T(-1), hA, hB, T(2), hC);
  EXPECT_TRUE(gemm_close(Op::T, Op::N, T(-1), hA, hB, T(2), hC, read_view(C), ref));
}

TEST(GemmEmpty, ZeroBatchAndZeroSizesAreNoOps) {
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>> A("A", 0, 3, 3), B("B", 0, 3, 3),
      C("C", 0, 3, 3);
  EXPECT_NO_THROW(ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, 1.0, A, B, 0.0, C));
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>> A2("A", 5, 0, 3), B2("B", 5, 3, 4),
      C2("C", 5, 0, 4);
  EXPECT_NO_THROW(ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, 1.0, A2, B2, 0.0, C2));
}
