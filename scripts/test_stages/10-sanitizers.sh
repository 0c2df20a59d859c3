#!/usr/bin/env bash
# Reruns the whole unit test suite under AddressSanitizer +
# UndefinedBehaviorSanitizer + LeakSanitizer, from a second build tree. Any
# report fails the stage (-fno-sanitize-recover=all, halt_on_error).
# Kokkos itself (.deps) is built without sanitizers: ASan still instruments
# every ibla kernel and test, which is where ibla's code is instantiated.
# -O0 -g1 (IBLA_SANITIZER_OPT to change the level): on this 2-core machine
# the whole suite built in 341 s at -O0 and ran in 73 s with short sweeps
# (below) on 2026-11-24 (clang 14 -O1: 17 min; -g instead of -g1: 60 s
# more); asserts stay on (no -DNDEBUG).
# Environment: IBLA_ASAN_BUILD_DIR (default: <main build>-asan),
# IBLA_SANITIZER_TESTS (test executables to build and run instead of all),
# IBLA_SANITIZER_OPT (default -O0), IBLA_SANITIZER_UBSAN_REPORTS=1 (UBSan's
# reports instead of traps, see below), IBLA_SKIP_SANITIZERS=1.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ "${IBLA_SKIP_SANITIZERS:-0}" = 1 ]; then
  echo "sanitizers: skipped (IBLA_SKIP_SANITIZERS=1)"
  exit 0
fi
build=${IBLA_ASAN_BUILD_DIR:-${IBLA_BUILD_DIR:-$here/build}-asan}
jobs=$(nproc)
start=$(date +%s)
# UBSan without its null and alignment checks: they instrument every
# reference binding and member access, which in these template-heavy tests
# made the objects 1.5x larger and the build about 25% slower (test_potrf.cpp
# at -O0: 5.9 -> 3.8 MB of code). What they would report is still caught:
# ASan reports a null dereference as a SEGV with its stack, and the one
# misaligned access x86 faults on (an aligned vector load) is a SEGV too;
# Nor its pointer-overflow check: it reports only pointer arithmetic that
# wraps around the address space (or offsets a null pointer), never an
# out-of-bounds pointer inside it, which is ASan's job; it instrumented
# every pointer step of the kernels' loops (test_gesv.cpp at -O0: 66.5 ->
# 54.6 s, 72 -> 50 MB). The other checks of -fsanitize=undefined (signed
# overflow, shifts, bounds, vptr, bool and enum loads, float-to-int casts,
# ...) stay on.
san="-fsanitize=address,undefined -fno-sanitize=alignment,null,pointer-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all"
# Two more flags for the build time (g++ 12, -O0, 2026-11-27, two compiles
# side by side: support/instances/triangular_solves.cpp 131 -> 108 CPU-s,
# its object 37 -> 15 MB; the stage's build had grown to 381 s, the suite
# to 29 min on this machine):
#  - UBSan traps (ud2) instead of calling its runtime with a descriptor of
#    each check: every check above still stops the run, as a SIGILL whose
#    stack ASan prints (handle_sigill=1; file and line from -g1). The
#    descriptors were 15 of the object's 37 MB. Lost: UBSan's own text (which
#    check, which values); IBLA_SANITIZER_UBSAN_REPORTS=1 builds with it, to
#    explain a failure. Trapping also drops the vptr check, which needs the
#    runtime; ibla has no virtual functions.
#  - Locals are not instrumented for use after scope (9% of the build of
#    factor_and_solve.cpp): ASan still checks stack bounds and use after
#    return here, and the fuzz stage (clang's ASan, where it is on) checks
#    use after scope over every operation.
if [ "${IBLA_SANITIZER_UBSAN_REPORTS:-0}" != 1 ]; then
  san="$san -fsanitize-undefined-trap-on-error -fno-sanitize-address-use-after-scope"
fi
# Kokkos' and ibla's KOKKOS_FORCEINLINE_FUNCTION as plain inline: GCC
# inlines always_inline functions even at -O0, so every View access, lane
# loop and tile was copied into each kernel instance, and the passes after
# it worked on those bodies (factor_and_solve.cpp at -O0 with the flags
# above, 2026-11-28: 361 CPU-s, of which inlining and the IPA passes 110 s;
# 114 CPU-s without). Inlining changes no result; ASan and UBSan check each
# function as they did inside its caller. IBLA_SANITIZER_FORCE_INLINE=1
# keeps Kokkos' definition.
no_force_inline="-DKOKKOS_IMPL_FORCEINLINE_FUNCTION=inline -DKOKKOS_IMPL_FORCEINLINE="
[ "${IBLA_SANITIZER_FORCE_INLINE:-0}" = 1 ] && no_force_inline=""
# Every fixed-order form on every layout: the main build compiles the other
# layouts' forms for a list of orders only (IBLA_TESTS_OTHER_LAYOUT_ORDERS,
# unit_tests/CMakeLists.txt), this one all of them.
CXXFLAGS="${CXXFLAGS:-} $san $no_force_inline" "$here/scripts/configure.sh" "$build" \
  -DIBLA_ENABLE_TESTS=ON -DIBLA_ENABLE_BENCHMARKS=OFF -DIBLA_TESTS_OTHER_LAYOUT_ORDERS= \
  -DCMAKE_CXX_FLAGS_RELEASE="${IBLA_SANITIZER_OPT:--O0} -g1" -DIBLA_TESTS_OPTIMIZATION= \
  -DCMAKE_EXE_LINKER_FLAGS="$san"
# Every test executable, each as one process running all its tests, as many
# side by side as there are cores. The sweeps run
# short (IBLA_TEST_SHORT=1, unit_tests/support/batch.hpp): every size, op and
# layout, but their 1001-problem batches for a few sizes only; a GEMM sweep
# configuration took 150 s under ASan at -O0 with all of them. TenMillion.*
# (10^7 2x2 problems, the kernels of the small batches once more) is left to
# the main run. IBLA_SANITIZER_TESTS names executables to build and run
# instead of all (e.g. while chasing a report).
# Not through ctest, which starts a process per test: an ASan process took
# 0.15 s to start and exit (shadow memory, LeakSanitizer's pass at exit)
# however little it ran, and the suite is 372 tests. Through ctest -j 2 the
# tests took 84 s, as 17 processes two at a time 66 s (2026-11-28). What a test finds is
# the same: ASan and UBSan stop the process at the first report, and
# LeakSanitizer checks at exit the memory of every test that ran in it.
tests=${IBLA_SANITIZER_TESTS:-}
# shellcheck disable=SC2086
cmake --build "$build" -j "$jobs" ${tests:+--target $tests}
built=$(date +%s)
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1:handle_sigill=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export OMP_PROC_BIND=false OMP_WAIT_POLICY=passive OMP_NUM_THREADS=2 IBLA_TEST_SHORT=1
if [ -z "$tests" ]; then
  tests=$(find "$build/unit_tests" -maxdepth 1 -type f -perm -u+x -name 'test_*' -printf '%f\n' | sort)
  [ -n "$tests" ] || { echo "sanitizers: FAILED: no test executable in $build/unit_tests" >&2; exit 1; }
fi
# NAME@N: the executable once more on N OpenMP threads, as ctest runs it
# (unit_tests/CMakeLists.txt registers test_determinism a second time, with
# the suffix .omp3, on 3 threads).
case " $(echo $tests) " in *" test_determinism "*) tests="$tests test_determinism@3" ;; esac
logs=$build/sanitizer-logs
rm -rf "$logs"
mkdir -p "$logs"
# run_one NAME[@THREADS]: one executable, its output in $logs/NAME.log;
# prints a line and, on failure, the end of the log (the report and the
# failed tests).
run_one() {
  local t=${1%@*} threads=$OMP_NUM_THREADS rc=0 log=$logs/$1.log
  [ "$1" = "$t" ] || threads=${1#*@}
  OMP_NUM_THREADS=$threads "$build/unit_tests/$t" --gtest_brief=1 --gtest_filter='-TenMillion.*' \
    >"$log" 2>&1 || rc=$?
  if [ "$rc" = 0 ]; then
    echo "sanitizers: $1 ok ($(grep -E '^\[==========\] [0-9]+ tests? .* ran' "$log" | tail -n1 | cut -d' ' -f2) tests)"
  else
    tail -n 80 "$log"
    echo "sanitizers: $1 FAILED (exit $rc; whole output in $log)"
  fi
  return "$rc"
}
export -f run_one
export build logs
# shellcheck disable=SC2086
if ! printf '%s\n' $tests | xargs -P "$jobs" -I{} bash -c 'run_one "$1"' _ {}; then
  echo "sanitizers: FAILED" >&2
  exit 1
fi
# As many tests as ctest has: a test registered otherwise (another suffix,
# another environment) must be added above, not skipped here.
if [ -z "${IBLA_SANITIZER_TESTS:-}" ]; then
  ran=$(cat "$logs"/*.log | sed -nE 's/^\[==========\] ([0-9]+) tests? from .* ran\..*/\1/p' |
        awk '{s += $1} END {print s + 0}')
  listed=$(cd "$build" && ctest -N -E '^TenMillion\.' | sed -nE 's/^Total Tests: ([0-9]+)/\1/p')
  [ "$ran" = "$listed" ] ||
    { echo "sanitizers: FAILED: the executables ran $ran tests, ctest lists $listed" >&2; exit 1; }
fi
echo "sanitizers: build $((built - start)) s, tests $(( $(date +%s) - built )) s"
