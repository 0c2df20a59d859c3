// ibla_bench: batched GEMM/TRSM/POTRF/GETRF/POSV/GESV on many tiny problems,
// ibla next to the peers a user would otherwise use, every result checked,
// every speed put next to what the machine allows. See --help.
//
// Protocol per (operation, n, implementation):
//  - one untimed run (first touch, JIT), then `reps` timed repetitions in two
//    modes: "flushed" (inputs restored, then every cache line of every
//    operand the run touches evicted with clflushopt) and "warm" (inputs
//    restored, nothing evicted, after one untimed restore and run: the
//    batch sits in the cache that holds it);
//  - the implementations of a case take turns, one repetition each (see
//    measure_interleaved), so that a drift of the machine's speed falls on
//    all of them alike;
//  - median, min and max of the repetitions; GFLOP/s from the median;
//  - the bound of a cell is min(peak, flops * bandwidth / bytes read), with
//    the DRAM triad bandwidth for flushed runs and, for warm runs, the
//    bandwidth of the cache level the batch fits in (L2, L3 or DRAM);
//  - the outputs of the last repetition are compared with the reference
//    (serial OpenBLAS/LAPACK on a copy): PASS/FAIL per cell;
//  - a cell where a column's median repetition took over 3x its fastest is
//    marked noisy (noisy_columns): rerun it before reading it.
#include "bench.hpp"

#include <Kokkos_Core.hpp>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

namespace bench {
namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Options {
  index_t batch = 10000;
  bool use_float = false;
  std::vector<int> sizes{2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32};
  std::vector<std::string> ops{"gemm", "trsm", "potrf", "getrf", "posv", "gesv"};
  std::vector<std::string> impls;  // empty: all groups
  std::vector<std::string> modes{"flushed", "warm"};
  int reps = 11;
  bool quick = false;
  std::string csv, plot;
};

void usage() {
  std::printf(
      "usage: ibla_bench [options]\n"
      "  --batch N        problems per batch (default 10000)\n"
      "  --float          single precision (default double)\n"
      "  --sizes LIST     comma-separated n in 1..32 (default 2,3,4,5,6,8,10,12,16,20,24,32)\n"
      "  --ops LIST       gemm,trsm,potrf,getrf,posv,gesv (default all); trsm runs nrhs=1 and\n"
      "                   nrhs=n, getrf/gesv a diagonally dominant and a random input\n"
      "  --impls LIST     only these columns: ibla,ibla+conv,omp+openblas,kk-serial,kk-simd,\n"
      "                   kk-simd+conv,libxsmm,eigen (default all)\n"
      "  --modes LIST     flushed,warm (default both)\n"
      "  --reps N         timed repetitions per cell, median reported (default 11)\n"
      "  --quick          about a minute: n in {2,8,16}, every operation\n"
      "  --csv FILE       write every measurement to FILE\n"
      "  --plot DIR       write GFLOP/s-vs-n plots (PNG, gnuplot) into DIR\n"
      "  --help           this text\n"
      "Threads: OMP_NUM_THREADS (scripts/run_benchmark.sh sets all cores, OMP_PROC_BIND=close).\n");
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  bool sizes_given = false, ops_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ibla_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      usage();
      std::exit(0);
    } else if (a == "--batch") {
      o.batch = std::stoll(value());
    } else if (a == "--float") {
      o.use_float = true;
    } else if (a == "--double") {
      o.use_float = false;
    } else if (a == "--sizes") {
      o.sizes.clear();
      for (auto& s : split(value())) o.sizes.push_back(std::stoi(s));
      sizes_given = true;
    } else if (a == "--ops") {
      o.ops = split(value());
      ops_given = true;
    } else if (a == "--impls") {
      o.impls = split(value());
    } else if (a == "--modes") {
      o.modes = split(value());
    } else if (a == "--reps") {
      o.reps = std::stoi(value());
    } else if (a == "--quick") {
      o.quick = true;
    } else if (a == "--csv") {
      o.csv = value();
    } else if (a == "--plot") {
      o.plot = value();
    } else if (a.rfind("--kokkos", 0) == 0) {
      // left to Kokkos
    } else {
      std::fprintf(stderr, "ibla_bench: unknown option %s (see --help)\n", a.c_str());
      std::exit(2);
    }
  }
  // --quick: a one-minute subset (issue 4). n = 32 alone took 179 s of the
  // 232 s that {2, 8, 16, 32} took (10^4 problems, every column, 2-core
  // AVX-512 Xeon VM, 2026-12-02); {2, 8, 16} 48 s.
  if (o.quick) {
    if (!sizes_given) o.sizes = {2, 8, 16};
    if (!ops_given) o.ops = {"gemm", "trsm", "potrf", "getrf", "posv", "gesv"};
  }
  for (int n : o.sizes)
    if (n < 1 || n > 32) {
      std::fprintf(stderr, "ibla_bench: sizes must be in 1..32 (got %d)\n", n);
      std::exit(2);
    }
  if (o.batch < 1 || o.reps < 1) {
    std::fprintf(stderr, "ibla_bench: --batch and --reps must be positive\n");
    std::exit(2);
  }
  for (auto& m : o.modes)
    if (m != "flushed" && m != "warm") {
      std::fprintf(stderr, "ibla_bench: unknown mode %s\n", m.c_str());
      std::exit(2);
    }
  // The files are written after the last cell, minutes later: a folder that
  // does not exist or cannot be written must stop the run now, not lose it.
  auto make_folder = [](const char* option, const std::filesystem::path& dir) {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec) {
      std::fprintf(stderr, "ibla_bench: %s: cannot create %s: %s\n", option, dir.c_str(),
                   ec.message().c_str());
      std::exit(2);
    }
  };
  if (!o.csv.empty()) {
    make_folder("--csv", std::filesystem::path(o.csv).parent_path());
    // Append mode: creates the file without emptying one that is there.
    if (!std::ofstream(o.csv, std::ios::app)) {
      std::fprintf(stderr, "ibla_bench: --csv: cannot write %s: %s\n", o.csv.c_str(),
                   std::strerror(errno));
      std::exit(2);
    }
  }
  if (!o.plot.empty()) make_folder("--plot", o.plot);
  return o;
}

std::vector<Case> make_cases(const Options& o, int n) {
  std::vector<Case> cases;
  for (const auto& op : o.ops) {
    if (op == "gemm") cases.push_back({OpKind::gemm, n, n, false, o.batch});
    else if (op == "trsm") {
      cases.push_back({OpKind::trsm, n, 1, false, o.batch});
      if (n > 1) cases.push_back({OpKind::trsm, n, n, false, o.batch});
    } else if (op == "potrf") cases.push_back({OpKind::potrf, n, 0, false, o.batch});
    else if (op == "getrf") {
      cases.push_back({OpKind::getrf, n, 0, false, o.batch});
      cases.push_back({OpKind::getrf, n, 0, true, o.batch});
    } else if (op == "posv") cases.push_back({OpKind::posv, n, 1, false, o.batch});
    else if (op == "gesv") {
      cases.push_back({OpKind::gesv, n, 1, false, o.batch});
      cases.push_back({OpKind::gesv, n, 1, true, o.batch});
    } else {
      std::fprintf(stderr, "ibla_bench: unknown operation %s\n", op.c_str());
      std::exit(2);
    }
  }
  return cases;
}

// ---------------------------------------------------------------------------
// Inputs.
template <class T>
void generate(HostProblem<T>& p, std::uint64_t seed) {
  const Case& c = p.c;
  const int n = c.n;
  const std::size_t nn = std::size_t(n) * n;
#pragma omp parallel
  {
    std::vector<double> M(nn);
#pragma omp for schedule(static)
    for (index_t b = 0; b < c.batch; ++b) {
      std::mt19937_64 gen(seed * 1000003u + std::uint64_t(b));
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      T* A = p.A.data() + b * nn;
      switch (c.op) {
        case OpKind::gemm:
          for (std::size_t e = 0; e < nn; ++e) A[e] = T(u(gen));
          break;
        case OpKind::trsm:
          // Lower triangular, diagonal in [1, 2], off-diagonal in [-1, 1]/n:
          // well conditioned. The upper triangle holds values that must not
          // be read.
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
              A[j * n + i] = i == j ? T(1.5 + 0.5 * u(gen)) : T(u(gen) / (i > j ? n : 1));
          break;
        case OpKind::potrf:
        case OpKind::posv:
          // M M^T / n + I: symmetric positive definite, well conditioned;
          // both triangles stored.
          for (auto& x : M) x = u(gen);
          for (int j = 0; j < n; ++j)
            for (int i = j; i < n; ++i) {
              double s = i == j ? 1.0 : 0.0;
              for (int k = 0; k < n; ++k) s += M[k * n + i] * M[k * n + j] / n;
              A[j * n + i] = A[i * n + j] = T(s);
            }
          break;
        case OpKind::getrf:
        case OpKind::gesv:
          for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
              double x = u(gen);
              // Diagonally dominant: |a_jj| > sum of the others, no row swaps.
              if (!c.random_input && i == j) x = (x < 0 ? -1.0 : 1.0) * (n + 1.0);
              A[j * n + i] = T(x);
            }
          break;
      }
      if (p.has_B()) {
        const std::size_t nb = std::size_t(n) * p.b_cols();
        T* B = p.B.data() + b * nb;
        for (std::size_t e = 0; e < nb; ++e) B[e] = T(u(gen));
      }
      if (p.has_C()) {
        T* C = p.C.data() + b * nn;
        for (std::size_t e = 0; e < nn; ++e) C[e] = T(u(gen));
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Checks. A problem passes when its outputs match the reference within
// 64 n eps relative to the largest reference entry, or else (two correct
// implementations may legitimately differ more on an ill-conditioned random
// matrix, or pick another pivot on a near-tie) when its own outputs have a
// backward error below 64 n eps (residuals below), and its info matches.
template <class T>
struct Checker {
  const HostProblem<T>& in;
  const HostProblem<T>& ref;
  const HostProblem<T>& got;
  double tol() const { return 64.0 * in.c.n * double(std::numeric_limits<T>::epsilon()); }

  bool lower_only() const { return in.c.op == OpKind::potrf || in.c.op == OpKind::posv; }

  bool direct(index_t b) const {
    const Case& c = in.c;
    const int n = c.n;
    const std::size_t nn = std::size_t(n) * n, nb = std::size_t(n) * in.b_cols();
    double err = 0, scale = 1;
    auto cmp = [&](const T* g, const T* r, std::size_t count, bool lower) {
      for (std::size_t e = 0; e < count; ++e) {
        if (lower && int(e % n) < int(e / n)) continue;
        err = std::max(err, std::abs(double(g[e]) - double(r[e])));
        if (!(std::isfinite(double(g[e])))) err = INFINITY;
        scale = std::max(scale, std::abs(double(r[e])));
      }
    };
    switch (c.op) {
      case OpKind::gemm: cmp(got.C.data() + b * nn, ref.C.data() + b * nn, nn, false); break;
      case OpKind::trsm: cmp(got.B.data() + b * nb, ref.B.data() + b * nb, nb, false); break;
      default:
        cmp(got.A.data() + b * nn, ref.A.data() + b * nn, nn, lower_only());
        if (in.has_B()) cmp(got.B.data() + b * nb, ref.B.data() + b * nb, nb, false);
        if (in.has_ipiv())
          for (int i = 0; i < n; ++i)
            if (got.ipiv[b * n + i] != ref.ipiv[b * n + i]) return false;
        break;
    }
    return err <= tol() * scale;
  }

  // max |P A0 - L U| (getrf) or |A0 - L L^T| (potrf) over max |A0| and the
  // growth max |U| (or |L|^2).
  bool factor_residual(index_t b) const {
    const Case& c = in.c;
    const int n = c.n;
    const std::size_t nn = std::size_t(n) * n;
    const T* A0 = in.A.data() + b * nn;
    const T* F  = got.A.data() + b * nn;
    std::vector<double> PA(A0, A0 + nn);
    double a0 = 0, growth = 0, res = 0;
    for (std::size_t e = 0; e < nn; ++e) a0 = std::max(a0, std::abs(double(A0[e])));
    const bool lu = c.op == OpKind::getrf || c.op == OpKind::gesv;
    if (lu) {
      for (int k = 0; k < n; ++k) {
        const int p = got.ipiv[b * n + k] - 1;
        if (p < k || p >= n) return false;
        for (int j = 0; j < n; ++j) std::swap(PA[j * n + k], PA[j * n + p]);
      }
    }
    for (int j = 0; j < n; ++j)
      for (int i = lu ? 0 : j; i < n; ++i) {
        double s = 0;
        if (lu) {
          for (int k = 0; k <= std::min(i, j); ++k) {
            const double l = k == i ? 1.0 : double(F[k * n + i]);
            s += l * double(F[j * n + k]);
          }
        } else {
          for (int k = 0; k <= j; ++k) s += double(F[k * n + i]) * double(F[k * n + j]);
        }
        res = std::max(res, std::abs(s - PA[j * n + i]));
        growth = std::max(growth, std::abs(double(F[j * n + i])));
      }
    if (!std::isfinite(res)) return false;
    const double g = lu ? std::max(1.0, growth / std::max(a0, 1e-300)) : 1.0;
    return res <= tol() * g * std::max(a0, 1e-300);
  }

  // max |op(A0) x - b0| / (max|A0| max|x| n + max|b0|).
  bool solve_residual(index_t b) const {
    const Case& c = in.c;
    const int n = c.n, r = in.b_cols();
    const std::size_t nn = std::size_t(n) * n, nb = std::size_t(n) * r;
    const T* A0 = in.A.data() + b * nn;
    const T* B0 = in.B.data() + b * nb;
    const T* X  = got.B.data() + b * nb;
    double a0 = 0, x = 0, b0 = 0, res = 0;
    for (std::size_t e = 0; e < nn; ++e) a0 = std::max(a0, std::abs(double(A0[e])));
    for (std::size_t e = 0; e < nb; ++e)
      x = std::max(x, std::abs(double(X[e]))), b0 = std::max(b0, std::abs(double(B0[e])));
    const double alpha = c.op == OpKind::trsm ? trsm_alpha : 1.0;
    for (int j = 0; j < r; ++j)
      for (int i = 0; i < n; ++i) {
        double s = 0;
        for (int k = 0; k < n; ++k) {
          double a = A0[k * n + i];
          if (c.op == OpKind::trsm && k > i) a = 0;  // lower triangle only
          if (c.op == OpKind::posv && k > i) a = A0[i * n + k];
          s += a * double(X[j * n + k]);
        }
        res = std::max(res, std::abs(s - alpha * double(B0[j * n + i])));
      }
    if (!std::isfinite(res)) return false;
    return res <= tol() * (a0 * x * n + b0);
  }

  bool problem_ok(index_t b) const {
    if (in.has_info() && got.info[b] != ref.info[b]) return false;
    if (direct(b)) return true;
    switch (in.c.op) {
      case OpKind::gemm: return false;
      case OpKind::trsm: return solve_residual(b);
      case OpKind::potrf:
      case OpKind::getrf: return factor_residual(b);
      case OpKind::posv:
      case OpKind::gesv: return factor_residual(b) && solve_residual(b);
    }
    return false;
  }

  /// Number of problems that fail.
  index_t failures() const {
    index_t bad = 0;
#pragma omp parallel for reduction(+ : bad) schedule(dynamic, 64)
    for (index_t b = 0; b < in.c.batch; ++b) bad += problem_ok(b) ? 0 : 1;
    return bad;
  }
};

// ---------------------------------------------------------------------------
struct Stats {
  double median = 0, min = 0, max = 0;
};
Stats stats(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  Stats s;
  s.min    = t.front();
  s.max    = t.back();
  s.median = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
  return s;
}

struct Measurement {
  std::string group, name, status = "absent", note, why;
  Stats time[2];  // flushed, warm
  bool has[2] = {false, false};
  index_t failed = 0;
};

const std::vector<std::string> group_order{"ibla",     "ibla+conv",    "omp+openblas", "kk-serial",
                                           "kk-simd",  "kk-simd+conv", "libxsmm",      "eigen"};
const std::vector<std::string> peer_groups{"omp+openblas", "kk-serial", "kk-simd", "libxsmm", "eigen"};
/// What a user who keeps strided storage (matrices one after another) would
/// otherwise call on it: the peers that take that storage as it is, and
/// Kokkos Kernels' packs with their conversion. ibla+conv (ibla converting,
/// or called on that storage directly) is compared with these.
const std::vector<std::string> user_storage_peer_groups{"omp+openblas", "kk-serial", "kk-simd+conv",
                                                        "libxsmm", "eigen"};

struct Row {  // one (case, n): the best variant per group
  Case c;
  double flops = 0;     // per batch
  double bound[2] = {0, 0};
  std::string level[2];
  std::map<std::string, Measurement> best;  // by group
  std::vector<Measurement> all;
};

/// The timed repetitions of several implementations of one case,
/// interleaved: repetition r of every implementation, one after another
/// (from a different one each time), before repetition r + 1 of any. The
/// speed of the VM this was written on drifts (DRAM triad 22-43 GB/s from
/// run to run; cells whose code had not changed moved 0.72-1.14x between two
/// runs): timed implementation by implementation, a drift between ibla's
/// repetitions and a peer's decided their ratio; interleaved, it falls on
/// all of them alike. Measured (--ops getrf,gesv --sizes 3,5,10,12,16
/// --impls ibla,kk-simd, 3 runs of each build alternated; per cell, the
/// largest over the smallest ratio ibla / kk-simd of the 3 runs): median
/// 1.18 -> 1.07, largest 1.56 -> 1.30.
/// Each implementation keeps its own operands (set up once, restored before
/// every repetition as before), so all of `impls` are set up at once: the
/// caller bounds their memory (interleave_groups).
template <class T>
std::vector<Measurement> measure_interleaved(const std::vector<Impl<T>*>& impls,
                                             const HostProblem<T>& in, const HostProblem<T>& ref,
                                             const Options& o, const std::vector<bool>& mode_on) {
  std::vector<Measurement> ms(impls.size());
  std::vector<std::vector<Span>> spans(impls.size());
  std::vector<std::size_t> present;
  for (std::size_t k = 0; k < impls.size(); ++k) {
    Impl<T>& impl = *impls[k];
    Measurement& m = ms[k];
    m.group = impl.group();
    m.name  = impl.name();
    m.note  = impl.note(in.c);
    m.why   = impl.absent(in.c);
    if (!m.why.empty()) continue;
    impl.setup(in);
    impl.spans(spans[k]);
    impl.restore();
    impl.run();  // untimed: first touch, JIT, thread pool
    present.push_back(k);
  }
  const std::size_t np = present.size();
  for (int mode = 0; mode < 2; ++mode) {
    if (!mode_on[mode] || np == 0) continue;
    std::vector<std::vector<double>> t(np);
    for (int r = 0; r < o.reps; ++r)
      for (std::size_t i = 0; i < np; ++i) {
        const std::size_t j = (std::size_t(r) + i) % np;
        Impl<T>& impl       = *impls[present[j]];
        if (mode == 1) {
          // Warm: one untimed pass first. Restored once, after the other
          // implementations' passes over their own copies, a batch of 10^4
          // problems of order 32 (two copies of 82 MB, and as much for each
          // other implementation) was not held by this L3 (an Intel VM
          // reporting 480 MiB): a GETRF micro-driver with a second batch
          // factored between its calls ran at 32-33 GFLOP/s against 42-43
          // without; with this pass before each timed call, 37-39.
          impl.restore();
          impl.run();
        }
        impl.restore();
        if (mode == 0) flush_spans(spans[present[j]]);
        const double t0 = now();
        impl.run();
        t[j].push_back(now() - t0);
      }
    for (std::size_t j = 0; j < np; ++j) {
      ms[present[j]].time[mode] = stats(t[j]);
      ms[present[j]].has[mode]  = true;
    }
  }
  for (const std::size_t k : present) {
    HostProblem<T> got;
    got.allocate(in.c);
    impls[k]->fetch(got);
    impls[k]->teardown();
    ms[k].failed = Checker<T>{in, ref, got}.failures();
    ms[k].status = ms[k].failed == 0 ? "PASS" : "FAIL";
  }
  return ms;
}

/// The implementations of one case split into runs of consecutive ones
/// whose operands, all set up at once, stay within a third of the
/// machine's memory: each implementation is taken to hold 2.5 times the
/// batch's footprint (its operands and their pristine copies; the
/// with-conversion ones their strided copies and the native scratch).
/// The default batch interleaves all of them; a batch of 10^6 at n = 32
/// (8 GB an operand) measures them one at a time, as before.
template <class T>
std::vector<std::vector<Impl<T>*>> interleave_groups(const std::vector<Impl<T>*>& impls,
                                                     const Case& c) {
  const double each   = 2.5 * footprint_per_problem(c, sizeof(T)) * double(c.batch);
  const double memory = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  const double budget = memory > 0 ? memory / 3 : 4e9;
  std::vector<std::vector<Impl<T>*>> groups;
  double used = 0;
  for (Impl<T>* impl : impls) {
    if (groups.empty() || used + each > budget) groups.emplace_back(), used = 0;
    groups.back().push_back(impl);
    used += each;
  }
  return groups;
}

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

std::string cell(const Row& row, const std::string& g, int mode) {
  auto it = row.best.find(g);
  char buf[64];
  if (it == row.best.end()) return "          -";
  const Measurement& m = it->second;
  if (m.status == "absent") return "     absent";
  const double gf = row.flops / m.time[mode].median * 1e-9;
  if (m.status == "FAIL") {
    std::snprintf(buf, sizeof buf, "FAIL %6.2f", gf);
  } else {
    std::snprintf(buf, sizeof buf, "%6.2f %4.2f", gf, gf / row.bound[mode]);
  }
  return buf;
}

void print_header(const Case& c, const std::vector<std::string>& groups, const char* prec,
                  index_t batch) {
  std::printf("\n== %s  (%s, batch %lld, GFLOP/s and fraction of the bound) ==\n", c.name().c_str(),
              prec, (long long)batch);
  std::printf("%3s %-7s %12s", "n", "mode", "bound");
  for (const auto& g : groups) std::printf(" %11s", g.c_str());
  std::printf("  %-10s %-10s %s\n", "ibla/peer", "conv/peer", "check");
}

/// A cell is marked noisy where one of its reported columns took, at its
/// median repetition, more than this many times its fastest: most of that
/// column's repetitions were slowed by something outside the code (on the
/// shared VMs this was written on, a hypervisor taking the vCPUs). In the
/// main command's runs of 2026-12-03 the median repetition of a reported
/// column took 1.15x its fastest (the median over all of them) and at most
/// 1.7-2.9x in 99 of 100; the cells past 3x were 1 in each of two runs,
/// and 11 in a run with 217 s of steal time, whose worst column (GETRF on
/// random input, n = 6, warm) took 68x its fastest at its median.
constexpr double noisy_median_over_fastest = 3.0;

/// The reported columns of a row that make it noisy in this mode, comma
/// separated (empty: none).
std::string noisy_columns(const Row& row, int mode) {
  std::string out;
  for (const auto& [g, m] : row.best)
    if (m.status != "absent" && m.has[mode] && m.time[mode].min > 0 &&
        m.time[mode].median > noisy_median_over_fastest * m.time[mode].min)
      out += (out.empty() ? "" : ",") + g;
  return out;
}

/// Prints the row of a cell; returns whether it is marked noisy.
bool print_row(const Row& row, const std::vector<std::string>& groups, int mode) {
  std::printf("%3d %-7s %7.2f(%s)", row.c.n, mode == 0 ? "flushed" : "warm", row.bound[mode],
              row.level[mode].c_str());
  for (const auto& g : groups) std::printf(" %11s", cell(row, g, mode).c_str());
  // ibla over the fastest passing peer; ibla+conv over the fastest passing
  // peer on the user's strided storage.
  const auto ratio = [&](const std::string& mine, const std::vector<std::string>& peers) {
    double peer = 0;
    for (const auto& g : peers) {
      auto it = row.best.find(g);
      if (it == row.best.end() || it->second.status != "PASS" || !it->second.has[mode]) continue;
      peer = std::max(peer, row.flops / it->second.time[mode].median * 1e-9);
    }
    auto ib = row.best.find(mine);
    if (ib != row.best.end() && ib->second.status == "PASS" && ib->second.has[mode] && peer > 0) {
      const double gf = row.flops / ib->second.time[mode].median * 1e-9;
      std::printf("  %5.2fx%-4s", gf / peer, "");
    } else {
      std::printf("  %-10s", "-");
    }
  };
  ratio("ibla", peer_groups);
  ratio("ibla+conv", user_storage_peer_groups);
  std::string fails;
  for (const auto& [g, m] : row.best)
    if (m.status == "FAIL") fails += (fails.empty() ? "" : ",") + g;
  std::printf(" %s", fails.empty() ? "PASS" : ("FAIL:" + fails).c_str());
  const std::string noisy = noisy_columns(row, mode);
  if (!noisy.empty()) std::printf("  noisy: %s", noisy.c_str());
  std::printf("\n");
  std::fflush(stdout);
  return !noisy.empty();
}

// Returns false, having said why on stderr, when the file could not be written.
bool write_csv(const std::string& file, const std::vector<Row>& rows, const char* prec,
               const Limits& lim, const Limits& end) {
  std::ofstream f(file);
  f << "precision,op,n,nrhs,batch,mode,impl,variant,status,failed_problems,median_s,min_s,max_s,"
       "gflops,gflops_best_rep,gflops_worst_rep,bound_gflops,bound_level,fraction_of_bound,"
       "reported,note,peak_gflops,bw_dram_gbs,bw_l3_gbs,bw_l2_gbs,peak_gflops_end,"
       "bw_dram_gbs_end,bw_l3_gbs_end,bw_l2_gbs_end\n";
  for (const auto& row : rows)
    for (const auto& m : row.all)
      for (int mode = 0; mode < 2; ++mode) {
        if (m.status != "absent" && !m.has[mode]) continue;
        const bool reported = row.best.count(m.group) && row.best.at(m.group).name == m.name;
        f << prec << ',' << row.c.name() << ',' << row.c.n << ',' << row.c.nrhs << ','
          << row.c.batch << ',' << (mode == 0 ? "flushed" : "warm") << ',' << m.group << ','
          << m.name << ',' << m.status << ',' << m.failed << ',';
        if (m.status == "absent") {
          f << ",,,,,," << row.bound[mode] << ',' << row.level[mode] << ",," << reported << ",\""
            << m.why << "\"";
        } else {
          const Stats& s = m.time[mode];
          const double g = row.flops * 1e-9;
          f << s.median << ',' << s.min << ',' << s.max << ',' << g / s.median << ',' << g / s.min
            << ',' << g / s.max << ',' << row.bound[mode] << ',' << row.level[mode] << ','
            << g / s.median / row.bound[mode] << ',' << reported << ",\"" << m.note << "\"";
        }
        f << ',' << lim.peak_gflops << ',' << lim.bw_dram << ',' << lim.bw_l3 << ',' << lim.bw_l2
          << ',' << end.peak_gflops << ',' << end.bw_dram << ',' << end.bw_l3 << ',' << end.bw_l2
          << '\n';
      }
  f.close();
  if (!f) {
    std::fprintf(stderr, "ibla_bench: --csv: writing %s failed\n", file.c_str());
    return false;
  }
  return true;
}

void write_plots(const std::string& dir, const std::vector<Row>& rows,
                 const std::vector<std::string>& groups, const std::vector<bool>& mode_on,
                 const char* prec) {
  // parse() has created dir.
  std::vector<std::string> names;
  for (const auto& r : rows)
    if (std::find(names.begin(), names.end(), r.c.name()) == names.end()) names.push_back(r.c.name());
  std::ofstream gp(dir + "/plots.gp");
  gp << "set terminal pngcairo size 1000,640 noenhanced\nset datafile missing '-'\n"
        "set key outside right\nset grid\nset xlabel 'n'\nset ylabel 'GFLOP/s'\n"
        "set logscale y\n";
  int written = 0;
  for (const auto& name : names)
    for (int mode = 0; mode < 2; ++mode) {
      if (!mode_on[mode]) continue;
      // "gemm" -> gemm_flushed, "trsm(nrhs=1)" -> trsm_nrhs_1_flushed.
      std::string base = name;
      for (auto& ch : base)
        if (ch == '(' || ch == ')' || ch == '=') ch = '_';
      while (!base.empty() && base.back() == '_') base.pop_back();
      base += mode == 0 ? "_flushed" : "_warm";
      std::ofstream dat(dir + "/" + base + ".dat");
      dat << "# n bound";
      for (const auto& g : groups) dat << ' ' << g;
      dat << '\n';
      // A group with no passing point in this plot (a peer without the
      // operation, reported absent in the table) gets no line: gnuplot
      // would warn of a data file with no valid points.
      std::vector<bool> plotted(groups.size(), false);
      for (const auto& r : rows) {
        if (r.c.name() != name) continue;
        dat << r.c.n << ' ' << r.bound[mode];
        for (std::size_t g = 0; g < groups.size(); ++g) {
          auto it = r.best.find(groups[g]);
          if (it == r.best.end() || it->second.status != "PASS" || !it->second.has[mode]) {
            dat << " -";
          } else {
            dat << ' ' << r.flops / it->second.time[mode].median * 1e-9;
            plotted[g] = true;
          }
        }
        dat << '\n';
      }
      gp << "set output '" << dir << "/" << base << ".png'\n";
      gp << "set title '" << name << ", " << prec << ", " << (mode == 0 ? "flushed" : "warm")
         << " caches, batch " << rows.front().c.batch << "'\n";
      gp << "plot '" << dir << "/" << base << ".dat' using 1:2 with lines dt 2 lw 2 lc 'black' title 'bound'";
      // A group keeps its colour (its place in groups) in every plot; none
      // is the bound's black.
      static const char* const colours[] = {"#9400d3", "#009e73", "#56b4e9", "#e69f00",
                                            "#f0e442", "#0072b2", "#e51e10", "#8b4513"};
      constexpr std::size_t ncolours = sizeof(colours) / sizeof(colours[0]);
      for (std::size_t g = 0; g < groups.size(); ++g)
        if (plotted[g])
          gp << ", '' using 1:" << g + 3 << " with linespoints lw 2 lc rgb '"
             << colours[g % ncolours] << "' title '" << groups[g] << "'";
      gp << '\n';
      ++written;
    }
  gp.close();
  if (written == 0) return;
  if (std::system(("gnuplot '" + dir + "/plots.gp'").c_str()) != 0) {
    std::fprintf(stderr, "ibla_bench: gnuplot failed or is missing (Debian: gnuplot-nox); data "
                         "and script are in %s\n", dir.c_str());
  } else {
    std::printf("plots: %s/*.png\n", dir.c_str());
  }
}

/// A limit that moved by more than this between the start and the end of
/// the run is reported.
constexpr double limit_moved_above = 1.15;

/// The limits measured again after the last cell, and each that moved by
/// more than limit_moved_above. The bounds are the start's (as the table
/// printed them), so cells measured while a limit was lower read lower
/// fractions. Seen on a shared 2-core AMD EPYC VM (2026-12-04): a DRAM
/// triad of 50 GB/s in a process started after the VM had been idle, and of
/// 83-91 GB/s once it had been busy for a while, the round trip of a cache
/// line between the two threads' cores being 105-133 ns in the first state
/// and 325-358 ns in the second (standalone driver, 6-8 runs each): the
/// hypervisor places the two vCPUs closer or further apart over time, and
/// the bandwidth follows.
void report_limits_moved(const Limits& start, const Limits& end) {
  std::printf("limits at the end: peak %.1f GFLOP/s, triad bandwidth DRAM %.1f GB/s, L3 %.1f "
              "GB/s, L2 %.1f GB/s\n",
              end.peak_gflops, end.bw_dram, end.bw_l3, end.bw_l2);
  const struct {
    const char* name;
    double start, end;
  } limits[] = {{"peak", start.peak_gflops, end.peak_gflops},
                {"DRAM bandwidth", start.bw_dram, end.bw_dram},
                {"L3 bandwidth", start.bw_l3, end.bw_l3},
                {"L2 bandwidth", start.bw_l2, end.bw_l2}};
  for (const auto& l : limits) {
    const double ratio = l.end / l.start;
    if (ratio > limit_moved_above || ratio < 1 / limit_moved_above)
      std::printf("the %s moved from %.1f to %.1f (%+.0f%%) during the run: the bounds above "
                  "are the start's, so cells that ran at the other value read fractions off by "
                  "up to that much; the columns of a row ran back to back and compare\n",
                  l.name, l.start, l.end, 100 * (ratio - 1));
  }
}

template <class T>
int run_all(const Options& o) {
  const char* prec = sizeof(T) == 8 ? "double" : "float";
  std::vector<bool> mode_on{false, false};
  for (auto& m : o.modes) mode_on[m == "flushed" ? 0 : 1] = true;
  // A misspelt column used to be dropped without a word, and the run went on
  // without it.
  for (const auto& g : o.impls)
    if (std::find(group_order.begin(), group_order.end(), g) == group_order.end()) {
      std::fprintf(stderr, "ibla_bench: --impls: unknown column %s (see --help)\n", g.c_str());
      return 2;
    }

  std::printf("ibla_bench: %s, batch %lld, %d threads (OMP_PROC_BIND=%s), %d repetitions per cell "
              "(median)\n", prec, (long long)o.batch, omp_get_max_threads(),
              std::getenv("OMP_PROC_BIND") ? std::getenv("OMP_PROC_BIND") : "unset", o.reps);
  std::printf("ibla operations in this build: %s\n", ibla_ops_available().c_str());
#ifdef IBLA_BENCH_CHECK_ONLY
  std::printf("CHECK-ONLY BUILD (IBLA_BENCH_CHECK_ONLY=ON, as the test run builds it): ibla at "
              "one block size, Eigen with dynamic sizes; its timings are not the benchmark's "
              "(scripts/run_benchmark.sh builds the full one)\n");
#endif
#ifdef IBLA_HOST_SPECIALISED_ORDERS
#define IBLA_BENCH_STRING(...) #__VA_ARGS__
#define IBLA_BENCH_EXPANDED_STRING(...) IBLA_BENCH_STRING(__VA_ARGS__)
  std::printf("ibla's fixed-order forms compiled for orders %s only "
              "(IBLA_HOST_SPECIALISED_ORDERS); other orders take the runtime-order forms\n",
              IBLA_BENCH_EXPANDED_STRING(IBLA_HOST_SPECIALISED_ORDERS));
#endif
  std::fflush(stdout);
  const Limits lim = measure_limits(o.quick, std::is_same_v<T, float>);
  std::printf("limits (measured now, %d threads): peak %.1f GFLOP/s (%s FMA, %s), triad bandwidth "
              "DRAM %.1f GB/s, L3 %.1f GB/s, L2 %.1f GB/s (L2 %zu KiB/core, L3 %zu MiB)\n",
              lim.threads, lim.peak_gflops, lim.isa.c_str(), lim.precision.c_str(), lim.bw_dram,
              lim.bw_l3, lim.bw_l2,
              lim.l2_bytes >> 10, lim.l3_bytes >> 20);
  std::printf("bound = min(peak, flops x bandwidth / bytes read); flushed: DRAM bandwidth, warm: "
              "the level holding the batch (L2/L3/DRAM)\n");

  ImplList<T> impls;
  add_ibla(impls);
  add_openblas(impls);
  add_kokkos_kernels(impls);
  add_libxsmm(impls);
  add_eigen(impls);
  // Every column and every restore of the inputs runs on the threads the
  // limits were measured with: a peer library that changes the OpenMP
  // thread count (OpenBLAS did, see impl_openblas.cpp) stops the run.
  if (omp_get_max_threads() != lim.threads) {
    std::fprintf(stderr, "ibla_bench: setting up the columns changed the OpenMP thread count from "
                         "%d to %d\n", lim.threads, omp_get_max_threads());
    return 1;
  }
  std::vector<std::string> groups;
  for (const auto& g : group_order)
    if (o.impls.empty() || std::find(o.impls.begin(), o.impls.end(), g) != o.impls.end())
      groups.push_back(g);

  // Case order: operation by operation (one table each), n within.
  std::vector<Case> order;
  for (const Case& kind : make_cases(o, 2))
    for (int n : o.sizes)
      for (const Case& c : make_cases(o, n))
        if (c.name() == kind.name()) order.push_back(c);

  std::vector<Row> rows;
  const bool tty = isatty(2);
  const double t_start = now();
  index_t total_fail = 0;
  int total_noisy    = 0;  // cells marked noisy (noisy_columns)
  std::string current;
  std::set<std::string> done_tables;
  for (const Case& c : order) {
    if (c.name() != current) {
      if (done_tables.count(c.name())) continue;
      current = c.name();
      done_tables.insert(current);
      print_header(c, groups, prec, o.batch);
    }
    HostProblem<T> in, ref;
    in.allocate(c);
    ref.allocate(c);
    generate(in, std::uint64_t(int(c.op) * 100 + c.n) * 2 + (c.random_input ? 1 : 0));
    reference(in, ref);

    Row row;
    row.c     = c;
    row.flops = flops_per_problem(c) * double(c.batch);
    const double intensity = flops_per_problem(c) / bytes_read_per_problem(c, sizeof(T));
    const double foot = footprint_per_problem(c, sizeof(T)) * double(c.batch);
    row.bound[0] = std::min(lim.peak_gflops, intensity * lim.bw_dram);
    row.level[0] = "DRAM";
    double warm_bw = lim.bw_dram;
    row.level[1] = "DRAM";
    if (foot <= 0.5 * double(lim.l2_bytes) * lim.threads) {
      warm_bw = lim.bw_l2, row.level[1] = "L2";
    } else if (foot <= 0.5 * double(lim.l3_bytes)) {
      warm_bw = lim.bw_l3, row.level[1] = "L3";
    }
    row.bound[1] = std::min(lim.peak_gflops, intensity * warm_bw);
    for (auto& r : row.level)
      if (row.bound[&r - row.level] >= lim.peak_gflops) r = "peak";

    std::vector<Impl<T>*> chosen;
    for (auto& impl : impls)
      if (std::find(groups.begin(), groups.end(), impl->group()) != groups.end())
        chosen.push_back(impl.get());
    std::vector<Measurement> measured;
    for (const auto& together : interleave_groups(chosen, c)) {
      if (tty)
        std::fprintf(stderr, "\r  [%6.1fs] %s n=%d %-28s", now() - t_start, c.name().c_str(), c.n,
                     together.size() == 1 ? together.front()->name().c_str()
                                          : (std::to_string(together.size()) +
                                             " implementations interleaved").c_str());
      for (auto& m : measure_interleaved(together, in, ref, o, mode_on)) measured.push_back(m);
    }
    for (const Measurement& m : measured) {
      row.all.push_back(m);
      auto it = row.best.find(m.group);
      auto better = [&](const Measurement& a, const Measurement& b) {
        // PASS beats FAIL beats absent; then the faster median (flushed if measured).
        auto rank = [](const Measurement& x) { return x.status == "PASS" ? 2 : x.status == "FAIL" ? 1 : 0; };
        if (rank(a) != rank(b)) return rank(a) > rank(b);
        if (a.status == "absent") return false;
        const int md = a.has[0] ? 0 : 1;
        return a.time[md].median < b.time[md].median;
      };
      if (it == row.best.end() || better(m, it->second)) row.best[m.group] = m;
    }
    if (tty) std::fprintf(stderr, "\r%70s\r", "");
    for (int mode = 0; mode < 2; ++mode)
      if (mode_on[mode] && print_row(row, groups, mode)) ++total_noisy;
    for (const auto& [g, m] : row.best)
      if (m.status == "FAIL") {
        std::printf("    FAIL %s (%s): %lld of %lld problems differ from the reference\n", g.c_str(),
                    m.name.c_str(), (long long)m.failed, (long long)c.batch);
        ++total_fail;
      }
    rows.push_back(std::move(row));

    // End of a table: notes on absent peers and variants.
    const bool last_of_table =
        (&c == &order.back()) || ((&c)[1].name() != c.name());
    if (last_of_table) {
      std::map<std::string, std::string> notes;
      for (const auto& [g, m] : rows.back().best) {
        if (m.status == "absent") notes[g] = "absent: " + m.why;
        else if (!m.note.empty()) notes[g] = m.note;
        if (m.status != "absent" && m.name != g) notes[g] += (notes[g].empty() ? "" : "; ") + std::string("reported: ") + m.name;
      }
      for (const auto& g : groups)
        if (notes.count(g)) std::printf("    %s: %s\n", g.c_str(), notes[g].c_str());
    }
  }
  std::printf("\n%s in %.0f s\n", total_fail == 0 ? "all results PASS" : "SOME RESULTS FAIL",
              now() - t_start);
  if (total_noisy > 0)
    std::printf("%d cell%s marked noisy: a column's median repetition took over %.0fx its "
                "fastest, so the machine was busy with something else during it; rerun "
                "those cells before reading them\n",
                total_noisy, total_noisy == 1 ? "" : "s", noisy_median_over_fastest);
  const Limits end_lim = measure_limits(o.quick, std::is_same_v<T, float>);
  report_limits_moved(lim, end_lim);
  bool written = true;
  if (!o.csv.empty()) {
    written = write_csv(o.csv, rows, prec, lim, end_lim);
    if (written) std::printf("csv: %s\n", o.csv.c_str());
  }
  if (!o.plot.empty()) write_plots(o.plot, rows, groups, mode_on, prec);
  return total_fail == 0 && written ? 0 : 1;
}

}  // namespace
}  // namespace bench

int main(int argc, char** argv) {
  const bench::Options o = bench::parse(argc, argv);
  Kokkos::ScopeGuard guard(argc, argv);
  return o.use_float ? bench::run_all<float>(o) : bench::run_all<double>(o);
}
