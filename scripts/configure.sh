#!/usr/bin/env bash
# Installs the dependencies (scripts/setup_deps.sh) and configures a build tree.
# usage: scripts/configure.sh BUILD_DIR [extra cmake args...]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:?usage: configure.sh BUILD_DIR [cmake args]}
shift
prefix=$("$here/scripts/setup_deps.sh" | tail -n1)
# -march=native: the build and its runs happen on this machine. Packagers
# building for other machines leave IBLA_NATIVE=0.
flags=${CXXFLAGS:-}
if [ "${IBLA_NATIVE:-1}" = 1 ]; then flags="$flags -march=native"; fi
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_CXX_FLAGS="$flags" "$@" >&2
