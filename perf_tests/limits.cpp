// The machine's limits, measured at the start of every run on the benchmark's
// own thread count: peak FLOP/s of an FMA microkernel and triad bandwidth
// from DRAM, from L3 and from L2.
#include "bench.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <string>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace bench {
namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One vector register of FMA operands per ISA and precision: the peak is
// measured in the precision of the run, since a register holds twice as
// many floats as doubles (a float run's bound at the double peak was half
// the machine's: 166.7 against 2 x that, AVX-512 Xeon, 2026-12-02).
#if defined(__AVX512F__)
const char* fma_isa = "AVX-512";
template <class T> struct FmaVec;
template <> struct FmaVec<double> {
  using V = __m512d;
  static constexpr int lanes = 8;
  static V set1(double x) { return _mm512_set1_pd(x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static V add(V a, V b) { return _mm512_add_pd(a, b); }
};
template <> struct FmaVec<float> {
  using V = __m512;
  static constexpr int lanes = 16;
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
};
#elif defined(__FMA__)
const char* fma_isa = "AVX2+FMA";
template <class T> struct FmaVec;
template <> struct FmaVec<double> {
  using V = __m256d;
  static constexpr int lanes = 4;
  static V set1(double x) { return _mm256_set1_pd(x); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static V add(V a, V b) { return _mm256_add_pd(a, b); }
};
template <> struct FmaVec<float> {
  using V = __m256;
  static constexpr int lanes = 8;
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
};
#else
const char* fma_isa = "scalar";
template <class T> struct FmaVec {
  using V = T;
  static constexpr int lanes = 1;
  static V set1(T x) { return x; }
  static V fma(V a, V b, V c) { return a * b + c; }
  static V add(V a, V b) { return a + b; }
};
#endif

// 16 independent accumulator chains: more than FMA latency (4) x ports (2),
// so the FMA units never wait. Returns flops done by the calling thread.
template <class T>
__attribute__((noinline)) double fma_kernel(long iters) {
  using F = FmaVec<T>;
  typename F::V acc[16];
  for (int i = 0; i < 16; ++i) acc[i] = F::set1(T(1.0 + i * 1e-3));
  const typename F::V a = F::set1(T(0.999999)), b = F::set1(T(1e-7));
  for (long it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) acc[i] = F::fma(acc[i], a, b);
  }
  typename F::V s = acc[0];
  for (int i = 1; i < 16; ++i) s = F::add(s, acc[i]);
  T lanes[F::lanes];
  std::memcpy(lanes, &s, sizeof lanes);
  double sum = 0;
  for (const T x : lanes) sum += x;
  volatile double sink = sum;
  (void)sink;
  return double(iters) * 16 * F::lanes * 2;
}

/// One timed run of fma_kernel on every thread: GFLOP/s of them together.
template <class T>
double measure_peak(long iters) {
  double flops = 0, t0 = 0, t1 = 0;
#pragma omp parallel reduction(+ : flops)
  {
#pragma omp barrier
#pragma omp single
    t0 = now();
    flops += fma_kernel<T>(iters);
#pragma omp barrier
#pragma omp single
    t1 = now();
  }
  return flops / (t1 - t0) * 1e-9;
}

/// Triad a = b + s*c over arrays of `elems` doubles each, split statically
/// over the threads (each thread first-touches its own part). STREAM's byte
/// count: 24 bytes per element (two reads, one write).
double measure_triad(std::size_t elems, int reps) {
  Buf<double> a(elems), b(elems), c(elems);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < elems; ++i) {
    a[i] = 0;
    b[i] = 1.0 + double(i % 7);
    c[i] = 2.0;
  }
  double* pa = a.data();
  const double* pb = b.data();
  const double* pc = c.data();
  double best = 0;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
#pragma omp parallel for schedule(static)
    for (std::size_t i = 0; i < elems; ++i) pa[i] = pb[i] + 0.5 * pc[i];
    const double t = now() - t0;
    best = std::max(best, 24.0 * double(elems) / t * 1e-9);
  }
  volatile double sink = pa[elems / 2];
  (void)sink;
  return best;
}

std::size_t cache_bytes(int level, std::size_t fallback) {
  // /sys reports per-instance sizes: index2 = L2, index3 = L3 (data/unified).
  const std::string path =
      "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(level) + "/size";
  std::ifstream f(path);
  std::string s;
  if (f >> s) {
    std::size_t v = std::stoul(s);
    if (s.back() == 'K') v *= 1024;
    if (s.back() == 'M') v *= 1024 * 1024;
    return v;
  }
  return fallback;
}

}  // namespace

Limits measure_limits(bool quick, bool single) {
  Limits lim;
  lim.precision = single ? "float" : "double";
  lim.threads  = omp_get_max_threads();
  lim.isa      = fma_isa;
  lim.l2_bytes = cache_bytes(2, 2u << 20);
  lim.l3_bytes = cache_bytes(3, 32u << 20);
  // A check-only build (IBLA_BENCH_CHECK_ONLY, the test run's smoke tests)
  // runs every measurement, but short and on arrays of a few MiB: its
  // timings are not the benchmark's anyway, and the full measurements
  // (three DRAM arrays of 4 x L3, 1.9 GB each here) took 8 s a run, twice
  // per run, in each of the three smoke tests (ctest: 13-18 s each beside
  // the unit tests, 2026-12-07).
#ifdef IBLA_BENCH_CHECK_ONLY
  constexpr bool check_only = true;
#else
  constexpr bool check_only = false;
#endif
  quick = quick || check_only;
  measure_peak<double>(2000000);  // warm up the cores (frequency, page tables)
  const long iters = check_only ? 2000000 : quick ? 20000000 : 50000000;
  // The best of three trials of the FMA kernel, one before each triad
  // below rather than three in a row (about 0.1 s each): two float runs on
  // a shared Zen 5 VM measured 234-241 GFLOP/s at their start, against
  // 460-475 in every run before and after them, as one core of the VM was
  // taken for a moment, and every cell bounded by the peak had half its
  // bound. Spread over the second or two of the triads, one trial misses
  // such a moment more often than three in a row do.
  const auto peak_trial = [&] {
    const double p = single ? measure_peak<float>(iters) : measure_peak<double>(iters);
    lim.peak_gflops    = std::max(lim.peak_gflops, p);
  };
  peak_trial();
  // DRAM: three arrays of max(4 x L3, 64 MiB) bytes each.
  const std::size_t dram =
      (check_only ? std::size_t(8) << 20 : std::max<std::size_t>(4 * lim.l3_bytes, 64u << 20)) /
      sizeof(double);
  lim.bw_dram = measure_triad(dram, quick ? 4 : 6);
  peak_trial();
  // L3: the three arrays together take 40% of L3 and 4x the L2 of all
  // threads, so they live in L3 and not in L2.
  const std::size_t l3 =
      (check_only ? std::size_t(4) << 20
                  : std::max<std::size_t>(lim.l3_bytes * 2 / 5,
                                          4 * lim.l2_bytes * std::size_t(lim.threads))) /
      (3 * sizeof(double));
  lim.bw_l3 = measure_triad(l3, quick ? 20 : 40);
  peak_trial();
  // L2: each thread's share of the three arrays takes 40% of its L2.
  const std::size_t l2 = lim.l2_bytes * 2 / 5 * std::size_t(lim.threads) / (3 * sizeof(double));
  lim.bw_l2 = measure_triad(l2, quick ? 200 : 500);
  return lim;
}

}  // namespace bench
