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

}  // namespace ibla
