#!/usr/bin/env bash
# CUDA compile-and-link stage: builds ibla's kernels and unit tests for CUDA
# against a CUDA-enabled Kokkos 3.4.01 (scripts/setup_kokkos_cuda.sh: sm_80,
# nvcc from $CUDA_ROOT through Kokkos' nvcc_wrapper). Nothing runs: CI has no
# GPU. The tests are listed at ctest time (DISCOVERY_MODE PRE_TEST), so on a
# machine with a GPU `ctest` in the build tree runs them.
# What is built: every target of the build (all unit tests;
# ibla_device_check, which runs each batch-level operation once in float and
# double on LayoutBlockInterleaved<32> and LayoutStride, the two forms of
# every kernel's device path; and the device benchmark ibla_device_bench,
# ibla vs cuBLAS/cuSOLVER, perf_tests/device/).
# Device code, two modes:
#  - default (CI): PTX for the compute capability of Kokkos' arch (sm_80 ->
#    compute_80) with NVVM's optimizer off, through nvcc's own
#    NVCC_APPEND_FLAGS="-arch=compute_80 -Xcicc -O0" (appended, so it
#    overrides Kokkos' -arch=sm_80; nvcc warns once per unit that it did).
#    The CUDA front end (cudafe++ and cicc's EDG) checks all it checks in an
#    optimized build: host/device calls, templates, lambdas, constexpr; what
#    is skipped is NVVM's optimization and ptxas (register allocation to
#    SASS), which a GPU's driver does when it loads the PTX, so the
#    executables run there too. Measured on the 2-core CI machine for
#    device/check_double.cpp: cicc 169 s and ptxas 165 s at full
#    optimization, cicc 12 s for PTX at -O0 (ptxas at -O0 is no cheaper:
#    201 s).
#    And the batch-level kernels of one order alone (GETRF's and GESV's
#    register-form kernels, GETRF's row-per-thread kernel) for the orders
#    of IBLA_CUDA_DEVICE_ORDERS only (IBLA_DEVICE_SPECIALISED_ORDERS, see
#    kernels/ibla/kernels/static_switch.hpp): each is a launch's worth of
#    Kokkos host code and a device function, 313 of the 343 kernels of
#    the tests' GETRF/GESV unit for the other layouts. The default list
#    holds each form's first and last orders and both sides of every
#    order where its launch shape changes (getrf_team_rows_lanes, _teams);
#    the other orders are the same templates. Measured (Zen 3, two compiles
#    side by side, 2026-12-01): that unit 90 -> 61 CPU-s,
#    device/check_double.cpp 45 -> 35.
#  - IBLA_CUDA_OPTIMIZED=1: Kokkos' flags unchanged (SASS for sm_80 at -O3),
#    as a user builds; about 6 CPU-minutes per unit of ibla_device_check,
#    more for the typed tests: give IBLA_CUDA_TARGETS (e.g.
#    "ibla_device_check") to build less.
# Each executable built must carry CUDA device code (.nv_fatbin).
# Skipped with a message when nvcc is absent or IBLA_SKIP_CUDA=1.
# Environment: CUDA_ROOT (default /usr/local/cuda), IBLA_CUDA_TARGETS
# (default: all), IBLA_CUDA_CMAKE_ARGS (more -D options, split on spaces;
# e.g. -DIBLA_TESTS_SWEEP_SUBSET=ON for the tests as SASS),
# IBLA_CUDA_DEVICE_ORDERS (PTX mode; default above, empty: every order),
# IBLA_CUDA_BUILD_DIR (default: <main build>-cuda-ptx, or
# <main build>-cuda with IBLA_CUDA_OPTIMIZED=1: the flags differ and ninja
# does not see NVCC_APPEND_FLAGS, so the two never share objects).
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
optimized=${IBLA_CUDA_OPTIMIZED:-0}
host_opt=()
suffix=-cuda-ptx
[ "$optimized" = 1 ] && suffix=-cuda
build=${IBLA_CUDA_BUILD_DIR:-${IBLA_BUILD_DIR:-$here/build}$suffix}
jobs=$(nproc)
start=$(date +%s)

prefix=$("$here/scripts/setup_kokkos_cuda.sh" | tail -n1)
kokkos_done=$(date +%s)

if [ "$optimized" = 1 ]; then
  mode="SASS at Kokkos' optimization"
else
  # The arch Kokkos compiles for, from its exported compile options.
  sm=$(grep -ho 'arch=sm_[0-9]*' "$prefix"/lib*/cmake/Kokkos/KokkosTargets.cmake | head -n1 | cut -d_ -f2)
  [ -n "$sm" ] || { echo "cuda build: FAILED: no -arch=sm_NN in Kokkos' exported options" >&2; exit 1; }
  export NVCC_APPEND_FLAGS="-arch=compute_$sm -Xcicc -O0${NVCC_APPEND_FLAGS:+ $NVCC_APPEND_FLAGS}"
  mode="PTX for compute_$sm, NVVM -O0, tests' host code -O0"
  # nvcc splits a -D value at its commas unless they are escaped.
  device_orders=${IBLA_CUDA_DEVICE_ORDERS-1,2,12,15,16,17,20,24,28,29,31,32}
  if [ -n "$device_orders" ]; then
    NVCC_APPEND_FLAGS="$NVCC_APPEND_FLAGS -DIBLA_DEVICE_SPECIALISED_ORDERS=${device_orders//,/\\,}"
    mode="$mode, one-order kernels for orders $device_orders"
  fi
  # The host half of a test unit took 46 of its 75 s at -O2 (test_gesv); the
  # device check and benchmark's host code too (Release's -O3) is never run.
  host_opt=(-DIBLA_TESTS_OPTIMIZATION=-O0 -DCMAKE_CXX_FLAGS_RELEASE=-O0)
fi

# No -march=native here: host code of this build never runs, and nvcc_wrapper
# forwards host flags to g++ anyway. IBLA_CUDA_CMAKE_ARGS unquoted: one word
# per option.
# shellcheck disable=SC2086
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_COMPILER="$prefix/bin/nvcc_wrapper" \
  -DIBLA_ENABLE_TESTS=ON -DIBLA_ENABLE_BENCHMARKS=ON "${host_opt[@]}" ${IBLA_CUDA_CMAKE_ARGS:-} >/dev/null
# nvcc repeats its notice that the appended -arch won for every unit: keep the
# log readable, keep everything else.
quiet() { { grep -v "incompatible redefinition for option 'gpu-architecture'" || true; }; }
target_args=()
# shellcheck disable=SC2206
[ -n "${IBLA_CUDA_TARGETS:-}" ] && target_args=(--target $IBLA_CUDA_TARGETS)
if ! cmake --build "$build" -j "$jobs" "${target_args[@]}" 2>&1 | quiet; then
  echo "cuda build: FAILED: compiling for CUDA ($mode) in $build" >&2
  exit 1
fi
if [ -n "${IBLA_CUDA_TARGETS:-}" ]; then
  targets=$IBLA_CUDA_TARGETS
else
  targets=$(find "$build/unit_tests" "$build/perf_tests/device" -maxdepth 1 -type f -perm -u+x \
              \( -name 'test_*' -o -name 'ibla_device_check' -o -name 'ibla_device_bench' \) -printf '%f\n' | sort)
fi
path_of() { [ "$1" = ibla_device_bench ] && echo "$build/perf_tests/device/$1" || echo "$build/unit_tests/$1"; }

# Each executable carries a CUDA fat binary (device code).
[ -n "$targets" ] || { echo "cuda build: FAILED: nothing built in $build/unit_tests" >&2; exit 1; }
for t in $targets; do
  if ! readelf -S "$(path_of "$t")" | grep -c '\.nv_fatbin' >/dev/null; then
    echo "cuda build: FAILED: $t has no CUDA device code" >&2
    exit 1
  fi
done
echo "cuda build ($mode): $(echo $targets | wc -w) executables with CUDA device code ($(echo $targets));" \
     "Kokkos $((kokkos_done - start)) s, ibla $(( $(date +%s) - kokkos_done )) s"
