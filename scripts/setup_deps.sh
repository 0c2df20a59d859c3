#!/usr/bin/env bash
# Installs everything ibla needs on a fresh Debian 12 machine, idempotently.
#  - Debian packages: compiler tools, GoogleTest, hwloc, netlib BLAS/LAPACK/LAPACKE
#    (the test oracle), OpenBLAS (OpenMP build: the benchmark baseline; the serial
#    build gives wrong results when called from several OpenMP threads), python3
#    (test stage 25-spack runs the Spack recipe check with it).
#  - Kokkos 3.4.01 (OpenMP + Serial, hwloc) and Kokkos Kernels 3.4.01 (ETI off),
#    built from Debian's trilinos 13.2 *source* package into .deps/install.
#    Debian's binary libtrilinos-kokkos is Serial-only and therefore not used.
# With Kokkos_ROOT set, that Kokkos (and KokkosKernels_ROOT if set) is used and
# nothing is built.
# Prints the CMake prefix path to use on its last line of stdout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps=${IBLA_DEPS_DIR:-$here/.deps}
prefix=$deps/install
mkdir -p "$deps"
log() { echo "[setup] $*" >&2; }

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi

pkgs=(cmake ninja-build g++ make pkg-config libgtest-dev libgmock-dev libhwloc-dev
      libblas-dev liblapack-dev liblapacke-dev libopenblas0-openmp libopenblas-openmp-dev
      dpkg-dev python3
      libeigen3-dev libxsmm-dev gnuplot-nox
      clang-14 libclang-rt-14-dev libomp-14-dev)  # clang: the libFuzzer stage (40-fuzz.sh)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  $SUDO apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# Netlib is the oracle: keep the system-wide libblas.so.3/liblapack.so.3 pointing
# at it even though OpenBLAS was installed (OpenBLAS registers itself with higher
# priority). The benchmark links OpenBLAS by its full path instead.
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
for lib in libblas.so.3 liblapack.so.3; do
  sub=${lib%%.so.3}; sub=${sub#lib}
  target=/usr/lib/$arch/$sub/$lib
  if [ -e "$target" ] && [ "$(readlink -f /usr/lib/$arch/$lib)" != "$(readlink -f "$target")" ]; then
    log "pointing $lib at netlib ($target)"
    $SUDO update-alternatives --set "$lib-$arch" "$target" >&2 || true
  fi
done

if [ -n "${Kokkos_ROOT:-}" ]; then
  log "using the Kokkos at Kokkos_ROOT=$Kokkos_ROOT; nothing built"
  echo "${Kokkos_ROOT}${KokkosKernels_ROOT:+;$KokkosKernels_ROOT}"
  exit 0
fi

stamp=$prefix/.ibla-kokkos-3.4.01-openmp
if [ -f "$stamp" ]; then
  echo "$prefix"
  exit 0
fi

src=$deps/src
mkdir -p "$src"
tri=$(ls -d "$src"/*/packages/kokkos 2>/dev/null | head -n1 || true); tri=${tri%/packages/kokkos}
if [ -z "$tri" ] || [ ! -d "$tri/packages/kokkos-kernels" ]; then
  if ! apt-get indextargets --format '$(IDENTIFIER)' 2>/dev/null | grep -qx 'Sources'; then
    log "enabling deb-src for bookworm main"
    $SUDO tee /etc/apt/sources.list.d/ibla-deb-src.sources >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    $SUDO apt-get update -qq >&2
  fi
  log "downloading Debian's trilinos source package (contains Kokkos 3.4.01)"
  # Only the upstream tarball is needed: Kokkos is built from it directly.
  ls "$src"/trilinos_13.2.0*.orig.tar.* >/dev/null 2>&1 ||
    (cd "$src" && apt-get source --download-only trilinos >&2)
  orig=$(ls "$src"/trilinos_13.2.0*.orig.tar.* | head -n1)
  log "unpacking packages/kokkos and packages/kokkos-kernels from $(basename "$orig")"
  tar xf "$orig" -C "$src" --wildcards '*/packages/kokkos/*' '*/packages/kokkos-kernels/*'
  tri=$(ls -d "$src"/*/packages/kokkos | head -n1); tri=${tri%/packages/kokkos}
fi

jobs=$(nproc)
build_one() {  # name, source dir, cmake args...
  local name=$1 dir=$2; shift 2
  log "building $name"
  rm -rf "$deps/build-$name"
  cmake -S "$dir" -B "$deps/build-$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_COMPILER=g++ "$@" >&2
  cmake --build "$deps/build-$name" -j "$jobs" >&2
  cmake --install "$deps/build-$name" >&2
}
build_one kokkos "$tri/packages/kokkos" \
  -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_HWLOC=ON \
  -DKokkos_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON
build_one kokkos-kernels "$tri/packages/kokkos-kernels" \
  -DKokkos_ROOT="$prefix" -DKokkosKernels_INST_DOUBLE=OFF -DKokkosKernels_ETI_ONLY=OFF \
  -DKokkosKernels_INST_LAYOUTLEFT=OFF -DKokkosKernels_INST_LAYOUTRIGHT=OFF \
  -DKokkosKernels_INST_OFFSET_INT=OFF -DKokkosKernels_INST_OFFSET_SIZE_T=OFF \
  -DKokkosKernels_INST_ORDINAL_INT=OFF -DKokkosKernels_INST_EXECSPACE_OPENMP=OFF \
  -DKokkosKernels_INST_EXECSPACE_SERIAL=OFF -DKokkosKernels_INST_MEMSPACE_HOSTSPACE=OFF \
  -DKokkosKernels_ENABLE_TPL_BLAS=OFF -DKokkosKernels_ENABLE_TPL_LAPACK=OFF
touch "$stamp"
echo "$prefix"
