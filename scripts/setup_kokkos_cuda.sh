#!/usr/bin/env bash
# Builds a CUDA-enabled Kokkos 3.4.01 (Cuda + Serial, CUDA lambdas on) for the
# CUDA compile-and-link stage of CI, idempotently, into .deps/install-cuda.
#  - Source: the same Debian trilinos 13.2 source that scripts/setup_deps.sh
#    unpacks into .deps/src (it is run first, so nothing is downloaded twice).
#    packages/kokkos is copied to a private tree and only that copy is patched
#    (cmake/patches/kokkos-3.4.01-cuda13.patch), so the OpenMP Kokkos of
#    setup_deps.sh stays the pristine 3.4.01.
#  - The patch makes 3.4.01 build with CUDA 13: nvcc 13 rejects nvcc_wrapper's
#    default sm_35 (the default becomes sm_80, which also covers CMake's
#    compiler checks that pass no arch), the __half2* intrinsics need the raw
#    __half (half_t::impl_type(val)) and __half2double is gone, and
#    cudaMemPrefetchAsync takes a cudaMemLocation and flags.
#  - Arch: Kokkos_ARCH_AMPERE80 (sm_80). 3.4.01 knows no Hopper arch; sm_80
#    code plus its compute_80 PTX runs on Hopper (H100) by JIT, once the
#    patch lets Kokkos::Cuda::initialize accept a newer device (unpatched it
#    aborts on an H100: compiled 8.0, device 9.0).
#  - Compiler: Kokkos' nvcc_wrapper with nvcc from $CUDA_ROOT (default
#    /usr/local/cuda) and g++ as host compiler. Consumers configure with
#    CMAKE_CXX_COMPILER=<prefix>/bin/nvcc_wrapper and CUDA_ROOT exported.
# Kokkos Kernels is not built: ibla's public code does not use it.
# Exits 3 with a message when nvcc is absent. Prints the install prefix on
# its last line of stdout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
deps=${IBLA_DEPS_DIR:-$here/.deps}
prefix=$deps/install-cuda
export CUDA_ROOT=${CUDA_ROOT:-/usr/local/cuda}
arch=${IBLA_KOKKOS_CUDA_ARCH:-AMPERE80}
patch_file=$here/cmake/patches/kokkos-3.4.01-cuda13.patch
log() { echo "[setup-cuda] $*" >&2; }

if [ ! -x "$CUDA_ROOT/bin/nvcc" ]; then
  log "no nvcc at $CUDA_ROOT/bin/nvcc: CUDA Kokkos not built"
  exit 3
fi

# The stamp names the arch and the patch content: changing either rebuilds.
patch_sum=$(sha256sum "$patch_file" | cut -c1-12)
stamp=$prefix/.ibla-kokkos-3.4.01-cuda-$arch-$patch_sum
if [ -f "$stamp" ]; then
  echo "$prefix"
  exit 0
fi

# Debian packages and the unpacked trilinos source (and the OpenMP Kokkos,
# which the rest of the suite needs anyway); both cached by setup_deps.sh.
env -u Kokkos_ROOT -u KokkosKernels_ROOT "$here/scripts/setup_deps.sh" >/dev/null
tri=$(ls -d "$deps"/src/*/packages/kokkos 2>/dev/null | head -n1 || true)
if [ -z "$tri" ]; then
  log "setup_deps.sh did not leave the trilinos source in $deps/src"
  exit 1
fi

src=$deps/src/kokkos-3.4.01-cuda
build=$deps/build-kokkos-cuda
log "copying $tri to $src and applying $(basename "$patch_file")"
rm -rf "$src" "$build" "$prefix"
cp -a "$tri" "$src"
patch -s -p1 -d "$src" < "$patch_file"

log "building Kokkos 3.4.01 for CUDA ($arch) with $("$CUDA_ROOT/bin/nvcc" --version | tail -n1)"
NVCC_WRAPPER_DEFAULT_COMPILER=${NVCC_WRAPPER_DEFAULT_COMPILER:-g++} \
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_COMPILER="$src/bin/nvcc_wrapper" \
      -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON \
      -DKokkos_ARCH_"$arch"=ON -DKokkos_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=OFF >&2
cmake --build "$build" -j "$(nproc)" >&2
cmake --install "$build" >&2
touch "$stamp"
echo "$prefix"
