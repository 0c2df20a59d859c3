// ibla::trsm, ibla::potrs and ibla::getrs for the test suite's native
// configurations, compiled once for every test file that calls them
// (support/instances.hpp); those of the other layouts are in
// factor_and_solve_other_layouts.cpp, with their fewer fixed-order forms. One unit for the three: their code is mostly the
// same triangular solves on the whole block (impl::trsm_left on the same
// lane blocks), which one object per operation compiled three times: 73-94%
// of each object's code was also in one of the other two (nm sizes, g++ 12).
#include "support/configs.hpp"

#define IBLA_TEST_DEFINE_TRIANGULAR_SOLVES(c) \
  IBLA_TEST_TRSM_INSTANCE(, c)                \
  IBLA_TEST_POTRS_INSTANCE(, c)               \
  IBLA_TEST_GETRS_INSTANCE(, c)
IBLA_TEST_NATIVE_CONFIGS(IBLA_TEST_DEFINE_TRIANGULAR_SOLVES, )
IBLA_TEST_OTHER_TRIANGULAR_SOLVE_CALLS()
