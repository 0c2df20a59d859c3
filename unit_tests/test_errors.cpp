// Bad arguments: each throws ibla::argument_error (a std::invalid_argument)
// whose message names the routine, the argument and the values, before any
// data is touched (every operand is compared bitwise afterwards).
#include "support/batch.hpp"
#include "support/reference.hpp"
#include "support/configs.hpp"  // its gemm calls are instances (instances.hpp)

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <string>

using namespace ibla_test;
using ibla::Op;

/// Runs call, expects ibla::argument_error naming `argument`, with every
/// fragment of `fragments` in the message.
void expect_argument_error(const std::function<void()>& call, const std::string& routine,
                           const std::string& argument, std::vector<std::string> fragments = {}) {
  try {
    call();
    ADD_FAILURE() << "no exception; expected one naming argument " << argument;
  } catch (const ibla::argument_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.routine(), routine) << what;
    EXPECT_EQ(e.argument(), argument) << what;
    EXPECT_NE(what.find("ibla::" + routine), std::string::npos) << what;
    EXPECT_NE(what.find("argument " + argument), std::string::npos) << what;
    for (const auto& f : fragments) EXPECT_NE(what.find(f), std::string::npos) << "'" << f << "' not in: " << what;
    // The documented base class, for callers that catch the standard type.
    const std::invalid_argument* base = &e;
    EXPECT_NE(base, nullptr);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

using BI8 = Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>>;

struct GemmOperands {
  BI8 A, B, C;
  HostBatch<double> hA, hB, hC;
  GemmOperands(index_t ba, int am, int an, index_t bb, int bm, int bn, index_t bc, int cm, int cn)
      : A("A", ba, am, an), B("B", bb, bm, bn), C("C", bc, cm, cn),
        hA(random_batch<double>(ba, am, an, 1)), hB(random_batch<double>(bb, bm, bn, 2)),
        hC(random_batch<double>(bc, cm, cn, 3)) {
    fill_view(A, hA);
    fill_view(B, hB);
    fill_view(C, hC);
  }
  void expect_untouched() const {
    EXPECT_TRUE(batches_equal(read_view(A), hA));
    EXPECT_TRUE(batches_equal(read_view(B), hB));
    EXPECT_TRUE(batches_equal(read_view(C), hC));
  }
};

TEST(GemmErrors, BatchCountMismatch) {
  GemmOperands o(9, 3, 3, 10, 3, 3, 10, 3, 3);
  expect_argument_error([&] { ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, 1.0, o.A, o.B, 1.0, o.C); },
                        "gemm", "A", {"extent(0) = 9", "10"});
  o.expect_untouched();
  GemmOperands p(10, 3, 3, 11, 3, 3, 10, 3, 3);
  expect_argument_error([&] { ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, 1.0, p.A, p.B, 1.0, p.C); },
                        "gemm", "B", {"extent(0) = 11", "10"});
  p.expect_untouched();
}

TEST(GemmErrors, ShapeMismatchUnderEveryOp) {
  // C is 4x5. op(A) must be 4xk, op(B) kx5.
  {
    GemmOperands o(8, 3, 6, 8, 6, 5, 8, 4, 5);  // A has 3 rows, C has 4
    expect_argument_error([&] { ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, 1.0, o.A, o.B, 1.0, o.C); },
                          "gemm", "A", {"extent(1) = 3", "is 4"});
    o.expect_untouched();
  }
  {
    GemmOperands o(8, 6, 3, 8, 6, 5, 8, 4, 5);  // A^T has 3 rows
    expect_argument_error([&] { ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::T, Op::N, 1.0, o.A, o.B, 1.0, o.C); },
                          "gemm", "A", {"extent(2) = 3", "transposed"});
    o.expect_untouched();
  }
  {
    GemmOperands o(8, 4, 6, 8, 7, 5, 8, 4, 5);  // k = 6 but B has 7 rows
    expect_argument_error([&] { ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, 1.0, o.A, o.B, 1.0, o.C); },
                          "gemm", "B", {"extent(1) = 7", "is 6"});
    o.expect_untouched();
  }
  {
    GemmOperands o(8, 4, 6, 8, 6, 5, 8, 4, 5);  // B^T is 5x6, k = 6 expected as rows of B^T
    expect_argument_error([&] { ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::T, 1.0, o.A, o.B, 1.0, o.C); },
                          "gemm", "B", {"extent(2) = 5", "is 6"});
    o.expect_untouched();
  }
  {
    GemmOperands o(8, 4, 6, 8, 6, 4, 8, 4, 5);  // B has 4 columns, C 5
    expect_argument_error([&] { ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, 1.0, o.A, o.B, 1.0, o.C); },
                          "gemm", "B", {"extent(2) = 4", "is 5"});
    o.expect_untouched();
  }
}

TEST(GemmErrors, DifferentBlockSizes) {
  const index_t batch = 16;
  auto hA = random_batch<double>(batch, 3, 3, 1), hC = random_batch<double>(batch, 3, 3, 3);
  BI8 A("A", batch, 3, 3), B("B", batch, 3, 3);
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<16>> C("C", batch, 3, 3);
  fill_view(A, hA);
  fill_view(B, hA);
  fill_view(C, hC);
  expect_argument_error([&] { ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, 1.0, A, B, 1.0, C); },
                        "gemm", "C", {"LayoutBlockInterleaved<16>", "LayoutBlockInterleaved<8>"});
  EXPECT_TRUE(batches_equal(read_view(C), hC));
  EXPECT_TRUE(batches_equal(read_view(A), hA));
}

TEST(GemmErrors, UnallocatedView) {
  BI8 A("A", 4, 2, 2), C("C", 4, 2, 2);
  BI8 B(static_cast<double*>(nullptr), 4, 2, 2);  // unmanaged, of the type of A and C
  Kokkos::deep_copy(C, 3.0);
  expect_argument_error([&] { ibla::gemm(Kokkos::DefaultExecutionSpace(), Op::N, Op::N, 1.0, A, B, 1.0, C); },
                        "gemm", "B", {"not allocated"});
  auto hC = read_view(C);
  for (double x : hC.data) EXPECT_EQ(x, 3.0);
}

TEST(ConvertErrors, ShapeMismatch) {
  Kokkos::View<double***, Kokkos::LayoutRight> src("src", 9, 3, 4);
  BI8 dst_batch("d", 10, 3, 4), dst_rows("d", 9, 4, 4), dst_cols("d", 9, 3, 5);
  Kokkos::deep_copy(dst_batch, 1.0);
  expect_argument_error([&] { ibla::convert(Kokkos::DefaultExecutionSpace(), src, dst_batch); }, "convert",
                        "dst", {"extent(0) = 10", "is 9"});
  auto h = read_view(dst_batch);
  for (double x : h.data) EXPECT_EQ(x, 1.0);
  expect_argument_error([&] { ibla::convert(Kokkos::DefaultExecutionSpace(), src, dst_rows); }, "convert",
                        "dst", {"extent(1) = 4", "is 3"});
  expect_argument_error([&] { ibla::convert(Kokkos::DefaultExecutionSpace(), src, dst_cols); }, "convert",
                        "dst", {"extent(2) = 5", "is 4"});
}

TEST(ConvertErrors, PointerArrays) {
  const index_t batch = 6;
  std::vector<std::vector<double>> mats(batch, std::vector<double>(9, 1.0));
  std::vector<double*> ptrs(batch);
  for (index_t b = 0; b < batch; ++b) ptrs[size_t(b)] = mats[size_t(b)].data();
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>, Kokkos::HostSpace> A("A", batch, 3, 3);
  Kokkos::deep_copy(A, 5.0);
  const Kokkos::DefaultHostExecutionSpace exec;

  ptrs[4] = nullptr;
  expect_argument_error([&] { ibla::convert(exec, ibla::pointer_array(ptrs.data(), batch, 3, 3), A); },
                        "convert", "src", {"matrix 4 is null"});
  expect_argument_error([&] { ibla::convert(exec, A, ibla::pointer_array(ptrs.data(), batch, 3, 3)); },
                        "convert", "dst", {"matrix 4 is null"});
  for (index_t b = 0; b < batch; ++b) {
    if (b != 4) {
      for (double x : mats[size_t(b)]) EXPECT_EQ(x, 1.0);
    }
  }
  ptrs[4] = mats[4].data();
  expect_argument_error([&] { ibla::convert(exec, ibla::pointer_array(ptrs.data(), batch, 3, 3, 2), A); },
                        "convert", "src", {"ld = 2"});
  expect_argument_error(
      [&] { ibla::convert(exec, ibla::pointer_array<double>(nullptr, batch, 3, 3), A); }, "convert", "src",
      {"pointer array itself is null"});
  auto h = read_view(A);
  for (double x : h.data) EXPECT_EQ(x, 5.0);
}
