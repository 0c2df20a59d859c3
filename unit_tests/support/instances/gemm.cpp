// ibla::gemm for the test suite's size-sweep configurations, compiled once for
// every test file that calls it (support/instances.hpp), and on
// Kokkos::Serial for test_determinism where the host reaches the Views.
#include "support/configs.hpp"

#define IBLA_TEST_DEFINE_GEMM(c) IBLA_TEST_GEMM_INSTANCE(, c)
IBLA_TEST_SWEEP_CONFIGS(IBLA_TEST_DEFINE_GEMM, )
IBLA_TEST_OTHER_GEMM_CALLS()
#if IBLA_TEST_HOST_DEFAULT_MEMORY
IBLA_TEST_HOST_GEMM_CALLS()
#endif
#if IBLA_TEST_SERIAL_GEMM_CALLS
#define IBLA_TEST_DEFINE_GEMM_SERIAL(c) IBLA_TEST_GEMM_ON(, Kokkos::Serial, c)
IBLA_TEST_SWEEP_CONFIGS(IBLA_TEST_DEFINE_GEMM_SERIAL, )
#endif
