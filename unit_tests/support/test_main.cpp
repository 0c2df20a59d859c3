// GoogleTest main that brackets the whole run with Kokkos::initialize/finalize.
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>

#ifndef GTEST_FLAG_GET  // GoogleTest < 1.12
#define GTEST_FLAG_GET(name) ::testing::GTEST_FLAG(name)
#endif

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Listing the tests (gtest_discover_tests at build or ctest time) runs none,
  // so Kokkos stays uninitialised: its OpenMP backend prints a warning when
  // OMP_PROC_BIND is unset, and CMake's discovery parsed those lines as three
  // test names (tests with an empty filter, which always passed).
  if (GTEST_FLAG_GET(list_tests)) return RUN_ALL_TESTS();
  Kokkos::ScopeGuard kokkos(argc, argv);
  return RUN_ALL_TESTS();
}
