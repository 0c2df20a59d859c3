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
// before, unless it is one of the "other calls" below. A test target that
// links ibla_test_instances_<kind> gets
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
template <class C>
using V = rank2_view_t<S<C>, typename C::layout_type>;  // a rank-2 B: one right-hand side
// Pivots and info of another layout than the matrices': LayoutRight
// (test_determinism_solvers, matrices one after another), and unmanaged
// Views of the configuration's layout in host memory (test_gesv, pivots and
// info not aligned).
template <class C>
using PR = Kokkos::View<int**, Kokkos::LayoutRight>;
template <class C>
using IR = Kokkos::View<int*, Kokkos::LayoutRight>;
template <class C>
using PU = Kokkos::View<int**, typename C::layout_type, Kokkos::HostSpace,
                        Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class C>
using IU = Kokkos::View<int*, typename C::layout_type, Kokkos::HostSpace,
                        Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
}  // namespace ibla_test::eti

// One operation on one configuration c (a name in ibla_test::cfg); EXT is
// `extern` (declaration) or empty (definition). The operations whose other
// calls (below) change an operand are spelled once in a general form: gemm
// on execution space X; trsm with A of configuration a and B of b; posv and
// gesv with B of type BT<c> (M: rank 3, V: rank 2).
#define IBLA_TEST_GEMM_ON(EXT, X, c)                                                             \
  EXT template void ibla::gemm(const X&, ibla::Op, ibla::Op,                                     \
                               ibla_test::eti::S<ibla_test::cfg::c>,                             \
                               const ibla_test::eti::M<ibla_test::cfg::c>&,                      \
                               const ibla_test::eti::M<ibla_test::cfg::c>&,                      \
                               ibla_test::eti::S<ibla_test::cfg::c>,                             \
                               const ibla_test::eti::M<ibla_test::cfg::c>&);
#define IBLA_TEST_TRSM_WITH(EXT, a, b, BT)                                                       \
  EXT template void ibla::trsm(const ibla_test::eti::Exec&, ibla::Side, ibla::Uplo, ibla::Op,    \
                               ibla::Diag, ibla_test::eti::S<ibla_test::cfg::a>,                 \
                               const ibla_test::eti::M<ibla_test::cfg::a>&,                      \
                               const ibla_test::eti::BT<ibla_test::cfg::b>&);
#define IBLA_TEST_POSV_WITH(EXT, c, BT) IBLA_TEST_POSV_INTS(EXT, c, BT, I)
#define IBLA_TEST_POSV_INTS(EXT, c, BT, IT)                                                      \
  EXT template void ibla::posv(const ibla_test::eti::Exec&, ibla::Uplo,                          \
                               const ibla_test::eti::M<ibla_test::cfg::c>&,                      \
                               const ibla_test::eti::BT<ibla_test::cfg::c>&,                     \
                               const ibla_test::eti::IT<ibla_test::cfg::c>&);
#define IBLA_TEST_GESV_WITH(EXT, c, BT) IBLA_TEST_GESV_INTS(EXT, c, BT, P, I)
#define IBLA_TEST_GESV_INTS(EXT, c, BT, PT, IT)                                                  \
  EXT template void ibla::gesv(const ibla_test::eti::Exec&,                                      \
                               const ibla_test::eti::M<ibla_test::cfg::c>&,                      \
                               const ibla_test::eti::PT<ibla_test::cfg::c>&,                     \
                               const ibla_test::eti::BT<ibla_test::cfg::c>&,                     \
                               const ibla_test::eti::IT<ibla_test::cfg::c>&);
#define IBLA_TEST_GEMM_INSTANCE(EXT, c) IBLA_TEST_GEMM_ON(EXT, ibla_test::eti::Exec, c)
#define IBLA_TEST_TRSM_INSTANCE(EXT, c) IBLA_TEST_TRSM_WITH(EXT, c, c, M)
#define IBLA_TEST_POTRF_INSTANCE(EXT, c) IBLA_TEST_POTRF_INTS(EXT, c, I)
#define IBLA_TEST_POTRF_INTS(EXT, c, IT)                                                         \
  EXT template void ibla::potrf(const ibla_test::eti::Exec&, ibla::Uplo,                         \
                                const ibla_test::eti::M<ibla_test::cfg::c>&,                     \
                                const ibla_test::eti::IT<ibla_test::cfg::c>&);
#define IBLA_TEST_POTRS_INSTANCE(EXT, c)                                                         \
  EXT template void ibla::potrs(const ibla_test::eti::Exec&, ibla::Uplo,                         \
                                const ibla_test::eti::M<ibla_test::cfg::c>&,                     \
                                const ibla_test::eti::M<ibla_test::cfg::c>&);
#define IBLA_TEST_POSV_INSTANCE(EXT, c) IBLA_TEST_POSV_WITH(EXT, c, M)
#define IBLA_TEST_GETRF_INSTANCE(EXT, c) IBLA_TEST_GETRF_INTS(EXT, c, P, I)
#define IBLA_TEST_GETRF_INTS(EXT, c, PT, IT)                                                     \
  EXT template void ibla::getrf(const ibla_test::eti::Exec&,                                     \
                                const ibla_test::eti::M<ibla_test::cfg::c>&,                     \
                                const ibla_test::eti::PT<ibla_test::cfg::c>&,                    \
                                const ibla_test::eti::IT<ibla_test::cfg::c>&);
#define IBLA_TEST_GETRS_INSTANCE(EXT, c) IBLA_TEST_GETRS_INTS(EXT, c, P)
#define IBLA_TEST_GETRS_INTS(EXT, c, PT)                                                         \
  EXT template void ibla::getrs(const ibla_test::eti::Exec&, ibla::Op,                           \
                                const ibla_test::eti::M<ibla_test::cfg::c>&,                     \
                                const ibla_test::eti::PT<ibla_test::cfg::c>&,                    \
                                const ibla_test::eti::M<ibla_test::cfg::c>&);
#define IBLA_TEST_GESV_INSTANCE(EXT, c) IBLA_TEST_GESV_WITH(EXT, c, M)

// Other calls of the test files: types whose kernels are mostly those of
// a configuration above, because a kernel is compiled for the lane blocks
// of its operands (lane_block: value type, L and the kinds of stride), not
// for their Views: a rank-2 B (the factorization is the same), LayoutRight
// beside LayoutStride (runtime strides both), LayoutLeft beside
// LayoutInterleaved, Kokkos::Serial (the same lane loops). Compiled in the
// test file, such a call compiled those kernels a second time: of the code
// of test_edge_cases_solvers.o 67% was also in the instance objects, of
// test_determinism.o 60%, test_posv.o 57%, test_gesv.o 38%, test_trsm.o
// 37% (g++ 12, -O1, nm). Instantiated in the unit that compiles those
// kernels anyway, they cost little more than the calls themselves.
// By unit: support/instances/factor_and_solve.cpp and, for the calls with
// operands of other layouts, factor_and_solve_other_layouts.cpp
// (test_edge_cases_solvers, test_posv, test_gesv, test_getrf and
// test_determinism_solvers), triangular_solves.cpp (test_edge_cases_solvers
// and test_trsm), gemm.cpp (test_determinism: other layouts, kernel-level
// calls, and Kokkos::Serial where the host can reach the Views, as there).
// The factorizations' in two groups, as their configurations
// (support/configs.hpp and support/instances/factor_and_solve*.cpp): calls
// on native configurations, and calls with operands of other layouts.
#define IBLA_TEST_NATIVE_FACTOR_AND_SOLVE_CALLS(EXT) \
  IBLA_TEST_POSV_WITH(EXT, d_block8, V)              \
  IBLA_TEST_GESV_WITH(EXT, d_block8, V)              \
  IBLA_TEST_GETRF_INTS(EXT, d_block8, PR, IR)
#define IBLA_TEST_OTHER_LAYOUT_FACTOR_AND_SOLVE_CALLS(EXT) IBLA_TEST_POSV_WITH(EXT, f_left, V)
// Matrices one after another: packed into the native layout (configs.hpp).
// test_determinism_solvers runs every solver on d_right and on d_stride
// with pivots and info in LayoutRight. With these and the host calls below
// compiled in the test files, test_determinism_solvers.cpp took 259 s and
// test_gesv.cpp 178 s (-O1, two compiles side by side, 2026-12-07); 59 and
// 15 s with them here, where they added 10-15 s to factor_and_solve.cpp.
#define IBLA_TEST_APART_FACTOR_AND_SOLVE_CALLS(EXT) \
  IBLA_TEST_GETRF_INSTANCE(EXT, d_right)            \
  IBLA_TEST_POTRF_INSTANCE(EXT, d_right)            \
  IBLA_TEST_POSV_INSTANCE(EXT, d_right)             \
  IBLA_TEST_POTRS_INSTANCE(EXT, d_right)            \
  IBLA_TEST_GETRS_INSTANCE(EXT, d_right)            \
  IBLA_TEST_GESV_INSTANCE(EXT, d_right)             \
  IBLA_TEST_GESV_WITH(EXT, f_stride, V)             \
  IBLA_TEST_GETRF_INTS(EXT, d_stride, PR, IR)       \
  IBLA_TEST_POTRF_INTS(EXT, d_stride, IR)           \
  IBLA_TEST_POSV_INTS(EXT, d_stride, M, IR)         \
  IBLA_TEST_GETRS_INTS(EXT, d_stride, PR)           \
  IBLA_TEST_GESV_INTS(EXT, d_stride, M, PR, IR)
// Host builds only (IBLA_TEST_HOST_DEFAULT_MEMORY, below): test_gesv's GESV
// with pivots and info in unmanaged host Views.
#define IBLA_TEST_HOST_FACTOR_AND_SOLVE_CALLS(EXT) \
  IBLA_TEST_GESV_INTS(EXT, d_block8, M, PU, IU)    \
  IBLA_TEST_GESV_INTS(EXT, f_block16, M, PU, IU)
#define IBLA_TEST_OTHER_FACTOR_AND_SOLVE_CALLS(EXT) \
  IBLA_TEST_NATIVE_FACTOR_AND_SOLVE_CALLS(EXT)      \
  IBLA_TEST_OTHER_LAYOUT_FACTOR_AND_SOLVE_CALLS(EXT) \
  IBLA_TEST_APART_FACTOR_AND_SOLVE_CALLS(EXT)
#define IBLA_TEST_OTHER_TRIANGULAR_SOLVE_CALLS(EXT) \
  IBLA_TEST_TRSM_INSTANCE(EXT, d_right)             \
  IBLA_TEST_TRSM_WITH(EXT, d_block8, d_block8, V)   \
  IBLA_TEST_TRSM_WITH(EXT, d_right, d_right, V)     \
  IBLA_TEST_TRSM_WITH(EXT, f_right, f_right, V)     \
  IBLA_TEST_TRSM_WITH(EXT, d_block8, d_right, M)
// GEMM's: the layouts test_determinism compares with the native one (a
// block of another L, LayoutInterleaved, matrices one after another in both
// precisions), and two kernel-level calls it makes on host Views of the
// native layouts: a GemmBlocks with its flags set by the test, run by
// run_gemm_blocks (below), and the matrix-at-a-time form on matrices apart.
// Both are the code of the native configurations' ibla::gemm, which gemm.cpp
// compiles anyway; in test_determinism.cpp they compiled it again (3.9 of
// its 5.2 MB of code were also in gemm.o, 135 s of compile; g++ 12, -O1).
#define IBLA_TEST_GEMM_MATRIX_ROWS_WITH(EXT, c)                                                 \
  EXT template bool ibla::impl::gemm_matrix_rows_batch(                                         \
      const ibla_test::eti::Exec&, ibla::Op, ibla::Op, ibla_test::eti::S<ibla_test::cfg::c>,     \
      const ibla_test::eti::M<ibla_test::cfg::c>&, const ibla_test::eti::M<ibla_test::cfg::c>&, \
      ibla_test::eti::S<ibla_test::cfg::c>, const ibla_test::eti::M<ibla_test::cfg::c>&);
// And test_gemm's block-interleaved A and C with a LayoutRight B.
#define IBLA_TEST_OTHER_GEMM_CALLS(EXT)                                                          \
  IBLA_TEST_GEMM_INSTANCE(EXT, d_block32)                                                        \
  IBLA_TEST_GEMM_INSTANCE(EXT, d_interl)                                                         \
  IBLA_TEST_GEMM_INSTANCE(EXT, d_right)                                                          \
  IBLA_TEST_GEMM_INSTANCE(EXT, f_stride)                                                         \
  EXT template void ibla::gemm(const ibla_test::eti::Exec&, ibla::Op, ibla::Op, double,          \
                               const ibla_test::eti::M<ibla_test::cfg::d_block8>&,               \
                               const ibla_test::eti::M<ibla_test::cfg::d_right>&, double,        \
                               const ibla_test::eti::M<ibla_test::cfg::d_block8>&);
// Host builds only (the test calls them on device builds' host Views, see
// host_view_t, and the matrix-at-a-time form is host code).
#define IBLA_TEST_HOST_GEMM_CALLS(EXT)                                    \
  IBLA_TEST_GEMM_MATRIX_ROWS_WITH(EXT, d_right)                           \
  IBLA_TEST_GEMM_MATRIX_ROWS_WITH(EXT, d_stride)                          \
  IBLA_TEST_GEMM_MATRIX_ROWS_WITH(EXT, f_right)                           \
  IBLA_TEST_GEMM_MATRIX_ROWS_WITH(EXT, f_stride)                          \
  EXT template void ibla_test::eti::run_gemm_blocks<double, 8>(const char*, \
      ibla::index_t, const ibla_test::eti::HostGemmBlocks<double, 8>&);    \
  EXT template void ibla_test::eti::run_gemm_blocks<float, 16>(const char*, \
      ibla::index_t, const ibla_test::eti::HostGemmBlocks<float, 16>&);
namespace ibla_test::eti {
template <class T, int L>
using HostBlockView = host_view_t<T, ibla::LayoutBlockInterleaved<L>>;
template <class T, int L>
using HostGemmBlocks = ibla::impl::GemmBlocks<T, HostBlockView<T, L>, HostBlockView<T, L>, HostBlockView<T, L>>;
/// blocks (GemmBlocks with the flags a test chose) over the first batch
/// problems of its Views, on the host, as ibla::gemm runs its blocks.
template <class T, int L>
void run_gemm_blocks(const char* label, ibla::index_t batch, const HostGemmBlocks<T, L>& blocks) {
  ibla::detail::for_each_block<L>(Kokkos::DefaultHostExecutionSpace(), label, batch,
                                  ibla::detail::problem_elements(blocks.A, blocks.B, blocks.C), blocks);
}
}  // namespace ibla_test::eti

#if !defined(KOKKOS_ENABLE_CUDA) && !defined(KOKKOS_ENABLE_HIP) && !defined(KOKKOS_ENABLE_SYCL) && \
    !defined(KOKKOS_ENABLE_OPENMPTARGET)
#define IBLA_TEST_HOST_DEFAULT_MEMORY 1  // the default memory space is the host's
#else
#define IBLA_TEST_HOST_DEFAULT_MEMORY 0
#endif
#if defined(KOKKOS_ENABLE_SERIAL) && IBLA_TEST_HOST_DEFAULT_MEMORY
#define IBLA_TEST_SERIAL_GEMM_CALLS 1
#else
#define IBLA_TEST_SERIAL_GEMM_CALLS 0
#endif
#define IBLA_TEST_EXTERN_GEMM_SERIAL(c) IBLA_TEST_GEMM_ON(extern, Kokkos::Serial, c)

// Which configurations each operation is instantiated for: those of its
// sweep (getrf runs the full sweep; gesv and the edge-case and determinism
// tests call it on the solver configurations, a subset).
#define IBLA_TEST_EXTERN_GEMM(c) IBLA_TEST_GEMM_INSTANCE(extern, c)
#define IBLA_TEST_EXTERN_GETRF(c) IBLA_TEST_GETRF_INSTANCE(extern, c)
// Every solver but GETRF (which runs the full sweep) for configuration c.
#define IBLA_TEST_SOLVERS_OF(EXT, c) \
  IBLA_TEST_TRSM_INSTANCE(EXT, c)    \
  IBLA_TEST_POTRF_INSTANCE(EXT, c)   \
  IBLA_TEST_POTRS_INSTANCE(EXT, c)   \
  IBLA_TEST_POSV_INSTANCE(EXT, c)    \
  IBLA_TEST_GETRS_INSTANCE(EXT, c)   \
  IBLA_TEST_GESV_INSTANCE(EXT, c)
#define IBLA_TEST_EXTERN_SOLVERS(c) IBLA_TEST_SOLVERS_OF(extern, c)

#if defined(IBLA_TEST_GEMM_INSTANCES)
IBLA_TEST_SWEEP_CONFIGS(IBLA_TEST_EXTERN_GEMM, )
IBLA_TEST_OTHER_GEMM_CALLS(extern)
#if IBLA_TEST_HOST_DEFAULT_MEMORY
IBLA_TEST_HOST_GEMM_CALLS(extern)
#endif
#if IBLA_TEST_SERIAL_GEMM_CALLS
IBLA_TEST_SWEEP_CONFIGS(IBLA_TEST_EXTERN_GEMM_SERIAL, )
#endif
#endif
#if defined(IBLA_TEST_SOLVER_INSTANCES)
IBLA_TEST_SWEEP_CONFIGS(IBLA_TEST_EXTERN_GETRF, )
IBLA_TEST_SOLVER_SWEEP_CONFIGS(IBLA_TEST_EXTERN_SOLVERS, )
IBLA_TEST_OTHER_FACTOR_AND_SOLVE_CALLS(extern)
#if IBLA_TEST_HOST_DEFAULT_MEMORY
IBLA_TEST_HOST_FACTOR_AND_SOLVE_CALLS(extern)
#endif
IBLA_TEST_OTHER_TRIANGULAR_SOLVE_CALLS(extern)
#endif
