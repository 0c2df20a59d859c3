#!/usr/bin/env bash
# The whole test suite from a fresh Debian 12 machine: installs what is
# missing, builds Kokkos once (cached in .deps/), builds ibla and its tests,
# runs them with ctest, then runs every extra stage in scripts/test_stages/
# (in name order). Idempotent; a second run only rebuilds what changed.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${IBLA_BUILD_DIR:-$here/build}
jobs=$(nproc)
start=$(date +%s)
# Elapsed time of each step, so that CI logs show where its time goes, and
# how busy the cores were during the step before (a build whose last unit
# compiles alone, or a single-threaded run, leaves cores idle).
cpu_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8; exit}' /proc/stat 2>/dev/null || echo "0 0"; }
read -r busy0 total0 < <(cpu_jiffies)
step() {
  local busy total use=""
  read -r busy total < <(cpu_jiffies)
  [ "$total" -gt "$total0" ] && use=", cores $(( 100 * (busy - busy0) / (total - total0) ))% busy in the step before"
  busy0=$busy total0=$total
  echo "=== $1 ($(( $(date +%s) - start )) s since start$use)"
}

step "dependencies and configure"
# The benchmark is built for its smoke test only (IBLA_BENCH_CHECK_ONLY, see
# perf_tests/CMakeLists.txt); run_benchmark.sh builds the full one.
# Warnings are errors in the unit tests (see unit_tests/CMakeLists.txt).
"$here/scripts/configure.sh" "$build" -DIBLA_ENABLE_TESTS=ON -DIBLA_BENCH_CHECK_ONLY=ON \
  -DIBLA_TESTS_WARNINGS_AS_ERRORS=ON
step "build"
cmake --build "$build" -j "$jobs"
step "unit tests (ctest)"
(cd "$build" && OMP_PROC_BIND=false OMP_WAIT_POLICY=passive ctest --output-on-failure -j "$jobs")

for stage in "$here"/scripts/test_stages/*.sh; do
  [ -e "$stage" ] || continue
  step "test stage $(basename "$stage")"
  bash "$stage"
done
step "all tests passed"
