// Determinism of the solvers: a matrix gets the same bits whether it is
// computed in a full block (compile-time lane count: the vector forms of
// trsm_tile / potrf_panel, getrf's lane loops of fixed length) or in the
// partial last block (runtime lane count: the per-lane forms), and whatever
// position it takes in its block. test_determinism.cpp does the same for
// GEMM, plus thread counts and batch splits.
//
// Each case is a batch of two full blocks and a tail whose matrices repeat
// the first ones of the first block; the results (factors, solutions, ipiv,
// info) of the repeated matrices must be equal bit for bit (memcmp). Inputs
// are well-conditioned (SPD with a dominant diagonal, random LU with
// pivoting, triangles with a dominant diagonal), so every result is finite
// and a difference is a real one.
#include "support/bitwise.hpp"
#include "support/configs.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace ibla_test;
using ibla::Diag;
using ibla::Op;
using ibla::Side;
using ibla::Uplo;

namespace {

/// The tail-block copies [tail_first, tail_first + count) of matrices
/// [head, head + count) have the same bits.
template <class T>
::testing::AssertionResult tail_repeats_head(const HostBatch<T>& h, index_t head, index_t tail_first,
                                             index_t count, const char* what) {
  auto same = bitwise_same(h, h, tail_first, head, count);
  if (!same) same << " (" << what << ": tail block vs full block)";
  return same;
}

template <class IV>
::testing::AssertionResult ints_repeat(const IV& v, index_t head, index_t tail_first, index_t count,
                                       const char* what) {
  auto h = Kokkos::create_mirror_view(v);
  mirror_copy(h, v);
  const index_t per = IV::rank == 2 ? index_t(v.extent(1)) : 1;
  for (index_t b = 0; b < count; ++b)
    for (index_t k = 0; k < per; ++k) {
      int x, y;
      if constexpr (IV::rank == 2) {
        x = h(tail_first + b, k);
        y = h(head + b, k);
      } else {
        x = h(tail_first + b);
        y = h(head + b);
      }
      if (x != y)
        return ::testing::AssertionFailure() << what << "[" << k << "] of matrix " << tail_first + b
                                             << " is " << x << ", of matrix " << head + b << " " << y;
    }
  return ::testing::AssertionSuccess();
}

/// The batch shape of every case: two full blocks and a tail of L - 1 (or 3)
/// matrices, the tail repeating matrices [0, tail) of the first block.
struct Shape {
  index_t L, tail, batch;
  explicit Shape(int lanes)
      : L(lanes), tail(lanes > 4 ? lanes - 1 : 3), batch(2 * index_t(lanes) + tail) {}
  template <class T>
  void repeat_head(HostBatch<T>& h) const {
    std::copy(h.matrix(0), h.matrix(0) + tail * h.rows * h.cols, h.matrix(2 * L));
  }
};

/// Random matrices with |diagonal| raised by n: well conditioned, and for
/// the SPD variant symmetric positive definite (A = M M^T / n + n I).
template <class T>
HostBatch<T> dominant_batch(const Shape& s, int n, bool spd, std::uint64_t seed) {
  HostBatch<T> m = random_batch<T>(s.batch, n, n, seed);
  if (!spd) {
    for (index_t b = 0; b < s.batch; ++b)
      for (int i = 0; i < n; ++i) m(b, i, i) += T(m(b, i, i) < 0 ? -n : n);
    s.repeat_head(m);
    return m;
  }
  HostBatch<T> a(s.batch, n, n);
  for (index_t b = 0; b < s.batch; ++b)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double acc = i == j ? double(n) : 0.0;
        for (int k = 0; k < n; ++k) acc += double(m(b, i, k)) * double(m(b, j, k)) / n;
        a(b, i, j) = T(acc);
      }
  s.repeat_head(a);
  return a;
}

/// POTRF, both triangles, on the SPD batch A of shape s: the tail block's
/// factors and info repeat the full block's.
template <class T, class Layout, class IntLayout = Layout>
void check_potrf_full_vs_tail(const Shape& s, const HostBatch<T>& A) {
  const auto exec = Kokkos::DefaultExecutionSpace();
  const int n     = int(A.rows);
  for (const Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
    auto vA = make_view<T, Layout>("A", s.batch, n, n);
    Kokkos::View<int*, IntLayout> info("info", s.batch);
    fill_view(vA, A);
    ibla::potrf(exec, uplo, vA, info);
    EXPECT_TRUE(tail_repeats_head(read_view(vA), 0, 2 * s.L, s.tail, "potrf"));
    EXPECT_TRUE(ints_repeat(info, 0, 2 * s.L, s.tail, "potrf info"));
  }
}

template <class T, class Layout>
void check_sizes(int n) {
  using IntLayout = std::conditional_t<std::is_same<Layout, LayoutStrideColMajor>::value,
                                       Kokkos::LayoutRight, Layout>;
  const Shape s(lanes_of<T, Layout>());
  const auto exec = Kokkos::DefaultExecutionSpace();
  SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " T " << sizeof(T) * 8 << "-bit n "
                                    << n << " batch " << s.batch << " (L " << s.L << ")");
  const int nrhs = n % 3 + 1;
  HostBatch<T> rhs = random_batch<T>(s.batch, n, nrhs, 7 + n);
  s.repeat_head(rhs);

  {  // TRSM: two variants that reach both substitution directions.
    const auto A = dominant_batch<T>(s, n, false, 11 + n);
    for (const bool left : {true, false}) {
      auto vA = make_view<T, Layout>("A", s.batch, n, n);
      auto vB = make_view<T, Layout>("B", s.batch, left ? n : nrhs, left ? nrhs : n);
      HostBatch<T> B = left ? rhs : random_batch<T>(s.batch, nrhs, n, 13 + n);
      s.repeat_head(B);
      fill_view(vA, A);
      fill_view(vB, B);
      if (left)
        ibla::trsm(exec, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, T(0.5), vA, vB);
      else
        ibla::trsm(exec, Side::Right, Uplo::Upper, Op::T, Diag::Unit, T(-2), vA, vB);
      EXPECT_TRUE(tail_repeats_head(read_view(vB), 0, 2 * s.L, s.tail, left ? "trsm L" : "trsm R"));
    }
  }
  {  // TRSM with five columns (a column of tiles and an edge one): on host
     // the full blocks compute the diagonal's reciprocals once for all tiles
     // (trsm_left), or up to trsm_several_columns_register_order on
     // block-interleaved layouts for the register form's columns, the tail
     // per tile row; backward substitution.
    const auto A = dominant_batch<T>(s, n, false, 23 + n);
    HostBatch<T> B = random_batch<T>(s.batch, n, 5, 29 + n);
    s.repeat_head(B);
    auto vA = make_view<T, Layout>("A", s.batch, n, n);
    auto vB = make_view<T, Layout>("B", s.batch, n, 5);
    fill_view(vA, A);
    fill_view(vB, B);
    ibla::trsm(exec, Side::Left, Uplo::Upper, Op::N, Diag::NonUnit, T(0.5), vA, vB);
    EXPECT_TRUE(tail_repeats_head(read_view(vB), 0, 2 * s.L, s.tail, "trsm L, 5 columns"));
  }
  {  // POTRF (both triangles) and POSV.
    const auto A = dominant_batch<T>(s, n, true, 17 + n);
    check_potrf_full_vs_tail<T, Layout, IntLayout>(s, A);
    // Both triangles: on host the full blocks of order <= 8 solve in a
    // register form of their own (potrs_registers_host), the partial tail
    // through trsm.
    for (const Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
      auto vA = make_view<T, Layout>("A", s.batch, n, n);
      auto vB = make_view<T, Layout>("B", s.batch, n, nrhs);
      Kokkos::View<int*, IntLayout> info("info", s.batch);
      fill_view(vA, A);
      fill_view(vB, rhs);
      ibla::posv(exec, uplo, vA, vB, info);
      EXPECT_TRUE(tail_repeats_head(read_view(vA), 0, 2 * s.L, s.tail, "posv factor"));
      EXPECT_TRUE(tail_repeats_head(read_view(vB), 0, 2 * s.L, s.tail, "posv x"));
    }
  }
  {  // GETRF on random matrices (row swaps at most steps) and GESV.
    HostBatch<T> A = random_batch<T>(s.batch, n, n, 19 + n);
    s.repeat_head(A);
    auto vA = make_view<T, Layout>("A", s.batch, n, n);
    Kokkos::View<int**, IntLayout> ipiv("ipiv", s.batch, n);
    Kokkos::View<int*, IntLayout> info("info", s.batch);
    fill_view(vA, A);
    ibla::getrf(exec, vA, ipiv, info);
    EXPECT_TRUE(tail_repeats_head(read_view(vA), 0, 2 * s.L, s.tail, "getrf"));
    EXPECT_TRUE(ints_repeat(ipiv, 0, 2 * s.L, s.tail, "getrf ipiv"));
    EXPECT_TRUE(ints_repeat(info, 0, 2 * s.L, s.tail, "getrf info"));

    auto vB = make_view<T, Layout>("B", s.batch, n, nrhs);
    fill_view(vA, A);
    fill_view(vB, rhs);
    ibla::gesv(exec, vA, ipiv, vB, info);
    EXPECT_TRUE(tail_repeats_head(read_view(vA), 0, 2 * s.L, s.tail, "gesv factor"));
    EXPECT_TRUE(tail_repeats_head(read_view(vB), 0, 2 * s.L, s.tail, "gesv x"));
  }
}

}  // namespace

template <class C>
class DeterminismSolvers : public ::testing::Test {};

// The partial block takes the same path in every layout (lanes_upto; the
// layouts only change the strides, see test_determinism.cpp for GEMM), so
// one block-interleaved configuration per precision: each configuration
// instantiates every solver once more, and the compile time is CI's.
using SolverDeterminismConfigs =
    ::testing::Types<Config<double, ibla::LayoutBlockInterleaved<8>>,
                     Config<float, ibla::LayoutBlockInterleaved<16>>>;
TYPED_TEST_SUITE(DeterminismSolvers, SolverDeterminismConfigs);

// Every tile shape of TRSM (n mod 4, nrhs 1..3), POTRF's panels (n mod 4)
// and sizes with several tile rows.
TYPED_TEST(DeterminismSolvers, FullVsTailBlock) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // 12 and 15 (nrhs = n % 3 + 1 = 1): the one-column register forms of TRSM
  // (Side::Left), GETRS and POTRS past trsm_register_order on the full
  // blocks, the tile form on the tail; 11, 13 and 16 (several columns):
  // TRSM's register form past trsm_register_order on block-interleaved
  // full blocks; 21: TRSM's and GETRS's past one_column_register_order.
  for (int n : {1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 15, 16, 21, 32}) check_sizes<T, Layout>(n);
}

/// The batch of blocks that pattern describes, of order n, blocks of L
/// (and half a block more, of the last kind), in reverse block order when
/// reversed.
template <class T>
HostBatch<T> getrf_pattern_batch(const index_t L, const int n, const bool reversed) {
  // d: dominant, r: random, m: dominant but a random lane at every third
  // place, t: dominant with one lane whose first pivot is subnormal, z:
  // dominant with one lane whose last column is zero (an exact zero pivot
  // without interchange: info set, the factorization goes on), n: dominant
  // with one lane holding a NaN below the diagonal (never a pivot, but it
  // reaches the last one); one lane of each d block ties |A(0, 0)| below
  // it. T, Z, N: the same lanes in a random block (swaps elsewhere); i: a
  // random block of small integers (ties between candidate pivots after
  // earlier interchanges, exact zeros, zero pivots).
  const std::string pattern = "ddmrrdtmdrmzdndrTrZNiir";
  const index_t blocks = index_t(pattern.size()), batch = blocks * L + L / 2;
  HostBatch<T> A = random_batch<T>(batch, n, n, 23 + n + (reversed ? 100 : 0));
  for (index_t b = 0; b < batch; ++b) {
    const index_t block = b / L < blocks ? b / L : blocks - 1;
    const char kind = pattern[size_t(reversed ? blocks - 1 - block : block)];
    const bool random = kind == 'r' || kind == 'i' || (kind >= 'A' && kind <= 'Z') ||
                        (kind == 'm' && b % 3 == 0);
    const char lane_kind = char(std::tolower(kind));
    if (!random)
      for (int i = 0; i < n; ++i) A(b, i, i) += T(A(b, i, i) < 0 ? -n : n);
    if (kind == 'i')
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) A(b, i, j) = std::round(A(b, i, j) * T(2));
    if (kind == 'd' && b % L == 2 && n > 1)
      A(b, n - 1, 0) = -A(b, 0, 0);  // a tie at step 0: idamax keeps row 0
    if (lane_kind == 'z' && b % L == 1)
      for (int i = 0; i < n; ++i) A(b, i, n - 1) = T(0);
    if (lane_kind == 'n' && b % L == 3 && n > 1)
      A(b, n - 1, 0) = std::numeric_limits<T>::quiet_NaN();
    if (lane_kind == 't' && b % L == 1) {
      // A(0, 0) subnormal and the largest of its column: no swap at
      // step 0, and LAPACK divides by it instead of multiplying.
      for (int i = 0; i < n; ++i) A(b, i, 0) = T(0);
      A(b, 0, 0) = std::numeric_limits<T>::denorm_min() * T(8);
    }
  }
  return A;
}

/// ibla::getrf of a host batch on Views of Layout, with everything it wrote
/// read back.
template <class T, class Layout>
struct Factored {
  using PivotsMirror = decltype(Kokkos::create_mirror_view(Kokkos::View<int**, Layout>()));
  using InfoMirror   = decltype(Kokkos::create_mirror_view(Kokkos::View<int*, Layout>()));
  HostBatch<T> A;
  PivotsMirror ipiv;
  InfoMirror info;
};
template <class T, class Layout>
Factored<T, Layout> factor_with_getrf(const HostBatch<T>& A) {
  const index_t batch = A.batch;
  const int n         = int(A.rows);
  auto vA = make_view<T, Layout>("A", batch, n, n);
  Kokkos::View<int**, Layout> ipiv("ipiv", batch, n);
  Kokkos::View<int*, Layout> info("info", batch);
  fill_view(vA, A);
  ibla::getrf(Kokkos::DefaultExecutionSpace(), vA, ipiv, info);
  Factored<T, Layout> f{read_view(vA), Kokkos::create_mirror_view(ipiv),
                        Kokkos::create_mirror_view(info)};
  mirror_copy(f.ipiv, ipiv);
  mirror_copy(f.info, info);
  return f;
}

// On host, GETRF first factors a block without row interchanges (left-
// looking, getrf_crout_host) when the thread's previous block swapped
// nowhere, and factors the whole block again, with interchanges, when a
// lane of it needs one (or a division by a pivot below the smallest
// normal); blocks predicted to swap go to the forms with interchanges
// (left-looking with the interchanges by selects, getrf_crout_pivoted_host,
// for small orders, which hands blocks with a pivot below the smallest
// normal to the register form or getrf_lanes_host). Whatever the order of
// the passes, every matrix must get the bits, pivots and info it gets
// alone (a batch of one: the per-lane, right-looking form). Blocks of
// diagonally dominant matrices (no swaps), random ones (swaps) and mixes,
// with and without ties, zero pivots, NaN and subnormal pivots, in both
// orders of the batch, so that each kind of block meets each prediction on
// either thread; orders up to one above the largest order of the pass
// without interchanges.
template <class T, class Layout>
void check_getrf_forms_match_single_problems() {
  const index_t L = lanes_of<T, Layout>();
  for (int n = 1; n <= 17; ++n)
    for (const bool reversed : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << (reversed ? " reversed" : ""));
      const HostBatch<T> A = getrf_pattern_batch<T>(L, n, reversed);
      const auto got       = factor_with_getrf<T, Layout>(A);
      for (index_t b = 0; b < A.batch; ++b) {
        HostBatch<T> one(1, n, n);
        std::copy(A.matrix(b), A.matrix(b) + n * n, one.matrix(0));
        const auto want = factor_with_getrf<T, Layout>(one);
        ASSERT_TRUE(bitwise_same(got.A, want.A, b, 0, 1)) << "matrix " << b;
        for (int k = 0; k < n; ++k)
          ASSERT_EQ(got.ipiv(b, k), want.ipiv(0, k)) << "ipiv(" << b << ", " << k << ")";
        ASSERT_EQ(got.info(b), want.info(0)) << "info(" << b << ")";
      }
    }
}

TYPED_TEST(DeterminismSolvers, GetrfSpeculativePassMatchesSingleProblems) {
  check_getrf_forms_match_single_problems<typename TypeParam::value_type,
                                          typename TypeParam::layout_type>();
}

/// ibla::gesv of a host batch (one right-hand side) on Views of Layout, with
/// everything it wrote read back.
template <class T, class Layout>
std::pair<Factored<T, Layout>, HostBatch<T>> solve_with_gesv(const HostBatch<T>& A,
                                                             const HostBatch<T>& B) {
  const index_t batch = A.batch;
  const int n         = int(A.rows);
  auto vA = make_view<T, Layout>("A", batch, n, n);
  auto vB = make_view<T, Layout>("B", batch, n, 1);
  Kokkos::View<int**, Layout> ipiv("ipiv", batch, n);
  Kokkos::View<int*, Layout> info("info", batch);
  fill_view(vA, A);
  fill_view(vB, B);
  ibla::gesv(Kokkos::DefaultExecutionSpace(), vA, ipiv, vB, info);
  Factored<T, Layout> f{read_view(vA), Kokkos::create_mirror_view(ipiv),
                        Kokkos::create_mirror_view(info)};
  mirror_copy(f.ipiv, ipiv);
  mirror_copy(f.info, info);
  return {f, read_view(vB)};
}

// On host, batch-level GESV with one right-hand side factors and solves the
// full blocks of small orders in one lane loop (gesv_registers_host): without
// interchanges after a block that swapped nowhere, its lanes that would swap
// solved again one at a time, and with them (by selects) after one that did;
// lanes with a pivot below the smallest normal, or a diagonal of U whose
// reciprocal overflows, are solved again too (both kinds are in the batch).
// Every problem must get the bits, pivots and info it gets alone (a batch of
// one: getrf's per-lane form, then the solve's tile form), for the patterns
// of the GETRF check above in both orders, so that each kind of block meets
// each prediction; orders up to two above the largest of the one-loop form.
template <class T, class Layout>
void check_gesv_forms_match_single_problems() {
  const index_t L = lanes_of<T, Layout>();
  for (int n = 1; n <= 6; ++n)
    for (const bool reversed : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << (reversed ? " reversed" : ""));
      HostBatch<T> A = getrf_pattern_batch<T>(L, n, reversed);
      // In every other block, a lane whose first column is scaled so that
      // its largest entry, the pivot, lies below the smallest normal but has
      // a reciprocal that does not overflow: LAPACK divides the column by it.
      for (index_t b = 5; b < A.batch; b += 2 * L) {
        const T scale = T(0.75) * std::numeric_limits<T>::min() / std::abs(A(b, 0, 0));
        for (int i = 0; i < n; ++i) A(b, i, 0) *= scale;
      }
      const HostBatch<T> B = random_batch<T>(A.batch, n, 1, 41 + n);
      const auto got       = solve_with_gesv<T, Layout>(A, B);
      for (index_t b = 0; b < A.batch; ++b) {
        HostBatch<T> a(1, n, n), x(1, n, 1);
        std::copy(A.matrix(b), A.matrix(b) + n * n, a.matrix(0));
        std::copy(B.matrix(b), B.matrix(b) + n, x.matrix(0));
        const auto want = solve_with_gesv<T, Layout>(a, x);
        ASSERT_TRUE(bitwise_same(got.first.A, want.first.A, b, 0, 1)) << "matrix " << b;
        ASSERT_TRUE(bitwise_same(got.second, want.second, b, 0, 1)) << "solution " << b;
        for (int k = 0; k < n; ++k)
          ASSERT_EQ(got.first.ipiv(b, k), want.first.ipiv(0, k)) << "ipiv(" << b << ", " << k << ")";
        ASSERT_EQ(got.first.info(b), want.first.info(0)) << "info(" << b << ")";
      }
    }
}

TYPED_TEST(DeterminismSolvers, GesvOneLoopFormMatchesSingleProblems) {
  check_gesv_forms_match_single_problems<typename TypeParam::value_type,
                                         typename TypeParam::layout_type>();
}

// Blocks of 16 doubles: a lane value takes two vector registers on AVX-512
// (four on AVX2), and GETRF's host dispatch picks other forms and orders
// there (getrf_registers_preferred, getrf_crout_pivoted_order,
// getrf_crout_order). GETRF only, to keep the build short: the other
// operations' forms for such blocks are checked against LAPACK by the
// benchmark (ibla<L=16>), not bit for bit here.
TEST(DeterminismSolversTwoRegisters, GetrfFormsMatchSingleProblems) {
  check_getrf_forms_match_single_problems<double, ibla::LayoutBlockInterleaved<16>>();
}

// POTRF's tiles below the diagonal have half the rows where a lane value
// takes two registers on AVX-512 (potrf_host_tile_rows): 2 x 4 tiles and a
// one-row edge. The tail block runs the per-lane form, which the sweeps
// check against LAPACK. Orders of every n mod 4 (the last panel's width),
// with 0 or 1 row left below a panel after its 2-row tiles, one panel to
// eight.
TEST(DeterminismSolversTwoRegisters, PotrfFullVsTailBlock) {
  using Layout = ibla::LayoutBlockInterleaved<16>;
  const Shape s(16);
  for (int n : {1, 4, 5, 7, 8, 9, 11, 13, 16, 21, 30, 31, 32}) {
    SCOPED_TRACE(::testing::Message() << "n " << n);
    check_potrf_full_vs_tail<double, Layout>(s, dominant_batch<double>(s, n, true, 17 + n));
  }
}

// GETRF's form for small orders on a GPU (getrf_registers_lane: each thread
// holds its matrix in registers, interchanges by selects) runs nowhere else
// in ibla, and CI has no GPU: here it runs on host, on the blocks of the
// tests above, and every matrix must get the bits, pivots and info
// ibla::getrf gives it (which GetrfSpeculativePassMatchesSingleProblems ties
// to the matrix factored alone, by getrf_lanes); full blocks and the partial
// last one. Orders 1..8 and a few larger ones up to the largest the device
// takes: every order is its own unrolled instance, and all of them up to 20
// took this file from 12 to 80 s to compile.
template <class T, int... Orders>
void check_device_register_form(std::integer_sequence<int, Orders...>) {
  constexpr int L = 8;
  using Layout    = ibla::LayoutBlockInterleaved<L>;
  using HostA     = Kokkos::View<T***, Layout, Kokkos::HostSpace>;
  using HostPiv   = Kokkos::View<int**, Layout, Kokkos::HostSpace>;
  using HostInfo  = Kokkos::View<int*, Layout, Kokkos::HostSpace>;
  static_assert(((Orders <= ibla::impl::getrf_device_register_order<T>) && ...));
  auto check_order = [&](auto order) {
    constexpr int n = decltype(order)::value;
    for (const bool reversed : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "n " << n << (reversed ? " reversed" : ""));
      const HostBatch<T> A = getrf_pattern_batch<T>(L, n, reversed);
      const index_t batch  = A.batch;
      const auto want      = factor_with_getrf<T, Layout>(A);

      HostA hA("hA", batch, n, n);
      HostPiv hipiv("hipiv", batch, n);
      HostInfo hinfo("hinfo", batch);
      fill_view(hA, A);
      for (index_t b = 0; b < batch; ++b) {  // nothing left from a lane that writes none
        hinfo(b) = -1;
        for (int k = 0; k < n; ++k) hipiv(b, k) = -1;
      }
      for (index_t first = 0; first < batch; first += L) {
        [[maybe_unused]] const int lanes = int(batch - first < L ? batch - first : L);
        // Compiled for host only: a device build would also compile the
        // call for the device, with a host team member (nvcc rejects it).
        if constexpr (ibla::is_host_space_v<Kokkos::DefaultExecutionSpace>)
          ibla::impl::getrf_registers_lane<n>(
              ibla::detail::HostSoloMember{}, ibla::lane_block(hA, first, lanes),
              ibla::lane_block(hipiv, first, lanes), ibla::lane_block(hinfo, first, lanes));
      }
      const HostBatch<T> got = read_view(hA);
      for (index_t b = 0; b < batch; ++b) {
        ASSERT_TRUE(bitwise_same(got, want.A, b, b, 1)) << "matrix " << b;
        for (int k = 0; k < n; ++k)
          ASSERT_EQ(hipiv(b, k), want.ipiv(b, k)) << "ipiv(" << b << ", " << k << ")";
        ASSERT_EQ(hinfo(b), want.info(b)) << "info(" << b << ")";
      }
    }
  };
  (check_order(std::integral_constant<int, Orders>{}), ...);
}

TEST(DeterminismSolversDeviceForm, GetrfRegistersLaneMatchesGetrf) {
  if (!ibla::is_host_space_v<Kokkos::DefaultExecutionSpace>)
    GTEST_SKIP() << "a device build runs this form in ibla::getrf itself; test_getrf checks it";
  constexpr int most_double = ibla::impl::getrf_device_register_order<double>;
  constexpr int most_float  = ibla::impl::getrf_device_register_order<float>;
  check_device_register_form<double>(
      std::integer_sequence<int, 1, 2, 3, 4, 5, 6, 7, 8, 12, most_double>{});
  check_device_register_form<float>(
      std::integer_sequence<int, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, most_float>{});
}

// On a GPU, batch-level GETRF and GESV factor the orders from
// getrf_team_rows_from up in a kernel of their own (GetrfTeamRows: a thread
// per row of each matrix, the pivot search and the interchanges through
// shared memory), while the team-level API keeps one thread per matrix
// (getrf_registers_lane, getrf_lanes). Both do the same operations per
// element in the same order, so a user's kernel calling ibla::team::getrf
// or ibla::team::gesv must get the bits, pivots and info ibla::getrf and
// ibla::gesv give: ties, NaN, zero and subnormal pivots included (the
// pattern batch), and the last group of lanes partial. On host both calls
// run the same forms.
template <class AV, class PV, class BV, class IV>
struct TeamLevelGesv {
  AV A;
  PV ipiv;
  BV B;
  IV info;
  index_t batch;
  bool solve;
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const auto [first, count] = team_block<ibla::block_lanes_of<AV>::value>(member, batch);
    const auto a = ibla::lane_block(A, first, count);
    const auto p = ibla::lane_block(ipiv, first, count);
    const auto i = ibla::lane_block(info, first, count);
    if (solve) {
      ibla::team::gesv(member, a, p, ibla::lane_block(B, first, count), i);
    } else {
      ibla::team::getrf(member, a, p, i);
    }
  }
};

template <class T>
void check_batch_against_team_level(const int n, const bool solve) {
  constexpr int L = 32;
  using Layout    = ibla::LayoutBlockInterleaved<L>;
  using Exec      = Kokkos::DefaultExecutionSpace;
  SCOPED_TRACE(::testing::Message() << "n " << n << (solve ? " gesv" : " getrf"));
  const HostBatch<T> A = getrf_pattern_batch<T>(L, n, false);
  const index_t batch  = A.batch;
  const HostBatch<T> B = random_batch<T>(batch, n, 2, 7 + n);
  auto run = [&](const bool team_level) {
    auto vA = make_view<T, Layout>("A", batch, n, n);
    auto vB = make_view<T, Layout>("B", batch, n, 2);
    Kokkos::View<int**, Layout> ipiv("ipiv", batch, n);
    Kokkos::View<int*, Layout> info("info", batch);
    fill_view(vA, A);
    fill_view(vB, B);
    if (team_level) {
      const int vector = ibla::is_host_space_v<Exec> ? 1 : L;
      Kokkos::parallel_for(
          "team-level", Kokkos::TeamPolicy<Exec>(int((batch + L - 1) / L), 1, vector),
          TeamLevelGesv<decltype(vA), decltype(ipiv), decltype(vB), decltype(info)>{
              vA, ipiv, vB, info, batch, solve});
    } else if (solve) {
      ibla::gesv(Exec(), vA, ipiv, vB, info);
    } else {
      ibla::getrf(Exec(), vA, ipiv, info);
    }
    Kokkos::fence();
    Factored<T, Layout> f{read_view(vA), Kokkos::create_mirror_view(ipiv),
                          Kokkos::create_mirror_view(info)};
    mirror_copy(f.ipiv, ipiv);
    mirror_copy(f.info, info);
    return std::make_pair(f, read_view(vB));
  };
  const auto want = run(true);
  const auto got  = run(false);
  ASSERT_TRUE(bitwise_same(got.first.A, want.first.A));
  ASSERT_TRUE(bitwise_same(got.second, want.second));
  for (index_t b = 0; b < batch; ++b) {
    for (int k = 0; k < n; ++k)
      ASSERT_EQ(got.first.ipiv(b, k), want.first.ipiv(b, k)) << "ipiv(" << b << ", " << k << ")";
    ASSERT_EQ(got.first.info(b), want.first.info(b)) << "info(" << b << ")";
  }
}

// On host the two calls run the same forms and the test checks only that
// the team-level entry points reach them: double only there, because each
// value type compiles GETRF and GESV for blocks of 32 twice more (batch
// level and team level): the file took 113 CPU-s at -O1 with float, 54
// without (g++ 12, the two compiled side by side, 2026-11-28).
template <class Exec>
void check_batches_against_team_level(const bool solve) {
  for (int n : {11, 12, 13, 16, 17, 20, 23, 29, 32}) check_batch_against_team_level<double>(n, solve);
  if constexpr (!ibla::is_host_space_v<Exec>)
    for (int n : {14, 15, 16, 20, 21, 28, 32}) check_batch_against_team_level<float>(n, solve);
}

TEST(DeterminismSolversDeviceForm, BatchGetrfAndGesvMatchTeamLevel) {
  for (const bool solve : {false, true})
    check_batches_against_team_level<Kokkos::DefaultExecutionSpace>(solve);
}

namespace {

/// Everything the solvers write for one batch of order n on Views of
/// Layout (their ints on IntLayout): TRSM with one and three columns,
/// POTRF, POSV, POTRS on POTRF's factors, GETRF on random matrices (row
/// swaps), GETRS on its factors, GESV; matrices read back, pivots and info
/// in order.
struct SolverOutputs {
  std::vector<HostBatch<double>> matrices;
  std::vector<int> ints;
};

template <class Layout, class IntLayout>
SolverOutputs run_solvers_on(const Shape& s, const int n) {
  using T         = double;
  const auto exec = Kokkos::DefaultExecutionSpace();
  SolverOutputs out;
  auto keep_ints = [&](const auto& v) {
    auto h = Kokkos::create_mirror_view(v);
    mirror_copy(h, v);
    const index_t per = std::decay_t<decltype(v)>::rank == 2 ? index_t(v.extent(1)) : 1;
    for (index_t b = 0; b < s.batch; ++b)
      for (index_t k = 0; k < per; ++k) {
        if constexpr (std::decay_t<decltype(v)>::rank == 2) out.ints.push_back(h(b, k));
        else out.ints.push_back(h(b));
      }
  };
  const HostBatch<T> dominant = dominant_batch<T>(s, n, false, 31 + n);
  const HostBatch<T> spd      = dominant_batch<T>(s, n, true, 37 + n);
  const HostBatch<T> random   = random_batch<T>(s.batch, n, n, 41 + n);
  for (const int nrhs : {1, 3}) {
    auto vA = make_view<T, Layout>("A", s.batch, n, n);
    auto vB = make_view<T, Layout>("B", s.batch, n, nrhs);
    fill_view(vA, dominant);
    fill_view(vB, random_batch<T>(s.batch, n, nrhs, 43 + n + nrhs));
    ibla::trsm(exec, Side::Left, Uplo::Lower, Op::N, Diag::NonUnit, T(1.5), vA, vB);
    out.matrices.push_back(read_view(vB));
  }
  {
    auto vA = make_view<T, Layout>("A", s.batch, n, n);
    auto vB = make_view<T, Layout>("B", s.batch, n, 2);
    Kokkos::View<int*, IntLayout> info("info", s.batch);
    fill_view(vA, spd);
    fill_view(vB, random_batch<T>(s.batch, n, 2, 47 + n));
    ibla::posv(exec, Uplo::Lower, vA, vB, info);
    out.matrices.push_back(read_view(vA));
    out.matrices.push_back(read_view(vB));
    keep_ints(info);
    fill_view(vA, spd);
    ibla::potrf(exec, Uplo::Upper, vA, info);
    out.matrices.push_back(read_view(vA));
    keep_ints(info);
    fill_view(vB, random_batch<T>(s.batch, n, 2, 53 + n));
    ibla::potrs(exec, Uplo::Upper, vA, vB);
    out.matrices.push_back(read_view(vB));
  }
  {
    auto vA = make_view<T, Layout>("A", s.batch, n, n);
    auto vB = make_view<T, Layout>("B", s.batch, n, 1);
    Kokkos::View<int**, IntLayout> ipiv("ipiv", s.batch, n);
    Kokkos::View<int*, IntLayout> info("info", s.batch);
    fill_view(vA, random);
    ibla::getrf(exec, vA, ipiv, info);
    out.matrices.push_back(read_view(vA));
    keep_ints(ipiv);
    keep_ints(info);
    fill_view(vB, random_batch<T>(s.batch, n, 1, 59 + n));
    ibla::getrs(exec, Op::T, vA, ipiv, vB);
    out.matrices.push_back(read_view(vB));
    fill_view(vA, random);
    fill_view(vB, random_batch<T>(s.batch, n, 1, 61 + n));
    ibla::gesv(exec, vA, ipiv, vB, info);
    out.matrices.push_back(read_view(vA));
    out.matrices.push_back(read_view(vB));
    keep_ints(ipiv);
    keep_ints(info);
  }
  return out;
}

}  // namespace

// Batch-level solvers on host copy the blocks of matrices that lie one
// after another (LayoutRight, LayoutStride) into block-interleaved scratch,
// pivots and info too, and run the block-interleaved kernels there
// (pack.hpp): every output gets the bits of LayoutBlockInterleaved<8>
// (ibla's L for such doubles). Contiguous matrices by columns
// (LayoutStrideDenseColMajor) and by rows (LayoutRight) take the
// transposes, their last elements read as vectors running into the next
// matrices of the block (orders 3, 5: matrices of fewer elements than a
// block's lanes, and odd counts), or, where a matrix (a vector, the pivots)
// has a power of two of elements fewer than the lanes, the block's runs of
// that stride (deinterleave_runs: orders 1 and 2, and the vectors and
// pivots of 4); padded ones (LayoutStrideColMajor) the gathers; 2 full
// blocks (the first requesting the next one's lines) and a partial one.
TEST(DeterminismAcrossLayouts, SolversOnMatricesApartGiveTheBlockInterleavedBits) {
  if (!std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value)
    GTEST_SKIP() << "packing is the host kernels' (device lanes are threads)";
  static_assert(ibla::default_block_lanes<double, Kokkos::DefaultHostExecutionSpace> == 8);
  using Native = ibla::LayoutBlockInterleaved<8>;
  const Shape s(8);
  for (const int n : {1, 2, 3, 4, 5, 8, 13}) {
    SCOPED_TRACE(::testing::Message() << "n " << n);
    const SolverOutputs ref = run_solvers_on<Native, Native>(s, n);
    for (const auto& m : ref.matrices)
      for (const auto& x : m.data) ASSERT_TRUE(std::isfinite(x));
    auto same = [&](const SolverOutputs& got, const char* layout) {
      ASSERT_EQ(got.matrices.size(), ref.matrices.size());
      for (std::size_t k = 0; k < ref.matrices.size(); ++k)
        EXPECT_TRUE(bitwise_same(got.matrices[k], ref.matrices[k])) << layout << ", output " << k;
      EXPECT_EQ(got.ints, ref.ints) << layout << ": pivots and info";
    };
    same(run_solvers_on<LayoutStrideDenseColMajor, Kokkos::LayoutRight>(s, n), "dense column-major");
    same(run_solvers_on<Kokkos::LayoutRight, Kokkos::LayoutRight>(s, n), "LayoutRight");
    same(run_solvers_on<LayoutStrideColMajor, Kokkos::LayoutRight>(s, n), "padded column-major");
  }
}

// Batch-level TRSM with one right-hand side on dense matrices one after
// another whose op(A) has contiguous columns (column-major A, or row-major A
// transposed) solves a matrix at a time at the orders of
// trsm_small_matrix_order (trsm_small_matrices_batch) where this host
// compiles that form: the bits of LayoutBlockInterleaved<8>, for every
// Side::Left variant, rank-3 and rank-2 B, a batch that is no multiple of
// the form's matrices an index, and one matrix whose diagonal has an
// element whose reciprocal overflows (there the block forms divide).
// Orders 3 and 5 (packed) alongside.
TEST(DeterminismAcrossLayouts, TrsmOneColumnMatrixAtATimeGivesTheBlockInterleavedBits) {
  if (!std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value)
    GTEST_SKIP() << "a host form (device lanes are threads)";
  static_assert(ibla::default_block_lanes<double, Kokkos::DefaultHostExecutionSpace> == 8);
  using T         = double;
  const auto exec = Kokkos::DefaultExecutionSpace();
  const Shape s(8);
  const index_t batch = 2 * index_t(ibla::detail::small_matrices_per_index) + 5;
  for (const int n : {2, 3, 4, 5, 8, 16, 32}) {
    // dominant_batch's batch is the Shape's: its matrices repeated.
    const HostBatch<T> dominant = dominant_batch<T>(s, n, false, 71 + n);
    HostBatch<T> A(batch, n, n);
    for (index_t b = 0; b < batch; ++b)
      std::copy(dominant.matrix(b % s.batch), dominant.matrix(b % s.batch) + n * n, A.matrix(b));
    HostBatch<T> B = random_batch<T>(batch, n, 1, 73 + n);
    // Matrix 5: a diagonal element whose reciprocal overflows, and a small
    // right-hand side, so that x stays finite.
    const int r = n > 1 ? 1 : 0;
    A(5, r, r)  = T(3e-309);
    for (index_t i = 0; i < n; ++i) B(5, i, 0) *= T(1e-12);
    for (int vi = 0; vi < 8; ++vi) {
      const Uplo uplo = vi & 1 ? Uplo::Upper : Uplo::Lower;
      const Op op     = vi & 2 ? Op::T : Op::N;
      const Diag diag = vi & 4 ? Diag::Unit : Diag::NonUnit;
      SCOPED_TRACE(::testing::Message() << "n " << n << " " << ibla::to_string(uplo) << " "
                                        << ibla::to_string(op) << " " << ibla::to_string(diag));
      const auto solve = [&](auto layout_tag) {
        using Layout = decltype(layout_tag);
        auto vA      = make_view<T, Layout>("A", batch, n, n);
        auto vB      = make_view<T, Layout>("B", batch, n, 1);
        fill_view(vA, A);
        fill_view(vB, B);
        ibla::trsm(exec, Side::Left, uplo, op, diag, T(-0.75), vA, vB);
        return read_view(vB);
      };
      const auto ref = solve(ibla::LayoutBlockInterleaved<8>{});
      for (const auto& x : ref.data) ASSERT_TRUE(std::isfinite(x));
      EXPECT_TRUE(bitwise_same(solve(LayoutStrideDenseColMajor{}), ref)) << "dense column-major";
      EXPECT_TRUE(bitwise_same(solve(Kokkos::LayoutRight{}), ref)) << "LayoutRight";
      // B as a rank-2 View (batch, n), A column-major.
      auto vA = make_view<T, LayoutStrideDenseColMajor>("A", batch, n, n);
      fill_view(vA, A);
      Kokkos::View<T**, Kokkos::LayoutRight> b2("b", batch, n);
      auto h2 = Kokkos::create_mirror_view(b2);
      for (index_t b = 0; b < batch; ++b)
        for (index_t i = 0; i < n; ++i) h2(b, i) = B(b, i, 0);
      Kokkos::deep_copy(b2, h2);
      ibla::trsm(exec, Side::Left, uplo, op, diag, T(-0.75), vA, b2);
      Kokkos::deep_copy(h2, b2);
      HostBatch<T> got(batch, n, 1);
      for (index_t b = 0; b < batch; ++b)
        for (index_t i = 0; i < n; ++i) got(b, i, 0) = h2(b, i);
      EXPECT_TRUE(bitwise_same(got, ref)) << "rank-2 B";
    }
  }
}

// TrsmSmallMatrices with its requests of the next matrix (on a batch larger
// than the last-level cache from trsm_small_matrix_requesting_order) against
// without them: only requests differ, so the bits must not. A batch that is
// no multiple of the matrices an index, rank-3 and rank-2 B.
TEST(DeterminismAcrossLayouts, TrsmOneColumnMatrixAtATimeRequestsGiveTheSameBits) {
  if constexpr (!ibla::impl::trsm_has_small_matrices) {
    GTEST_SKIP() << "this host packs such Views (trsm_has_small_matrices)";
  } else {
    using T             = double;
    constexpr int N     = ibla::impl::trsm_small_matrix_requesting_order;
    const index_t batch = 3 * ibla::detail::small_matrices_per_index + 7;
    const HostBatch<T> dominant = dominant_batch<T>(Shape(8), N, false, 91);
    HostBatch<T> A(batch, N, N);
    for (index_t b = 0; b < batch; ++b)
      std::copy(dominant.matrix(b % 8), dominant.matrix(b % 8) + N * N, A.matrix(b));
    const HostBatch<T> B = random_batch<T>(batch, N, 1, 93);
    // Host Views (the form is the host's), column-major matrices one after another.
    const Kokkos::View<T***, Kokkos::LayoutStride, Kokkos::HostSpace> vA(
        "A", Kokkos::LayoutStride(size_t(batch), size_t(N) * N, size_t(N), 1, size_t(N), size_t(N)));
    for (index_t b = 0; b < batch; ++b)
      for (index_t j = 0; j < N; ++j)
        for (index_t i = 0; i < N; ++i) vA(b, i, j) = A(b, i, j);
    for (const Uplo uplo : {Uplo::Lower, Uplo::Upper}) {
      const auto solve = [&](const bool requests, auto vB) {
        using BV     = decltype(vB);
        using Solver = ibla::impl::TrsmSmallMatrices<N, T, std::decay_t<decltype(vA)>, BV>;
        const index_t per = ibla::detail::small_matrices_per_index;
        Kokkos::parallel_for(
            Kokkos::RangePolicy<Kokkos::DefaultHostExecutionSpace, Kokkos::IndexType<index_t>>(
                0, (batch + per - 1) / per),
            Solver{Op::N, uplo == Uplo::Lower, false, T(1.5), vA, vB, requests, batch});
        Kokkos::fence();
      };
      auto run = [&](const bool requests, const bool rank2) {
        HostBatch<T> got(batch, N, 1);
        if (rank2) {
          Kokkos::View<T**, Kokkos::LayoutRight, Kokkos::HostSpace> b2("b", batch, N);
          for (index_t b = 0; b < batch; ++b)
            for (index_t i = 0; i < N; ++i) b2(b, i) = B(b, i, 0);
          solve(requests, b2);
          for (index_t b = 0; b < batch; ++b)
            for (index_t i = 0; i < N; ++i) got(b, i, 0) = b2(b, i);
        } else {
          Kokkos::View<T***, Kokkos::LayoutRight, Kokkos::HostSpace> b3("b", batch, N, 1);
          for (index_t b = 0; b < batch; ++b)
            for (index_t i = 0; i < N; ++i) b3(b, i, 0) = B(b, i, 0);
          solve(requests, b3);
          for (index_t b = 0; b < batch; ++b)
            for (index_t i = 0; i < N; ++i) got(b, i, 0) = b3(b, i, 0);
        }
        return got;
      };
      for (const bool rank2 : {false, true}) {
        SCOPED_TRACE(::testing::Message() << ibla::to_string(uplo) << (rank2 ? " rank-2" : " rank-3"));
        const auto without = run(false, rank2);
        for (const auto& x : without.data) ASSERT_TRUE(std::isfinite(x));
        EXPECT_TRUE(bitwise_same(run(true, rank2), without));
      }
    }
  }
}
