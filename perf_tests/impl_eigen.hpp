// Eigen 3.4 fixed-size matrices: per problem, Eigen::Map<Matrix<T, N, N>> on
// the strided storage with N a compile-time size (a switch over the default
// sizes; other sizes use dynamic-size matrices), in an OpenMP parallel-for.
// GEMM (product into a fixed-size temporary, then alpha/beta), TRSM
// (triangularView::solveInPlace), POTRF/POSV (in-place LLT), GETRF/GESV
// (in-place PartialPivLU; its row permutation is turned into LAPACK's ipiv
// when the results are fetched). A check-only build (IBLA_BENCH_CHECK_ONLY)
// uses dynamic sizes for every n.
// Instantiated once per precision in impl_eigen_{double,float}.cpp: the
// fixed-size instantiations of both precisions in one unit were the longest
// compile of the build (about 290 s), which ended a two-core build alone.
#pragma once

#include "bench.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>

#include <vector>

namespace bench {
namespace {

template <class T, int N>
void eigen_run(const HostProblem<T>& w, int* perm) {
  using Mat = Eigen::Matrix<T, N, N>;
  using Rhs = Eigen::Matrix<T, N, Eigen::Dynamic>;
  const Case& c = w.c;
  const int n = c.n, r = w.b_cols();
  const std::size_t nn = std::size_t(n) * std::size_t(n), nb = std::size_t(n) * std::size_t(r);
  const T alpha = T(gemm_alpha), beta = T(gemm_beta);
#pragma omp parallel for schedule(static)
  for (index_t b = 0; b < c.batch; ++b) {
    Eigen::Map<Mat> A(w.A.data() + b * nn, n, n);
    switch (c.op) {
      case OpKind::gemm: {
        Eigen::Map<const Mat> B(w.B.data() + b * nn, n, n);
        Eigen::Map<Mat> C(w.C.data() + b * nn, n, n);
        Mat t(n, n);
        t.noalias() = A * B;
        C = alpha * t + beta * C;
        break;
      }
      case OpKind::trsm: {
        Eigen::Map<Rhs> B(w.B.data() + b * nb, n, r);
        A.template triangularView<Eigen::Lower>().solveInPlace(B);
        break;
      }
      case OpKind::potrf:
      case OpKind::posv: {
        Eigen::LLT<Eigen::Ref<Mat>> llt(A);
        w.info[b] = llt.info() == Eigen::Success ? 0 : 1;
        if (c.op == OpKind::posv) {
          Eigen::Map<Rhs> B(w.B.data() + b * nb, n, r);
          llt.solveInPlace(B);
        }
        break;
      }
      case OpKind::getrf:
      case OpKind::gesv: {
        Eigen::PartialPivLU<Eigen::Ref<Mat>> lu(A);
        const auto& idx = lu.permutationP().indices();
        for (int i = 0; i < n; ++i) perm[std::size_t(b) * n + i] = idx[i];
        w.info[b] = 0;
        if (c.op == OpKind::gesv) {
          Eigen::Map<Rhs> B(w.B.data() + b * nb, n, r);
          B = lu.solve(B);
        }
        break;
      }
    }
  }
}

template <class T>
struct EigenFixed final : Impl<T> {
  const HostProblem<T>* in = nullptr;
  HostProblem<T> w;
  std::vector<int> perm;
  std::string group() const override { return "eigen"; }
  std::string absent(const Case&) const override { return ""; }
  std::string note(const Case& c) const override {
#ifdef IBLA_BENCH_CHECK_ONLY
    (void)c;
    return "dynamic size (check-only build)";
#else
    switch (c.n) {
      case 2: case 3: case 4: case 5: case 6: case 8: case 10: case 12: case 16: case 20:
      case 24: case 32: return "";
      default: return "dynamic size";
    }
#endif
  }
  void setup(const HostProblem<T>& input) override {
    in = &input;
    w.allocate(input.c);
    if (w.has_ipiv()) perm.assign(std::size_t(input.c.batch) * input.c.n, 0);
  }
  void restore() override { copy_operands(*in, w); }
  void spans(std::vector<Span>& out) const override {
    out.push_back({w.A.data(), w.A.bytes()});
    if (w.has_B()) out.push_back({w.B.data(), w.B.bytes()});
    if (w.has_C()) out.push_back({w.C.data(), w.C.bytes()});
    if (w.has_info()) out.push_back({w.info.data(), w.info.bytes()});
    if (!perm.empty()) out.push_back({perm.data(), perm.size() * sizeof(int)});
  }
  void run() override {
    int* p = perm.data();
#ifdef IBLA_BENCH_CHECK_ONLY
    // A switch in unreachable code would still instantiate every size.
    eigen_run<T, Eigen::Dynamic>(w, p);
#else
    switch (w.c.n) {
      case 2: eigen_run<T, 2>(w, p); break;
      case 3: eigen_run<T, 3>(w, p); break;
      case 4: eigen_run<T, 4>(w, p); break;
      case 5: eigen_run<T, 5>(w, p); break;
      case 6: eigen_run<T, 6>(w, p); break;
      case 8: eigen_run<T, 8>(w, p); break;
      case 10: eigen_run<T, 10>(w, p); break;
      case 12: eigen_run<T, 12>(w, p); break;
      case 16: eigen_run<T, 16>(w, p); break;
      case 20: eigen_run<T, 20>(w, p); break;
      case 24: eigen_run<T, 24>(w, p); break;
      case 32: eigen_run<T, 32>(w, p); break;
      default: eigen_run<T, Eigen::Dynamic>(w, p); break;
    }
#endif
  }
  void fetch(HostProblem<T>& out) override {
    parallel_copy(out.A.data(), w.A.data(), w.A.bytes());
    if (w.has_B()) parallel_copy(out.B.data(), w.B.data(), w.B.bytes());
    if (w.has_C()) parallel_copy(out.C.data(), w.C.data(), w.C.bytes());
    if (w.has_info()) parallel_copy(out.info.data(), w.info.data(), w.info.bytes());
    if (w.has_ipiv()) {
      // Eigen's P maps row i of A to row indices[i] of P*A; LAPACK's ipiv is
      // the sequence of row swaps that produces the same arrangement.
      const int n = w.c.n;
      std::vector<int> at(n), pos(n);
      for (index_t b = 0; b < w.c.batch; ++b) {
        const int* idx = perm.data() + std::size_t(b) * n;
        std::vector<int> want(n);
        for (int i = 0; i < n; ++i) want[idx[i]] = i;  // original row at position idx[i]
        for (int i = 0; i < n; ++i) at[i] = i, pos[i] = i;
        for (int k = 0; k < n; ++k) {
          const int j = pos[want[k]];
          std::swap(at[k], at[j]);
          pos[at[k]] = k, pos[at[j]] = j;
          out.ipiv[std::size_t(b) * n + k] = j + 1;
        }
      }
    }
  }
  void teardown() override { w = HostProblem<T>(), perm.clear(); }
};

}  // namespace

template <class T>
void add_eigen(ImplList<T>& out) {
  out.push_back(std::make_unique<EigenFixed<T>>());
}

}  // namespace bench
