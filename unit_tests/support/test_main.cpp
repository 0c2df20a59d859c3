// GoogleTest main that brackets the whole run with Kokkos::initialize/finalize.
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#ifndef GTEST_FLAG_GET  // GoogleTest < 1.12
#define GTEST_FLAG_GET(name) ::testing::GTEST_FLAG(name)
#endif

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // Every test case allocates its Views and host batches anew (up to 8 MB a
  // matrix: 1001 problems of order 32) and frees them at its end. glibc
  // serves blocks that large with mmap and unmaps them on free, so each case
  // took fresh pages from the kernel, and a page fault for every 4 KB it
  // touched. Served from the heap and kept there when freed, the same memory
  // is reused from case to case. On the CI's VM kind page faults are dear:
  // Gemm/0.SquareSizesAllOpsAndBatchCounts took 12.6-14.5 s (5.5-6.0 s of
  // it system time) with glibc's defaults, 4.5 s (0.2 s) with these
  // (2026-11-28). 32 MiB is the largest threshold glibc accepts; larger
  // blocks (TenMillion.*) are still mapped. No result changes: only where
  // the memory comes from. Sanitizer builds replace malloc, and mallopt with it.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  ::testing::InitGoogleTest(&argc, argv);
  // Listing the tests (gtest_discover_tests at build or ctest time) runs none,
  // so Kokkos stays uninitialised: its OpenMP backend prints a warning when
  // OMP_PROC_BIND is unset, and CMake's discovery parsed those lines as three
  // test names (tests with an empty filter, which always passed).
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
