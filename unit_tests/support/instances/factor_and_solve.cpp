// ibla::potrf, ibla::posv, ibla::getrf and ibla::gesv for the test suite's
// native configurations (support/configs.hpp), compiled once for every test
// file that calls them (support/instances.hpp), and every solver for the
// configurations whose matrices lie one after another, which run the native
// kernels on packed blocks; the other layouts are in
// factor_and_solve_other_layouts.cpp. One unit for the four: posv is potrf
// plus triangular solves masked by info, gesv is getrf plus the same, and
// with one object per operation potrf's code was compiled again in posv's
// (90% of potrf's object), getrf's in gesv's (53%) and the masked solves in
// both (60% of posv's object was also in gesv's; nm sizes, g++ 12).
#include "support/configs.hpp"

#define IBLA_TEST_DEFINE_FACTOR_AND_SOLVE(c) \
  IBLA_TEST_GETRF_INSTANCE(, c)              \
  IBLA_TEST_POTRF_INSTANCE(, c)              \
  IBLA_TEST_POSV_INSTANCE(, c)               \
  IBLA_TEST_GESV_INSTANCE(, c)
IBLA_TEST_NATIVE_CONFIGS(IBLA_TEST_DEFINE_FACTOR_AND_SOLVE, )
IBLA_TEST_NATIVE_FACTOR_AND_SOLVE_CALLS()
#if IBLA_TEST_HOST_DEFAULT_MEMORY
IBLA_TEST_HOST_FACTOR_AND_SOLVE_CALLS()
#endif

#define IBLA_TEST_DEFINE_GETRF(c) IBLA_TEST_GETRF_INSTANCE(, c)
IBLA_TEST_APART_SWEEP_CONFIGS(IBLA_TEST_DEFINE_GETRF, )
#define IBLA_TEST_DEFINE_SOLVERS(c) IBLA_TEST_SOLVERS_OF(, c)
IBLA_TEST_APART_SOLVER_SWEEP_CONFIGS(IBLA_TEST_DEFINE_SOLVERS, )
IBLA_TEST_APART_FACTOR_AND_SOLVE_CALLS()
