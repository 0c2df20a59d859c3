// Numerical edge cases against netlib CBLAS/LAPACKE: NaN/Inf in the inputs
// propagate exactly as the reference propagates them (same NaN and same
// signed-Inf pattern, element by element), zero-size problems (m, n, k = 0,
// batch = 0) are valid no-ops, alpha = 0 does not read A and B (BLAS), beta = 0
// does not read C, and conversions copy every bit pattern (NaN payloads,
// -0, denormals, Inf) unchanged.
//
// Pattern checks use inputs in [-1, 1] plus the special values: no finite
// intermediate can overflow, so whether an element is NaN, +Inf or -Inf does
// not depend on the order of the sums (Inf + -Inf is NaN in any order), and
// ibla must match the reference exactly. Finite elements are compared with
// the gemm_close bound of reference.hpp.
#include "support/reference.hpp"
#include "support/configs.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

using namespace ibla_test;
using ibla::Op;

namespace {

template <class T>
struct Special {
  static T nan() { return std::numeric_limits<T>::quiet_NaN(); }
  static T inf() { return std::numeric_limits<T>::infinity(); }
  static T denorm() { return std::numeric_limits<T>::denorm_min(); }
};

/// 0 finite, 1 NaN, 2 +Inf, 3 -Inf.
template <class T>
int klass(T x) {
  if (std::isnan(x)) return 1;
  if (std::isinf(x)) return x > 0 ? 2 : 3;
  return 0;
}

/// Same NaN/+Inf/-Inf pattern; finite elements within the gemm bound.
template <class T>
::testing::AssertionResult same_pattern(const HostBatch<T>& got, const HostBatch<T>& ref) {
  for (index_t b = 0; b < got.batch; ++b)
    for (index_t j = 0; j < got.cols; ++j)
      for (index_t i = 0; i < got.rows; ++i)
        if (klass(got(b, i, j)) != klass(ref(b, i, j)))
          return ::testing::AssertionFailure()
                 << "C(" << b << "," << i << "," << j << ") = " << got(b, i, j) << ", reference "
                 << ref(b, i, j);
  return ::testing::AssertionSuccess();
}

/// Copies finite elements only (non-finite ones become 0) so that gemm_close
/// can check the finite part of a result whose pattern was checked already.
template <class T>
HostBatch<T> finite_part(HostBatch<T> h) {
  for (auto& x : h.data)
    if (!std::isfinite(x)) x = T(0);
  return h;
}

template <class View>
bool bitwise_equal(const View& v, const HostBatch<typename View::non_const_value_type>& h) {
  const auto got = read_view(v);
  // (memcmp's pointers must not be null, even for zero bytes: empty batches.)
  return got.data.size() == h.data.size() &&
         (h.data.empty() ||
          std::memcmp(got.data.data(), h.data.data(), h.data.size() * sizeof(h.data[0])) == 0);
}

}  // namespace

template <class C>
class EdgeGemm : public ::testing::Test {};

// The size sweep's configurations (every layout): their gemm is compiled
// once for test_gemm, test_determinism and this file (support/instances.hpp).
TYPED_TEST_SUITE(EdgeGemm, SweepConfigs);

// One NaN, +Inf or -Inf planted per problem in A, in B, or in both, at a
// position that depends on the problem, for every op combination; C is
// read (beta != 0) or not (beta = 0).
TYPED_TEST(EdgeGemm, NonFiniteInputsPropagateLikeCblas) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const T specials[] = {Special<T>::nan(), Special<T>::inf(), -Special<T>::inf()};
  const index_t batch = 37;
  for (int m : {1, 3, 8, 13})
    for (Op ta : {Op::N, Op::T})
      for (Op tb : {Op::N, Op::T})
        for (int where = 0; where < 4; ++where)  // A, B, both, C
          for (T beta : {T(0), T(0.5)}) {
            const int n = m + 1, k = m + 2;
            SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " m " << m << " op("
                                              << ibla::to_string(ta) << "," << ibla::to_string(tb)
                                              << ") where " << where << " beta " << beta);
            const int ar = ta == Op::N ? m : k, ac = ta == Op::N ? k : m;
            const int br = tb == Op::N ? k : n, bc = tb == Op::N ? n : k;
            auto hA = random_batch<T>(batch, ar, ac, 11 + m);
            auto hB = random_batch<T>(batch, br, bc, 12 + m);
            auto hC = random_batch<T>(batch, m, n, 13 + m);
            for (index_t b = 0; b < batch; ++b) {
              const T s = specials[b % 3];
              if (where == 0 || where == 2) hA(b, b % ar, (b / 3) % ac) = s;
              if (where == 1 || where == 2) hB(b, (b / 2) % br, b % bc) = specials[(b + 1) % 3];
              if (where == 3) hC(b, b % m, b % n) = s;
            }
            auto A = make_view<T, Layout>("A", batch, ar, ac);
            auto B = make_view<T, Layout>("B", batch, br, bc);
            auto C = make_view<T, Layout>("C", batch, m, n);
            fill_view(A, hA);
            fill_view(B, hB);
            fill_view(C, hC);
            ibla::gemm(Kokkos::DefaultExecutionSpace(), ta, tb, T(1.25), A, B, beta, C);
            Kokkos::fence();
            const auto got = read_view(C);
            const auto ref = ref_gemm_batch(ta, tb, T(1.25), hA, hB, beta, hC);
            ASSERT_TRUE(same_pattern(got, ref));
            // The finite elements of a result only depend on finite inputs.
            ASSERT_TRUE(gemm_close(ta, tb, T(1.25), finite_part(hA), finite_part(hB), beta,
                                   finite_part(hC), finite_part(got), finite_part(ref)));
          }
}

// Zeros times Inf are NaN (IEEE, and netlib 3.11 has no zero-skipping
// shortcut any more); denormal inputs are not flushed.
TYPED_TEST(EdgeGemm, ZerosDenormalsAndInfinities) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const index_t batch = 21;
  const int m = 5, n = 4, k = 6;
  auto hA = random_batch<T>(batch, m, k, 5);
  auto hB = random_batch<T>(batch, k, n, 6);
  HostBatch<T> hC(batch, m, n);
  for (index_t b = 0; b < batch; ++b) {
    for (int p = 0; p < k; ++p) hB(b, p, b % n) = T(0);  // a zero column of B ...
    hA(b, b % m, b % k) = (b % 2) ? Special<T>::inf() : -Special<T>::inf();  // ... meets Inf
    hA(b, (b + 1) % m, 0) = Special<T>::denorm();
    hB(b, 0, (b + 1) % n) = T(1);
  }
  auto A = make_view<T, Layout>("A", batch, m, k);
  auto B = make_view<T, Layout>("B", batch, k, n);
  auto C = make_view<T, Layout>("C", batch, m, n);
  fill_view(A, hA);
  fill_view(B, hB);
  ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, T(1), A, B, T(0), C);
  Kokkos::fence();
  const auto got = read_view(C);
  const auto ref = ref_gemm_batch(Op::N, Op::N, T(1), hA, hB, T(0), hC);
  ASSERT_TRUE(same_pattern(got, ref));
  // A denormal times 1 with every other term 0 must survive exactly: choose a
  // problem where row (b+1)%m of A is zero apart from the denormal.
  HostBatch<T> zA(1, m, k), zB(1, k, n), zC(1, m, n);
  zA(0, 2, 0) = Special<T>::denorm();
  zB(0, 0, 3) = T(1);
  auto A1 = make_view<T, Layout>("A1", 1, m, k);
  auto B1 = make_view<T, Layout>("B1", 1, k, n);
  auto C1 = make_view<T, Layout>("C1", 1, m, n);
  fill_view(A1, zA);
  fill_view(B1, zB);
  ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, T(1), A1, B1, T(0), C1);
  Kokkos::fence();
  EXPECT_EQ(read_view(C1)(0, 2, 3), Special<T>::denorm());
}

// alpha = 0: C = beta * C without reading A or B (NaN there does not reach
// C); alpha = 0 and beta = 1: C unchanged bit for bit (BLAS quick return);
// beta = 0: C is overwritten without being read (NaN in C disappears).
TYPED_TEST(EdgeGemm, AlphaZeroAndBetaZeroSemantics) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const index_t batch = 19;
  const int m = 7, n = 3, k = 5;
  HostBatch<T> hA(batch, m, k), hB(batch, k, n);
  for (auto& x : hA.data) x = Special<T>::nan();
  for (auto& x : hB.data) x = Special<T>::inf();
  auto hC = random_batch<T>(batch, m, n, 9);
  hC(3, 1, 1) = -T(0);
  hC(4, 2, 2) = Special<T>::denorm();
  auto A = make_view<T, Layout>("A", batch, m, k);
  auto B = make_view<T, Layout>("B", batch, k, n);
  auto C = make_view<T, Layout>("C", batch, m, n);
  fill_view(A, hA);
  fill_view(B, hB);
  for (T beta : {T(1), T(0), T(-0.5)}) {
    SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " beta " << beta);
    fill_view(C, hC);
    ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, T(0), A, B, beta, C);
    Kokkos::fence();
    const auto ref = ref_gemm_batch(Op::N, Op::N, T(0), hA, hB, beta, hC);
    if (beta == T(1)) {
      EXPECT_TRUE(bitwise_equal(C, hC));
    } else {
      EXPECT_TRUE(batches_equal(read_view(C), ref));  // exact: one multiplication
    }
  }
  // beta = 0 with NaN in C and finite A, B: C = alpha A B, no NaN.
  auto fA = random_batch<T>(batch, m, k, 1), fB = random_batch<T>(batch, k, n, 2);
  HostBatch<T> nanC(batch, m, n);
  for (auto& x : nanC.data) x = Special<T>::nan();
  fill_view(A, fA);
  fill_view(B, fB);
  fill_view(C, nanC);
  ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, T(2), A, B, T(0), C);
  Kokkos::fence();
  const auto got = read_view(C);
  const auto ref = ref_gemm_batch(Op::N, Op::N, T(2), fA, fB, T(0), nanC);
  EXPECT_TRUE(same_pattern(got, ref));
  EXPECT_TRUE(gemm_close(Op::N, Op::N, T(2), fA, fB, T(0), HostBatch<T>(batch, m, n), got, ref));
}

// m = 0, n = 0, batch = 0: nothing is read or written and nothing throws;
// k = 0: C = beta * C as the reference does.
TYPED_TEST(EdgeGemm, ZeroSizesAreNoOps) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const auto exec = Kokkos::DefaultExecutionSpace();
  struct Shape {
    index_t batch;
    int m, n, k;
  };
  for (Shape s : {Shape{0, 3, 3, 3}, Shape{5, 0, 3, 2}, Shape{5, 3, 0, 2}, Shape{9, 3, 4, 0},
                  Shape{0, 0, 0, 0}, Shape{17, 0, 0, 0}}) {
    SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " batch " << s.batch << " m "
                                      << s.m << " n " << s.n << " k " << s.k);
    auto hA = random_batch<T>(s.batch, s.m, s.k, 1);
    auto hB = random_batch<T>(s.batch, s.k, s.n, 2);
    auto hC = random_batch<T>(s.batch, s.m, s.n, 3);
    auto A = make_view<T, Layout>("A", s.batch, s.m, s.k);
    auto B = make_view<T, Layout>("B", s.batch, s.k, s.n);
    auto C = make_view<T, Layout>("C", s.batch, s.m, s.n);
    fill_view(A, hA);
    fill_view(B, hB);
    fill_view(C, hC);
    ASSERT_NO_THROW(ibla::gemm(exec, Op::N, Op::N, T(1.5), A, B, T(-2), C));
    Kokkos::fence();
    const auto ref = ref_gemm_batch(Op::N, Op::N, T(1.5), hA, hB, T(-2), hC);
    EXPECT_TRUE(batches_equal(read_view(C), ref));  // k = 0: one exact multiplication
    EXPECT_TRUE(bitwise_equal(A, hA));
    EXPECT_TRUE(bitwise_equal(B, hB));
    // The same through convert.
    auto D = make_view<T, Layout>("D", s.batch, s.m, s.n);
    ASSERT_NO_THROW(ibla::convert(exec, C, D));
  }
}

// k = 0 with a non-finite alpha: C = beta * C (zeros for beta = 0) for every
// op(A), op(B), since nothing is multiplied by alpha. netlib is no oracle
// here: its gemm returns beta * C for op(A) = A but alpha * 0 = NaN for
// op(A) = A^T (found by the fuzzer, corpus gemm_k0_alpha_nan_float).
TYPED_TEST(EdgeGemm, EmptyInnerDimensionIgnoresAlpha) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const index_t batch = 11;
  const int m = 5, n = 4;
  auto hC = random_batch<T>(batch, m, n, 4);
  auto A = make_view<T, Layout>("A", batch, m, 0);
  auto At = make_view<T, Layout>("At", batch, 0, m);
  auto B = make_view<T, Layout>("B", batch, 0, n);
  auto C = make_view<T, Layout>("C", batch, m, n);
  for (T alpha : {Special<T>::nan(), Special<T>::inf()})
    for (T beta : {T(0), T(-0.5)})
      for (Op ta : {Op::N, Op::T}) {
        SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " alpha " << alpha
                                          << " beta " << beta << " transA " << int(ta));
        fill_view(C, hC);
        if (ta == Op::N) {
          ibla::gemm(Kokkos::DefaultExecutionSpace(), ta, Op::N, alpha, A, B, beta, C);
        } else {
          ibla::gemm(Kokkos::DefaultExecutionSpace(), ta, Op::N, alpha, At, B, beta, C);
        }
        Kokkos::fence();
        HostBatch<T> want = hC;
        for (auto& x : want.data) x = beta == T(0) ? T(0) : beta * x;
        EXPECT_TRUE(batches_equal(read_view(C), want));
      }
}

// convert copies bit patterns: NaN payloads, -0, denormals, infinities.
TYPED_TEST(EdgeGemm, ConvertCopiesEveryBitPattern) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const index_t batch = 23;
  const int m = 3, n = 5;
  auto h = random_batch<T>(batch, m, n, 4);
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  for (index_t b = 0; b < batch; ++b) {
    // A signalling NaN with a payload: any arithmetic on it would change it.
    Bits payload;
    if constexpr (sizeof(T) == 8) {
      payload = Bits(0x7ff400007f8a5a5aULL);
    } else {
      payload = Bits(0x7f8a5a5aU);
    }
    T nan_with_payload;
    std::memcpy(&nan_with_payload, &payload, sizeof(T));
    h(b, 0, b % n) = nan_with_payload;
    h(b, 1, (b + 1) % n) = -T(0);
    h(b, 2, (b + 2) % n) = Special<T>::denorm();
    h(b, b % m, 4) = (b % 2) ? Special<T>::inf() : -Special<T>::inf();
  }
  auto src = make_view<T, Layout>("src", batch, m, n);
  fill_view(src, h);
  auto left  = make_view<T, Kokkos::LayoutLeft>("left", batch, m, n);
  auto right = make_view<T, Kokkos::LayoutRight>("right", batch, m, n);
  auto block = make_view<T, ibla::LayoutBlockInterleaved<4>>("block", batch, m, n);
  const auto exec = Kokkos::DefaultExecutionSpace();
  ibla::convert(exec, src, right);
  ibla::convert(exec, right, block);
  ibla::convert(exec, block, left);
  auto back = make_view<T, Layout>("back", batch, m, n);
  ibla::convert(exec, left, back);
  Kokkos::fence();
  EXPECT_TRUE(bitwise_equal(right, h));
  EXPECT_TRUE(bitwise_equal(block, h));
  EXPECT_TRUE(bitwise_equal(left, h));
  EXPECT_TRUE(bitwise_equal(back, h));
}

// A rejected call throws ibla::argument_error naming the argument and leaves
// every operand bit for bit as it was.
TYPED_TEST(EdgeGemm, RejectedCallsTouchNothing) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const auto exec = Kokkos::DefaultExecutionSpace();
  const index_t batch = 13;
  auto hA = random_batch<T>(batch, 4, 3, 1);
  auto hB = random_batch<T>(batch, 3, 5, 2);
  auto hC = random_batch<T>(batch, 4, 5, 3);
  auto A = make_view<T, Layout>("A", batch, 4, 3);
  auto B = make_view<T, Layout>("B", batch, 3, 5);
  auto C = make_view<T, Layout>("C", batch, 4, 5);
  auto Cbad = make_view<T, Layout>("Cbad", batch + 1, 4, 5);
  fill_view(A, hA);
  fill_view(B, hB);
  fill_view(C, hC);
  auto expect_rejected = [&](auto&& call, const char* argument) {
    try {
      call();
      ADD_FAILURE() << "no exception, expected one for " << argument;
    } catch (const ibla::argument_error& e) {
      EXPECT_EQ(e.argument(), argument) << e.what();
    }
    Kokkos::fence();
    EXPECT_TRUE(bitwise_equal(A, hA));
    EXPECT_TRUE(bitwise_equal(B, hB));
    EXPECT_TRUE(bitwise_equal(C, hC));
  };
  expect_rejected([&] { ibla::gemm(exec, Op::T, Op::N, T(1), A, B, T(0), C); }, "A");
  expect_rejected([&] { ibla::gemm(exec, Op::N, Op::T, T(1), A, B, T(0), C); }, "B");
  expect_rejected([&] { ibla::gemm(exec, Op::N, Op::N, T(1), A, B, T(0), Cbad); }, "A");
  expect_rejected([&] { ibla::convert(exec, C, Cbad); }, "dst");
  expect_rejected([&] { ibla::convert(exec, A, B); }, "dst");
}
