#!/usr/bin/env bash
# Reruns unit tests under AddressSanitizer + UndefinedBehaviorSanitizer +
# LeakSanitizer, from a second build tree (by default the executables listed
# below, which reach every kernel; IBLA_SANITIZER_FULL=1 for the whole suite).
# Any report fails the stage (-fno-sanitize-recover=all, halt_on_error).
# Kokkos itself (.deps) is built without sanitizers: ASan still instruments
# every ibla kernel and test, which is where ibla's code is instantiated.
# -O0 -g (IBLA_SANITIZER_OPT to change it): on a quiet 2-core machine the
# stage took 316 s to build and 20 s to run at -O1, 117 s and 72 s at -O0;
# asserts stay on (no -DNDEBUG).
# Environment: IBLA_ASAN_BUILD_DIR (default: <main build>-asan),
# IBLA_SANITIZER_TESTS (test executables to build and run),
# IBLA_SANITIZER_FULL=1 (every test, through ctest), IBLA_SANITIZER_OPT
# (default -O0), IBLA_SKIP_SANITIZERS=1.
# Cost (measured on a loaded 2-core machine): the ASan build of one big test
# file takes about 3 min CPU; test_gemm's first of 12 typed configurations
# 40 s CPU under ASan at -O1 (about 8 min for all 12).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ "${IBLA_SKIP_SANITIZERS:-0}" = 1 ]; then
  echo "sanitizers: skipped (IBLA_SKIP_SANITIZERS=1)"
  exit 0
fi
build=${IBLA_ASAN_BUILD_DIR:-${IBLA_BUILD_DIR:-$here/build}-asan}
jobs=$(nproc)
start=$(date +%s)
san="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
CXXFLAGS="${CXXFLAGS:-} $san" "$here/scripts/configure.sh" "$build" \
  -DIBLA_ENABLE_TESTS=ON -DIBLA_ENABLE_BENCHMARKS=OFF \
  -DCMAKE_CXX_FLAGS_RELEASE="${IBLA_SANITIZER_OPT:--O0} -g" -DIBLA_TESTS_OPTIMIZATION= \
  -DCMAKE_EXE_LINKER_FLAGS="$san"
# Default: the test executables that exercise GEMM, conversions, layouts,
# argument errors, huge offsets and concurrency. The solvers (trsm, potrf,
# posv, potrs, getrf, getrs, gesv) run under ASan + UBSan in the fuzz stage
# (40-fuzz.sh: every batch-level call); test_edge_cases_solvers and
# test_determinism under ASan cost about 15 min of the two cores, so they
# run here only on request (IBLA_SANITIZER_TESTS or IBLA_SANITIZER_FULL=1). The typed sweeps over
# every size x layout (test_gemm, test_trsm, ...) instantiate the same kernel
# code again and cost more under ASan than the rest of CI together; they run
# with IBLA_SANITIZER_FULL=1 (or name executables in IBLA_SANITIZER_TESTS).
if [ "${IBLA_SANITIZER_FULL:-0}" = 1 ]; then
  tests=""
else
  tests=${IBLA_SANITIZER_TESTS:-"test_layouts test_convert test_errors test_edge_cases test_huge_batches test_concurrency test_mdspan_mapping"}
fi
# shellcheck disable=SC2086
cmake --build "$build" -j "$jobs" ${tests:+--target $tests}
built=$(date +%s)
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export OMP_PROC_BIND=false OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2
if [ -z "$tests" ]; then
  (cd "$build" && ctest --output-on-failure -j "$jobs")
else
  for t in $tests; do
    echo "sanitizers: $t"
    # TenMillion.* (10^7 2x2 problems: the same kernels as the small batches,
    # checked by the main ctest run) took 60 of the stage's 74 s under ASan.
    filter=()
    [ "$t" != test_huge_batches ] || filter=(--gtest_filter=-TenMillion.*)
    "$build/unit_tests/$t" --gtest_brief=1 "${filter[@]}" ||
      { echo "sanitizers: $t FAILED" >&2; exit 1; }
  done
fi
echo "sanitizers: build $((built - start)) s, tests $(( $(date +%s) - built )) s"
