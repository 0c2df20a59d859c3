// Copies of one block of matrices between two storage forms, the building
// block of ibla::convert (convert.hpp) and of the host kernels' packs
// (pack.hpp): element by element with the block's lanes as the vector loop
// (team::copy, every backend), or on host, where one side holds each
// matrix contiguously one after another and the other its lanes side by
// side, by transposes in registers (pack_block, unpack_block).
#pragma once

#include <ibla/core/fused.hpp>
#include <ibla/core/lanes.hpp>
#include <ibla/core/registers.hpp>
#include <ibla/core/types.hpp>
#include <ibla/kernels/dispatch.hpp>
#include <ibla/kernels/prefetch.hpp>
#include <ibla/layouts/lane_block.hpp>

#include <Kokkos_Core.hpp>

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#if defined(__AVX512F__) && !IBLA_IMPL_DEVICE_PASS
#include <immintrin.h>
#endif

namespace ibla {

namespace detail {
/// Lanes of a matrix-after-matrix block this many bytes apart (a multiple)
/// fall into the same L1 set: 64 sets of 64-byte lines on every x86 core
/// ibla has been measured on (Zen 3 to Zen 5, Intel Xeon).
inline constexpr index_t copy_l1_set_period_bytes = 4096;
/// More lanes than this one set cannot hold (the L1's ways: 8 on Zen 3
/// and 4, 12 on Zen 5 and recent Xeons; 8 keeps within the smallest).
inline constexpr int copy_l1_ways = 8;

/// Whether team::copy writes dst lane by lane: dst holds its matrices one
/// after another (not interleaved) a multiple of copy_l1_set_period_bytes
/// apart, with more lanes than copy_l1_ways. Element by element with the
/// lanes as the vector loop, every store of an element went to another
/// lane's line in the same L1 set, more lines than the set holds, so each
/// was evicted before the next row's store reached it. Measured (float,
/// LayoutBlockInterleaved<16> -> LayoutRight, n = 32, so 4 KiB apart, 10^4
/// matrices, 2 threads, Zen 5 VM): 5.7 -> 10.2-12.2 GB/s (double with
/// L = 16, 8 KiB apart: 9.7-10.1 -> 14.0-15.1); at orders where
/// the lanes do not alias (float n = 8, 16, 24, 31, 33; double with L = 8)
/// lane by lane was 0.6-1.0x, hence the test.
template <class T, class C, class S, class R, class CS>
KOKKOS_INLINE_FUNCTION bool copy_lane_by_lane(const LaneBlock<T, C, S, R, CS>& dst) {
#if !IBLA_IMPL_DEVICE_PASS
  if constexpr (!std::is_same<S, unit_stride>::value) {
    const index_t bytes = index_t(value_of(dst.ls)) * index_t(sizeof(T));
    return max_lanes<C>::value > copy_l1_ways && bytes > 0 &&
           bytes % copy_l1_set_period_bytes == 0;
  }
#endif
  (void)dst;
  return false;
}
/// Pointer arrays (matrices allocated apart): the order as before.
template <class BD>
KOKKOS_INLINE_FUNCTION bool copy_lane_by_lane(const BD&) {
  return false;
}
}  // namespace detail

namespace team {
/// dst = src on one block; both are blocks of the same shape.
template <class Member, class BS, class BD>
KOKKOS_INLINE_FUNCTION void copy(const Member& member, const BS& src, const BD& dst) {
  if (detail::copy_lane_by_lane(dst)) {
    // Each lane's column is written whole before the next lane's, so only
    // one of the aliasing lines is being written at a time.
    for (int j = 0; j < dst.cols; ++j)
      for_each_lane(member, dst.lanes, [&](const int l) {
        for (int i = 0; i < dst.rows; ++i) dst(i, j, l) = src(i, j, l);
      });
  } else {
    for (int j = 0; j < dst.cols; ++j)
      for (int i = 0; i < dst.rows; ++i)
        for_each_lane(member, dst.lanes, [&](const int l) { dst(i, j, l) = src(i, j, l); });
  }
  team_sync(member);
}
}  // namespace team

namespace impl {

#if !IBLA_IMPL_DEVICE_PASS
#if defined(__GNUC__) && !defined(__clang__)
/// W values of T as one GCC vector (W * sizeof(T) bytes: one or two SIMD
/// registers of the block's lanes), and its shuffle index vector.
template <class T, int W>
struct lane_vector {
  typedef T type __attribute__((vector_size(W * sizeof(T))));
  using index_type = std::conditional_t<sizeof(T) == 8, std::int64_t, std::int32_t>;
  typedef index_type index __attribute__((vector_size(W * sizeof(T))));
};

/// Element p of the two shuffles of transpose_step: pairs of runs of D
/// elements of two rows x and y, the even runs (lo) or the odd ones (hi),
/// x's run first; indices into x then y (__builtin_shuffle).
KOKKOS_INLINE_FUNCTION constexpr int transpose_index(const int D, const int W, const int p,
                                                     const bool hi) {
  const int pair = p / (2 * D), t = p % (2 * D);
  return (t < D ? 0 : W) + 2 * D * pair + (hi ? D : 0) + (t < D ? t : t - D);
}

/// One step of the W x W transpose of rows r[0..W): rows i and i + D (i
/// without the bit D) swap their odd runs of D elements with the other's
/// even ones.
template <class T, int W, int D, int... P>
KOKKOS_FORCEINLINE_FUNCTION void transpose_step(typename lane_vector<T, W>::type* r,
                                                std::integer_sequence<int, P...>) {
  using index = typename lane_vector<T, W>::index;
  constexpr index lo{transpose_index(D, W, P, false)...}, hi{transpose_index(D, W, P, true)...};
  for (int i = 0; i < W; ++i)
    if ((i & D) == 0) {
      const auto x = r[i], y = r[i + D];
      r[i]         = __builtin_shuffle(x, y, lo);
      r[i + D]     = __builtin_shuffle(x, y, hi);
    }
}

/// r[i][k] <- r[k][i] for W rows of W values (W a power of two): log2(W)
/// steps of W shuffles, 24 for eight doubles. GCC does not find this for a
/// copy loop written element by element: its loop for eight lanes of eight
/// elements was 64 scalar loads and stores.
template <class T, int W, int D = 1>
KOKKOS_FORCEINLINE_FUNCTION void transpose_rows(typename lane_vector<T, W>::type* r) {
  if constexpr (D < W) {
    transpose_step<T, W, D>(r, std::make_integer_sequence<int, W>{});
    transpose_rows<T, W, 2 * D>(r);
  }
}

/// Element p of the shuffles of deinterleave_runs (indices into x then y,
/// __builtin_shuffle): the even elements of x, y (odd: the odd ones).
KOKKOS_INLINE_FUNCTION constexpr int deinterleave_index(const int p, const bool odd) {
  return 2 * p + (odd ? 1 : 0);
}
/// Element p of the shuffles of interleave_runs: the first half of x and y
/// element by element, x's first (second: the second halves).
KOKKOS_INLINE_FUNCTION constexpr int interleave_index(const int W, const int p,
                                                      const bool second) {
  return (p % 2 == 0 ? 0 : W) + (second ? W / 2 : 0) + p / 2;
}

/// r[0..E) (E a power of two) holding a stream of E * W values one vector
/// after another becomes its E runs of stride E: r[e][k] <- the stream's
/// element e + k * E. The even elements of each pair of vectors, then the
/// odd ones, each half again (log2(E) steps of E shuffles: 8 for E = 4).
template <class T, int W, int E, int... P>
KOKKOS_FORCEINLINE_FUNCTION void deinterleave_runs(typename lane_vector<T, W>::type* r,
                                                   std::integer_sequence<int, P...> p) {
  if constexpr (E > 1) {
    using V     = typename lane_vector<T, W>::type;
    using index = typename lane_vector<T, W>::index;
    constexpr index even{deinterleave_index(P, false)...}, odd{deinterleave_index(P, true)...};
    V evens[E / 2], odds[E / 2];
    for (int i = 0; i < E / 2; ++i) {
      evens[i] = __builtin_shuffle(r[2 * i], r[2 * i + 1], even);
      odds[i]  = __builtin_shuffle(r[2 * i], r[2 * i + 1], odd);
    }
    deinterleave_runs<T, W, E / 2>(evens, p);
    deinterleave_runs<T, W, E / 2>(odds, p);
    for (int j = 0; j < E / 2; ++j) {
      r[2 * j]     = evens[j];
      r[2 * j + 1] = odds[j];
    }
  }
}

/// The inverse of deinterleave_runs: r[0..E) holding the E runs of stride
/// E of a stream becomes the stream, one vector after another.
template <class T, int W, int E, int... P>
KOKKOS_FORCEINLINE_FUNCTION void interleave_runs(typename lane_vector<T, W>::type* r,
                                                 std::integer_sequence<int, P...> p) {
  if constexpr (E > 1) {
    using V     = typename lane_vector<T, W>::type;
    using index = typename lane_vector<T, W>::index;
    constexpr index first{interleave_index(W, P, false)...};
    constexpr index second{interleave_index(W, P, true)...};
    V evens[E / 2], odds[E / 2];
    for (int j = 0; j < E / 2; ++j) {
      evens[j] = r[2 * j];
      odds[j]  = r[2 * j + 1];
    }
    interleave_runs<T, W, E / 2>(evens, p);
    interleave_runs<T, W, E / 2>(odds, p);
    for (int i = 0; i < E / 2; ++i) {
      r[2 * i]     = __builtin_shuffle(evens[i], odds[i], first);
      r[2 * i + 1] = __builtin_shuffle(evens[i], odds[i], second);
    }
  }
}

/// f(std::integral_constant<int, E>{}) for E == n, where n is a power of
/// two below L; false, calling nothing, for other n.
template <int L, int E = 1, class F>
KOKKOS_FORCEINLINE_FUNCTION bool with_power_of_two_below(const index_t n, F&& f) {
  if constexpr (E < L) {
    if (n == E) {
      f(std::integral_constant<int, E>{});
      return true;
    }
    return with_power_of_two_below<L, 2 * E>(n, f);
  } else {
    (void)n, (void)f;
    return false;
  }
}

/// The first count (< W) values at p as a vector, the others zero; reads
/// nothing past them (another thread may be writing there). AVX-512 masked
/// loads; elsewhere element by element (a loop GCC does not turn into a
/// call of memcpy, as it did a loop to count).
template <class T, int W>
KOKKOS_FORCEINLINE_FUNCTION typename lane_vector<T, W>::type load_first(const T* p,
                                                                       const int count) {
  using V = typename lane_vector<T, W>::type;
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64 && sizeof(T) == 8) {
    return (V)_mm512_maskz_loadu_pd(__mmask8((1u << count) - 1), p);
  } else if constexpr (sizeof(V) == 64 && sizeof(T) == 4) {
    return (V)_mm512_maskz_loadu_ps(__mmask16((1u << count) - 1), p);
  }
#endif
#if defined(__AVX512VL__)
  if constexpr (sizeof(V) == 32 && sizeof(T) == 8) {
    return (V)_mm256_maskz_loadu_pd(__mmask8((1u << count) - 1), p);
  } else if constexpr (sizeof(V) == 32 && sizeof(T) == 4) {
    return (V)_mm256_maskz_loadu_ps(__mmask8((1u << count) - 1), p);
  }
#endif
  V v{};
  for (int e = 0; e < W; ++e)
    if (e < count) v[e] = p[e];
  return v;
}

/// p[0, count) = the first count (< W) values of v; writes nothing past them.
template <class T, int W>
KOKKOS_FORCEINLINE_FUNCTION void store_first(T* p, const typename lane_vector<T, W>::type& v,
                                             const int count) {
  using V = typename lane_vector<T, W>::type;
#if defined(__AVX512F__)
  if constexpr (sizeof(V) == 64 && sizeof(T) == 8) {
    _mm512_mask_storeu_pd(p, __mmask8((1u << count) - 1), (__m512d)v);
    return;
  } else if constexpr (sizeof(V) == 64 && sizeof(T) == 4) {
    _mm512_mask_storeu_ps(p, __mmask16((1u << count) - 1), (__m512)v);
    return;
  }
#endif
#if defined(__AVX512VL__)
  if constexpr (sizeof(V) == 32 && sizeof(T) == 8) {
    _mm256_mask_storeu_pd(p, __mmask8((1u << count) - 1), (__m256d)v);
    return;
  } else if constexpr (sizeof(V) == 32 && sizeof(T) == 4) {
    _mm256_mask_storeu_ps(p, __mmask8((1u << count) - 1), (__m256)v);
    return;
  }
#endif
  for (int e = 0; e < W; ++e)
    if (e < count) p[e] = v[e];
}

/// Whether load_first and store_first of 32-byte vectors are single masked
/// instructions here (AVX-512VL), not element loops.
#if defined(__AVX512VL__)
inline constexpr bool host_has_masked_32_byte_vectors = true;
#else
inline constexpr bool host_has_masked_32_byte_vectors = false;
#endif

/// a * b + c lane by lane with one rounding, as fused_mul_add of each
/// lane's values, on a GCC vector of 32 bytes.
template <class V>
KOKKOS_FORCEINLINE_FUNCTION V vector_fused_mul_add(const V a, const V b, const V c) {
#if defined(__AVX512VL__)
  if constexpr (sizeof(V) == 32 && sizeof(a[0]) == 8) {
    return (V)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c);
  } else if constexpr (sizeof(V) == 32 && sizeof(a[0]) == 4) {
    return (V)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
  }
#endif
  V r;
  for (int e = 0; e < int(sizeof(V) / sizeof(a[0])); ++e) r[e] = fused_mul_add(a[e], b[e], c[e]);
  return r;
}

/// x in every lane of a GCC vector of T (lane by lane, not x + a zero
/// vector, which would turn -0 into +0).
template <class V, class T>
KOKKOS_FORCEINLINE_FUNCTION V splat(const T x) {
  V v;
  for (int e = 0; e < int(sizeof(V) / sizeof(T)); ++e) v[e] = x;
  return v;
}
#define IBLA_IMPL_PACK_BY_TRANSPOSES 1
#else
#define IBLA_IMPL_PACK_BY_TRANSPOSES 0
#endif

/// (i, j) of the elements of a matrix in the order they are stored when it
/// lies contiguously, column after column (by_columns) or row after row;
/// next() steps to the following one.
struct StorageOrder {
  int rows, cols;
  bool by_columns;
  int i = 0, j = 0;
  KOKKOS_FORCEINLINE_FUNCTION void next() {
    if (by_columns) {
      if (++i == rows) i = 0, ++j;
    } else {
      if (++j == cols) j = 0, ++i;
    }
  }
};

/// Whether every matrix of a block with lanes apart lies contiguously, by
/// columns (rows adjacent) or by rows: the storage pack_block and
/// unpack_block transpose; by_columns says which.
template <class B>
KOKKOS_FORCEINLINE_FUNCTION bool matrices_contiguous(const B& b, bool& by_columns) {
  const index_t rs = index_t(value_of(b.rs)), cs = index_t(value_of(b.cs));
  by_columns = rs == 1 && (cs == b.rows || b.cols == 1);
  return by_columns || (cs == 1 && (rs == b.cols || b.rows == 1));
}

/// dst = src, src a block whose lanes lie apart, dst a packed block
/// (pack_operand). A full block of matrices each stored contiguously: L
/// consecutive elements of each of the L matrices read as vectors and
/// transposed in registers, every line read used at once; else (the
/// partial last block, other strides) team::copy: each element's lanes in
/// one vector loop (a gather). next_full: a full block of src follows this
/// one. Then the transposes also request into L2 the lines of the next L
/// matrices of src that they will read for the next block, as they read
/// this one's: the lanes of a block lie a matrix apart, which the hardware
/// prefetcher did not follow from memory (GEMM n = 8, 10^4 problems, 2
/// threads, flushed: about 2.8x LIBXSMM's time without). The last elements
/// of each matrix, fewer than L (all of them where a matrix has fewer than
/// L), are transposed too, read by load_first.
template <class Member, class BS, class BD>
KOKKOS_FORCEINLINE_FUNCTION void pack_block(const Member& member, const BS& src, const BD& dst,
                                            const bool next_full = false) {
  using T         = std::remove_const_t<typename BS::value_type>;
  constexpr int L = fixed_lanes<typename BD::lane_count>::value;
  bool by_columns = true;
#if IBLA_IMPL_PACK_BY_TRANSPOSES
  if constexpr (L > 1 && (L & (L - 1)) == 0) {
    if (matrices_contiguous(src, by_columns)) {
      using V          = typename lane_vector<T, L>::type;
      const index_t n  = index_t(src.rows) * src.cols;
      StorageOrder at{src.rows, src.cols, by_columns};
      const index_t next = next_full ? index_t(L) * index_t(value_of(src.ls)) : 0;
      // Matrices of E < L elements (E a power of two) one right after
      // another: the block is E vectors of L / E whole matrices each, and
      // the packed rows are its runs of stride E (deinterleave_runs, 8
      // shuffles for 2 x 2 matrices), not a transpose of L rows of which
      // E are kept.
      if (index_t(value_of(src.ls)) == n &&
          with_power_of_two_below<L>(n, [&](auto runs) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
            constexpr int E = decltype(runs)::value;
            V r[E];
            for (int q = 0; q < E; ++q) {
              const T* const at_q = &src(0, 0, q * (L / E));
              std::memcpy(&r[q], at_q, sizeof(V));
              if (next_full)
                for (int o = 0; o < int(sizeof(V)); o += int(BlockPrefetch::line))
                  PrefetchLine{}(reinterpret_cast<const char*>(at_q + next) + o);
            }
            deinterleave_runs<T, L, E>(r, std::make_integer_sequence<int, L>{});
            for (int k = 0; k < E; ++k) {
              std::memcpy(dst.ptr(at.i, at.j), &r[k], sizeof(V));
              at.next();
            }
          }))
        return;
      for (index_t e0 = 0; e0 < n; e0 += L) {
        const int rows = n - e0 < L ? int(n - e0) : L;
        V r[L];
        if (rows == L) {
          for (int l = 0; l < L; ++l) std::memcpy(&r[l], &src(0, 0, l) + e0, sizeof(V));
        } else {
          for (int l = 0; l < L; ++l) r[l] = load_first<T, L>(&src(0, 0, l) + e0, rows);
        }
        if (next_full)
          for (int l = 0; l < L; ++l)
            for (int o = 0; o < int(sizeof(V)); o += int(BlockPrefetch::line))
              PrefetchLine{}(reinterpret_cast<const char*>(&src(0, 0, l) + e0 + next) + o);
        transpose_rows<T, L>(r);
        // k a constant in every copy of this loop body: r stays in
        // registers (with k a variable it was kept on the stack, and the
        // transposes read it back from there).
#pragma GCC unroll 64
        for (int k = 0; k < L; ++k)
          if (k < rows) {
            std::memcpy(dst.ptr(at.i, at.j), &r[k], sizeof(V));
            at.next();
          }
      }
      return;
    }
  }
#endif
  (void)by_columns;
  team::copy(member, src, dst);
}

/// dst = src, src a packed block, dst a block whose lanes lie apart: the
/// transposes of pack_block the other way, the last elements of each
/// matrix, fewer than L, by store_first; else a matrix at a time, so that
/// the stores go to one matrix's lines after another.
template <class BS, class BD>
KOKKOS_FORCEINLINE_FUNCTION void unpack_block(const BS& src, const BD& dst) {
  using T         = std::remove_const_t<typename BS::value_type>;
  constexpr int L = fixed_lanes<typename BS::lane_count>::value;
  bool by_columns = true;
#if IBLA_IMPL_PACK_BY_TRANSPOSES
  if constexpr (L > 1 && (L & (L - 1)) == 0) {
    if (matrices_contiguous(dst, by_columns)) {
      using V         = typename lane_vector<T, L>::type;
      const index_t n = index_t(dst.rows) * dst.cols;
      StorageOrder at{dst.rows, dst.cols, by_columns};
      // pack_block's runs of stride E back into one stream.
      if (index_t(value_of(dst.ls)) == n &&
          with_power_of_two_below<L>(n, [&](auto runs) IBLA_IMPL_ALWAYS_INLINE_LAMBDA {
            constexpr int E = decltype(runs)::value;
            V r[E];
            for (int k = 0; k < E; ++k) {
              std::memcpy(&r[k], src.ptr(at.i, at.j), sizeof(V));
              at.next();
            }
            interleave_runs<T, L, E>(r, std::make_integer_sequence<int, L>{});
            for (int q = 0; q < E; ++q) std::memcpy(&dst(0, 0, q * (L / E)), &r[q], sizeof(V));
          }))
        return;
      for (index_t e0 = 0; e0 < n; e0 += L) {
        const int rows = n - e0 < L ? int(n - e0) : L;
        V r[L];
        for (int k = 0; k < L; ++k) {
          if (k < rows) {
            std::memcpy(&r[k], src.ptr(at.i, at.j), sizeof(V));
            at.next();
          } else {
            r[k] = V{};
          }
        }
        transpose_rows<T, L>(r);
        if (rows == L) {
          for (int l = 0; l < L; ++l) std::memcpy(&dst(0, 0, l) + e0, &r[l], sizeof(V));
        } else {
          for (int l = 0; l < L; ++l) store_first<T, L>(&dst(0, 0, l) + e0, r[l], rows);
        }
      }
      return;
    }
  }
#endif
  (void)by_columns;
  const int lanes = int(value_of(src.lanes));
  for (int l = 0; l < lanes; ++l)
    for (int j = 0; j < dst.cols; ++j)
      for (int i = 0; i < dst.rows; ++i) dst(i, j, l) = src(i, j, l);
}

/// dst = src on one block of a host conversion, where src holds its lanes
/// side by side (block-interleaved, interleaved) and dst each of its
/// matrices contiguously one after another, and the block is full, of L
/// lanes a power of two filling at most one SIMD vector: by unpack_block's
/// transposes, every line written whole at once, not by team::copy's
/// scatters. Returns false, nothing done, elsewhere. The other way, into
/// lanes side by side, team::copy's gathers stay: pack_block's transposes
/// were no faster there (ibla::convert micro-driver outside the repo:
/// LayoutStride column-major <-> LayoutBlockInterleaved<8>, doubles, 2
/// threads, medians of 11-21 calls, 2 runs, Intel Xeon VM, us, gathers ->
/// transposes): 10^5 flushed n = 2 226-239 -> 236-252, 4 997-1013 ->
/// 1030-1108, 8 4286-4309 -> 4416-4580, 16 17647-19715 -> 17887-18907, 32
/// 68514-69387 -> 70927-71248; 10^4 in cache n = 3 11.5-11.9 -> 16.4-19.6,
/// 4 20.7-21.5 -> 24.7-28.4, 8 178-179 both, 16 817-915 -> 790-795.
template <class BS, class BD>
KOKKOS_FORCEINLINE_FUNCTION bool unpack_by_transposes(const BS& src, const BD& dst) {
#if IBLA_IMPL_PACK_BY_TRANSPOSES
  using T = std::remove_const_t<typename BS::value_type>;
  if constexpr (is_lane_block_v<BS> && is_lane_block_v<BD>) {
    constexpr int L = fixed_lanes<typename BS::lane_count>::value;
    if constexpr (L > 1 && (L & (L - 1)) == 0 &&
                  std::is_same<typename BS::lane_stride, unit_stride>::value &&
                  !std::is_same<typename BD::lane_stride, unit_stride>::value) {
      if constexpr (int(sizeof(typename lane_vector<T, L>::type)) <= host_simd_bytes) {
        bool by_columns = true;
        if (!matrices_contiguous(dst, by_columns)) return false;
        unpack_block(src, dst);
        return true;
      }
    }
  }
#endif
  (void)src, (void)dst;
  return false;
}
#endif

}  // namespace impl
}  // namespace ibla
