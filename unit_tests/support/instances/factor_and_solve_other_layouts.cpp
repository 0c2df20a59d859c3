// factor_and_solve.cpp and triangular_solves.cpp for the configurations of
// the other layouts (not those whose matrices lie one after another, which
// run the native kernels: factor_and_solve.cpp), which CMake compiles with
// IBLA_HOST_SPECIALISED_ORDERS set to IBLA_TESTS_OTHER_LAYOUT_ORDERS
// (unit_tests/CMakeLists.txt says why). A unit of its own: that definition
// changes the kernels of every operation but GEMM, and none of those it
// instantiates is instantiated by another unit (check_instance_symbols.py
// checks it at test time; the triangular solves' register forms they share
// are the same code, see the static_assert below). GESV's and POSV's solves
// and batch-level GETRS and POTRS share their masked triangular solves here,
// in one unit.
#include "support/configs.hpp"

#define IBLA_TEST_DEFINE_GETRF(c) IBLA_TEST_GETRF_INSTANCE(, c)
IBLA_TEST_OTHER_SWEEP_CONFIGS(IBLA_TEST_DEFINE_GETRF, )
#define IBLA_TEST_DEFINE_SOLVERS(c) IBLA_TEST_SOLVERS_OF(, c)
IBLA_TEST_OTHER_SOLVER_SWEEP_CONFIGS(IBLA_TEST_DEFINE_SOLVERS, )
IBLA_TEST_OTHER_LAYOUT_FACTOR_AND_SOLVE_CALLS()

#if defined(IBLA_HOST_SPECIALISED_ORDERS) && !IBLA_IMPL_DEVICE_PASS
// The triangular solves' register forms (TRSM, POTRS, and GETRS on runtime
// row strides: orders up to trsm_register_order; LASWP's up to 4) are also
// instantiated by the other units on lane blocks of these layouts: a
// transposed native block has the lane block of LayoutInterleaved or
// LayoutLeft. With every one of their orders listed, those functions are
// the same code with and without the list (check_instance_symbols.py).
static_assert(
    [] {
      for (int n = 1; n <= ibla::impl::trsm_register_order; ++n)
        if (!ibla::detail::host_order_listed(n)) return false;
      return ibla::impl::laswp_register_order <= ibla::impl::trsm_register_order;
    }(),
    "IBLA_TESTS_OTHER_LAYOUT_ORDERS must list every order up to ibla::impl::trsm_register_order");
#endif
