// libFuzzer harness over ibla's batch-level calls.
//
// Each input picks an operation, a value type, the layouts of the operands
// (a few View types per operation, mismatched block sizes included), the
// extents (batch <= 40, sizes <= 33, sometimes inconsistent on purpose), the
// ops and scalars, and the contents: a seeded random fill in [-1, 1] with
// special values planted where the input says (NaN, +-Inf, +-0, denormals,
// the smallest normal, 1e3). Operations: gemm, convert, trsm, potrf, posv,
// potrs, getrf, getrs, gesv (rank-3 and rank-2 B). Every call must either
//  - throw ibla::argument_error, exactly when the harness' own model of the
//    argument rules says the arguments are invalid, leaving every operand
//    bit for bit unchanged; or
//  - return what netlib CBLAS returns: within the forward error bound when
//    every input the call reads is finite; with the same NaN/+Inf/-Inf
//    pattern when some are not, wherever that pattern does not depend on the
//    association of the products (alpha in {0, +-1, +-2, NaN}; otherwise only
//    "no crash, no sanitizer report" is required).
// Anything else aborts (a crash for libFuzzer). Build and run:
// scripts/test_stages/40-fuzz.sh.
//
// The solvers are checked through backward errors (forward errors depend on
// the conditioning the fuzzer picks) and LAPACKE's info/ipiv:
//  - trsm: componentwise residual; alpha = 0 gives B = 0;
//  - potrf/posv: info equal to LAPACKE's, or where they first differ a
//    decision certified by ibla's own factor (see check_potrf_problem), the
//    documented info meaning (failed pivot <= 0 or NaN, factored diagonal
//    > 0), backward error of the factored columns, residual of the
//    solution, B untouched where info > 0;
//  - getrf/gesv: 1-based ipiv in [k, m]; info is the first exactly zero
//    U(k, k); for finite input info and ipiv equal to LAPACKE's before the
//    first step where rounding may flip the pivot choice (near ties, zero
//    pivots; the estimate of unit_tests/support/lu.hpp), |PA - LU| <= 2 k eps
//    |L||U|; gesv: residual against A, B untouched where info > 0;
//  - getrs/potrs (arbitrary factors, getrf-shaped pivots): residual
//    against the factors.
// For every solve with finite input, a non-finite X fails where the
// triangular factors are non-singular and netlib's X is finite and far from
// overflow. Non-finite input: no crash, no sanitizer report, the documented
// info rules. Validated by about 22,000 executions (found one harness bug,
// fixed: info after an Inf pivot, see check_potrf_problem) and 18,000 more
// clean ones afterwards; a second harness bug (the info rule on a
// near-singular float matrix, corpus/potrf_float_near_singular_info) came
// up in the bounded run of run_tests.sh when it got through 2,059 inputs.
// It also found a library bug, fixed: TRSM-based
// solves multiplied by 1 / d, which overflows for a denormal diagonal d
// (1 x 1 gesv: A = b = DBL_TRUE_MIN gave x = Inf, LAPACK 1); regression test
// EdgeSolvers.TrsmDenormalDiagonalMatchesNetlibDivision.
#include <fuzzer/FuzzedDataProvider.h>

#include <ibla/ibla.hpp>

#include <Kokkos_Core.hpp>
#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using ibla::index_t;
using ibla::Op;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "ibla fuzz: %s\n", what.c_str());
  std::abort();
}

// ---------------------------------------------------------------------------
// Layouts the harness picks among.
enum class Lay { Block4, Block8, Interleaved, Left, Right, Stride };

template <Lay K>
struct LayTraits;
template <>
struct LayTraits<Lay::Block4> { using layout = ibla::LayoutBlockInterleaved<4>; static constexpr int lanes = 4; };
template <>
struct LayTraits<Lay::Block8> { using layout = ibla::LayoutBlockInterleaved<8>; static constexpr int lanes = 8; };
template <>
struct LayTraits<Lay::Interleaved> { using layout = ibla::LayoutInterleaved; static constexpr int lanes = 0; };
template <>
struct LayTraits<Lay::Left> { using layout = Kokkos::LayoutLeft; static constexpr int lanes = 0; };
template <>
struct LayTraits<Lay::Right> { using layout = Kokkos::LayoutRight; static constexpr int lanes = 0; };
template <>
struct LayTraits<Lay::Stride> { using layout = Kokkos::LayoutStride; static constexpr int lanes = 0; };

template <class T, Lay K>
using ViewT = Kokkos::View<T***, typename LayTraits<K>::layout>;

template <class T, Lay K>
ViewT<T, K> make(index_t b, index_t m, index_t n) {
  if constexpr (K == Lay::Stride) {
    // Column-major matrices with a padded leading dimension and gap.
    const size_t ld = size_t(m) + 2, ms = ld * size_t(n > 0 ? n : 1) + 3;
    return ViewT<T, K>("x", Kokkos::LayoutStride(size_t(b), ms, size_t(m), 1, size_t(n), ld));
  } else {
    return ViewT<T, K>("x", b, m, n);
  }
}

// Host copies: column-major matrices one after another.
template <class T>
struct Host {
  index_t batch = 0, rows = 0, cols = 0;
  std::vector<T> v;
  Host() = default;
  Host(index_t b, index_t m, index_t n) : batch(b), rows(m), cols(n), v(size_t(b * m * n)) {}
  T& operator()(index_t b, index_t i, index_t j) { return v[size_t((b * cols + j) * rows + i)]; }
  T operator()(index_t b, index_t i, index_t j) const { return v[size_t((b * cols + j) * rows + i)]; }
  T* mat(index_t b) { return v.data() + b * rows * cols; }
  const T* mat(index_t b) const { return v.data() + b * rows * cols; }
  bool same_bits(const Host& o) const {
    return v.size() == o.v.size() &&
           (v.empty() || std::memcmp(v.data(), o.v.data(), v.size() * sizeof(T)) == 0);
  }
  bool all_finite() const {
    for (T x : v)
      if (!std::isfinite(x)) return false;
    return true;
  }
};

/// Rank-2 Views (batch, n): pivots and single right-hand sides.
template <class T, Lay K>
using View2T = Kokkos::View<T**, typename LayTraits<K>::layout>;
template <class T, Lay K>
View2T<T, K> make2(index_t b, index_t n) {
  if constexpr (K == Lay::Stride) {
    return View2T<T, K>("x", Kokkos::LayoutStride(size_t(b), size_t(n) + 3, size_t(n), 1));
  } else {
    return View2T<T, K>("x", b, n);
  }
}
/// B of a solve: rank-3 (batch, n, nrhs) or, when Vec, rank-2 (batch, n).
template <class T, Lay K, bool Vec>
using RhsT = std::conditional_t<Vec, View2T<T, K>, ViewT<T, K>>;
template <class T, Lay K, bool Vec>
RhsT<T, K, Vec> make_rhs(index_t b, index_t n, index_t nrhs) {
  if constexpr (Vec) {
    return make2<T, K>(b, n);
  } else {
    return make<T, K>(b, n, nrhs);
  }
}

/// Host copy of a rank-3 View, or of a rank-2 one as (batch, n, 1).
template <class V>
Host<typename V::non_const_value_type> read(const V& x) {
  Host<typename V::non_const_value_type> h(index_t(x.extent(0)), index_t(x.extent(1)),
                                           V::rank == 3 ? index_t(x.extent(2)) : 1);
  Kokkos::fence();
  for (index_t b = 0; b < h.batch; ++b)
    for (index_t j = 0; j < h.cols; ++j)
      for (index_t i = 0; i < h.rows; ++i) {
        if constexpr (V::rank == 3) {
          h(b, i, j) = x(b, i, j);
        } else {
          h(b, i, j) = x(b, i);
        }
      }
  return h;
}
template <class V, class T>
void write(const V& x, const Host<T>& h) {
  for (index_t b = 0; b < h.batch; ++b)
    for (index_t j = 0; j < h.cols; ++j)
      for (index_t i = 0; i < h.rows; ++i) {
        if constexpr (V::rank == 3) {
          x(b, i, j) = h(b, i, j);
        } else {
          x(b, i) = h(b, i, j);
        }
      }
}

/// The argument rule on layouts: block-interleaved operands share L (0: not
/// block-interleaved).
constexpr bool lanes_agree(std::initializer_list<int> lanes) {
  int first = 0;
  for (int x : lanes) {
    if (x == 0) continue;
    if (first == 0) first = x;
    if (x != first) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Contents.
template <class T>
T special(int kind) {
  switch (kind % 10) {
    case 0: return std::numeric_limits<T>::quiet_NaN();
    case 1: return std::numeric_limits<T>::infinity();
    case 2: return -std::numeric_limits<T>::infinity();
    case 3: return T(0);
    case 4: return -T(0);
    case 5: return std::numeric_limits<T>::denorm_min();
    case 6: return -std::numeric_limits<T>::denorm_min() * T(3);
    case 7: return std::numeric_limits<T>::min();
    case 8: return T(1e3);
    default: return T(1);
  }
}

template <class T>
Host<T> contents(FuzzedDataProvider& in, index_t b, index_t m, index_t n) {
  Host<T> h(b, m, n);
  std::mt19937_64 gen(in.ConsumeIntegral<std::uint32_t>());
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (auto& x : h.v) x = T(dist(gen));
  const int planted = in.ConsumeIntegralInRange(0, 6);
  for (int s = 0; s < planted && !h.v.empty(); ++s) {
    const size_t at = in.ConsumeIntegralInRange<size_t>(0, h.v.size() - 1);
    h.v[at] = special<T>(in.ConsumeIntegral<std::uint8_t>());
  }
  if (in.ConsumeIntegralInRange(0, 15) == 0)  // a whole operand of one value
    for (auto& x : h.v) x = special<T>(in.ConsumeIntegral<std::uint8_t>());
  return h;
}

template <class T>
T scalar(FuzzedDataProvider& in) {
  const int k = in.ConsumeIntegralInRange(0, 13);
  switch (k) {
    case 0: return T(0);
    case 1: return T(1);
    case 2: return T(-1);
    case 3: return T(2);
    case 4: return T(-2);
    case 5: return T(0.5);
    case 6: return T(-0.75);
    case 7: return std::numeric_limits<T>::quiet_NaN();
    case 8: return std::numeric_limits<T>::infinity();
    case 9: return std::numeric_limits<T>::denorm_min();
    default: return T(in.ConsumeFloatingPointInRange<double>(-4.0, 4.0));
  }
}

Op op_of(int k) { return k == 0 ? Op::N : (k == 1 ? Op::T : Op::C); }

/// 0 finite, 1 NaN, 2 +Inf, 3 -Inf.
template <class T>
int klass(T x) {
  if (std::isnan(x)) return 1;
  if (std::isinf(x)) return x > 0 ? 2 : 3;
  return 0;
}

/// Problem b of a host batch as a column-major vector.
template <class T>
std::vector<T> problem(const Host<T>& h, index_t b) {
  return std::vector<T>(h.mat(b), h.mat(b) + h.rows * h.cols);
}
template <class T>
bool finite_problem(const Host<T>& h, index_t b) {
  for (index_t i = 0; i < h.rows * h.cols; ++i)
    if (!std::isfinite(h.mat(b)[i])) return false;
  return true;
}
/// Finite and far from overflow: a reference result that a backward-stable
/// solver with another rounding (reciprocals, FMA) must also produce finite.
template <class T>
bool finite_inside(const std::vector<T>& x) {
  const double limit = std::ldexp(double(std::numeric_limits<T>::max()), -20);
  for (T v : x)
    if (!(std::abs(double(v)) <= limit)) return false;
  return true;
}

// ---------------------------------------------------------------------------
// Reference.
inline void cblas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, double alpha,
                       const double* A, int lda, const double* B, int ldb, double beta, double* C,
                       int ldc) {
  cblas_dgemm(CblasColMajor, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline void cblas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k, float alpha,
                       const float* A, int lda, const float* B, int ldb, float beta, float* C,
                       int ldc) {
  cblas_sgemm(CblasColMajor, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
CBLAS_TRANSPOSE cblas_op(Op op) { return op == Op::N ? CblasNoTrans : CblasTrans; }
inline void cblas_trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE ta, CBLAS_DIAG diag, int m,
                       int n, double alpha, const double* A, int lda, double* B, int ldb) {
  cblas_dtrsm(CblasColMajor, side, uplo, ta, diag, m, n, alpha, A, lda, B, ldb);
}
inline void cblas_trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE ta, CBLAS_DIAG diag, int m,
                       int n, float alpha, const float* A, int lda, float* B, int ldb) {
  cblas_strsm(CblasColMajor, side, uplo, ta, diag, m, n, alpha, A, lda, B, ldb);
}

// ---------------------------------------------------------------------------
// gemm.
template <class T, Lay KA, Lay KB, Lay KC>
void fuzz_gemm(FuzzedDataProvider& in) {
  const Op ta = op_of(in.ConsumeIntegralInRange(0, 2)), tb = op_of(in.ConsumeIntegralInRange(0, 2));
  const index_t batch = in.ConsumeIntegralInRange(0, 40);
  const index_t m = in.ConsumeIntegralInRange(0, 33), n = in.ConsumeIntegralInRange(0, 33),
                k = in.ConsumeIntegralInRange(0, 33);
  index_t ab = batch, ar = ta == Op::N ? m : k, ac = ta == Op::N ? k : m;
  index_t bb = batch, br = tb == Op::N ? k : n, bc = tb == Op::N ? n : k;
  // Sometimes one extent is off.
  switch (in.ConsumeIntegralInRange(0, 15)) {
    case 0: ab += 1; break;
    case 1: bb = bb > 0 ? bb - 1 : 1; break;
    case 2: ar += 1; break;
    case 3: ac += 1; break;
    case 4: br += 1; break;
    case 5: bc = bc > 0 ? bc - 1 : 2; break;
    default: break;
  }
  const T alpha = scalar<T>(in), beta = scalar<T>(in);
  const auto hA = contents<T>(in, ab, ar, ac);
  const auto hB = contents<T>(in, bb, br, bc);
  const auto hC = contents<T>(in, batch, m, n);
  auto A = make<T, KA>(ab, ar, ac);
  auto B = make<T, KB>(bb, br, bc);
  auto C = make<T, KC>(batch, m, n);
  write(A, hA);
  write(B, hB);
  write(C, hC);

  // The argument rules, independently of ibla's code.
  const index_t kA = ta == Op::N ? ac : ar;
  const bool lanes_ok = [] {
    const int l[3] = {LayTraits<KA>::lanes, LayTraits<KB>::lanes, LayTraits<KC>::lanes};
    int first = 0;
    for (int x : l) {
      if (x == 0) continue;
      if (first == 0) first = x;
      if (x != first) return false;
    }
    return true;
  }();
  const bool valid = ab == batch && bb == batch && (ta == Op::N ? ar : ac) == m &&
                     (tb == Op::N ? br : bc) == kA && (tb == Op::N ? bc : br) == n && lanes_ok;

  bool threw = false;
  try {
    ibla::gemm(Kokkos::DefaultExecutionSpace(), ta, tb, alpha, A, B, beta, C);
    Kokkos::fence();
  } catch (const ibla::argument_error& e) {
    threw = true;
    if (valid) fail(std::string("valid gemm rejected: ") + e.what());
  }
  const auto gA = read(A), gB = read(B), gC = read(C);
  if (!gA.same_bits(hA) || !gB.same_bits(hB)) fail("gemm modified A or B");
  if (threw) {
    if (!gC.same_bits(hC)) fail("rejected gemm modified C");
    return;
  }
  if (!valid) fail("invalid gemm not rejected");

  // What the call reads (BLAS): A, B unless alpha == 0 or k == 0; C unless beta == 0.
  const bool reads_ab = alpha != T(0) && kA > 0;
  Host<T> ref = hC;
  if (reads_ab) {
    for (index_t b = 0; b < batch; ++b)
      cblas_gemm(cblas_op(ta), cblas_op(tb), int(m), int(n), int(kA), alpha, hA.mat(b),
                 int(ar > 1 ? ar : 1), hB.mat(b), int(br > 1 ? br : 1), beta, ref.mat(b),
                 int(m > 1 ? m : 1));
  } else {
    // C = beta * C (0 when beta == 0), whatever alpha is. Not netlib here: with
    // k == 0 and alpha NaN, its sgemm/dgemm return 0 for op(A) = A but NaN
    // (alpha * an empty sum) for op(A) = A^T, an accident of its loop order.
    for (auto& x : ref.v) x = beta == T(0) ? T(0) : beta * x;
  }
  const bool finite_inputs = std::isfinite(alpha) && std::isfinite(beta) &&
                             (!reads_ab || (hA.all_finite() && hB.all_finite())) &&
                             (beta == T(0) || hC.all_finite());
  const T eps = std::numeric_limits<T>::epsilon();
  for (index_t b = 0; b < batch; ++b)
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < m; ++i) {
        const T got = gC(b, i, j), want = ref(b, i, j);
        if (finite_inputs) {
          // |fl - exact| <= gamma_{k+2} (|alpha| |opA||opB| + |beta C0|), twice
          // for the two summation orders, plus the underflow threshold.
          double mag = 0;
          if (reads_ab)
            for (index_t p = 0; p < kA; ++p) {
              const double a = ta == Op::N ? hA(b, i, p) : hA(b, p, i);
              const double bv = tb == Op::N ? hB(b, p, j) : hB(b, j, p);
              mag += std::abs(a * bv);
            }
          mag = std::abs(double(alpha)) * mag + (beta != T(0) ? std::abs(double(beta) * hC(b, i, j)) : 0.0);
          const double bound = 2.0 * double(kA + 2) * double(eps) * mag +
                               2.0 * double(std::numeric_limits<T>::min());
          if (!(std::abs(double(got) - double(want)) <= bound))
            fail("gemm value C(" + std::to_string(b) + "," + std::to_string(i) + "," +
                 std::to_string(j) + ") = " + std::to_string(got) + ", CBLAS " + std::to_string(want));
        } else {
          const bool pattern_defined = alpha == T(0) || alpha == T(1) || alpha == T(-1) ||
                                       alpha == T(2) || alpha == T(-2) || std::isnan(alpha);
          if (pattern_defined && klass(got) != klass(want))
            fail("gemm NaN/Inf pattern C(" + std::to_string(b) + "," + std::to_string(i) + "," +
                 std::to_string(j) + ") = " + std::to_string(got) + ", CBLAS " + std::to_string(want) +
                 " (m n k " + std::to_string(m) + " " + std::to_string(n) + " " + std::to_string(kA) +
                 ", op " + std::to_string(int(ta)) + std::to_string(int(tb)) + ", alpha " +
                 std::to_string(alpha) + ", beta " + std::to_string(beta) + ", C0 " +
                 std::to_string(hC(b, i, j)) + ")");
        }
      }
}

// ---------------------------------------------------------------------------
// convert: dst is src bit for bit, or the call is rejected with nothing
// touched.
template <class T, Lay KS, Lay KD>
void fuzz_convert(FuzzedDataProvider& in) {
  const index_t batch = in.ConsumeIntegralInRange(0, 40);
  const index_t m = in.ConsumeIntegralInRange(0, 33), n = in.ConsumeIntegralInRange(0, 33);
  index_t db = batch, dm = m, dn = n;
  switch (in.ConsumeIntegralInRange(0, 11)) {
    case 0: db += 1; break;
    case 1: dm += 1; break;
    case 2: dn = dn > 0 ? dn - 1 : 1; break;
    default: break;
  }
  const auto hS = contents<T>(in, batch, m, n);
  const auto hD = contents<T>(in, db, dm, dn);
  auto S = make<T, KS>(batch, m, n);
  auto D = make<T, KD>(db, dm, dn);
  write(S, hS);
  write(D, hD);
  const bool valid = db == batch && dm == m && dn == n;
  bool threw = false;
  try {
    ibla::convert(Kokkos::DefaultExecutionSpace(), S, D);
    Kokkos::fence();
  } catch (const ibla::argument_error& e) {
    threw = true;
    if (valid) fail(std::string("valid convert rejected: ") + e.what());
  }
  if (!read(S).same_bits(hS)) fail("convert modified src");
  const auto gD = read(D);
  if (threw) {
    if (!gD.same_bits(hD)) fail("rejected convert modified dst");
    return;
  }
  if (!valid) fail("invalid convert not rejected");
  if (!gD.same_bits(hS)) fail("convert: dst differs from src");
}

// ---------------------------------------------------------------------------
// Solvers. Their results are checked through backward errors computed from
// ibla's own output and the original inputs (forward errors depend on the
// conditioning the fuzzer chooses, backward errors do not), and through
// LAPACKE's info. Non-finite inputs: no crash, no sanitizer report, and the
// BLAS rules that do not depend on rounding (alpha = 0 in TRSM gives B = 0;
// a failed POSV problem keeps its B).
template <class T>
lapack_int lapacke_potrf(char uplo, int n, T* a, int lda) {
  if constexpr (std::is_same<T, double>::value) {
    return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
  } else {
    return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);
  }
}

template <class V>
std::vector<int> read_ints(const V& x) {
  Kokkos::fence();
  std::vector<int> out(x.extent(0));
  for (size_t b = 0; b < out.size(); ++b) out[b] = x(b);
  return out;
}

/// A symmetric batch: M M^T + shift I (SPD for shift > 0) or the raw
/// contents, with the planted specials of contents() kept.
template <class T>
Host<T> symmetric_contents(FuzzedDataProvider& in, index_t batch, index_t n) {
  Host<T> h = contents<T>(in, batch, n, n);
  const int mode = in.ConsumeIntegralInRange(0, 3);  // 0 raw, 1 M M^T, 2 M M^T + n I, 3 + 1e-3 I
  if (mode == 0) return h;
  Host<T> s(batch, n, n);
  const double shift = mode == 1 ? 0.0 : (mode == 2 ? double(n) : 1e-3);
  for (index_t b = 0; b < batch; ++b)
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i) {
        double v = i == j ? shift : 0.0;
        for (index_t p = 0; p < n; ++p) v += double(h(b, i, p)) * double(h(b, j, p));
        s(b, i, j) = T(v);
      }
  return s;
}

/// Entry (i, j), i >= j, of the lower factor L of a problem factored for
/// uplo (Upper stores L^T).
template <class T>
T factor(const Host<T>& f, index_t b, ibla::Uplo uplo, index_t i, index_t j) {
  return uplo == ibla::Uplo::Lower ? f(b, i, j) : f(b, j, i);
}
template <class T>
T original(const Host<T>& a, index_t b, ibla::Uplo uplo, index_t i, index_t j) {
  return uplo == ibla::Uplo::Lower ? a(b, i, j) : a(b, j, i);
}

/// Checks one POTRF result against LAPACKE's info and the backward error
/// A(i, j) = sum_p L(i, p) L(j, p) of the columns factored.
template <class T>
void check_potrf_problem(const Host<T>& a, const Host<T>& f, index_t b, index_t n, ibla::Uplo uplo,
                         int info, const char* routine) {
  std::vector<T> ref(a.mat(b), a.mat(b) + n * n);
  const int rinfo = int(lapacke_potrf<T>(uplo == ibla::Uplo::Lower ? 'L' : 'U', int(n), ref.data(),
                                         int(n > 1 ? n : 1)));
  // Rows (of the lower factor's view) 0 .. first_bad - 1 hold finite values
  // only; steps before first_bad are computations on finite data.
  index_t first_bad = n;
  bool nan_row = false;
  for (index_t i = 0; i < n && first_bad == n; ++i)
    for (index_t j = 0; j <= i; ++j) {
      const T v = original(a, b, uplo, i, j);
      if (!std::isfinite(v)) first_bad = i;
      if (std::isnan(v)) nan_row = true;
    }
  const bool finite = first_bad == n;
  const double eps = std::numeric_limits<T>::epsilon(), tiny = std::numeric_limits<T>::min();
  const double gamma = 2.0 * double(n + 2) * eps;
  if (info < 0 || info > n) fail(std::string(routine) + ": info out of range " + std::to_string(info));
  // The documented meaning of info, for any input: the stored pivot of a
  // failed step is <= 0 or NaN, the diagonal of the columns factored is > 0.
  if (info > 0 && double(factor(f, b, uplo, info - 1, info - 1)) > 0)
    fail(std::string(routine) + ": info " + std::to_string(info) + " but a positive pivot");
  for (index_t j = 0; j < (info == 0 ? n : info - 1); ++j)
    if (!(double(factor(f, b, uplo, j, j)) > 0))
      fail(std::string(routine) + ": L(" + std::to_string(j) + "," + std::to_string(j) +
           ") not > 0 with info " + std::to_string(info));
  // A NaN in row first_bad makes that pivot NaN in any evaluation order.
  if (nan_row && (info == 0 || info > first_bad + 1 || rinfo == 0 || rinfo > first_bad + 1))
    fail(std::string(routine) + ": info " + std::to_string(info) + ", LAPACKE " +
         std::to_string(rinfo) + " past the NaN in row " + std::to_string(first_bad));
  if (info != rinfo) {
    const index_t k = (info == 0 ? n + 1 : info) < (rinfo == 0 ? n + 1 : rinfo)
                          ? (info == 0 ? n + 1 : info) : (rinfo == 0 ? n + 1 : rinfo);
    // Past the first non-finite row (only +-Inf there, by the rule above)
    // the decision depends on rounding and contraction: with an FMA,
    // Inf - l * l stays Inf where netlib's l * l overflows first and gives
    // Inf - Inf = NaN (found by the fuzzer: float, a(0,0) = FLT_MIN,
    // a(1,0) = 1000, a(1,1) = Inf; LAPACKE info 2, ibla 3). The README
    // promises only "pivot <= 0 or NaN", checked above.
    if (k > first_bad + 1) return;
    // On finite data a disagreement is allowed where ibla's decision is
    // certified by its own factor: the columns it factored have a small
    // backward error (checked below where the whole matrix is finite), and
    // its pivot at k (stored where it stopped, L(k,k)^2 where it went on)
    // is a(k,k) - sum_p L(k,p)^2 of that factor up to rounding, so the
    // leading k x k block of a matrix within rounding of A is (or is not)
    // positive definite, as ibla decided. Near-singular matrices need
    // this: the pivot's forward error grows with the conditioning of the
    // leading block. Found by the fuzzer (float, n = 25, M M^T: pivot 24 is
    // 7.2e-6 against a diagonal of ~8, pivot 25 is -0.015 in double
    // precision on the same float data; ibla stores -0.138 and reports info
    // 25, float LAPACK rounds past it to info 0).
    double s = double(original(a, b, uplo, k - 1, k - 1)), mag = std::abs(s);
    for (index_t p = 0; p < k - 1; ++p) {
      const double l = double(factor(f, b, uplo, k - 1, p));
      s -= l * l;
      mag += l * l;
    }
    const double d     = double(factor(f, b, uplo, k - 1, k - 1));
    const double pivot = info == k ? d : d * d;  // failed: the pivot; passed: its root
    if (std::isfinite(mag) && !(std::abs(pivot - s) <= gamma * mag + 4.0 * double(n) * tiny))
      fail(std::string(routine) + ": info " + std::to_string(info) + ", LAPACKE " +
           std::to_string(rinfo) + ", pivot " + std::to_string(pivot) + " at step " +
           std::to_string(k) + " is not a(k,k) - sum L(k,p)^2 = " + std::to_string(s) +
           " of its own factor");
  }
  if (!finite) return;
  const index_t done = info == 0 ? n : info - 1;
  for (index_t j = 0; j < done; ++j)
    for (index_t i = j; i < n; ++i) {
      double s = 0, mag = 0;
      for (index_t p = 0; p <= j; ++p) {
        const double x = double(factor(f, b, uplo, i, p)) * factor(f, b, uplo, j, p);
        s += x;
        mag += std::abs(x);
      }
      if (!std::isfinite(s)) return;  // overflow of the factor: nothing to compare
      const double err = std::abs(double(original(a, b, uplo, i, j)) - s);
      if (!(err <= gamma * mag + 4.0 * n * tiny))
        fail(std::string(routine) + ": backward error at (" + std::to_string(i) + "," +
             std::to_string(j) + ") " + std::to_string(err) + " > " + std::to_string(gamma * mag));
    }
}

template <class T, Lay KA, Lay KI>
void fuzz_potrf(FuzzedDataProvider& in) {
  const ibla::Uplo uplo = in.ConsumeBool() ? ibla::Uplo::Lower : ibla::Uplo::Upper;
  const index_t batch = in.ConsumeIntegralInRange(0, 40), n = in.ConsumeIntegralInRange(0, 33);
  index_t ab = batch, ar = n, ac = n, ib = batch;
  switch (in.ConsumeIntegralInRange(0, 15)) {
    case 0: ac += 1; break;
    case 1: ib += 1; break;
    case 2: ab = ab > 0 ? ab - 1 : 2; ib = ab; ar = ar > 0 ? ar - 1 : 1; break;
    default: break;
  }
  const auto hA = symmetric_contents<T>(in, ab, ar == ac ? ar : 0);
  Host<T> hA2 = hA;
  if (ar != ac || hA.batch != ab) hA2 = contents<T>(in, ab, ar, ac);
  auto A = make<T, KA>(ab, ar, ac);
  Kokkos::View<int*, typename LayTraits<KI>::layout> info("info", ib);
  write(A, hA2);
  for (index_t b = 0; b < ib; ++b) info(b) = -99;
  const bool lanes_ok = LayTraits<KA>::lanes == 0 || LayTraits<KI>::lanes == 0 ||
                        LayTraits<KA>::lanes == LayTraits<KI>::lanes;
  const bool valid = ar == ac && ib == ab && lanes_ok;
  bool threw = false;
  try {
    ibla::potrf(Kokkos::DefaultExecutionSpace(), uplo, A, info);
    Kokkos::fence();
  } catch (const ibla::argument_error& e) {
    threw = true;
    if (valid) fail(std::string("valid potrf rejected: ") + e.what());
  }
  const auto gA = read(A);
  const auto gi = read_ints(info);
  if (threw) {
    if (!gA.same_bits(hA2)) fail("rejected potrf modified A");
    for (int x : gi)
      if (x != -99) fail("rejected potrf modified info");
    return;
  }
  if (!valid) fail("invalid potrf not rejected");
  for (index_t b = 0; b < batch; ++b) {
    check_potrf_problem(hA2, gA, b, n, uplo, gi[size_t(b)], "potrf");
    // The other strict triangle is never written.
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i)
        if ((uplo == ibla::Uplo::Lower ? i < j : i > j) &&
            std::memcmp(&gA.mat(b)[j * n + i], &hA2.mat(b)[j * n + i], sizeof(T)) != 0)
          fail("potrf wrote the other triangle");
  }
}

template <class T, Lay KA, Lay KB>
void fuzz_posv(FuzzedDataProvider& in) {
  const ibla::Uplo uplo = in.ConsumeBool() ? ibla::Uplo::Lower : ibla::Uplo::Upper;
  const index_t batch = in.ConsumeIntegralInRange(0, 40), n = in.ConsumeIntegralInRange(0, 33),
                nrhs = in.ConsumeIntegralInRange(0, 5);
  index_t bb = batch, br = n;
  switch (in.ConsumeIntegralInRange(0, 15)) {
    case 0: bb += 1; break;
    case 1: br += 1; break;
    default: break;
  }
  const auto hA = symmetric_contents<T>(in, batch, n);
  const auto hB = contents<T>(in, bb, br, nrhs);
  auto A = make<T, KA>(batch, n, n);
  auto B = make<T, KB>(bb, br, nrhs);
  Kokkos::View<int*, typename LayTraits<KA>::layout> info("info", batch);
  write(A, hA);
  write(B, hB);
  for (index_t b = 0; b < batch; ++b) info(b) = -99;
  const bool lanes_ok = LayTraits<KA>::lanes == 0 || LayTraits<KB>::lanes == 0 ||
                        LayTraits<KA>::lanes == LayTraits<KB>::lanes;
  const bool valid = bb == batch && br == n && lanes_ok;
  bool threw = false;
  try {
    ibla::posv(Kokkos::DefaultExecutionSpace(), uplo, A, B, info);
    Kokkos::fence();
  } catch (const ibla::argument_error& e) {
    threw = true;
    if (valid) fail(std::string("valid posv rejected: ") + e.what());
  }
  const auto gA = read(A), gB = read(B);
  const auto gi = read_ints(info);
  if (threw) {
    if (!gA.same_bits(hA) || !gB.same_bits(hB)) fail("rejected posv modified A or B");
    for (int x : gi)
      if (x != -99) fail("rejected posv modified info");
    return;
  }
  if (!valid) fail("invalid posv not rejected");
  const double eps = std::numeric_limits<T>::epsilon(), tiny = std::numeric_limits<T>::min();
  for (index_t b = 0; b < batch; ++b) {
    const int info_b = gi[size_t(b)];
    check_potrf_problem(hA, gA, b, n, uplo, info_b, "posv");
    if (info_b > 0) {
      if (n * nrhs > 0 && std::memcmp(gB.mat(b), hB.mat(b), sizeof(T) * size_t(n * nrhs)) != 0)
        fail("posv wrote B of a problem whose factorization failed");
      continue;
    }
    // Residual of the solve: |b - A x| <= gamma_{3n+1} (|L||L^T|)|x|, and
    // (|L||L^T|)_ij <= sqrt(a_ii a_jj) for an SPD A.
    bool finite = hB.all_finite();
    for (index_t j = 0; j < n && finite; ++j)
      for (index_t i = j; i < n; ++i) finite = finite && std::isfinite(original(hA, b, uplo, i, j));
    if (!finite) continue;
    for (index_t c = 0; c < nrhs; ++c) {
      bool xfinite = true;
      for (index_t i = 0; i < n; ++i) xfinite = xfinite && std::isfinite(gB(b, i, c));
      if (!xfinite) continue;
      for (index_t i = 0; i < n; ++i) {
        double r = hB(b, i, c), mag = 0;
        for (index_t p = 0; p < n; ++p) {
          const double aip = p <= i ? original(hA, b, uplo, i, p) : original(hA, b, uplo, p, i);
          r -= aip * gB(b, p, c);
          mag += std::sqrt(std::abs(double(original(hA, b, uplo, i, i)) * original(hA, b, uplo, p, p))) *
                 std::abs(double(gB(b, p, c)));
        }
        if (!(std::abs(r) <= 2.0 * (3 * n + 2) * eps * mag + 8.0 * n * tiny))
          fail("posv residual " + std::to_string(r) + " in problem " + std::to_string(b));
      }
    }
  }
}

template <class T, Lay KA, Lay KB>
void fuzz_trsm(FuzzedDataProvider& in) {
  const ibla::Side side = in.ConsumeBool() ? ibla::Side::Left : ibla::Side::Right;
  const ibla::Uplo uplo = in.ConsumeBool() ? ibla::Uplo::Lower : ibla::Uplo::Upper;
  const Op op = op_of(in.ConsumeIntegralInRange(0, 2));
  const ibla::Diag diag = in.ConsumeBool() ? ibla::Diag::NonUnit : ibla::Diag::Unit;
  const index_t batch = in.ConsumeIntegralInRange(0, 40);
  const index_t m = in.ConsumeIntegralInRange(0, 33), nrhs = in.ConsumeIntegralInRange(0, 33);
  const index_t k = side == ibla::Side::Left ? m : nrhs;
  index_t ab = batch, ar = k, ac = k;
  switch (in.ConsumeIntegralInRange(0, 15)) {
    case 0: ab += 1; break;
    case 1: ac += 1; break;
    case 2: ar += 1; ac += 1; break;
    default: break;
  }
  const T alpha = scalar<T>(in);
  auto hA = contents<T>(in, ab, ar, ac);
  // Often a well-conditioned triangle (dominant diagonal), else raw.
  if (in.ConsumeBool() && ar == ac)
    for (index_t b = 0; b < ab; ++b)
      for (index_t i = 0; i < ar; ++i) hA(b, i, i) = T(ar + 1) + hA(b, i, i);
  const auto hB = contents<T>(in, batch, m, nrhs);
  auto A = make<T, KA>(ab, ar, ac);
  auto B = make<T, KB>(batch, m, nrhs);
  write(A, hA);
  write(B, hB);
  const bool lanes_ok = LayTraits<KA>::lanes == 0 || LayTraits<KB>::lanes == 0 ||
                        LayTraits<KA>::lanes == LayTraits<KB>::lanes;
  const bool valid = ab == batch && ar == ac && ar == k && lanes_ok;
  bool threw = false;
  try {
    ibla::trsm(Kokkos::DefaultExecutionSpace(), side, uplo, op, diag, alpha, A, B);
    Kokkos::fence();
  } catch (const ibla::argument_error& e) {
    threw = true;
    if (valid) fail(std::string("valid trsm rejected: ") + e.what());
  }
  const auto gA = read(A), gB = read(B);
  if (!gA.same_bits(hA)) fail("trsm modified A");
  if (threw) {
    if (!gB.same_bits(hB)) fail("rejected trsm modified B");
    return;
  }
  if (!valid) fail("invalid trsm not rejected");
  if (alpha == T(0)) {
    for (T x : gB.v)
      if (!(x == T(0))) fail("trsm with alpha = 0 left a non-zero in B");
    return;
  }
  // op(T) as a function of (i, j) with the triangle and diagonal rules.
  auto t = [&](index_t b, index_t i, index_t j) -> double {
    const index_t r = op == Op::N ? i : j, c = op == Op::N ? j : i;  // entry of A
    if (r == c) return diag == ibla::Diag::Unit ? 1.0 : double(hA(b, r, c));
    const bool stored = uplo == ibla::Uplo::Lower ? r > c : r < c;
    return stored ? double(hA(b, r, c)) : 0.0;
  };
  const double eps = std::numeric_limits<T>::epsilon(), tiny = std::numeric_limits<T>::min();
  for (index_t b = 0; b < batch; ++b) {
    bool finite = std::isfinite(alpha);
    for (index_t i = 0; i < k && finite; ++i)
      for (index_t j = 0; j < k; ++j) finite = finite && std::isfinite(t(b, i, j));
    for (index_t j = 0; j < nrhs && finite; ++j)
      for (index_t i = 0; i < m; ++i) finite = finite && std::isfinite(hB(b, i, j));
    if (!finite) continue;
    bool xfinite = true;
    for (index_t j = 0; j < nrhs; ++j)
      for (index_t i = 0; i < m; ++i) xfinite = xfinite && std::isfinite(gB(b, i, j));
    if (!xfinite) {
      // Finite input, non-finite X: wrong where the triangle is non-singular
      // and netlib's X is finite and far from overflow (TRSM multiplies by
      // reciprocals of the diagonal; that must not overflow where dtrsm's
      // division does not).
      bool singular = false;
      for (index_t i = 0; i < k; ++i) singular = singular || t(b, i, i) == 0.0;
      std::vector<T> ref = problem(hB, b);
      cblas_trsm(side == ibla::Side::Left ? CblasLeft : CblasRight,
                 uplo == ibla::Uplo::Lower ? CblasLower : CblasUpper, cblas_op(op),
                 diag == ibla::Diag::Unit ? CblasUnit : CblasNonUnit, int(m), int(nrhs), alpha,
                 hA.mat(b), int(k > 1 ? k : 1), ref.data(), int(m > 1 ? m : 1));
      if (!singular && finite_inside(ref))
        fail("trsm problem " + std::to_string(b) + ": non-finite X where netlib's is finite");
      continue;
    }
    // Componentwise residual: |alpha B - op(T) X| <= gamma_{k+2} |op(T)||X|
    // (Left; Right: X op(T)), plus the rounding of alpha B.
    for (index_t j = 0; j < nrhs; ++j)
      for (index_t i = 0; i < m; ++i) {
        double r = double(alpha) * hB(b, i, j), mag = std::abs(double(alpha) * hB(b, i, j));
        for (index_t p = 0; p < k; ++p) {
          const double x = side == ibla::Side::Left ? t(b, i, p) * gB(b, p, j) : gB(b, i, p) * t(b, p, j);
          r -= x;
          mag += std::abs(x);
        }
        if (!std::isfinite(mag)) continue;
        if (!(std::abs(r) <= 2.0 * double(k + 2) * eps * mag + 4.0 * double(k + 1) * tiny))
          fail("trsm residual " + std::to_string(r) + " > bound at B(" + std::to_string(b) + "," +
               std::to_string(i) + "," + std::to_string(j) + ")");
      }
  }
}

// ---------------------------------------------------------------------------
// The LU family (getrf, getrs, gesv) and potrs.
template <class T>
lapack_int lapacke_getrf(int m, int n, T* a, int* ipiv) {
  if constexpr (std::is_same<T, double>::value) {
    return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, n, a, std::max(1, m), ipiv);
  } else {
    return LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, m, n, a, std::max(1, m), ipiv);
  }
}
template <class T>
lapack_int lapacke_getrs(char trans, int n, int nrhs, const T* a, const int* ipiv, T* b) {
  if constexpr (std::is_same<T, double>::value) {
    return LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, trans, n, nrhs, a, std::max(1, n), ipiv, b,
                               std::max(1, n));
  } else {
    return LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, trans, n, nrhs, a, std::max(1, n), ipiv, b,
                               std::max(1, n));
  }
}
template <class T>
lapack_int lapacke_potrs(char uplo, int n, int nrhs, const T* a, T* b) {
  if constexpr (std::is_same<T, double>::value) {
    return LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, uplo, n, nrhs, a, std::max(1, n), b, std::max(1, n));
  } else {
    return LAPACKE_spotrs_work(LAPACK_COL_MAJOR, uplo, n, nrhs, a, std::max(1, n), b, std::max(1, n));
  }
}

/// Matrices for LU: the raw contents, or (keeping the planted specials) small
/// integers (exact ties between pivot candidates, exact zero pivots, singular
/// problems), a dominant diagonal (no interchanges), or graded columns
/// (column j scaled by 4^-j: small pivots, denormals in float).
template <class T>
Host<T> lu_contents(FuzzedDataProvider& in, index_t batch, index_t m, index_t n) {
  Host<T> h = contents<T>(in, batch, m, n);
  switch (in.ConsumeIntegralInRange(0, 3)) {
    case 1:
      for (auto& x : h.v) x = T(std::round(2.0 * double(x)));
      break;
    case 2:
      for (index_t b = 0; b < batch; ++b)
        for (index_t i = 0; i < std::min(m, n); ++i) h(b, i, i) = h(b, i, i) + T(m + 1);
      break;
    case 3:
      for (index_t b = 0; b < batch; ++b)
        for (index_t j = 0; j < n; ++j)
          for (index_t i = 0; i < m; ++i) h(b, i, j) = T(std::ldexp(double(h(b, i, j)), -2 * int(j)));
      break;
    default: break;
  }
  return h;
}

/// The first step of LAPACK's factorization `lu` (m x n, column-major) at
/// which ibla, computing the same elements with the same sequence of
/// operations but other rounding (FMA contraction), may legitimately choose
/// another pivot or find another zero pivot; min(m, n) when there is none.
/// The estimate of how far the two codes' elements may be apart is the one
/// of unit_tests/support/lu.hpp (lu_difference_bound: running error
/// analysis, 2 n eps per evaluation doubled for FMA, propagated differences
/// added in quadrature); a step is a near tie when the winner does not beat
/// every other candidate by more than four times the sum of the two
/// estimates, or (added here, for info) when the pivot itself is not farther
/// from zero than four times its estimate: an exactly zero pivot in one code
/// may then be a tiny non-zero one in the other.
template <class T>
int lu_first_near_tie(const std::vector<T>& lu, int m, int n) {
  const int k = std::min(m, n);
  const double gamma = 2.0 * double(std::max(1, k)) * double(std::numeric_limits<T>::epsilon());
  std::vector<double> d(size_t(m) * n, 0.0), num(size_t(m) * n, 0.0);
  auto L = [&](int i, int p) { return p == i ? 1.0 : (p > i ? 0.0 : double(lu[size_t(p) * m + i])); };
  auto U = [&](int p, int j) { return p > j ? 0.0 : double(lu[size_t(j) * m + p]); };
  auto D = [&](int i, int j) -> double& { return d[size_t(j) * m + i]; };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      const int top = std::min(std::min(i, j), k - 1);
      double mag = 0, prop2 = 0;
      for (int p = 0; p <= top; ++p)
        if (p < std::min(i, j)) {
          mag += std::abs(L(i, p) * U(p, j));
          const double x = D(i, p) * U(p, j), y = L(i, p) * D(p, j);
          prop2 += x * x + y * y;
        }
      if (i <= j) {
        mag += std::abs(U(i, j));
        D(i, j) = 2 * gamma * mag + std::sqrt(prop2);
        num[size_t(j) * m + i] = D(i, j);
      } else {
        mag += std::abs(L(i, j) * U(j, j));
        const double nm = 2 * gamma * mag + std::sqrt(prop2);
        num[size_t(j) * m + i] = nm;
        const double ujj = std::abs(U(j, j)), y = L(i, j) * D(j, j);
        D(i, j) = ujj != 0 ? std::sqrt(nm * nm + y * y) / ujj : nm;
      }
    }
  for (int s = 0; s < k; ++s) {
    const double win = std::abs(U(s, s)), dwin = num[size_t(s) * m + s];
    if (dwin > 0 && !(win > 4 * dwin)) return s;
    for (int i = s + 1; i < m; ++i) {
      const double other = std::abs(L(i, s) * U(s, s)), dother = num[size_t(s) * m + i];
      if (dwin + dother == 0) continue;  // both exact: both codes see the same values
      if (!(win - other > 4 * (dwin + dother))) return s;
    }
  }
  return k;
}

/// LAPACK's factorization of one problem, with what ibla's must match.
template <class T>
struct LuRef {
  bool finite = false;  // the input was finite (LAPACK ran)
  int upto = 0;         // ipiv equal to LAPACK's before this step
  int info = 0;
  std::vector<T> lu;
  std::vector<int> ipiv;
};

/// Checks ibla's factorization of problem b (input a, factors f, pivots piv
/// as a (batch, k, 1) host batch, info) of an m x n problem:
///  - always (any input): 1 <= s + 1 <= ipiv(s) <= m, 0 <= info <= k, and
///    info is what the README documents: the 1-based index of the first
///    exactly zero U(k, k) of the returned factors (0 if none);
///  - finite input: info equal to LAPACKE's and ipiv equal to LAPACKE's
///    before the first near tie (lu_first_near_tie; info may differ only at
///    or after it), and the backward error of ibla's own factors and pivots
///    |P A - L U| <= 2 k eps |L||U| (Higham Thm 9.3, doubled for FMA and the
///    update order, as in support/lu.hpp) plus the underflow threshold.
template <class T>
LuRef<T> check_getrf_problem(const Host<T>& a, const Host<T>& f, const Host<int>& piv, index_t b,
                             int info, const std::string& routine) {
  const int m = int(a.rows), n = int(a.cols), k = std::min(m, n);
  const std::string where = routine + " problem " + std::to_string(b) + " (" + std::to_string(m) +
                            "x" + std::to_string(n) + "): ";
  if (info < 0 || info > k) fail(where + "info out of range " + std::to_string(info));
  for (int s = 0; s < k; ++s) {
    const int p = piv(b, s, 0);
    if (p < s + 1 || p > m) fail(where + "ipiv(" + std::to_string(s) + ") = " + std::to_string(p));
  }
  int first_zero = 0;
  for (int s = 0; s < k && first_zero == 0; ++s)
    if (f(b, s, s) == T(0)) first_zero = s + 1;
  if (info != first_zero)
    fail(where + "info " + std::to_string(info) + " but the first zero pivot is U(" +
         std::to_string(first_zero) + ")");
  LuRef<T> ref;
  ref.finite = finite_problem(a, b);
  if (!ref.finite || k == 0) {
    ref.upto = k;
    return ref;
  }
  ref.lu = problem(a, b);
  ref.ipiv.assign(size_t(k), 0);
  ref.info = int(lapacke_getrf<T>(m, n, ref.lu.data(), ref.ipiv.data()));
  ref.upto = lu_first_near_tie(ref.lu, m, n);
  for (int s = 0; s < ref.upto; ++s)
    if (piv(b, s, 0) != ref.ipiv[size_t(s)])
      fail(where + "ipiv(" + std::to_string(s) + ") = " + std::to_string(piv(b, s, 0)) +
           ", LAPACKE " + std::to_string(ref.ipiv[size_t(s)]) + " (first near tie at step " +
           std::to_string(ref.upto) + ")");
  if (info != ref.info) {
    const int first = std::min(info == 0 ? k + 1 : info, ref.info == 0 ? k + 1 : ref.info) - 1;
    if (!(ref.upto <= first))
      fail(where + "info " + std::to_string(info) + ", LAPACKE " + std::to_string(ref.info) +
           " (first near tie at step " + std::to_string(ref.upto) + ")");
  }
  // Backward error, in long double (the check's own rounding stays far below
  // the bound, also for T = double).
  std::vector<long double> pa(size_t(m) * n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) pa[size_t(j) * m + i] = a(b, i, j);
  for (int s = 0; s < k; ++s)
    for (int j = 0; j < n; ++j) std::swap(pa[size_t(j) * m + s], pa[size_t(j) * m + piv(b, s, 0) - 1]);
  const long double gamma = 2.0L * k * std::numeric_limits<T>::epsilon();
  const long double tiny = std::numeric_limits<T>::min();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      long double s = 0, mag = 0;
      for (int p = 0; p <= std::min(std::min(i, j), k - 1); ++p) {
        const long double l = p == i ? 1.0L : (long double)f(b, i, p);
        s += l * f(b, p, j);
        mag += std::abs(l * f(b, p, j));
      }
      const long double err = std::abs(pa[size_t(j) * m + i] - s);
      if (!(err <= gamma * mag + (k + 1) * tiny))
        fail(where + "|PA - LU|(" + std::to_string(i) + "," + std::to_string(j) + ") = " +
             std::to_string(double(err)) + " > " + std::to_string(double(gamma * mag)));
    }
  return ref;
}

/// One solve checked through its backward error: for a right-hand side c and
/// the computed solution z of F S z = c (F, S the two triangular factors as
/// used, n x n column-major), the residual c - M z, with M = F S or the
/// matrix the factors came from (GEPP), satisfies
///   |c - M z| <= 2 (3n + 2) eps |F| |S| |z| + 4 (n + 1) tiny (1 + |F| 1)
/// times (1 + |z|_1) (Higham Thm 9.4: gamma_3n for the factorization and
/// the two solves; the factor 2 for FMA and TRSM's multiplication by
/// reciprocals; the last term for underflow in the two solves and, through
/// |z|, in the factorization). Computed in long double.
void check_residual(int n, const std::vector<long double>& M, const std::vector<long double>& F,
                    const std::vector<long double>& S, const std::vector<long double>& c,
                    const std::vector<long double>& z, long double eps, long double tiny,
                    const std::string& where) {
  std::vector<long double> sz(size_t(n), 0.0L);
  long double zsum = 0;
  for (int p = 0; p < n; ++p) {
    zsum += std::abs(z[size_t(p)]);
    for (int q = 0; q < n; ++q) sz[size_t(p)] += std::abs(S[size_t(q) * n + p] * z[size_t(q)]);
  }
  for (int i = 0; i < n; ++i) {
    long double r = c[size_t(i)], fz = 0, fsum = 0;
    for (int p = 0; p < n; ++p) {
      r -= M[size_t(p) * n + i] * z[size_t(p)];
      fz += std::abs(F[size_t(p) * n + i]) * sz[size_t(p)];
      fsum += std::abs(F[size_t(p) * n + i]);
    }
    const long double bound =
        2.0L * (3 * n + 2) * eps * fz + 4.0L * (n + 1) * tiny * (1 + fsum) * (1 + zsum);
    if (!(std::abs(r) <= bound))
      fail(where + "residual " + std::to_string(double(r)) + " > " + std::to_string(double(bound)) +
           " in row " + std::to_string(i));
  }
}

std::vector<long double> product(int n, const std::vector<long double>& F,
                                 const std::vector<long double>& S) {
  std::vector<long double> M(size_t(n) * n, 0.0L);
  for (int j = 0; j < n; ++j)
    for (int p = 0; p < n; ++p)
      for (int i = 0; i < n; ++i) M[size_t(j) * n + i] += F[size_t(p) * n + i] * S[size_t(j) * n + p];
  return M;
}

/// The solution x (n x nrhs) of problem b against the factors L U of `lu`
/// with pivots piv (op(A) X = B, op = N or T) and, when M is given (gesv),
/// against that matrix (P A) instead of L U. Finite inputs only; a
/// non-finite x fails only where the reference x is finite_inside and U has
/// no zero on its diagonal (a non-singular system LAPACK solves without
/// overflow).
template <class T>
void check_lu_solution(const std::vector<T>& lu, const std::vector<int>& piv, Op op,
                       const std::vector<T>& b0, const std::vector<T>& x, int n, int nrhs,
                       const std::vector<long double>* pa, const std::vector<T>* ref_x,
                       const std::string& where) {
  std::vector<long double> L(size_t(n) * n, 0.0L), U(size_t(n) * n, 0.0L);
  bool singular = false;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const long double v = lu[size_t(j) * n + i];
      if (i > j) L[size_t(j) * n + i] = v;
      if (i == j) L[size_t(j) * n + i] = 1;
      if (i <= j) U[size_t(j) * n + i] = v;
      if (i == j && v == 0) singular = true;
    }
  for (T v : x)
    if (!std::isfinite(v)) {
      if (!singular && ref_x != nullptr && finite_inside(*ref_x))
        fail(where + "non-finite solution where LAPACKE's is finite");
      return;
    }
  std::vector<long double> F = L, S = U;
  if (op != Op::N) {  // A^T = U^T L^T P
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        F[size_t(j) * n + i] = U[size_t(i) * n + j];
        S[size_t(j) * n + i] = L[size_t(i) * n + j];
      }
  }
  const std::vector<long double> M = pa != nullptr ? *pa : product(n, F, S);
  const long double eps = std::numeric_limits<T>::epsilon(), tiny = std::numeric_limits<T>::min();
  for (int c = 0; c < nrhs; ++c) {
    std::vector<long double> rhs(static_cast<size_t>(n)), z(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      rhs[size_t(i)] = b0[size_t(c) * n + i];
      z[size_t(i)] = x[size_t(c) * n + i];
    }
    // N: P A x = L U x = P b. T: A^T x = U^T L^T (P x) = b.
    auto& permuted = op == Op::N ? rhs : z;
    for (int s = 0; s < n; ++s) std::swap(permuted[size_t(s)], permuted[size_t(piv[size_t(s)] - 1)]);
    check_residual(n, M, F, S, rhs, z, eps, tiny, where + "rhs " + std::to_string(c) + ": ");
  }
}

template <class T, Lay KA, Lay KP, Lay KI>
void fuzz_getrf(FuzzedDataProvider& in) {
  const index_t batch = in.ConsumeIntegralInRange(0, 40);
  const index_t m = in.ConsumeIntegralInRange(0, 33), n = in.ConsumeIntegralInRange(0, 33);
  const index_t k = std::min(m, n);
  index_t ab = batch, pb = batch, pk = k, ib = batch;
  switch (in.ConsumeIntegralInRange(0, 15)) {
    case 0: ab += 1; break;
    case 1: pb = pb > 0 ? pb - 1 : 1; break;
    case 2: pk += 1; break;
    case 3: pk = pk > 0 ? pk - 1 : 1; break;
    case 4: ib += 1; break;
    default: break;
  }
  const auto hA = lu_contents<T>(in, ab, m, n);
  auto A = make<T, KA>(ab, m, n);
  auto ipiv = make2<int, KP>(pb, pk);
  Kokkos::View<int*, typename LayTraits<KI>::layout> info("info", ib);
  write(A, hA);
  Host<int> hP(pb, pk, 1);
  for (auto& x : hP.v) x = -77;
  write(ipiv, hP);
  for (index_t b = 0; b < ib; ++b) info(b) = -99;
  const bool valid = pb == ab && pk == k && ib == ab &&
                     lanes_agree({LayTraits<KA>::lanes, LayTraits<KP>::lanes, LayTraits<KI>::lanes});
  bool threw = false;
  try {
    ibla::getrf(Kokkos::DefaultExecutionSpace(), A, ipiv, info);
    Kokkos::fence();
  } catch (const ibla::argument_error& e) {
    threw = true;
    if (valid) fail(std::string("valid getrf rejected: ") + e.what());
  }
  const auto gA = read(A);
  const auto gP = read(ipiv);
  const auto gi = read_ints(info);
  if (threw) {
    if (!gA.same_bits(hA) || !gP.same_bits(hP)) fail("rejected getrf modified A or ipiv");
    for (int x : gi)
      if (x != -99) fail("rejected getrf modified info");
    return;
  }
  if (!valid) fail("invalid getrf not rejected");
  for (index_t b = 0; b < batch; ++b) check_getrf_problem(hA, gA, gP, b, gi[size_t(b)], "getrf");
}

template <class T, Lay KA, Lay KP, Lay KB, bool Vec>
void fuzz_getrs(FuzzedDataProvider& in) {
  const Op op = op_of(in.ConsumeIntegralInRange(0, 2));
  const index_t batch = in.ConsumeIntegralInRange(0, 40), n = in.ConsumeIntegralInRange(0, 33);
  const index_t nrhs = Vec ? 1 : in.ConsumeIntegralInRange(0, 5);
  index_t ab = batch, ac = n, pb = batch, pk = n, bb = batch, br = n;
  switch (in.ConsumeIntegralInRange(0, 15)) {
    case 0: ac += 1; break;
    case 1: pb += 1; break;
    case 2: pk = pk > 0 ? pk - 1 : 1; break;
    case 3: bb = bb > 0 ? bb - 1 : 1; break;
    case 4: br += 1; break;
    default: break;
  }
  // Factors: arbitrary contents (L strictly below the diagonal, U on and
  // above), often with a dominant U diagonal; pivots as getrf returns them
  // (s + 1 <= ipiv(s) <= n): random, none, or always the last row.
  auto hA = contents<T>(in, ab, n, ac);
  if (in.ConsumeBool())
    for (index_t b = 0; b < ab; ++b)
      for (index_t i = 0; i < std::min(n, ac); ++i) hA(b, i, i) = hA(b, i, i) + T(n + 1);
  Host<int> hP(pb, pk, 1);
  {
    std::mt19937 gen(in.ConsumeIntegral<std::uint32_t>());
    const int mode = in.ConsumeIntegralInRange(0, 2);
    for (index_t b = 0; b < pb; ++b)
      for (index_t s = 0; s < pk; ++s)
        hP(b, s, 0) = mode == 1 ? int(s + 1)
                      : mode == 2 ? int(std::max(n, s + 1))
                                  : int(s + 1 + index_t(gen() % std::uint32_t(std::max<index_t>(1, n - s))));
  }
  const auto hB = contents<T>(in, bb, br, nrhs);
  auto A = make<T, KA>(ab, n, ac);
  auto ipiv = make2<int, KP>(pb, pk);
  auto B = make_rhs<T, KB, Vec>(bb, br, nrhs);
  write(A, hA);
  write(ipiv, hP);
  write(B, hB);
  const bool valid = ac == n && pb == ab && pk == n && bb == ab && br == n &&
                     lanes_agree({LayTraits<KA>::lanes, LayTraits<KP>::lanes, LayTraits<KB>::lanes});
  bool threw = false;
  try {
    ibla::getrs(Kokkos::DefaultExecutionSpace(), op, A, ipiv, B);
    Kokkos::fence();
  } catch (const ibla::argument_error& e) {
    threw = true;
    if (valid) fail(std::string("valid getrs rejected: ") + e.what());
  }
  const auto gA = read(A), gB = read(B);
  const auto gP = read(ipiv);
  if (!gA.same_bits(hA) || !gP.same_bits(hP)) fail("getrs modified A or ipiv");
  if (threw) {
    if (!gB.same_bits(hB)) fail("rejected getrs modified B");
    return;
  }
  if (!valid) fail("invalid getrs not rejected");
  for (index_t b = 0; b < batch; ++b) {
    if (n == 0 || nrhs == 0 || !finite_problem(hA, b) || !finite_problem(hB, b)) continue;
    const std::vector<int> piv(hP.mat(b), hP.mat(b) + n);
    std::vector<T> ref = problem(hB, b);
    lapacke_getrs<T>(op == Op::N ? 'N' : 'T', int(n), int(nrhs), hA.mat(b), piv.data(), ref.data());
    check_lu_solution(problem(hA, b), piv, op, problem(hB, b), problem(gB, b), int(n), int(nrhs),
                      nullptr, &ref, "getrs problem " + std::to_string(b) + ": ");
  }
}

template <class T, Lay KA, Lay KP, Lay KB, Lay KI, bool Vec>
void fuzz_gesv(FuzzedDataProvider& in) {
  const index_t batch = in.ConsumeIntegralInRange(0, 40), n = in.ConsumeIntegralInRange(0, 33);
  const index_t nrhs = Vec ? 1 : in.ConsumeIntegralInRange(0, 5);
  index_t ab = batch, ac = n, pb = batch, pk = n, bb = batch, br = n, ib = batch;
  switch (in.ConsumeIntegralInRange(0, 15)) {
    case 0: ac += 1; break;
    case 1: pb += 1; break;
    case 2: pk += 1; break;
    case 3: bb += 1; break;
    case 4: br = br > 0 ? br - 1 : 1; break;
    case 5: ib = ib > 0 ? ib - 1 : 1; break;
    default: break;
  }
  const auto hA = lu_contents<T>(in, ab, n, ac);
  const auto hB = contents<T>(in, bb, br, nrhs);
  auto A = make<T, KA>(ab, n, ac);
  auto ipiv = make2<int, KP>(pb, pk);
  auto B = make_rhs<T, KB, Vec>(bb, br, nrhs);
  Kokkos::View<int*, typename LayTraits<KI>::layout> info("info", ib);
  write(A, hA);
  Host<int> hP(pb, pk, 1);
  for (auto& x : hP.v) x = -77;
  write(ipiv, hP);
  write(B, hB);
  for (index_t b = 0; b < ib; ++b) info(b) = -99;
  const bool valid = ac == n && pb == ab && pk == n && bb == ab && br == n && ib == ab &&
                     lanes_agree({LayTraits<KA>::lanes, LayTraits<KP>::lanes, LayTraits<KB>::lanes,
                                  LayTraits<KI>::lanes});
  bool threw = false;
  try {
    ibla::gesv(Kokkos::DefaultExecutionSpace(), A, ipiv, B, info);
    Kokkos::fence();
  } catch (const ibla::argument_error& e) {
    threw = true;
    if (valid) fail(std::string("valid gesv rejected: ") + e.what());
  }
  const auto gA = read(A), gB = read(B);
  const auto gP = read(ipiv);
  const auto gi = read_ints(info);
  if (threw) {
    if (!gA.same_bits(hA) || !gP.same_bits(hP) || !gB.same_bits(hB))
      fail("rejected gesv modified A, ipiv or B");
    for (int x : gi)
      if (x != -99) fail("rejected gesv modified info");
    return;
  }
  if (!valid) fail("invalid gesv not rejected");
  for (index_t b = 0; b < batch; ++b) {
    const std::string where = "gesv problem " + std::to_string(b) + ": ";
    const int info_b = gi[size_t(b)];
    const auto ref = check_getrf_problem(hA, gA, gP, b, info_b, "gesv");
    if (info_b > 0) {
      if (n * nrhs > 0 && std::memcmp(gB.mat(b), hB.mat(b), sizeof(T) * size_t(n * nrhs)) != 0)
        fail(where + "B written although info > 0");
      continue;
    }
    if (n == 0 || nrhs == 0 || !ref.finite || !finite_problem(hB, b)) continue;
    // Residual against the original A (rows interchanged by ibla's pivots).
    std::vector<long double> pa(size_t(n) * n);
    for (index_t j = 0; j < n; ++j)
      for (index_t i = 0; i < n; ++i) pa[size_t(j * n + i)] = hA(b, i, j);
    const std::vector<int> piv(gP.mat(b), gP.mat(b) + n);
    for (index_t s = 0; s < n; ++s)
      for (index_t j = 0; j < n; ++j) std::swap(pa[size_t(j * n + s)], pa[size_t(j * n + piv[size_t(s)] - 1)]);
    // LAPACK's solution, for the finiteness rule, where it factored alike.
    std::vector<T> ref_x = problem(hB, b);
    const bool compare = ref.upto == int(n) && ref.info == 0;
    if (compare) lapacke_getrs<T>('N', int(n), int(nrhs), ref.lu.data(), ref.ipiv.data(), ref_x.data());
    check_lu_solution(problem(gA, b), piv, Op::N, problem(hB, b), problem(gB, b), int(n), int(nrhs),
                      &pa, compare ? &ref_x : nullptr, where);
  }
}

template <class T, Lay KA, Lay KB, bool Vec>
void fuzz_potrs(FuzzedDataProvider& in) {
  const ibla::Uplo uplo = in.ConsumeBool() ? ibla::Uplo::Lower : ibla::Uplo::Upper;
  const index_t batch = in.ConsumeIntegralInRange(0, 40), n = in.ConsumeIntegralInRange(0, 33);
  const index_t nrhs = Vec ? 1 : in.ConsumeIntegralInRange(0, 5);
  index_t ab = batch, ac = n, bb = batch, br = n;
  switch (in.ConsumeIntegralInRange(0, 15)) {
    case 0: ac += 1; break;
    case 1: bb += 1; break;
    case 2: br = br > 0 ? br - 1 : 1; break;
    default: break;
  }
  // A factor: arbitrary contents, often with a positive dominant diagonal.
  auto hA = contents<T>(in, ab, n, ac);
  if (in.ConsumeBool())
    for (index_t b = 0; b < ab; ++b)
      for (index_t i = 0; i < std::min(n, ac); ++i) hA(b, i, i) = std::abs(hA(b, i, i)) + T(n + 1);
  const auto hB = contents<T>(in, bb, br, nrhs);
  auto A = make<T, KA>(ab, n, ac);
  auto B = make_rhs<T, KB, Vec>(bb, br, nrhs);
  write(A, hA);
  write(B, hB);
  const bool valid = ac == n && bb == ab && br == n &&
                     lanes_agree({LayTraits<KA>::lanes, LayTraits<KB>::lanes});
  bool threw = false;
  try {
    ibla::potrs(Kokkos::DefaultExecutionSpace(), uplo, A, B);
    Kokkos::fence();
  } catch (const ibla::argument_error& e) {
    threw = true;
    if (valid) fail(std::string("valid potrs rejected: ") + e.what());
  }
  const auto gA = read(A), gB = read(B);
  if (!gA.same_bits(hA)) fail("potrs modified A");
  if (threw) {
    if (!gB.same_bits(hB)) fail("rejected potrs modified B");
    return;
  }
  if (!valid) fail("invalid potrs not rejected");
  const long double eps = std::numeric_limits<T>::epsilon(), tiny = std::numeric_limits<T>::min();
  for (index_t b = 0; b < batch; ++b) {
    if (n == 0 || nrhs == 0 || !finite_problem(hB, b)) continue;
    // F = L (Lower) or U^T (Upper), read from the uplo triangle only.
    std::vector<long double> F(size_t(n * n), 0.0L), S(size_t(n * n), 0.0L);
    bool finite = true, singular = false;
    for (index_t j = 0; j < n; ++j)
      for (index_t i = j; i < n; ++i) {
        const T v = uplo == ibla::Uplo::Lower ? hA(b, i, j) : hA(b, j, i);
        finite = finite && std::isfinite(v);
        singular = singular || (i == j && v == T(0));
        F[size_t(j * n + i)] = v;
        S[size_t(i * n + j)] = v;
      }
    if (!finite) continue;
    const auto x = problem(gB, b);
    bool xfinite = true;
    for (T v : x) xfinite = xfinite && std::isfinite(v);
    if (!xfinite) {
      std::vector<T> ref = problem(hB, b);
      lapacke_potrs<T>(uplo == ibla::Uplo::Lower ? 'L' : 'U', int(n), int(nrhs), hA.mat(b), ref.data());
      if (!singular && finite_inside(ref))
        fail("potrs problem " + std::to_string(b) + ": non-finite solution where LAPACKE's is finite");
      continue;
    }
    const auto M = product(int(n), F, S);
    for (index_t c = 0; c < nrhs; ++c) {
      std::vector<long double> rhs(static_cast<size_t>(n)), z(static_cast<size_t>(n));
      for (index_t i = 0; i < n; ++i) {
        rhs[size_t(i)] = hB(b, i, c);
        z[size_t(i)] = x[size_t(c * n + i)];
      }
      check_residual(int(n), M, F, S, rhs, z, eps, tiny,
                     "potrs problem " + std::to_string(b) + " rhs " + std::to_string(c) + ": ");
    }
  }
}

// Operations 0..31 (gemm, convert, trsm, potrf, posv).
template <class T>
void fuzz_first_operations(FuzzedDataProvider& in, const int what) {
  switch (what) {
    // gemm: same layout for all three, then mixes (one with mismatched L).
    case 0: return fuzz_gemm<T, Lay::Block8, Lay::Block8, Lay::Block8>(in);
    case 1: return fuzz_gemm<T, Lay::Block4, Lay::Block4, Lay::Block4>(in);
    case 2: return fuzz_gemm<T, Lay::Interleaved, Lay::Interleaved, Lay::Interleaved>(in);
    case 3: return fuzz_gemm<T, Lay::Left, Lay::Left, Lay::Left>(in);
    case 4: return fuzz_gemm<T, Lay::Right, Lay::Right, Lay::Right>(in);
    case 5: return fuzz_gemm<T, Lay::Stride, Lay::Stride, Lay::Stride>(in);
    case 6: return fuzz_gemm<T, Lay::Block8, Lay::Left, Lay::Right>(in);
    case 7: return fuzz_gemm<T, Lay::Right, Lay::Stride, Lay::Block4>(in);
    case 8: return fuzz_gemm<T, Lay::Block4, Lay::Block8, Lay::Block4>(in);
    // convert
    case 9: return fuzz_convert<T, Lay::Right, Lay::Block8>(in);
    case 10: return fuzz_convert<T, Lay::Block8, Lay::Block4>(in);
    case 11: return fuzz_convert<T, Lay::Block4, Lay::Stride>(in);
    case 12: return fuzz_convert<T, Lay::Interleaved, Lay::Left>(in);
    case 13: return fuzz_convert<T, Lay::Stride, Lay::Interleaved>(in);
    case 14: return fuzz_convert<T, Lay::Left, Lay::Right>(in);
    // trsm
    case 15: return fuzz_trsm<T, Lay::Block8, Lay::Block8>(in);
    case 16: return fuzz_trsm<T, Lay::Interleaved, Lay::Interleaved>(in);
    case 17: return fuzz_trsm<T, Lay::Right, Lay::Left>(in);
    case 18: return fuzz_trsm<T, Lay::Stride, Lay::Block4>(in);
    case 19: return fuzz_trsm<T, Lay::Block4, Lay::Block8>(in);
    // potrf
    case 20: return fuzz_potrf<T, Lay::Block8, Lay::Block8>(in);
    case 21: return fuzz_potrf<T, Lay::Interleaved, Lay::Interleaved>(in);
    case 22: return fuzz_potrf<T, Lay::Right, Lay::Left>(in);
    case 23: return fuzz_potrf<T, Lay::Stride, Lay::Right>(in);
    case 24: return fuzz_potrf<T, Lay::Block4, Lay::Block8>(in);
    // posv
    case 25: return fuzz_posv<T, Lay::Block8, Lay::Block8>(in);
    case 26: return fuzz_posv<T, Lay::Left, Lay::Left>(in);
    case 27: return fuzz_posv<T, Lay::Right, Lay::Stride>(in);
    case 28: return fuzz_posv<T, Lay::Block4, Lay::Interleaved>(in);
    default: return fuzz_posv<T, Lay::Block8, Lay::Block4>(in);
  }
}

// Operations 32..34: getrf.
template <class T>
void fuzz_getrf_only(FuzzedDataProvider& in, const int what) {
  switch (what) {
    // getrf (A, ipiv, info)
    case 32: return fuzz_getrf<T, Lay::Block8, Lay::Block8, Lay::Block8>(in);
    case 33: return fuzz_getrf<T, Lay::Interleaved, Lay::Left, Lay::Right>(in);
    default: return fuzz_getrf<T, Lay::Stride, Lay::Stride, Lay::Block4>(in);
  }
}

// Operations 35..37: getrs.
template <class T>
void fuzz_getrs_only(FuzzedDataProvider& in, const int what) {
  switch (what) {
    // getrs (A, ipiv, B, rank-2 B)
    case 35: return fuzz_getrs<T, Lay::Block8, Lay::Block8, Lay::Block8, false>(in);
    case 36: return fuzz_getrs<T, Lay::Left, Lay::Right, Lay::Stride, false>(in);
    default: return fuzz_getrs<T, Lay::Right, Lay::Block4, Lay::Interleaved, true>(in);
  }
}

// Operations 38..40: gesv.
template <class T>
void fuzz_gesv_only(FuzzedDataProvider& in, const int what) {
  switch (what) {
    // gesv (A, ipiv, B, info, rank-2 B)
    case 38: return fuzz_gesv<T, Lay::Block8, Lay::Block8, Lay::Block8, Lay::Block8, false>(in);
    case 39: return fuzz_gesv<T, Lay::Left, Lay::Left, Lay::Block4, Lay::Left, true>(in);
    default: return fuzz_gesv<T, Lay::Stride, Lay::Right, Lay::Left, Lay::Interleaved, false>(in);
  }
}

// Operations 41..43: potrs.
template <class T>
void fuzz_potrs_only(FuzzedDataProvider& in, const int what) {
  switch (what) {
    // potrs (A, B, rank-2 B)
    case 41: return fuzz_potrs<T, Lay::Block8, Lay::Block8, false>(in);
    case 42: return fuzz_potrs<T, Lay::Right, Lay::Left, true>(in);
    default: return fuzz_potrs<T, Lay::Stride, Lay::Block4, false>(in);
  }
}

}  // namespace

// The harness is compiled as eleven objects of this one file
// (scripts/test_stages/40-fuzz.sh): one per value type and group of
// operations (IBLA_FUZZ_VALUE_TYPE and IBLA_FUZZ_PART defined: 0..31, getrf,
// getrs, gesv, potrs), and the entry points. Objects that held more (one per
// value type: 23.3 GB at -O0 with ASan, clang 14, double; gesv and potrs in
// one: 11.3 GB and 154 s) were too large for two to compile side by side on
// the 24 GB CI machine, and one core waited while they compiled.
namespace ibla_fuzz {
template <class T, int Part>
void run_part(FuzzedDataProvider& in, const int what) {
  if constexpr (Part == 0) {
    fuzz_first_operations<T>(in, what);
  } else if constexpr (Part == 1) {
    fuzz_getrf_only<T>(in, what);
  } else if constexpr (Part == 2) {
    fuzz_getrs_only<T>(in, what);
  } else if constexpr (Part == 3) {
    fuzz_gesv_only<T>(in, what);
  } else {
    fuzz_potrs_only<T>(in, what);
  }
}
#if defined(IBLA_FUZZ_VALUE_TYPE)
template void run_part<IBLA_FUZZ_VALUE_TYPE, IBLA_FUZZ_PART>(FuzzedDataProvider&, int);
#else
#define IBLA_FUZZ_EXTERN_PARTS(T)                                      \
  extern template void run_part<T, 0>(FuzzedDataProvider&, int);       \
  extern template void run_part<T, 1>(FuzzedDataProvider&, int);       \
  extern template void run_part<T, 2>(FuzzedDataProvider&, int);       \
  extern template void run_part<T, 3>(FuzzedDataProvider&, int);       \
  extern template void run_part<T, 4>(FuzzedDataProvider&, int);
IBLA_FUZZ_EXTERN_PARTS(double)
IBLA_FUZZ_EXTERN_PARTS(float)

template <class T>
void run(FuzzedDataProvider& in) {
  // One byte picks the operation: 0..31 as in the first corpus, 32..43 the
  // LU family and potrs (one block-interleaved variant each, two that mix
  // the other layouts and L = 4, one with rank-2 B), 44..63 those again.
  int what = in.ConsumeIntegralInRange(0, 63);
  if (what >= 44) what = 32 + (what - 44) % 12;
  if (what < 32) {
    run_part<T, 0>(in, what);
  } else if (what < 35) {
    run_part<T, 1>(in, what);
  } else if (what < 38) {
    run_part<T, 2>(in, what);
  } else if (what < 41) {
    run_part<T, 3>(in, what);
  } else {
    run_part<T, 4>(in, what);
  }
}
#endif
}  // namespace ibla_fuzz

#if !defined(IBLA_FUZZ_VALUE_TYPE)
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Kokkos::initialize();
  std::atexit([] { Kokkos::finalize(); });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  if (in.ConsumeBool()) {
    ibla_fuzz::run<double>(in);
  } else {
    ibla_fuzz::run<float>(in);
  }
  return 0;
}
#endif
