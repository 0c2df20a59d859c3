// Typed-test configurations shared by the test files: a (value type, layout)
// pair per configuration, the list the size sweeps run over, and the block
// size a batch-level call uses for a configuration.
#pragma once

#include "support/batch.hpp"

#include <ibla/ibla.hpp>

#include <gtest/gtest.h>

#include <type_traits>

namespace ibla_test {

template <class T, class Layout>
struct Config {
  using value_type  = T;
  using layout_type = Layout;
};

// The configurations by name (the lists below and the explicit
// instantiations of support/instances.hpp name them).
namespace cfg {
using d_block8  = Config<double, ibla::LayoutBlockInterleaved<8>>;
using f_block16 = Config<float, ibla::LayoutBlockInterleaved<16>>;
using d_block5  = Config<double, ibla::LayoutBlockInterleaved<5>>;
using f_block8  = Config<float, ibla::LayoutBlockInterleaved<8>>;
using f_interl  = Config<float, ibla::LayoutInterleaved>;
using d_left    = Config<double, Kokkos::LayoutLeft>;
using f_right   = Config<float, Kokkos::LayoutRight>;
using d_stride  = Config<double, LayoutStrideColMajor>;
// In no sweep: the types of other calls of the test files that
// support/instances.hpp instantiates ("other calls" there).
using d_right  = Config<double, Kokkos::LayoutRight>;
using f_left   = Config<float, Kokkos::LayoutLeft>;
using f_stride = Config<float, LayoutStrideColMajor>;
using d_interl  = Config<double, ibla::LayoutInterleaved>;
using d_block32 = Config<double, ibla::LayoutBlockInterleaved<32>>;
}  // namespace cfg

// Each list once, as X(config) SEP X(config) ...: spelled as a gtest type
// list here and as explicit instantiations in support/instances.hpp.
// IBLA_TEST_SWEEP_SUBSET (CMake: IBLA_TESTS_SWEEP_SUBSET=ON) keeps two
// configurations, one per precision and lane-stride form (runtime: d_stride;
// block-interleaved: f_block16), for builds where each one costs far more:
// sm_90 SASS of the suite takes hours on 2 cores (ptxas 10-30 min a unit).
#if defined(IBLA_TEST_SWEEP_SUBSET)
#define IBLA_TEST_SWEEP_CONFIGS(X, SEP) X(f_block16) SEP X(d_stride)
#define IBLA_TEST_SOLVER_SWEEP_CONFIGS(X, SEP) X(f_block16) SEP X(d_stride)
#else
#define IBLA_TEST_SWEEP_CONFIGS(X, SEP)                                                        \
  X(d_block8) SEP X(f_block16) SEP X(d_block5) SEP X(f_block8) SEP X(f_interl) SEP X(d_left) \
  SEP X(f_right) SEP X(d_stride)
#define IBLA_TEST_SOLVER_SWEEP_CONFIGS(X, SEP) \
  X(d_block8) SEP X(f_block16) SEP X(d_block5) SEP X(f_interl) SEP X(d_stride)
#endif
#define IBLA_TEST_CONFIG_NAME(c) cfg::c
#define IBLA_TEST_COMMA ,

// The same configurations in three groups, for the instance units
// (support/instances.hpp): the native ones (block-interleaved, a block of
// one vector: the layout the library allocates by default); the other
// layouts, whose factorizations and triangular solves
// support/instances/factor_and_solve_other_layouts.cpp
// compiles with fewer fixed-order forms (IBLA_TESTS_OTHER_LAYOUT_ORDERS,
// unit_tests/CMakeLists.txt); and those whose matrices lie one after
// another (LayoutRight, LayoutStride), whose blocks the operations pack
// into the native layout and run with its kernels (pack.hpp): they are
// compiled with the native ones, every order, since the order list would
// change the native kernels' code in one unit only (check_instance_symbols.py).
// Separate lists rather than the lists above built from them: a list passes
// SEP on to another, which would expand IBLA_TEST_COMMA into an argument
// separator. The static_asserts below keep the groups equal to the lists.
#if defined(IBLA_TEST_SWEEP_SUBSET)
#define IBLA_TEST_NATIVE_CONFIGS(X, SEP) X(f_block16)
#define IBLA_TEST_OTHER_SWEEP_CONFIGS(X, SEP)
#define IBLA_TEST_OTHER_SOLVER_SWEEP_CONFIGS(X, SEP)
#define IBLA_TEST_APART_SWEEP_CONFIGS(X, SEP) X(d_stride)
#define IBLA_TEST_APART_SOLVER_SWEEP_CONFIGS(X, SEP) X(d_stride)
#else
#define IBLA_TEST_NATIVE_CONFIGS(X, SEP) X(d_block8) SEP X(f_block16)
#define IBLA_TEST_OTHER_SWEEP_CONFIGS(X, SEP) \
  X(d_block5) SEP X(f_block8) SEP X(f_interl) SEP X(d_left)
#define IBLA_TEST_OTHER_SOLVER_SWEEP_CONFIGS(X, SEP) X(d_block5) SEP X(f_interl)
#define IBLA_TEST_APART_SWEEP_CONFIGS(X, SEP) X(f_right) SEP X(d_stride)
#define IBLA_TEST_APART_SOLVER_SWEEP_CONFIGS(X, SEP) X(d_stride)
#endif

// The configurations of the size sweeps (every operation, every n, every op
// or uplo combination). Every layout appears, each precision on the native
// layout with a full-width block (8 doubles, 16 floats = one 64-byte vector),
// a block narrower than the vector (float, L = 8) and an odd L (5) whose
// blocks straddle vectors. The layout only changes how a block's strides are
// found (lane_block) and the value type only the arithmetic, so the other
// layouts run in one precision each instead of both: each configuration
// costs a full instantiation of the kernels, and the compile time of the
// test suite is what keeps CI short.
using SweepConfigs = ::testing::Types<IBLA_TEST_SWEEP_CONFIGS(IBLA_TEST_CONFIG_NAME, IBLA_TEST_COMMA)>;

// The solver sweeps (trsm, potrf, posv, gesv) instantiate the triangular
// solve tiles many times each (masks, fused chains); five configurations
// keep each file's compile time within a few minutes: both precisions on
// the native layout, the odd L, and the two other lane-stride forms
// (unit: LayoutInterleaved; runtime: LayoutStride). LayoutLeft and
// LayoutRight run through the same lane_block paths in test_getrf and the
// edge-case tests.
using SolverSweepConfigs =
    ::testing::Types<IBLA_TEST_SOLVER_SWEEP_CONFIGS(IBLA_TEST_CONFIG_NAME, IBLA_TEST_COMMA)>;

namespace detail {
template <class... C>
struct ConfigList {};
template <class... C1, class... C2, class... C3>
ConfigList<C1..., C2..., C3...> joined(ConfigList<C1...>, ConfigList<C2...>, ConfigList<C3...>);
#define IBLA_TEST_CONFIG_LIST(LIST) ConfigList<LIST(IBLA_TEST_CONFIG_NAME, IBLA_TEST_COMMA)>
#define IBLA_TEST_CONFIG_GROUPS(OTHERS, APART)                                   \
  decltype(joined(IBLA_TEST_CONFIG_LIST(IBLA_TEST_NATIVE_CONFIGS){},             \
                  IBLA_TEST_CONFIG_LIST(OTHERS){}, IBLA_TEST_CONFIG_LIST(APART){}))
static_assert(std::is_same<IBLA_TEST_CONFIG_LIST(IBLA_TEST_SWEEP_CONFIGS),
                           IBLA_TEST_CONFIG_GROUPS(IBLA_TEST_OTHER_SWEEP_CONFIGS,
                                                   IBLA_TEST_APART_SWEEP_CONFIGS)>::value,
              "the native, other-layout and apart groups must be the sweep configurations, in order");
static_assert(std::is_same<IBLA_TEST_CONFIG_LIST(IBLA_TEST_SOLVER_SWEEP_CONFIGS),
                           IBLA_TEST_CONFIG_GROUPS(IBLA_TEST_OTHER_SOLVER_SWEEP_CONFIGS,
                                                   IBLA_TEST_APART_SOLVER_SWEEP_CONFIGS)>::value,
              "the native, other-layout and apart groups must be the solver sweep configurations, in order");
#undef IBLA_TEST_CONFIG_LIST
#undef IBLA_TEST_CONFIG_GROUPS
}  // namespace detail

/// Matrices per block of a batch-level call on Views of this layout: L of a
/// block-interleaved layout, else the library's default for T (batch counts
/// around it put matrices in a full block and in the partial last one).
template <class T, class Layout>
constexpr int lanes_of() {
  if constexpr (ibla::is_block_interleaved_layout<Layout>::value) {
    return int(Layout::lanes_per_block);
  } else {
    return ibla::default_block_lanes<T, Kokkos::DefaultExecutionSpace>;
  }
}

}  // namespace ibla_test

#include "support/instances.hpp"
