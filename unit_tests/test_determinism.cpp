// Determinism: the same input gives bitwise identical results
//  - whatever the number of threads: the default execution space (OpenMP
//    with OMP_NUM_THREADS threads; ctest runs this binary with 2 and with 3),
//    a one-thread OpenMP partition (partition_master / partition_space) and
//    Kokkos::Serial;
//  - whatever the batch is split into: the whole batch in one call vs the
//    batch cut into pieces of odd sizes, each its own View and call, so that
//    every matrix lands at another lane position, in full and in tail blocks;
//  - whether a matrix is computed in a full block (compile-time lane count,
//    the vector form of the kernels) or in the partial last block (runtime
//    lane count, the per-lane form): the arithmetic per lane must be the
//    same operations in both, FMAs included (the kernels spell them with
//    impl::fused_mul_add: left to contraction, the per-lane GEMM rounded
//    a*b + acc twice where the vector form fused it);
//  - whatever lane-contiguous layout the batch is stored in
//    (LayoutBlockInterleaved<L>, LayoutInterleaved, LayoutLeft): the same
//    vector code runs on them. Matrix-after-matrix layouts (LayoutRight,
//    LayoutStride) gather lanes and GCC vectorises them differently: with
//    LayoutRight, gemm with m % 4 != 0 differs from the other layouts in the
//    last bit (measured; most likely the other operand of alpha*acc + beta*c
//    is fused into the FMA), so they are only compared with themselves;
//    except host GEMM where C has more than gemm_unpacked_elements elements,
//    which packs such blocks into the block-interleaved layout and must
//    give its bits (DeterminismAcrossLayouts.GemmOnMatricesApart...).
// Comparisons are memcmp of the results: no tolerance.
#include "support/reference.hpp"
#include "support/bitwise.hpp"
#include "support/configs.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <cmath>
#include <type_traits>
#include <fstream>
#include <string>
#include <utility>
#include <vector>
#include <omp.h>

using namespace ibla_test;
using ibla::Op;

namespace {

template <class T>
HostBatch<T> slice(const HostBatch<T>& h, index_t first, index_t count) {
  HostBatch<T> s(count, h.rows, h.cols);
  std::copy(h.matrix(first), h.matrix(first) + count * h.rows * h.cols, s.data.begin());
  return s;
}

/// Lanes per block that ibla uses for a batch stored in Layout.
template <class T, class Layout>
int block_lanes() {
  if constexpr (ibla::is_block_interleaved_layout<Layout>::value) {
    return int(Layout::lanes_per_block);
  } else {
    return ibla::default_block_lanes<T, Kokkos::DefaultExecutionSpace>;
  }
}

/// One GEMM problem set: inputs on host, run through ibla on any execution
/// space and layout.
template <class T>
struct GemmCase {
  Op ta, tb;
  T alpha, beta;
  HostBatch<T> A, B, C;

  GemmCase(Op ta_, Op tb_, index_t batch, int m, int n, int k, std::uint64_t seed)
      : ta(ta_), tb(tb_), alpha(T(0.75)), beta(T(-1.25)),
        A(random_batch<T>(batch, ta_ == Op::N ? m : k, ta_ == Op::N ? k : m, seed)),
        B(random_batch<T>(batch, tb_ == Op::N ? k : n, tb_ == Op::N ? n : k, seed + 1)),
        C(random_batch<T>(batch, m, n, seed + 2)) {}

  /// Makes matrices [dst, dst + count) copies of [src, src + count).
  void duplicate(index_t src, index_t dst, index_t count) {
    for (HostBatch<T>* h : {&A, &B, &C})
      std::copy(h->matrix(src), h->matrix(src) + count * h->rows * h->cols, h->matrix(dst));
  }

  template <class Layout, class Exec>
  HostBatch<T> run(const Exec& exec, index_t first = 0, index_t count = -1) const {
    if (count < 0) count = C.batch;
    auto a = slice(A, first, count), b = slice(B, first, count), c = slice(C, first, count);
    auto vA = make_view<T, Layout>("A", count, a.rows, a.cols);
    auto vB = make_view<T, Layout>("B", count, b.rows, b.cols);
    auto vC = make_view<T, Layout>("C", count, c.rows, c.cols);
    fill_view(vA, a);
    fill_view(vB, b);
    fill_view(vC, c);
    ibla::gemm(exec, ta, tb, alpha, vA, vB, beta, vC);
    exec.fence();
    return read_view(vC);
  }
};

constexpr bool host_reaches_default_memory =
    Kokkos::SpaceAccessibility<Kokkos::DefaultHostExecutionSpace,
                               Kokkos::DefaultExecutionSpace::memory_space>::accessible;

/// Runs f(exec) with exec an OpenMP execution space instance of one thread:
/// a one-thread partition of the OpenMP pool (OpenMP::partition_master on
/// Kokkos 3.x, Experimental::partition_space since 4.0, which removed
/// partition_master); returns false where that is not possible.
template <class F>
bool on_one_openmp_thread(const F& f) {
#if defined(KOKKOS_ENABLE_OPENMP)
#if KOKKOS_VERSION >= 40000
  const int threads = Kokkos::OpenMP().concurrency();
  Kokkos::OpenMP one;
  // Weights 1.5 : threads - 1.5 give the first partition floor(1.5) = 1
  // thread whatever the rounding of 1.5 / threads * threads.
  if (threads > 1) one = Kokkos::Experimental::partition_space(Kokkos::OpenMP(), 1.5, threads - 1.5)[0];
  int width = 0;
  Kokkos::parallel_reduce(
      Kokkos::RangePolicy<Kokkos::OpenMP>(one, 0, 64),
      [](int, int& w) { w = w > omp_get_num_threads() ? w : omp_get_num_threads(); },
      Kokkos::Max<int>(width));
  if (width != 1) return false;
  f(one);
  return true;
#else
  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(2);  // partition_master needs nested parallelism
  bool ran_alone = false;
  Kokkos::OpenMP::partition_master(
      [&](int, int) {
        ran_alone = Kokkos::OpenMP::concurrency() == 1;
        if (ran_alone) f(Kokkos::OpenMP());
      },
      1, 1);
  omp_set_max_active_levels(levels);
  return ran_alone;
#endif
#else
  (void)f;
  return false;
#endif
}

template <class T, class Layout>
void check_gemm_determinism(Op ta, Op tb, int m, int n, int k) {
  const int L = block_lanes<T, Layout>();
  // Two full blocks and a tail of L - 1 (or 3 when L is small) matrices.
  const index_t tail  = L > 4 ? L - 1 : 3;
  const index_t batch = 2 * index_t(L) + tail;
  SCOPED_TRACE(::testing::Message() << layout_name<Layout>() << " T " << sizeof(T) * 8
                                    << "-bit op(" << ibla::to_string(ta) << "," << ibla::to_string(tb)
                                    << ") m " << m << " n " << n << " k " << k << " batch " << batch
                                    << " (L " << L << ")");
  GemmCase<T> c(ta, tb, batch, m, n, k, 1000 + 31 * m + n + 7 * k);
  // The tail block repeats the first matrices of the first (full) block.
  c.duplicate(0, 2 * L, tail);
  const auto exec  = Kokkos::DefaultExecutionSpace();
  const auto whole = c.template run<Layout>(exec);

  // Full block vs tail block: same matrix, same bits.
  ASSERT_TRUE(bitwise_same(whole, whole, 2 * L, 0, tail)) << "full block vs tail block";

  // Pieces of odd sizes: every matrix at another lane position.
  for (index_t first = 0, piece = 1; first < batch; first += piece, piece = piece * 2 + 1) {
    const index_t count = std::min(piece, batch - first);
    const auto part     = c.template run<Layout>(exec, first, count);
    ASSERT_TRUE(bitwise_same(part, whole, 0, first, count))
        << "batch split: piece [" << first << ", " << first + count << ")";
  }

  // Host execution spaces, where they can reach the test's Views (not on a
  // device build, whose Views live in device memory).
  if constexpr (host_reaches_default_memory) {
#if defined(KOKKOS_ENABLE_SERIAL)
    ASSERT_TRUE(bitwise_same(c.template run<Layout>(Kokkos::Serial()), whole)) << "Kokkos::Serial";
#endif
    HostBatch<T> one;
    if (on_one_openmp_thread([&](const auto& exec1) { one = c.template run<Layout>(exec1); })) {
      ASSERT_TRUE(bitwise_same(one, whole)) << "one OpenMP thread";
    }
  }
}

}  // namespace

template <class C>
class Determinism : public ::testing::Test {};

TYPED_TEST_SUITE(Determinism, SweepConfigs);

// Full blocks (lanes_c<L>) and the partial last block (lanes_upto<L>) must
// run the same arithmetic: every tile shape, in every layout.
TYPED_TEST(Determinism, GemmEverySize) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  // Every tile shape (m, n mod 4) and both unrolled and remainder k.
  for (int m : {1, 2, 3, 4, 5, 6, 7, 8, 11, 16, 21, 31, 32}) {
    check_gemm_determinism<T, Layout>(Op::N, Op::N, m, m, m);
    if (m % 5 == 1) check_gemm_determinism<T, Layout>(Op::T, Op::T, m, m, m);
  }
  // Rectangular and k not a multiple of the tile.
  check_gemm_determinism<T, Layout>(Op::N, Op::T, 7, 3, 29);
  check_gemm_determinism<T, Layout>(Op::T, Op::N, 32, 1, 5);
}

TYPED_TEST(Determinism, ConvertRoundTrip) {
  using T      = typename TypeParam::value_type;
  using Layout = typename TypeParam::layout_type;
  const index_t batch = 3 * block_lanes<T, Layout>() + 2;
  const auto h = random_batch<T>(batch, 6, 5, 77);
  auto src = make_view<T, Layout>("src", batch, 6, 5);
  fill_view(src, h);
  auto mid = make_view<T, ibla::LayoutBlockInterleaved<3>>("mid", batch, 6, 5);
  auto dst = make_view<T, Layout>("dst", batch, 6, 5);
  ibla::convert(Kokkos::DefaultExecutionSpace(), src, mid);
  ibla::convert(Kokkos::DefaultExecutionSpace(), mid, dst);
  Kokkos::fence();
  EXPECT_TRUE(bitwise_same(read_view(dst), h));
}

// The same batch stored in different lane-contiguous layouts gives the same
// bits: the per-lane arithmetic does not depend on the strides.
// (The layouts split the batch of 21 differently into full and tail blocks.)
TEST(DeterminismAcrossLayouts, Gemm) {
  for (int m : {1, 2, 3, 4, 5, 8, 13, 16, 31, 32}) {
    SCOPED_TRACE(::testing::Message() << "m " << m);
    GemmCase<double> c(Op::N, Op::T, 21, m, m, m, 5 + m);
    const auto exec = Kokkos::DefaultExecutionSpace();
    const auto ref  = c.run<ibla::LayoutBlockInterleaved<8>>(exec);
    EXPECT_TRUE(bitwise_same(c.run<ibla::LayoutInterleaved>(exec), ref)) << "Interleaved";
    EXPECT_TRUE(bitwise_same(c.run<Kokkos::LayoutLeft>(exec), ref)) << "LayoutLeft";
    EXPECT_TRUE(bitwise_same(c.run<ibla::LayoutBlockInterleaved<5>>(exec), ref)) << "Block<5>";
  }
}

// Batch-level GEMM on host copies the blocks of matrices that lie one after
// another (LayoutRight, LayoutStride) into block-interleaved scratch and
// runs the block-interleaved kernels there (pack.hpp) where C has more than
// gemm_unpacked_elements elements: those give the bits of
// LayoutBlockInterleaved<8> (ibla's L for such doubles). Contiguous matrices
// by columns (LayoutStrideDenseColMajor) and by rows (LayoutRight) take the
// transposes, padded ones (LayoutStrideColMajor) the gathers; 21 matrices
// are two full blocks, the first requesting the next one's lines, and a
// partial one; square and rectangular, transposed operands, beta zero (C
// holding NaN, which must not reach the result) or not. On AVX-512 hosts the
// 8 x 8 x 8 and 32 x 32 x 32 cases without transposes run a matrix at a
// time instead (gemm_matrix_rows, tested below), with the same bits.
TEST(DeterminismAcrossLayouts, GemmOnMatricesApartGivesTheBlockInterleavedBits) {
  if (!std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value)
    GTEST_SKIP() << "packing is the host kernels' (device lanes are threads)";
  static_assert(ibla::default_block_lanes<double, Kokkos::DefaultHostExecutionSpace> == 8);
  const auto exec = Kokkos::DefaultExecutionSpace();
  struct Shape {
    int m, n, k;
    Op ta, tb;
  };
  std::vector<Shape> shapes{Shape{4, 4, 4, Op::N, Op::T},    Shape{5, 5, 5, Op::N, Op::N},
                            Shape{8, 8, 8, Op::N, Op::N},    Shape{4, 5, 3, Op::N, Op::N},
                            Shape{13, 7, 9, Op::T, Op::N},   Shape{9, 12, 1, Op::N, Op::T},
                            Shape{16, 16, 16, Op::T, Op::T}, Shape{3, 32, 20, Op::N, Op::N},
                            Shape{32, 32, 32, Op::N, Op::N}};
  // A 3 x 3 C is packed on the CPUs where its gathers lost (not on a Zen 4).
  if (3 * 3 > ibla::impl::gemm_unpacked_elements<double>())
    shapes.push_back(Shape{3, 3, 3, Op::T, Op::N});
  int packed = 0;
  for (const Shape& s : shapes) {
    ASSERT_GT(s.m * s.n, ibla::impl::gemm_unpacked_elements<double>());
    for (const bool beta_zero : {false, true}) {
      SCOPED_TRACE(::testing::Message() << s.m << " x " << s.n << " x " << s.k << " op("
                                        << ibla::to_string(s.ta) << "," << ibla::to_string(s.tb)
                                        << ") beta " << (beta_zero ? "0" : "-1.25"));
      GemmCase<double> c(s.ta, s.tb, 21, s.m, s.n, s.k, 40 + s.m + s.k);
      if (beta_zero) {
        c.beta = 0;
        for (auto& x : c.C.data) x = std::numeric_limits<double>::quiet_NaN();
      }
      const auto ref = c.run<ibla::LayoutBlockInterleaved<8>>(exec);
      for (const auto& x : ref.data) ASSERT_FALSE(std::isnan(x));
      EXPECT_TRUE(bitwise_same(c.run<LayoutStrideDenseColMajor>(exec), ref)) << "dense column-major";
      EXPECT_TRUE(bitwise_same(c.run<Kokkos::LayoutRight>(exec), ref)) << "LayoutRight";
      EXPECT_TRUE(bitwise_same(c.run<LayoutStrideColMajor>(exec), ref)) << "padded column-major";
      ++packed;
    }
  }
  EXPECT_EQ(packed, 2 * int(shapes.size()));
}

// Packed blocks of the orders gemm_packed_requesting_first_order ..
// _last_order request the user's next block over their tiles
// (GemmBlocks::run_requesting) once the batch is larger than
// prefetch_above_bytes: the same bits as LayoutBlockInterleaved of the
// packs' L, by columns and by rows, the last block partial (its packs then
// request nothing), beta zero or not.
template <class T>
void gemm_packed_requesting_gives_the_block_interleaved_bits() {
  constexpr int L = ibla::default_block_lanes<T, Kokkos::DefaultHostExecutionSpace>;
  const auto exec = Kokkos::DefaultExecutionSpace();
  struct Shape {
    int m, n, k;
    Op ta, tb;
  };
  constexpr int first = ibla::impl::gemm_packed_requesting_first_order;
  constexpr int last  = ibla::impl::gemm_packed_requesting_last_order<T>;
  for (const Shape& s : {Shape{first, first, first, Op::N, Op::N}, Shape{8, 8, 8, Op::N, Op::N},
                         Shape{13, 7, 9, Op::T, Op::N}, Shape{last, last, last, Op::T, Op::T},
                         Shape{7, 12, 10, Op::N, Op::T}}) {
    for (const bool beta_zero : {false, true}) {
      SCOPED_TRACE(::testing::Message() << s.m << " x " << s.n << " x " << s.k << " op("
                                        << ibla::to_string(s.ta) << "," << ibla::to_string(s.tb)
                                        << ") beta " << (beta_zero ? "0" : "-1.25"));
      // Enough matrices for the operands to pass prefetch_above_bytes, and
      // a partial last block.
      const index_t per_problem = index_t(s.m * s.k + s.k * s.n + s.m * s.n) * index_t(sizeof(T));
      const index_t batch =
          (index_t(ibla::impl::prefetch_above_bytes) / per_problem / L + 2) * L + 3;
      ASSERT_GT(batch * per_problem, index_t(ibla::impl::prefetch_above_bytes));
      GemmCase<T> c(s.ta, s.tb, batch, s.m, s.n, s.k, 90 + s.m + s.k);
      if (beta_zero) {
        c.beta = 0;
        for (auto& x : c.C.data) x = std::numeric_limits<T>::quiet_NaN();
      }
      const auto ref = c.template run<ibla::LayoutBlockInterleaved<L>>(exec);
      for (const auto& x : ref.data) ASSERT_FALSE(std::isnan(x));
      EXPECT_TRUE(bitwise_same(c.template run<LayoutStrideDenseColMajor>(exec), ref))
          << "dense column-major";
      EXPECT_TRUE(bitwise_same(c.template run<Kokkos::LayoutRight>(exec), ref)) << "LayoutRight";
    }
  }
}

TEST(DeterminismAcrossLayouts, GemmPackedRequestingNextBlockDouble) {
  if (!std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value)
    GTEST_SKIP() << "packing is the host kernels' (device lanes are threads)";
  gemm_packed_requesting_gives_the_block_interleaved_bits<double>();
}
TEST(DeterminismAcrossLayouts, GemmPackedRequestingNextBlockFloat) {
  if (!std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value)
    GTEST_SKIP() << "packing is the host kernels' (device lanes are threads)";
  gemm_packed_requesting_gives_the_block_interleaved_bits<float>();
}

// Square GEMM of the orders gemm_matrix_rows_order takes, on host Views whose
// matrices lie one after another, runs a matrix at a time with C's
// unit-stride dimension as the SIMD vector (gemm_matrix_rows_batch, on
// AVX-512 hosts): column-major matrices (dense or padded) with op(A) = A,
// row-major ones (LayoutRight) with op(B) = B; the other operand
// transposed or not; the orders of gemm_small_matrix_order on dense
// matrices by gemm_small_matrix (padded ones by the rows where
// gemm_matrix_rows_order takes the order too). The same bits as LayoutBlockInterleaved of ibla's L,
// with and without the next matrix's requests (batches on both sides of
// prefetch_above_bytes, odd counts), beta zero (C holding NaN, which must
// not reach the result) or not. The form is called directly too, so that
// the test says whether it ran where it should (and only there: its other
// cases, the orders below it and float orders it leaves, go to the packed
// blocks, whose bits must be the same).
template <class T, class Layout>
std::pair<bool, HostBatch<T>> gemm_matrix_rows_directly(const GemmCase<T>& c) {
  using Exec = Kokkos::DefaultExecutionSpace;
  if constexpr (ibla::is_host_space_v<Exec>) {
    auto vA = make_view<T, Layout>("A", c.A.batch, c.A.rows, c.A.cols);
    auto vB = make_view<T, Layout>("B", c.B.batch, c.B.rows, c.B.cols);
    auto vC = make_view<T, Layout>("C", c.C.batch, c.C.rows, c.C.cols);
    fill_view(vA, c.A);
    fill_view(vB, c.B);
    fill_view(vC, c.C);
    const bool ran =
        ibla::impl::gemm_matrix_rows_batch(Exec(), c.ta, c.tb, c.alpha, vA, vB, c.beta, vC);
    Exec().fence();
    return {ran, read_view(vC)};
  } else {
    return {false, c.C};
  }
}

template <class T>
void gemm_matrix_rows_gives_the_block_interleaved_bits(const std::vector<int>& orders) {
  constexpr int L = ibla::default_block_lanes<T, Kokkos::DefaultHostExecutionSpace>;
  const auto exec = Kokkos::DefaultExecutionSpace();
  int ran = 0;
  for (const int n : orders)
    for (const bool past_requests : {false, true})
      for (const Op ta : {Op::N, Op::T})
        for (const Op tb : {Op::N, Op::T})
          for (const bool beta_zero : {false, true}) {
            // Short sweeps (the sanitizer stage, support/batch.hpp): batches
            // past prefetch_above_bytes for the first and last orders only.
            // Those cases add the next matrix's requests, which read
            // nothing; under ASan at -O0 they were most of this test's
            // 22 s (2026-12-07).
            if (past_requests && short_sweeps() && n != orders.front() && n != orders.back())
              continue;
            SCOPED_TRACE(::testing::Message()
                         << "n " << n << " op(" << ibla::to_string(ta) << ","
                         << ibla::to_string(tb) << ") beta " << (beta_zero ? "0" : "-1.25")
                         << (past_requests ? ", past prefetch_above_bytes" : ""));
            const index_t per_problem = 3 * index_t(n) * n * index_t(sizeof(T));
            const index_t batch =
                past_requests ? index_t(ibla::impl::prefetch_above_bytes) / per_problem + 3 : 13;
            ASSERT_EQ(batch * per_problem > index_t(ibla::impl::prefetch_above_bytes),
                      past_requests);
            GemmCase<T> c(ta, tb, batch, n, n, n, 70 + n + int(ta) + 2 * int(tb));
            if (beta_zero) {
              c.beta = 0;
              for (auto& x : c.C.data) x = std::numeric_limits<T>::quiet_NaN();
            }
            const auto ref = c.template run<ibla::LayoutBlockInterleaved<L>>(exec);
            for (const auto& x : ref.data) ASSERT_FALSE(std::isnan(x));
            // The orders of gemm_small_matrix take it on dense matrices only;
            // padded ones go to gemm_matrix_rows where it takes the order.
            const bool small = ibla::impl::gemm_small_matrix_order<T>(n);
            const bool rows  = ibla::impl::gemm_matrix_rows_order<T>(n);
            const bool form  = ibla::impl::gemm_has_matrix_rows && (small || rows);
            const auto by_columns = gemm_matrix_rows_directly<T, LayoutStrideDenseColMajor>(c);
            // A 1 x 1 matrix has unit strides whatever op is.
            EXPECT_EQ(by_columns.first, form && (ta == Op::N || n == 1)) << "dense column-major";
            if (by_columns.first) {
              EXPECT_TRUE(bitwise_same(by_columns.second, ref)) << "dense column-major, directly";
              ++ran;
            }
            const auto padded = gemm_matrix_rows_directly<T, LayoutStrideColMajor>(c);
            EXPECT_EQ(padded.first, ibla::impl::gemm_has_matrix_rows && rows && ta == Op::N)
                << "padded column-major";
            if (padded.first) {
              EXPECT_TRUE(bitwise_same(padded.second, ref)) << "padded, directly";
            }
            const auto by_rows = gemm_matrix_rows_directly<T, Kokkos::LayoutRight>(c);
            EXPECT_EQ(by_rows.first, form && (tb == Op::N || n == 1)) << "LayoutRight";
            if (by_rows.first) {
              EXPECT_TRUE(bitwise_same(by_rows.second, ref)) << "LayoutRight, directly";
            }
            EXPECT_TRUE(bitwise_same(c.template run<LayoutStrideDenseColMajor>(exec), ref))
                << "dense column-major";
            EXPECT_TRUE(bitwise_same(c.template run<LayoutStrideColMajor>(exec), ref))
                << "padded column-major";
            EXPECT_TRUE(bitwise_same(c.template run<Kokkos::LayoutRight>(exec), ref))
                << "LayoutRight";
          }
  if (ibla::impl::gemm_has_matrix_rows) {
    EXPECT_GT(ran, 0);
  }
}

TEST(DeterminismAcrossLayouts, GemmMatrixRowsDouble) {
  if (!std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value)
    GTEST_SKIP() << "the form is the host kernels' (device lanes are threads)";
  static_assert(ibla::impl::gemm_matrix_rows_first_order == 8 &&
                ibla::impl::gemm_matrix_rows_last_order == 32);
  // Doubles 8, 9 and 11 take both forms (dense, padded), 10 only the rows.
  static_assert(ibla::impl::gemm_small_matrix_order<double>(7) &&
                ibla::impl::gemm_small_matrix_order<double>(8) &&
                ibla::impl::gemm_small_matrix_order<double>(9) &&
                !ibla::impl::gemm_small_matrix_order<double>(10) &&
                ibla::impl::gemm_small_matrix_order<double>(11) &&
                !ibla::impl::gemm_small_matrix_order<double>(12) &&
                ibla::impl::gemm_small_matrix_order<float>(12) &&
                !ibla::impl::gemm_small_matrix_order<float>(13) &&
                ibla::impl::gemm_matrix_rows_order<double>(8) &&
                ibla::impl::gemm_matrix_rows_order<double>(11));
  // Orders whose columns are one masked 32-byte vector, where the host has
  // them (gemm_small_matrix_vector_columns): doubles 3 (here), floats 5..7
  // (GemmMatrixRowsFloat); both forms are compared with the
  // block-interleaved bits, the last matrix of an index with masked loads.
  static_assert(!ibla::impl::gemm_small_matrix_vector_columns<double, 2> &&
                !ibla::impl::gemm_small_matrix_vector_columns<double, 4> &&
                !ibla::impl::gemm_small_matrix_vector_columns<double, 5> &&
                !ibla::impl::gemm_small_matrix_vector_columns<float, 3> &&
                !ibla::impl::gemm_small_matrix_vector_columns<float, 8> &&
                !ibla::impl::gemm_small_matrix_vector_columns<float, 9>);
  static_assert(ibla::impl::gemm_small_matrix_vector_columns<double, 3> ==
                    ibla::impl::gemm_small_matrix_vector_columns<float, 7> &&
                ibla::impl::gemm_small_matrix_vector_columns<float, 5> ==
                    ibla::impl::gemm_small_matrix_vector_columns<float, 7>);
  gemm_matrix_rows_gives_the_block_interleaved_bits<double>(
      {1, 2, 3, 5, 7, 8, 9, 10, 11, 13, 20, 27, 32});
}
TEST(DeterminismAcrossLayouts, GemmMatrixRowsFloat) {
  if (!std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::DefaultHostExecutionSpace>::value)
    GTEST_SKIP() << "the form is the host kernels' (device lanes are threads)";
  gemm_matrix_rows_gives_the_block_interleaved_bits<float>({2, 4, 5, 6, 7, 9, 12, 13, 16, 21, 24, 32});
}

// On a GPU, batch-level GEMM of orders from gemm_team_tiles_order up runs as
// a kernel whose teams give each thread one tile of one matrix
// (GemmTeamTiles, tiles of up to 8 x 8, cut at the matrix's edge), while the
// team-level API keeps one thread per matrix (gemm_tile's 4 x 4 tiles). Each
// element gets the same fused operations in the same order either way, so a
// user's kernel calling ibla::team::gemm must get the bits ibla::gemm gives:
// square and rectangular, transposed operands, beta zero or not, the last
// group of lanes partial. On host both calls run the same forms.
template <class T, class AV, class CV>
struct TeamLevelGemm {
  Op ta, tb;
  T alpha, beta;
  AV A, B;
  CV C;
  index_t batch;
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const auto [first, count] = team_block<ibla::block_lanes_of<CV>::value>(member, batch);
    ibla::team::gemm(member, ta, tb, alpha, ibla::lane_block(A, first, count),
                     ibla::lane_block(B, first, count), beta, ibla::lane_block(C, first, count));
  }
};

/// C (m x n) = op(A) op(B) with op(A) m x k, for the shape lists below.
struct GemmShape {
  int m, n, k;
  Op ta, tb;
};

TEST(DeterminismDeviceForm, BatchGemmMatchesTeamLevel) {
  using T      = double;
  constexpr int L = 32;
  using Layout = ibla::LayoutBlockInterleaved<L>;
  using Exec   = Kokkos::DefaultExecutionSpace;
  const index_t batch = 3 * L + 7;
  const GemmShape shapes[] = {{12, 12, 12, Op::N, Op::N}, {13, 13, 13, Op::T, Op::N},
                          {16, 16, 16, Op::N, Op::N}, {17, 19, 5, Op::N, Op::T},
                          {20, 20, 20, Op::T, Op::T}, {24, 24, 24, Op::N, Op::N},
                          {29, 31, 30, Op::N, Op::N}, {32, 32, 32, Op::N, Op::N},
                          {40, 36, 8, Op::T, Op::N}};
  for (const GemmShape& s : shapes)
    for (const T beta : {T(0), T(0.5)}) {
      SCOPED_TRACE(::testing::Message() << "m " << s.m << " n " << s.n << " k " << s.k << " beta "
                                        << beta);
      const int ar = s.ta == Op::N ? s.m : s.k, ac = s.ta == Op::N ? s.k : s.m;
      const int br = s.tb == Op::N ? s.k : s.n, bc = s.tb == Op::N ? s.n : s.k;
      const auto hA = random_batch<T>(batch, ar, ac, 31 + s.m);
      const auto hB = random_batch<T>(batch, br, bc, 32 + s.n);
      const auto hC = random_batch<T>(batch, s.m, s.n, 33 + s.k);
      auto run = [&](const bool team_level) {
        auto A = make_view<T, Layout>("A", batch, ar, ac);
        auto B = make_view<T, Layout>("B", batch, br, bc);
        auto C = make_view<T, Layout>("C", batch, s.m, s.n);
        fill_view(A, hA);
        fill_view(B, hB);
        fill_view(C, hC);
        if (team_level) {
          const int vector = ibla::is_host_space_v<Exec> ? 1 : L;
          Kokkos::parallel_for("team-level",
                               Kokkos::TeamPolicy<Exec>(int((batch + L - 1) / L), 1, vector),
                               TeamLevelGemm<T, decltype(A), decltype(C)>{
                                   s.ta, s.tb, T(1.5), beta, A, B, C, batch});
        } else {
          ibla::gemm(Exec(), s.ta, s.tb, T(1.5), A, B, beta, C);
        }
        Kokkos::fence();
        return read_view(C);
      };
      EXPECT_TRUE(bitwise_same(run(false), run(true)));
    }
}

// c's batch in host Views of LayoutBlockInterleaved<L>, run(A, B, C) on
// them, C read back. Host Views, not GemmCase::run's: on a CUDA build those
// are device memory, which the host kernels these tests force cannot read.
template <int L, class T, class Run>
HostBatch<T> gemm_on_host_views(const GemmCase<T>& c, const index_t batch, const Run& run) {
  using View = eti::HostBlockView<T, L>;
  View A("A", batch, c.A.rows, c.A.cols), B("B", batch, c.B.rows, c.B.cols),
      C("C", batch, c.C.rows, c.C.cols);
  fill_view(A, c.A);
  fill_view(B, c.B);
  fill_view(C, c.C);
  run(A, B, C);
  Kokkos::DefaultHostExecutionSpace().fence();
  return read_view(C);
}

// Batch-level GEMM on a batch larger than the last-level cache reads each
// block's operands in address order before the tiles, instead of
// requesting the next block over them (GemmBlocks::from_memory,
// gemm_load_in_order_order). Only loads change, so the bits must not: the
// kernel with the flag forced on a small batch against ibla::gemm (which
// leaves it off there), square and rectangular, transposed operands, beta
// zero or not, a partial last block, at orders below and above the rule's.
template <class T, int L>
void gemm_from_memory_gives_the_same_bits() {
  using Exec   = Kokkos::DefaultHostExecutionSpace;
  using View   = eti::HostBlockView<T, L>;
  const index_t batch = 3 * L + 5;
  const GemmShape shapes[] = {{8, 8, 8, Op::N, Op::N},    {16, 16, 16, Op::N, Op::N},
                              {24, 24, 24, Op::N, Op::N}, {25, 27, 26, Op::T, Op::N},
                              {32, 32, 32, Op::N, Op::N}, {32, 30, 28, Op::N, Op::T},
                              {31, 31, 31, Op::T, Op::T}};
  for (const GemmShape& s : shapes)
    for (const T beta : {T(0), T(0.5)}) {
      SCOPED_TRACE(::testing::Message() << "m " << s.m << " n " << s.n << " k " << s.k << " beta "
                                        << beta);
      GemmCase<T> c(s.ta, s.tb, batch, s.m, s.n, s.k, 41 + s.m);
      c.beta   = beta;
      const auto forced = gemm_on_host_views<L>(c, batch, [&](View A, View B, View C) {
        eti::run_gemm_blocks<T, L>("gemm from memory", batch,
                                   eti::HostGemmBlocks<T, L>{c.ta, c.tb, c.alpha, c.beta, A, B, C,
                                                             true, true});
      });
      const auto plain = gemm_on_host_views<L>(c, batch, [&](View A, View B, View C) {
        ibla::gemm(Exec(), c.ta, c.tb, c.alpha, A, B, c.beta, C);
      });
      EXPECT_TRUE(bitwise_same(forced, plain));
    }
}

TEST(DeterminismFromMemory, GemmDouble) { gemm_from_memory_gives_the_same_bits<double, 8>(); }
TEST(DeterminismFromMemory, GemmFloat) { gemm_from_memory_gives_the_same_bits<float, 16>(); }

// Batch-level GEMM (GemmBlocks) with one of its request flags both ways
// (set_flag(blocks, flag)), on a batch above prefetch_above_bytes (so that
// the next block is requested) and with a partial last block, for each
// shape, beta zero or not. Only requests change with these flags, so the
// bits must not.
template <class T, int L, size_t S, class SetFlag>
void gemm_blocks_give_the_same_bits_both_ways(const GemmShape (&shapes)[S], const int seed,
                                              const SetFlag& set_flag) {
  using View = eti::HostBlockView<T, L>;
  for (const GemmShape& s : shapes)
    for (const T beta : {T(0), T(0.5)}) {
      const index_t bytes = index_t(s.m) * s.k + index_t(s.k) * s.n + index_t(s.m) * s.n;
      const index_t batch =
          index_t(2 * ibla::impl::prefetch_above_bytes) / (bytes * index_t(sizeof(T))) / L * L +
          L / 2 + 1;
      SCOPED_TRACE(::testing::Message() << "m " << s.m << " n " << s.n << " k " << s.k << " beta "
                                        << beta << " batch " << batch);
      GemmCase<T> c(s.ta, s.tb, batch, s.m, s.n, s.k, seed + s.m);
      c.beta   = beta;
      auto run = [&](const bool flag) {
        return gemm_on_host_views<L>(c, batch, [&](View A, View B, View C) {
          eti::HostGemmBlocks<T, L> blocks{c.ta, c.tb, c.alpha, c.beta, A, B, C, false, false};
          set_flag(blocks, flag);
          eti::run_gemm_blocks<T, L>("gemm both ways", batch, blocks);
        });
      };
      EXPECT_TRUE(bitwise_same(run(true), run(false)));
    }
}

// Batch-level GEMM on a batch larger than the last-level cache requests the
// next block a line each k step in the runtime-order tiles of square orders
// up to gemm_grid_each_k_step_last_order (GemmBlocks::exceeds_last_level_cache,
// gemm_grid_requests_each_k_step), with the tiles in the same order: the
// flag forced on against off, at the orders around the rule's (12 is a
// compile-time sequence, 17 the planned requests), with transposed
// operands.
template <class T, int L>
void gemm_each_k_step_requests_give_the_same_bits() {
  const GemmShape shapes[] = {{12, 12, 12, Op::N, Op::N}, {13, 13, 13, Op::N, Op::N},
                              {14, 14, 14, Op::T, Op::N}, {15, 15, 15, Op::N, Op::T},
                              {16, 16, 16, Op::N, Op::N}, {16, 16, 16, Op::T, Op::T},
                              {17, 17, 17, Op::N, Op::N}, {16, 15, 16, Op::N, Op::N}};
  gemm_blocks_give_the_same_bits_both_ways<T, L>(
      shapes, 57, [](auto& blocks, const bool flag) { blocks.exceeds_last_level_cache = flag; });
}

TEST(DeterminismEachKStep, GemmDouble) { gemm_each_k_step_requests_give_the_same_bits<double, 8>(); }
TEST(DeterminismEachKStep, GemmFloat) { gemm_each_k_step_requests_give_the_same_bits<float, 16>(); }

// Batch-level GEMM of square orders past the single tile up to
// gemm_unrequested_order (6 and 7 with 32 vector registers) requests the
// next block a few lines each k step, or nothing where
// GemmBlocks::unrequested_past_single_tile (AMD family 19h,
// gemm_leaves_orders_past_single_tile_unrequested); the two take different
// tile sequences (gemm_order_tiles): the flag both ways at the orders
// around the rule's, with transposed operands.
template <class T, int L>
void gemm_orders_past_single_tile_give_the_same_bits() {
  const GemmShape shapes[] = {{5, 5, 5, Op::N, Op::N}, {6, 6, 6, Op::N, Op::N},
                              {6, 6, 6, Op::T, Op::N}, {7, 7, 7, Op::N, Op::T},
                              {7, 7, 7, Op::T, Op::T}, {8, 8, 8, Op::N, Op::N}};
  gemm_blocks_give_the_same_bits_both_ways<T, L>(shapes, 71, [](auto& blocks, const bool flag) {
    blocks.unrequested_past_single_tile = flag;
  });
}

TEST(DeterminismPastSingleTile, GemmDouble) {
  gemm_orders_past_single_tile_give_the_same_bits<double, 8>();
}
TEST(DeterminismPastSingleTile, GemmFloat) {
  gemm_orders_past_single_tile_give_the_same_bits<float, 16>();
}

// Batch-level GEMM requests NN blocks of gemm_block_into_l1_order whole
// into L1 before their tiles where GemmBlocks::requests_blocks_into_l1
// (gemm_requests_blocks_into_l1): the flag both ways at that order, with
// transposed operands (which request nothing) and at the orders around it.
template <class T, int L>
void gemm_blocks_into_l1_give_the_same_bits() {
  constexpr int o          = ibla::impl::gemm_block_into_l1_order;
  const GemmShape shapes[] = {{o, o, o, Op::N, Op::N},
                              {o, o, o, Op::T, Op::N},
                              {o, o, o, Op::N, Op::T},
                              {o, o - 1, o, Op::N, Op::N},
                              {o - 1, o - 1, o - 1, Op::N, Op::N},
                              {o + 1, o + 1, o + 1, Op::N, Op::N}};
  gemm_blocks_give_the_same_bits_both_ways<T, L>(
      shapes, 83, [](auto& blocks, const bool flag) { blocks.requests_blocks_into_l1 = flag; });
}

TEST(DeterminismBlocksIntoL1, GemmDouble) { gemm_blocks_into_l1_give_the_same_bits<double, 8>(); }
TEST(DeterminismBlocksIntoL1, GemmFloat) { gemm_blocks_into_l1_give_the_same_bits<float, 16>(); }

// The CPU checks of the per-host rules (gemm_reads_blocks_in_order_from_
// memory and gemm_requests_blocks_into_l1 on Zen 5 only,
// gemm_touches_pages_in_order off on Zen 4 and 5, the
// others off on Zen 4) against what Linux says of
// cpu0: vendor_id AuthenticAMD and cpu family 25 (19h) or 26 (1Ah).
// Skipped where /proc/cpuinfo has no such lines (not Linux, not x86).
TEST(DeterminismFromMemory, AmdFamilyMatchesProcCpuinfo) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, vendor;
  int family = -1;
  while (std::getline(cpuinfo, line) && (vendor.empty() || family < 0)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "vendor_id" && vendor.empty()) vendor = value;
    if (key == "cpu family" && family < 0) family = std::atoi(value.c_str());
  }
  if (vendor.empty() || family < 0) GTEST_SKIP() << "no vendor_id / cpu family in /proc/cpuinfo";
  const bool amd = vendor == "AuthenticAMD";
  EXPECT_EQ(ibla::impl::host_amd_family(), amd ? unsigned(family) : 0u)
      << vendor << " family " << family;
  EXPECT_EQ(ibla::impl::host_is_amd_family_19h(), amd && family == 0x19)
      << vendor << " family " << family;
  EXPECT_EQ(ibla::impl::gemm_reads_blocks_in_order_from_memory(), amd && family == 0x1a);
  EXPECT_EQ(ibla::impl::gemm_requests_blocks_into_l1(), amd && family == 0x1a);
  EXPECT_EQ(ibla::impl::gemm_touches_pages_in_order(),
            !(amd && (family == 0x19 || family == 0x1a)));
  EXPECT_EQ(ibla::impl::gemm_leaves_orders_past_single_tile_unrequested(),
            ibla::impl::host_is_amd_family_19h());
}

// The size the rule compares a batch with: read from sysfs or the 32 MiB
// default, never zero or absurd.
TEST(DeterminismFromMemory, LastLevelCacheSize) {
  const size_t bytes = ibla::impl::last_level_cache_bytes();
  EXPECT_GE(bytes, size_t(256) << 10);
  EXPECT_LE(bytes, size_t(64) << 30);
}
