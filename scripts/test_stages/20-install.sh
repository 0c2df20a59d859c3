#!/usr/bin/env bash
# Checks ibla the way applications consume it (examples/):
#  1. a separate build of ibla (tests and benchmarks off) installed into a
#     fresh prefix; the installed headers must be exactly the source headers;
#  2. examples/spd_solves built against the INSTALLED tree, found only through
#     CMAKE_PREFIX_PATH=<prefix>;<kokkos prefix>, and run;
#  3. the same example against the build tree (-Dibla_DIR=<ibla build dir>);
#  4. examples/add_subdirectory (ibla as a subdirectory) built and run;
#  5. the package's version rule (0.1 accepted, 1.0 refused) and the Kokkos
#     hint (Kokkos found with only the ibla prefix given).
# Build trees are kept between runs (a rerun only rebuilds what changed); the
# install prefix is recreated every time so that a deleted header cannot
# linger. Environment: IBLA_INSTALL_BUILD_DIR (default: <main build>-install).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=${IBLA_INSTALL_BUILD_DIR:-${IBLA_BUILD_DIR:-$here/build}-install}
prefix=$work/prefix
start=$(date +%s)
fail() { echo "install stage: FAILED: $*" >&2; exit 1; }
# The examples run a few thousand tiny problems: two threads are plenty, and
# the machine is shared with other stages.
export OMP_PROC_BIND=false OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

kokkos=$("$here/scripts/setup_deps.sh" | tail -n1)

# 1. Build and install ibla.
"$here/scripts/configure.sh" "$work/ibla" -DIBLA_ENABLE_TESTS=OFF -DIBLA_ENABLE_BENCHMARKS=OFF \
  -DCMAKE_INSTALL_PREFIX="$prefix"
cmake --build "$work/ibla"
rm -rf "$prefix"
cmake --install "$work/ibla" >/dev/null
expected=$(cd "$here" && find core/ibla layouts/ibla kernels/ibla -name '*.hpp' | sed 's#^[a-z]*/##' | sort)
installed=$(cd "$prefix/include" && find ibla -type f | sort)
[ "$expected" = "$installed" ] ||
  fail "installed headers differ from the source headers:
$(diff <(echo "$expected") <(echo "$installed") || true)"
for f in iblaConfig.cmake iblaConfigVersion.cmake iblaTargets.cmake; do
  [ -f "$prefix/lib/cmake/ibla/$f" ] || fail "$f not installed"
done
! grep -q -e "$here/core" -e "$here/layouts" -e "$here/kernels" "$prefix"/lib/cmake/ibla/*.cmake ||
  fail "the installed package refers to the source tree"

# configure_consumer NAME SOURCE_DIR cmake-args...: configures one consumer
# in $work/NAME; the package registry is off so that nothing but the given
# paths can supply ibla. Release unless the arguments say otherwise.
configure_consumer() {
  local name=$1 src=$2; shift 2
  cmake -S "$src" -B "$work/$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "$@" >/dev/null
}
# The build-tree and subdirectory consumers check how ibla's target reaches
# a consumer, which does not depend on the optimisation; they are built as
# Debug, as an application being developed is (the installed one stays
# Release, as deployed). Their compile took 12 CPU-s instead of 30.5 at -O3
# (g++ 12, 2026-11-28), and the three compiles had shared 2 cores for 48 s.
debug=-DCMAKE_BUILD_TYPE=Debug
cache_value() { sed -n "s#^$2:[A-Z]*=##p" "$work/$1/CMakeCache.txt"; }

# 2. Against the installed tree only.
configure_consumer example-installed "$here/examples/spd_solves" -DCMAKE_PREFIX_PATH="$prefix;$kokkos"
[ "$(cache_value example-installed ibla_DIR)" = "$prefix/lib/cmake/ibla" ] ||
  fail "example-installed found ibla at $(cache_value example-installed ibla_DIR), not in $prefix"
grep -q -- "-isystem $prefix/include" "$work/example-installed/build.ninja" ||
  fail "example-installed does not compile with the installed headers"
! grep -q -e "$here/core" -e "$here/kernels" "$work/example-installed/build.ninja" ||
  fail "example-installed compiles with headers from the source tree"
# 3. Against the build tree (export() of the same targets).
configure_consumer example-buildtree "$here/examples/spd_solves" -Dibla_DIR="$work/ibla" \
  -DCMAKE_PREFIX_PATH="$kokkos" "$debug"
# 4. ibla as a subdirectory of the consumer.
configure_consumer example-subdir "$here/examples/add_subdirectory" -DCMAKE_PREFIX_PATH="$kokkos" "$debug"
[ "$(cache_value example-subdir IBLA_ENABLE_TESTS)" = OFF ] ||
  fail "add_subdirectory(ibla) turned ibla's tests on"

# The three builds are one compile each: run them side by side, then the
# programs one after the other.
consumers=(example-installed example-buildtree example-subdir)
pids=()
for c in "${consumers[@]}"; do
  cmake --build "$work/$c" >"$work/$c.log" 2>&1 &
  pids+=($!)
done
for i in "${!consumers[@]}"; do
  wait "${pids[$i]}" || { cat "$work/${consumers[$i]}.log" >&2; fail "building ${consumers[$i]}"; }
done
for c in "${consumers[@]}"; do
  echo "--- $c"
  "$work/$c/spd_solves" || fail "$c exited with status $?"
done

# 5. Version rule and Kokkos hint: a configure-only probe project.
probe=$work/probe
mkdir -p "$probe"
cat >"$probe/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.21)
project(ibla_probe LANGUAGES CXX)
find_package(ibla 1.0 QUIET)
if(ibla_FOUND)
  message(FATAL_ERROR "find_package(ibla 1.0) accepted ibla ${ibla_VERSION}")
endif()
find_package(ibla 0.1 REQUIRED)  # Kokkos comes from the hint in iblaConfig.cmake
if(NOT TARGET ibla::ibla OR NOT TARGET Kokkos::kokkos)
  message(FATAL_ERROR "find_package(ibla) gave no ibla::ibla / Kokkos::kokkos")
endif()
message(STATUS "probe: ibla ${ibla_VERSION}, Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR}")
EOF
rm -rf "$probe/build"
cmake -S "$probe" -B "$probe/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF |
  grep "probe:" || fail "the probe project did not configure"

echo "install stage: ok ($(( $(date +%s) - start )) s)"
