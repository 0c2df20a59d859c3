#!/usr/bin/env bash
# Reruns the whole unit test suite under AddressSanitizer +
# UndefinedBehaviorSanitizer + LeakSanitizer, from a second build tree.
# Any report fails the stage (-fno-sanitize-recover=all, halt_on_error).
# Kokkos itself (.deps) is built without sanitizers: ASan still instruments
# every ibla kernel and test, which is where ibla's code is instantiated.
# -O1 -g keeps the build and the run short and the reports readable; asserts
# stay on (no -DNDEBUG).
# Environment: IBLA_ASAN_BUILD_DIR (default: <main build>-asan),
# IBLA_SANITIZER_CTEST_ARGS (extra ctest arguments, e.g. "-E Gemm/[1-9]" to
# cut the run time), IBLA_SKIP_SANITIZERS=1 skips the stage.
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
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -g" \
  -DCMAKE_EXE_LINKER_FLAGS="$san"
cmake --build "$build" -j "$jobs"
built=$(date +%s)
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# shellcheck disable=SC2086
# Every test executable and every plain test runs; of the typed suites
# (Suite/N.Test, one N per precision x layout) only the first two
# configurations run by default, because the whole typed sweep under ASan
# costs more CPU than the rest of CI together. IBLA_SANITIZER_FULL=1 runs all.
default_args='-E /([2-9]|[1-9][0-9])\.'
[ "${IBLA_SANITIZER_FULL:-0}" = 1 ] && default_args=''
ctest_args=${IBLA_SANITIZER_CTEST_ARGS-$default_args}
(cd "$build" && OMP_PROC_BIND=false OMP_WAIT_POLICY=passive ctest --output-on-failure -j "$jobs" $ctest_args)
echo "sanitizers: build $((built - start)) s, tests $(( $(date +%s) - built )) s"
