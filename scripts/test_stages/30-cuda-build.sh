#!/usr/bin/env bash
# CUDA compile-and-link stage: builds ibla's kernels and unit tests for CUDA
# against a CUDA-enabled Kokkos 3.4.01 (scripts/setup_kokkos_cuda.sh: sm_80,
# nvcc from $CUDA_ROOT through Kokkos' nvcc_wrapper). Nothing runs: CI has no
# GPU. The tests are listed at ctest time (DISCOVERY_MODE PRE_TEST), so on a
# machine with a GPU `ctest` in the build tree runs them.
# What is built (measured on the 2-core CI machine: Kokkos for CUDA ~95 s CPU
# once, cached; nvcc on test_gemm.cpp ~105 s CPU):
#  - default: ibla_device_check (unit_tests/device/: every batch-level
#    operation x float/double on LayoutBlockInterleaved<32> and LayoutStride,
#    i.e. both forms of every kernel's device path) and the unit tests named
#    in IBLA_CUDA_TESTS (default test_layouts; test_gemm builds too, in
#    ~105 s CPU, but the device check has GEMM already; not
#    test_mdspan_mapping, which has no device code on a ViewOffset-based
#    Kokkos such as 3.4): GoogleTest, the test support, conversions and the
#    layouts on the device;
#  - IBLA_CUDA_ALL_TESTS=1: every target of the build (all unit tests and
#    ibla_device_check), too slow for CI on two cores.
# Each executable built must carry CUDA device code (.nv_fatbin).
# Skipped with a message when nvcc is absent or IBLA_SKIP_CUDA=1.
# Environment: CUDA_ROOT (default /usr/local/cuda), IBLA_CUDA_BUILD_DIR
# (default: <main build>-cuda).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
if [ "${IBLA_SKIP_CUDA:-0}" = 1 ]; then
  echo "cuda build: skipped (IBLA_SKIP_CUDA=1)"
  exit 0
fi
if [ ! -x "$CUDA_ROOT/bin/nvcc" ]; then
  echo "cuda build: skipped (no nvcc at $CUDA_ROOT/bin/nvcc)"
  exit 0
fi
build=${IBLA_CUDA_BUILD_DIR:-${IBLA_BUILD_DIR:-$here/build}-cuda}
jobs=$(nproc)
start=$(date +%s)

prefix=$("$here/scripts/setup_kokkos_cuda.sh" | tail -n1)
kokkos_done=$(date +%s)

# No -march=native here: host code of this build never runs, and nvcc_wrapper
# forwards host flags to g++ anyway.
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" \
  -DIBLA_ENABLE_TESTS=ON -DIBLA_ENABLE_BENCHMARKS=OFF >/dev/null
if [ "${IBLA_CUDA_ALL_TESTS:-0}" = 1 ]; then
  cmake --build "$build" -j "$jobs"
  targets=$(find "$build/unit_tests" -maxdepth 1 -type f -perm -u+x \( -name 'test_*' -o -name 'ibla_device_check' \) -printf '%f\n' | sort)
else
  targets="ibla_device_check ${IBLA_CUDA_TESTS-test_layouts}"
  # shellcheck disable=SC2086
  cmake --build "$build" -j "$jobs" --target $targets
fi

# Each executable carries a CUDA fat binary (device code).
[ -n "$targets" ] || { echo "cuda build: FAILED: nothing built in $build/unit_tests" >&2; exit 1; }
for t in $targets; do
  if ! readelf -S "$build/unit_tests/$t" | grep -q '\.nv_fatbin'; then
    echo "cuda build: FAILED: $t has no CUDA device code" >&2
    exit 1
  fi
done
echo "cuda build: $(echo $targets | wc -w) executables with CUDA device code ($(echo $targets));" \
     "Kokkos $((kokkos_done - start)) s, ibla $(( $(date +%s) - kokkos_done )) s"
