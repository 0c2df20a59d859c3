// A small application on ibla: a batch of small symmetric positive definite
// (SPD) systems A(b) x(b) = f(b) with A(b) = M(b) M(b)^T + n I, the
// normal-equation systems that many independent least-squares fits or
// per-cell implicit updates produce. ibla::gemm builds the matrices and
// ibla::posv (Cholesky factorization and solve in one pass) solves them.
//
// It shows the usual flow: the application keeps its data in its own storage
// (here LayoutRight: one row-major matrix or vector after another), converts
// it once into ibla's block-interleaved layout, computes there, and converts
// the results back. It checks every entry of A against a plain host loop and
// every solution by its residual, and exits non-zero on any error, so it
// doubles as the install test of the package.
//
// usage: spd_solves [batch] [n ...]   (default: 1001 matrices of sizes 1 5 8 17 32)
#include <ibla/ibla.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

namespace {

using T         = double;
using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace  = ExecSpace::memory_space;
// One block of matrices per team: a SIMD vector of lanes on host, a warp on GPUs.
constexpr int L = ibla::default_block_lanes<T, ExecSpace>;
using AppView         = Kokkos::View<T***, Kokkos::LayoutRight, MemSpace>;
using AppVectors      = Kokkos::View<T**, Kokkos::LayoutRight, MemSpace>;
using InterleavedView = Kokkos::View<T***, ibla::LayoutBlockInterleaved<L>, MemSpace>;
// Right-hand sides and info use the same block layout as A (posv requires
// block-interleaved operands of one call to share L).
using InterleavedVectors = Kokkos::View<T**, ibla::LayoutBlockInterleaved<L>, MemSpace>;
using InterleavedInfo    = Kokkos::View<int*, ibla::LayoutBlockInterleaved<L>, MemSpace>;

struct Result {
  long errors = 0;         // wrong entries of A
  double worst = 0;        // largest |error| / tolerance seen for A
  long solve_errors = 0;   // systems with info != 0 or a residual over tolerance
  double worst_solve = 0;  // largest residual / tolerance seen
};

/// Builds A(b) = M(b) M(b)^T + n I with ibla and checks it entry by entry,
/// then solves A(b) x(b) = f(b) with ibla::posv and checks the residuals.
Result spd_batch(ibla::index_t batch, int n, unsigned seed) {
  const ExecSpace exec;

  // The application's data: M(b) uniform in [-1, 1], row-major matrices.
  AppView M_app("M_app", batch, n, n);
  auto M_host = Kokkos::create_mirror_view(M_app);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<T> dist(-1, 1);
  for (ibla::index_t b = 0; b < batch; ++b)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) M_host(b, i, j) = dist(gen);
  Kokkos::deep_copy(M_app, M_host);

  // Into the interleaved layout once; every operation then runs on it.
  InterleavedView M("M", batch, n, n), A("A", batch, n, n);
  ibla::convert(exec, M_app, M);

  // A = n I through ordinary View indexing (the layout does the addressing),
  // then A = 1 * M M^T + 1 * A: the shift keeps every eigenvalue >= n.
  const T shift = T(n);
  Kokkos::parallel_for(
      "spd_solves::shift", Kokkos::MDRangePolicy<ExecSpace, Kokkos::Rank<3>>(exec, {0, 0, 0}, {batch, n, n}),
      KOKKOS_LAMBDA(const ibla::index_t b, const int i, const int j) { A(b, i, j) = i == j ? shift : T(0); });
  ibla::gemm(exec, ibla::Op::N, ibla::Op::T, T(1), M, M, T(1), A);

  // Back into the application's storage.
  AppView A_app("A_app", batch, n, n);
  ibla::convert(exec, A, A_app);
  auto A_host = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), A_app);

  // Each entry is a sum of n + 1 terms; its rounding error is bounded by
  // gamma_{n+1} * sum |terms| (Higham, Accuracy and Stability, 3.1) with
  // gamma_k ~ k * eps. A factor 2 covers the fused multiply-adds and any
  // summation order the kernel chooses.
  const T eps = std::numeric_limits<T>::epsilon();
  Result r;
  for (ibla::index_t b = 0; b < batch; ++b)
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        T ref = i == j ? shift : T(0), mag = std::abs(ref);
        for (int k = 0; k < n; ++k) {
          ref += M_host(b, i, k) * M_host(b, j, k);
          mag += std::abs(M_host(b, i, k) * M_host(b, j, k));
        }
        const T tol = 2 * T(n + 1) * eps * mag;
        const T err = std::abs(A_host(b, i, j) - ref);
        if (!(err <= tol)) {  // also catches NaN
          if (r.errors < 5)
            std::fprintf(stderr, "  n = %d: A(%ld, %d, %d) = %.17g, expected %.17g (tolerance %.3g)\n", n,
                         long(b), i, j, A_host(b, i, j), ref, tol);
          ++r.errors;
        }
        if (tol > 0 && err / tol > r.worst) r.worst = err / tol;
      }

  // --- Solve A(b) x(b) = f(b) with f(b) uniform in [-1, 1]. -----------------
  AppVectors f_app("f_app", batch, n);
  auto f_host = Kokkos::create_mirror_view(f_app);
  for (ibla::index_t b = 0; b < batch; ++b)
    for (int i = 0; i < n; ++i) f_host(b, i) = dist(gen);
  Kokkos::deep_copy(f_app, f_host);
  InterleavedVectors X("X", batch, n);
  InterleavedInfo info("info", batch);
  ibla::convert(exec, f_app, X);
  // A is overwritten by its Cholesky factor, X by the solutions; A_host keeps
  // the matrices. Lower: only the lower triangle of A is read.
  ibla::posv(exec, ibla::Uplo::Lower, A, X, info);
  AppVectors x_app("x_app", batch, n);
  ibla::convert(exec, X, x_app);
  auto x_host    = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), x_app);
  auto info_host = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), info);

  // Normwise backward error of each solution (Rigal and Gaches; Higham,
  // Accuracy and Stability, Thm 7.1, with E = A, infinity norms):
  //   eta = ||f - A x|| / (||A|| ||x|| + ||f||).
  // Cholesky solves are backward stable: (A + dA) x = f with |dA| <= gamma_{3n+1}
  // |L| |L^T| (Higham, Thm 10.4), and || |L| |L^T| || <= n ||A|| for SPD A,
  // so eta is of the order of n eps; forming the residual in double adds
  // gamma_{n+1} (||A|| ||x|| + ||f||). LAPACK's own tests (dpot02) accept
  // ||f - A x|| / (||A|| ||x|| eps) below 30; here 30 n eps, so the check
  // scales with n like the bound and still rejects any wrong solve (those
  // give eta of order 1). The residual uses the lower triangle, which is the
  // matrix posv solved with.
  const double eta_tol = 30.0 * n * eps;
  for (ibla::index_t b = 0; b < batch; ++b) {
    if (info_host(b) != 0) {
      if (r.solve_errors < 5)
        std::fprintf(stderr, "  n = %d: posv info(%ld) = %d, but A is SPD\n", n, long(b), info_host(b));
      ++r.solve_errors;
      continue;
    }
    T res = 0, a_norm = 0, x_norm = 0, f_norm = 0;
    for (int i = 0; i < n; ++i) {
      T ax = 0, row = 0;
      for (int j = 0; j < n; ++j) {
        const T a = i >= j ? A_host(b, i, j) : A_host(b, j, i);
        ax += a * x_host(b, j);
        row += std::abs(a);
      }
      res    = std::max(res, std::abs(f_host(b, i) - ax));
      a_norm = std::max(a_norm, row);
      x_norm = std::max(x_norm, std::abs(x_host(b, i)));
      f_norm = std::max(f_norm, std::abs(f_host(b, i)));
    }
    const T denom    = a_norm * x_norm + f_norm;  // 0 only when f = 0 and x = 0
    const double eta = denom > 0 ? res / denom : res;
    if (!(eta <= eta_tol)) {  // also catches NaN
      if (r.solve_errors < 5)
        std::fprintf(stderr, "  n = %d: system %ld: relative residual %.3g (tolerance %.3g)\n", n, long(b),
                     eta, eta_tol);
      ++r.solve_errors;
    }
    if (eta / eta_tol > r.worst_solve) r.worst_solve = eta / eta_tol;
  }
  return r;
}

}  // namespace

int main(int argc, char* argv[]) {
  Kokkos::ScopeGuard kokkos(argc, argv);
  ibla::index_t batch = argc > 1 ? std::atol(argv[1]) : 1001;  // not a multiple of any block size
  std::vector<int> sizes;
  for (int a = 2; a < argc; ++a) sizes.push_back(std::atoi(argv[a]));
  if (sizes.empty()) sizes = {1, 5, 8, 17, 32};

  std::printf("spd_solves: %s, %d matrices per block, batch %ld\n", ExecSpace::name(), L, long(batch));
  long failures = 0;
  try {
    for (const int n : sizes) {
      const Result r = spd_batch(batch, n, 1234u + unsigned(n));
      std::printf("  n = %2d: A = M M^T + n I %s (worst error %.2f of tolerance), posv %s (worst residual %.3f of tolerance)\n",
                  n, r.errors ? "FAILED" : "ok", r.worst, r.solve_errors ? "FAILED" : "ok", r.worst_solve);
      failures += r.errors + r.solve_errors;
    }
  } catch (const ibla::argument_error& e) {  // bad sizes from the command line
    std::fprintf(stderr, "spd_solves: %s\n", e.what());
    return 2;
  }
  if (failures) {
    std::fprintf(stderr, "spd_solves: %ld wrong entries or solutions\n", failures);
    return 1;
  }
  return 0;
}
