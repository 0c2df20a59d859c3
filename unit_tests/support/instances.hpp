// Explicit instantiations of ibla's batch-level calls for the test suite's
// own View types, so that each is compiled once (support/instances/*.cpp)
// instead of once per test file that calls it. A batch-level call
// instantiates its kernels for every n = 1..32, and the same (operation,
// configuration) pairs are called from the sweeps, the determinism and the
// edge-case tests. Measured (g++ 12, -O2, one core): test_determinism_solvers.cpp
// 57 s with its calls instantiated in the file, 9 s with them extern; the
// unit tests' objects 1183 -> ~850 CPU-s in all, instances included.
//
// Only the compile time changes: a call with other types (a rank-2 B, an
// info View of another layout, Kokkos::Serial) is instantiated in its file as
// before. A test target that links ibla_test_instances_<kind> gets
// IBLA_TEST_<KIND>_INSTANCES defined (unit_tests/CMakeLists.txt), and with it
// the extern declarations below; a target that does not (test_layouts,
// test_convert, ...) instantiates everything itself. The sanitizer and CUDA
// builds use the same targets, so the same instances.
//
// The canonical types, per configuration C (support/configs.hpp):
// matrices view_t, pivots rank2_view_t<int>, info info_view_t (batch.hpp),
// scalars C::value_type, the default execution space.
// Included at the end of support/configs.hpp.
#pragma once

namespace ibla_test::eti {
using Exec = Kokkos::DefaultExecutionSpace;
template <class C>
using S = typename C::value_type;
template <class C>
using M = view_t<S<C>, typename C::layout_type>;
template <class C>
using P = rank2_view_t<int, typename C::layout_type>;
template <class C>
using I = info_view_t<typename C::layout_type>;
}  // namespace ibla_test::eti

// One operation on one configuration c (a name in ibla_test::cfg); EXT is
// `extern` (declaration) or empty (definition).
#define IBLA_TEST_GEMM_INSTANCE(EXT, c)                                                          \
  EXT template void ibla::gemm(const ibla_test::eti::Exec&, ibla::Op, ibla::Op,                  \
                               ibla_test::eti::S<ibla_test::cfg::c>,                             \
                               const ibla_test::eti::M<ibla_test::cfg::c>&,                      \
                               const ibla_test::eti::M<ibla_test::cfg::c>&,                      \
                               ibla_test::eti::S<ibla_test::cfg::c>,                             \
                               const ibla_test::eti::M<ibla_test::cfg::c>&);
#define IBLA_TEST_TRSM_INSTANCE(EXT, c)                                                          \
  EXT template void ibla::trsm(const ibla_test::eti::Exec&, ibla::Side, ibla::Uplo, ibla::Op,    \
                               ibla::Diag, ibla_test::eti::S<ibla_test::cfg::c>,                 \
                               const ibla_test::eti::M<ibla_test::cfg::c>&,                      \
                               const ibla_test::eti::M<ibla_test::cfg::c>&);
#define IBLA_TEST_POTRF_INSTANCE(EXT, c)                                                         \
  EXT template void ibla::potrf(const ibla_test::eti::Exec&, ibla::Uplo,                         \
                                const ibla_test::eti::M<ibla_test::cfg::c>&,                     \
                                const ibla_test::eti::I<ibla_test::cfg::c>&);
#define IBLA_TEST_POTRS_INSTANCE(EXT, c)                                                         \
  EXT template void ibla::potrs(const ibla_test::eti::Exec&, ibla::Uplo,                         \
                                const ibla_test::eti::M<ibla_test::cfg::c>&,                     \
                                const ibla_test::eti::M<ibla_test::cfg::c>&);
#define IBLA_TEST_POSV_INSTANCE(EXT, c)                                                          \
  EXT template void ibla::posv(const ibla_test::eti::Exec&, ibla::Uplo,                          \
                               const ibla_test::eti::M<ibla_test::cfg::c>&,                      \
                               const ibla_test::eti::M<ibla_test::cfg::c>&,                      \
                               const ibla_test::eti::I<ibla_test::cfg::c>&);
#define IBLA_TEST_GETRF_INSTANCE(EXT, c)                                                         \
  EXT template void ibla::getrf(const ibla_test::eti::Exec&,                                     \
                                const ibla_test::eti::M<ibla_test::cfg::c>&,                     \
                                const ibla_test::eti::P<ibla_test::cfg::c>&,                     \
                                const ibla_test::eti::I<ibla_test::cfg::c>&);
#define IBLA_TEST_GETRS_INSTANCE(EXT, c)                                                         \
  EXT template void ibla::getrs(const ibla_test::eti::Exec&, ibla::Op,                           \
                                const ibla_test::eti::M<ibla_test::cfg::c>&,                     \
                                const ibla_test::eti::P<ibla_test::cfg::c>&,                     \
                                const ibla_test::eti::M<ibla_test::cfg::c>&);
#define IBLA_TEST_GESV_INSTANCE(EXT, c)                                                          \
  EXT template void ibla::gesv(const ibla_test::eti::Exec&,                                      \
                               const ibla_test::eti::M<ibla_test::cfg::c>&,                      \
                               const ibla_test::eti::P<ibla_test::cfg::c>&,                      \
                               const ibla_test::eti::M<ibla_test::cfg::c>&,                      \
                               const ibla_test::eti::I<ibla_test::cfg::c>&);

// Which configurations each operation is instantiated for: those of its
// sweep (getrf runs the full sweep; gesv and the edge-case and determinism
// tests call it on the solver configurations, a subset).
#define IBLA_TEST_EXTERN_GEMM(c) IBLA_TEST_GEMM_INSTANCE(extern, c)
#define IBLA_TEST_EXTERN_GETRF(c) IBLA_TEST_GETRF_INSTANCE(extern, c)
#define IBLA_TEST_EXTERN_SOLVERS(c)     \
  IBLA_TEST_TRSM_INSTANCE(extern, c)    \
  IBLA_TEST_POTRF_INSTANCE(extern, c)   \
  IBLA_TEST_POTRS_INSTANCE(extern, c)   \
  IBLA_TEST_POSV_INSTANCE(extern, c)    \
  IBLA_TEST_GETRS_INSTANCE(extern, c)   \
  IBLA_TEST_GESV_INSTANCE(extern, c)

#if defined(IBLA_TEST_GEMM_INSTANCES)
IBLA_TEST_SWEEP_CONFIGS(IBLA_TEST_EXTERN_GEMM, )
#endif
#if defined(IBLA_TEST_SOLVER_INSTANCES)
IBLA_TEST_SWEEP_CONFIGS(IBLA_TEST_EXTERN_GETRF, )
IBLA_TEST_SOLVER_SWEEP_CONFIGS(IBLA_TEST_EXTERN_SOLVERS, )
#endif
