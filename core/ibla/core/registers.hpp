// The host's SIMD registers as the compiler targets them (-march): the
// register-tiled host kernels size their tiles of accumulators by how many
// there are (gemm.hpp), and the benchmark sizes blocks in registers of lanes.
#pragma once

#include <Kokkos_Macros.hpp>

// IBLA_IMPL_OPERANDS_IN_REGISTERS_BEGIN / _END enclose host kernel code
// (functions and the lambdas defined in them) that GCC is to compile with
// its generic x86-64 tuning instead of the -mtune that -march=native chose,
// where that is a Zen core with AVX-512 (GCC 12 tunes a Zen 4 as znver3).
// With znver tuning GCC folds most operand loads into the FMAs as memory
// operands, the same vector loaded once per use: the 4 x 4 GEMM tile's k
// step made 27 loads of 64 bytes for its 16 FMAs (objdump) where 8 are
// needed, and a Zen 4 core loads one 64-byte vector per cycle, so the tile
// ran at load speed, under half of its FMA peak. Generic tuning loads each
// operand into a register once. Only a function compiled whole with these
// options gets them: GCC inlines across a tune mismatch only callees marked
// always_inline (for_each_lane, the tiles). So a function in the region is
// not inlined into a caller outside it, and a lambda that code in the
// region inlines from outside it must say IBLA_IMPL_ALWAYS_INLINE_LAMBDA
// (else it stays a call per lane: GEMM at 0.4 GFLOP/s). Nothing changes on
// other compilers, on other tunings, and in device code.
// A Zen 5 core (2 x 512-bit FMA) loses as much: GCC 12 tunes it as znver3
// too, and with the region left out (-U__tune_znver3__), ibla::gemm on 256
// problems in L2 (1 thread, L = 8 doubles, median of 1001 calls, 3 runs)
// ran n = 16 at 29 against 44-47 GFLOP/s, n = 32 at 31 against 50-56;
// n = 8 the same. GCC 14 tunes a Zen 5 as znver5, included by analogy (no
// GCC past 12 here to check its code).
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && defined(__x86_64__) && \
    defined(__AVX512F__) &&                                                                     \
    (defined(__tune_znver3__) || defined(__tune_znver4__) || defined(__tune_znver5__))
#define IBLA_IMPL_ZEN_WITH_AVX512 1
#else
#define IBLA_IMPL_ZEN_WITH_AVX512 0
#endif
#if IBLA_IMPL_ZEN_WITH_AVX512
#define IBLA_IMPL_OPERANDS_IN_REGISTERS_BEGIN \
  _Pragma("GCC push_options") _Pragma("GCC target(\"tune=generic\")")
#define IBLA_IMPL_OPERANDS_IN_REGISTERS_END _Pragma("GCC pop_options")
#else
#define IBLA_IMPL_OPERANDS_IN_REGISTERS_BEGIN
#define IBLA_IMPL_OPERANDS_IN_REGISTERS_END
#endif

// Outside the region too GCC must inline these lambdas into their lane
// loops: with its rocketlake tuning (-march=native on an Intel Xeon VM with
// AVX-512), GCC 12 left the k loop's lambda of gemm_tile out of line, a
// scalar call per lane and step, in ibla::gemm on L = 8 doubles from n = 9
// (the 4 x 4 tiles of gemm_tile_grid; 1 thread, 256 problems in L2,
// medians of 1001 calls, GFLOP/s: n = 12 7.5 -> 56.6, 16 9.0 -> 50.5, 24
// 11.0 -> 44.2, 32 11.8 -> 44.7 with always_inline; L = 16, whose tiles
// are halved, 1.00-1.04x). Optimised builds only: at -O0 (the sanitizer
// stage) nothing is inlined or vectorised anyway, and calls across the
// region's tune mismatch are only calls there.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__) && defined(__OPTIMIZE__)
#define IBLA_IMPL_ALWAYS_INLINE_LAMBDA __attribute__((always_inline))
#else
#define IBLA_IMPL_ALWAYS_INLINE_LAMBDA
#endif

namespace ibla {

/// host_has_mask_registers: whether the host's vector compares give their
/// results in mask registers (AVX-512's 8 k registers) rather than in
/// vector registers (see rows_match_mask).
#if defined(__AVX512F__)
inline constexpr int host_simd_bytes     = 64;
inline constexpr int host_simd_registers = 32;
inline constexpr bool host_has_mask_registers = true;
#elif defined(__AVX__)
inline constexpr int host_simd_bytes     = 32;
inline constexpr int host_simd_registers = 16;
inline constexpr bool host_has_mask_registers = false;
#elif defined(__aarch64__)
inline constexpr int host_simd_bytes     = 16;  // NEON (SVE widths are not known at compile time)
inline constexpr int host_simd_registers = 32;
inline constexpr bool host_has_mask_registers = false;
#else
inline constexpr int host_simd_bytes     = 16;  // SSE2, the x86-64 baseline
inline constexpr int host_simd_registers = 16;
inline constexpr bool host_has_mask_registers = false;
#endif

/// Whether the host has registers enough for 4 x 4 accumulator tiles plus
/// their operands (32: AVX-512, NEON); with 16 (AVX2, SSE) the tiles are
/// 3 x 4.
inline constexpr bool host_has_wide_register_file = host_simd_registers >= 32;

/// Whether the host code is tuned for a Zen core with AVX-512 (Zen 4 and 5;
/// see IBLA_IMPL_OPERANDS_IN_REGISTERS_BEGIN): the choices measured to go
/// the other way there than on the Intel Xeon VM key on it.
inline constexpr bool host_is_zen_with_avx512 = IBLA_IMPL_ZEN_WITH_AVX512 != 0;

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
