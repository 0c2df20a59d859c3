#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs the benchmark of
# ibla's batched operations against the baselines on a default batch.
# Arguments are passed to the benchmark (see --help).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${IBLA_BUILD_DIR:-$here/build}
# The full benchmark (the test run builds a check-only one in the same tree).
"$here/scripts/configure.sh" "$build" -DIBLA_BENCH_CHECK_ONLY=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target ibla_bench >&2
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
export OMP_PROC_BIND=${OMP_PROC_BIND:-close}
export OMP_PLACES=${OMP_PLACES:-cores}
exec "$build/perf_tests/ibla_bench" "$@"
