#!/usr/bin/env bash
# Checks the Spack recipe (spack/packages/ibla/package.py) without Spack:
# spack/test_package_py.py imports it under a stub of Spack's package API and
# checks its versions, variants, dependency forwarding to ^kokkos and the
# CMake arguments it produces (see the docstring there for what it cannot
# check). Standard-library Python 3 only; fails if the recipe breaks.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
command -v python3 >/dev/null ||
  { echo "spack stage: FAILED: python3 not found (scripts/setup_deps.sh installs it)" >&2; exit 1; }
# -B: no __pycache__ next to the recipe in the source tree.
python3 -B "$here/spack/test_package_py.py"
echo "spack stage: ok"
