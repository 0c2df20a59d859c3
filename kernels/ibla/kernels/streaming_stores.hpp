// Streaming (non-temporal) stores for outputs a host kernel writes once and
// never reads back: GESV's pivots and info in its register form
// (gesv_registers_host).
//
// A plain store to a line that is not in L1 first reads the line
// (read-for-ownership). For the int outputs of small problems those reads
// were a large share of the memory traffic and, worse, of the time: GESV
// of order 2 reads 48 bytes of A and B a problem and wrote 12 of pivots and
// info, and the writes took a fifth of the call flushed. A streaming store
// writes the line's bytes to memory through the write-combining buffers,
// reading nothing. Those stores are weakly ordered, so the team that made
// them ends with a fence (fence_streaming_stores, see for_each_block's
// HostStores::streamed), before the kernel's end publishes its results.
#pragma once

#include <ibla/core/lanes.hpp>
#include <ibla/layouts/lane_block.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <type_traits>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__SSE2__) && !IBLA_IMPL_DEVICE_PASS
#include <immintrin.h>
#define IBLA_IMPL_X86_STREAMING_STORES 1
#endif

namespace ibla::impl {

/// Row i of a full host block of ints (lanes_c<L>: ipiv's row i, or info
/// with i = 0) set to v[l] in lane l. Where the lanes are contiguous and the
/// row starts on a multiple of the widest x86 vector that L ints fill (64,
/// 32 or 16 bytes), by streaming stores of that vector; otherwise (other
/// layouts, an unaligned View, other hosts) by plain stores: the same
/// values either way.
template <int L, class Block>
inline void store_lanes_streaming(const Block& b, const int i, const int (&v)[L]) {
  static_assert(std::is_same<typename Block::value_type, int>::value,
                "ibla: store_lanes_streaming stores ints");
  static_assert(std::is_same<typename Block::lane_count, lanes_c<L>>::value,
                "ibla: store_lanes_streaming stores full blocks");
#if defined(IBLA_IMPL_X86_STREAMING_STORES)
  if constexpr (std::is_same<typename Block::lane_stride, unit_stride>::value) {
    int* const row            = b.ptr(i, 0);
    const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(row);
#if defined(__AVX512F__)
    if constexpr (L % 16 == 0) {
      if (addr % 64 == 0) {
        for (int l = 0; l < L; l += 16)
          _mm512_stream_si512(reinterpret_cast<__m512i*>(row + l), _mm512_loadu_si512(v + l));
        return;
      }
    }
#endif
#if defined(__AVX__)
    if constexpr (L % 8 == 0) {
      if (addr % 32 == 0) {
        for (int l = 0; l < L; l += 8)
          _mm256_stream_si256(reinterpret_cast<__m256i*>(row + l),
                              _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v + l)));
        return;
      }
    }
#endif
    if constexpr (L % 4 == 0) {
      if (addr % 16 == 0) {
        for (int l = 0; l < L; l += 4)
          _mm_stream_si128(reinterpret_cast<__m128i*>(row + l),
                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(v + l)));
        return;
      }
    }
  }
#endif
  for (int l = 0; l < L; ++l) b(i, 0, l) = v[l];
}

/// Orders this thread's streaming stores before its later stores (sfence),
/// so that whoever synchronises with the thread afterwards (the end of the
/// kernel) sees them. Nothing on hosts without them and on device.
KOKKOS_FORCEINLINE_FUNCTION void fence_streaming_stores() {
#if defined(IBLA_IMPL_X86_STREAMING_STORES)
  _mm_sfence();
#endif
}

}  // namespace ibla::impl

#undef IBLA_IMPL_X86_STREAMING_STORES
