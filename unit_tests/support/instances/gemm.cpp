// ibla::gemm for the test suite's size-sweep configurations, compiled once for
// every test file that calls it (support/instances.hpp).
#include "support/configs.hpp"

#define IBLA_TEST_DEFINE_GEMM(c) IBLA_TEST_GEMM_INSTANCE(, c)
IBLA_TEST_SWEEP_CONFIGS(IBLA_TEST_DEFINE_GEMM, )
