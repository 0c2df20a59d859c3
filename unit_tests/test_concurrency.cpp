// Concurrency: host threads calling ibla at the same time on different data,
// each on its own execution space instance, get the results they would get
// alone (checked against CBLAS and bitwise against a sequential run).
//
// Kokkos' OpenMP backend cannot be entered from arbitrary std::threads; its
// supported way to run several host threads, each with its own OpenMP
// instance, is OpenMP::partition_master in Kokkos 3.x (one "master" thread
// per partition, each with a private thread pool) and, since partition_master
// was removed in 4.0, Experimental::partition_space: instances with their own
// pools, each used by one thread of an enclosing (nested) OpenMP parallel
// region, as Kokkos' own TestExecSpacePartitioning does. With 2 partitions
// every partition runs its own sequence of ibla calls (gemm and convert on
// its own Views) while the other does the same. ibla keeps no mutable global
// state but one thread-local hint (getrf_last_block_swapped), which picks the
// GETRF form a thread tries first, never a result: the calls share nothing
// but the (read-only) code.
#include "support/reference.hpp"
#include "support/configs.hpp"  // its gemm calls are instances (instances.hpp)

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <omp.h>

using namespace ibla_test;
using ibla::Op;

// Only the OpenMP test below uses Job: without OpenMP (a CUDA build of the
// tests with a Serial host) its unused members made nvcc warn (#177-D).
#if defined(KOKKOS_ENABLE_OPENMP)
namespace {

/// The work of one thread: its own batch, its own sizes.
struct Job {
  int m, n, k;
  index_t batch;
  HostBatch<double> hA, hB, hC;
  Kokkos::View<double***, ibla::LayoutBlockInterleaved<8>> A, B, C;
  Kokkos::View<double***, Kokkos::LayoutRight> Cout;
  Job(int m_, int n_, int k_, index_t batch_, std::uint64_t seed)
      : m(m_), n(n_), k(k_), batch(batch_),
        hA(random_batch<double>(batch_, m_, k_, seed)),
        hB(random_batch<double>(batch_, k_, n_, seed + 1)),
        hC(random_batch<double>(batch_, m_, n_, seed + 2)),
        A("A", batch_, m_, k_), B("B", batch_, k_, n_), C("C", batch_, m_, n_),
        Cout("Cout", batch_, m_, n_) {
    fill_view(A, hA);
    fill_view(B, hB);
    fill_view(C, hC);
  }
  /// Many small calls, so that the two threads' calls interleave.
  template <class Exec>
  void run(const Exec& exec, int repeats) const {
    for (int r = 0; r < repeats; ++r) ibla::gemm(exec, Op::N, Op::N, 1.0, A, B, -1.0, C);
    ibla::convert(exec, C, Cout);
    exec.fence();
  }
  /// The reference: the same sequence through CBLAS.
  HostBatch<double> reference(int repeats) const {
    HostBatch<double> c = hC;
    for (int r = 0; r < repeats; ++r) c = ref_gemm_batch(Op::N, Op::N, 1.0, hA, hB, -1.0, c);
    return c;
  }
};

}  // namespace
#endif

TEST(Concurrency, TwoOpenMPPartitionsCallIblaAtOnce) {
#if !defined(KOKKOS_ENABLE_OPENMP)
  GTEST_SKIP() << "Kokkos built without OpenMP";
#else
  constexpr int repeats = 5;  // C <- A B - C, five times
  Job jobs[2] = {Job(5, 7, 3, 1003, 11), Job(16, 9, 12, 517, 23)};
  // Sequential results first: what each job gives alone.
  HostBatch<double> alone[2];
  for (int t = 0; t < 2; ++t) {
    Job j(jobs[t].m, jobs[t].n, jobs[t].k, jobs[t].batch, t == 0 ? 11 : 23);
    j.run(Kokkos::DefaultHostExecutionSpace(), repeats);
    alone[t] = read_view(j.Cout);
  }

  const int levels = omp_get_max_active_levels();
  omp_set_max_active_levels(2);
  std::atomic<int> started{0}, partitions{0};
  std::atomic<bool> overlapped{false};
  // Partition id of count runs its job on exec.
  auto run_partition = [&](int id, int count, const Kokkos::OpenMP& exec) {
    partitions = count;
    if (count != 2) return;
    // Wait (bounded) for the other partition so the calls overlap.
    started.fetch_add(1);
    for (long spin = 0; started.load() < 2 && spin < 100000000L; ++spin) {
    }
    overlapped = overlapped || started.load() == 2;
    jobs[id].run(exec, repeats);
  };
#if KOKKOS_VERSION >= 40000
  if (Kokkos::OpenMP().concurrency() >= 2) {
    const auto instances = Kokkos::Experimental::partition_space(Kokkos::OpenMP(), 1, 1);
#pragma omp parallel num_threads(2)
    run_partition(omp_get_thread_num(), omp_get_num_threads(),
                  instances[omp_get_thread_num() % 2]);
  }
#else
  Kokkos::OpenMP::partition_master(
      [&](int id, int count) { run_partition(id, count, Kokkos::OpenMP()); }, 2, 1);
#endif
  omp_set_max_active_levels(levels);
  if (partitions != 2) GTEST_SKIP() << "the OpenMP backend gave no 2 partitions";
  EXPECT_TRUE(overlapped.load());
  for (int t = 0; t < 2; ++t) {
    SCOPED_TRACE(::testing::Message() << "partition " << t);
    const auto got = read_view(jobs[t].Cout);
    const auto ref = jobs[t].reference(repeats);
    // repeats chained GEMMs: the error bound of one call, times repeats.
    HostBatch<double> zero(ref.batch, ref.rows, ref.cols);
    for (index_t b = 0; b < got.batch; ++b)
      for (index_t e = 0; e < got.rows * got.cols; ++e) {
        const double x = got.matrix(b)[e], y = ref.matrix(b)[e];
        ASSERT_LE(std::abs(x - y), repeats * 2.0 * (jobs[t].k + 2) * eps<double>() *
                                       (jobs[t].k * repeats + 1.0) * (1 + std::abs(y)))
            << "problem " << b << " element " << e;
      }
    // And bit for bit what the job gave alone.
    EXPECT_EQ(std::memcmp(got.data.data(), alone[t].data.data(), got.data.size() * sizeof(double)), 0);
  }
#endif
}
