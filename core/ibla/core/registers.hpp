// The host's SIMD registers as the compiler targets them (-march): the
// register-tiled host kernels size their tiles of accumulators by how many
// there are (gemm.hpp), and the benchmark sizes blocks in registers of lanes.
#pragma once

#include <Kokkos_Macros.hpp>

namespace ibla {

#if defined(__AVX512F__)
inline constexpr int host_simd_bytes     = 64;
inline constexpr int host_simd_registers = 32;
#elif defined(__AVX__)
inline constexpr int host_simd_bytes     = 32;
inline constexpr int host_simd_registers = 16;
#elif defined(__aarch64__)
inline constexpr int host_simd_bytes     = 16;  // NEON (SVE widths are not known at compile time)
inline constexpr int host_simd_registers = 32;
#else
inline constexpr int host_simd_bytes     = 16;  // SSE2, the x86-64 baseline
inline constexpr int host_simd_registers = 16;
#endif

/// Whether the host has registers enough for 4 x 4 accumulator tiles plus
/// their operands (32: AVX-512, NEON); with 16 (AVX2, SSE) the tiles are
/// 3 x 4.
inline constexpr bool host_has_wide_register_file = host_simd_registers >= 32;

/// Vector registers one value of a host lane loop over L lanes of T takes:
/// GCC vectorises the loop over L doubles with L / 8 zmm per value (one
/// register of lanes is the most it puts in one), so a block of 16 doubles
/// on AVX-512 holds each accumulator in two registers. 1 where L is not
/// known at compile time (device, partial blocks).
template <class T, int L>
inline constexpr int host_registers_per_value =
    L * int(sizeof(T)) > host_simd_bytes ? L * int(sizeof(T)) / host_simd_bytes : 1;

/// Rows of a host tile of accumulators sized as `rows` for one register per
/// value, for blocks of L lanes of T: divided by host_registers_per_value
/// (at least 1) so that the accumulators still fit the registers. A 4 x 4
/// tile of L = 16 doubles on AVX-512 took 32 registers and spilled.
template <class T, int L>
KOKKOS_INLINE_FUNCTION constexpr int host_tile_rows(const int rows) {
  return rows / host_registers_per_value<T, L> > 0 ? rows / host_registers_per_value<T, L> : 1;
}

}  // namespace ibla
