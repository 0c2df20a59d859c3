// ibla::posv for the test suite's solver-sweep configurations, compiled once for
// every test file that calls it (support/instances.hpp).
#include "support/configs.hpp"

#define IBLA_TEST_DEFINE_POSV(c) IBLA_TEST_POSV_INSTANCE(, c)
IBLA_TEST_SOLVER_SWEEP_CONFIGS(IBLA_TEST_DEFINE_POSV, )
