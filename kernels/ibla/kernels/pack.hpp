// Host batch-level kernels on Views whose matrices lie one after another
// (LayoutRight, LayoutStride: lanes_apart_v) copy each block into this
// thread's scratch in block-interleaved order, run the kernel of the
// block-interleaved layouts there, and copy the outputs back
// (for_each_block_of, PackedBlocks). Run on such Views directly, every
// vector of a block's lanes was a gather and every store a scatter, and the
// vector forms fixed at compile time (the register tiles, the fixed
// orders), which need the block-interleaved strides, did not apply: GEMM on
// column-major matrices one after another in a LayoutStride View took
// 1907 us at n = 8 and 82 ms at n = 32, where LIBXSMM took 349 us and
// 10.3 ms on the same storage (flushed, 10^4 problems, 2 threads, AMD EPYC
// Zen 4; packed: see gemm_unpacked_elements). A block packed this way gives
// the same bits as the block-interleaved layout of the same L, and every
// operation on such Views runs the kernels already compiled for that
// layout, not a second set with runtime lane strides.
// Device kernels keep the Views as they are: there a lane is a thread.
// The copies of a block (pack_block, unpack_block: transposes in registers)
// are in block_copy.hpp, which ibla::convert shares.
#pragma once

#include <ibla/core/lanes.hpp>
#include <ibla/core/registers.hpp>
#include <ibla/core/types.hpp>
#include <ibla/kernels/block_copy.hpp>
#include <ibla/kernels/prefetch.hpp>
#include <ibla/layouts/lane_block.hpp>
#include <ibla/layouts/layouts.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#if defined(__AVX512F__) && !IBLA_IMPL_DEVICE_PASS
#include <immintrin.h>
#endif

namespace ibla {
namespace impl {

#if !IBLA_IMPL_DEVICE_PASS
/// This thread's scratch of at least count elements of T, aligned to a
/// cache line; kept for the thread's life and grown as needed (never
/// shrunk), so that a kernel allocates once per thread, not per block.
template <class T>
T* host_thread_scratch(const std::size_t count) {
  constexpr std::size_t line = 64;
  thread_local std::unique_ptr<unsigned char[]> memory;
  thread_local std::size_t held = 0;
  if (held < count) {
    memory.reset(new unsigned char[count * sizeof(T) + line]);
    held = count;
  }
  const auto address = reinterpret_cast<std::uintptr_t>(memory.get());
  return reinterpret_cast<T*>((address + line - 1) / line * line);
}

#endif

/// An operand of a batch-level kernel that for_each_block_of may pack:
/// the user's View, whether the kernel reads it (copied into scratch first)
/// and whether it writes it (copied back after).
template <class V>
struct BlockOperand {
  V view;
  bool read;
  bool written;
};
template <class V>
BlockOperand<V> read_only(const V& v) {
  return {v, true, false};
}
template <class V>
BlockOperand<V> written_only(const V& v) {
  return {v, false, true};
}
template <class V>
BlockOperand<V> read_written(const V& v) {
  return {v, true, true};
}

/// The View over scratch that a block of V is packed into: L matrices
/// (one block) of LayoutBlockInterleaved<L>. Not const, so that the kernels
/// it reaches are those of a user's block-interleaved Views.
template <int L, class V>
using packed_view_t = Kokkos::View<typename V::non_const_data_type, LayoutBlockInterleaved<L>,
                                   Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

/// Bytes of scratch a block of v takes packed, whole cache lines.
template <int L, class V>
std::size_t packed_bytes(const V& v) {
  constexpr std::size_t line = 64;
  std::size_t elements       = std::size_t(L);
  for (unsigned r = 1; r < unsigned(V::rank); ++r) elements *= std::size_t(v.extent(r));
  const std::size_t bytes = elements * sizeof(typename V::value_type);
  return (bytes + line - 1) / line * line;
}

#if !IBLA_IMPL_DEVICE_PASS
/// The packed View of op's block over the scratch at `at` (advanced past
/// it).
template <int L, class V>
packed_view_t<L, V> packed_view(const BlockOperand<V>& op, unsigned char*& at) {
  using P = packed_view_t<L, V>;
  using T = typename P::value_type;
  T* const data = reinterpret_cast<T*>(at);
  at += packed_bytes<L>(op.view);
  if constexpr (V::rank == 1) return P(data, L);
  else if constexpr (V::rank == 2) return P(data, L, op.view.extent(1));
  else return P(data, L, op.view.extent(1), op.view.extent(2));
}

/// packed = the user's block [first, first + lanes) of op, where the kernel
/// reads it (pack_block; next_full: it also requests the next block).
template <class Member, class V, class P, class Lanes>
void pack_operand(const Member& member, const BlockOperand<V>& op, const P& packed, index_t first,
                  Lanes lanes, const bool next_full) {
  if (op.read)
    pack_block(member, lane_block(op.view, first, lanes), lane_block(packed, 0, lanes), next_full);
}

/// Adds to `next` op's full block at `first` (the one after the block being
/// packed) as one range, where its L matrices each lie contiguously and one
/// right after another: the range is then as many bytes as the packed
/// block, the form the kernels' requests of a block-interleaved block take
/// (BlockPrefetch::step_whole_blocks). False, adding nothing, where they do
/// not.
template <int L, class V>
bool add_next_source_block(BlockPrefetch& next, const BlockOperand<V>& op, const index_t first) {
  const auto b        = lane_block(op.view, first, std::integral_constant<int, L>{});
  const index_t size  = index_t(sizeof(*b.data));
  const index_t bytes = index_t(b.rows) * b.cols * size;
  bool by_columns     = true;
  if (!matrices_contiguous(b, by_columns) || index_t(value_of(b.ls)) * size != bytes) return false;
  next.add_runs(reinterpret_cast<const char*>(b.data), bytes * L, 0, 0, 0);
  return true;
}
#endif

/// Whether a block functor F can take a packed block with the user's next
/// block as its prefetch: F::requests_next_packed_block() says for which
/// operands, F::run_requesting(member, first, lanes, next) runs it so.
template <class F, class = void>
struct takes_next_packed_block : std::false_type {};
template <class F>
struct takes_next_packed_block<F, std::void_t<decltype(&F::requests_next_packed_block)>>
    : std::true_type {};

/// The batch-level functor of for_each_block_of on host: each block of the
/// operands packed into this thread's scratch (BlockOperand::read), the
/// kernel's own block functor, make(packed Views...), run on it as block 0
/// of a batch of L, the written operands copied back. The next block of
/// the user's Views is requested as this one is packed (pack_block), or,
/// where the kernel says it takes it (takes_next_packed_block), over the
/// kernel's own work, as its requests of the next block of a
/// block-interleaved View are (see gemm_packed_requesting_last_order).
/// A team's blocks run through run_blocks (runs_block_ranges): the
/// scratch, its Views and the kernel made over them once a team, then
/// block after block. Set up once a block, as until 2026-12-07, that work
/// stood between the blocks of the smallest orders, where it took as long
/// as the block, and kept out of order execution from overlapping one
/// block's dependent chain of square roots with the next block. Measured
/// on an Intel Xeon VM (family 6 model 167, 2 threads; micro-drivers on
/// 10^4 column-major matrices one after another in a LayoutStride View,
/// medians of 31-51 calls, 2 runs, us, the same sums), POTRF warm n = 1
/// 24.4-24.5 -> 14.7-15.0, 2 40.2-42.3 -> 23.3-26.5, 3 64.7-66.2 ->
/// 57.7-58.6; GEMM NN (alpha 1.5, beta 0.5) 0.96-1.12x flushed and warm
/// at n = 2..8 (floats n = 4 warm 60.0-64.4 -> 53.8-60.8).
template <int L, class Make, class... V>
struct PackedBlocks {
  Make make;
  std::tuple<BlockOperand<V>...> operands;
  index_t batch;
  static constexpr bool runs_block_ranges = true;
  template <class Member, class Lanes>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member, index_t first, Lanes lanes) const {
#if !IBLA_IMPL_DEVICE_PASS
    run_blocks(member, first, first + index_t(value_of(lanes)));
#else
    (void)member, (void)first, (void)lanes;
#endif
  }

#if !IBLA_IMPL_DEVICE_PASS
  /// The blocks of [begin, end) (begin a multiple of L, see BlockLoop): the
  /// scratch, its packed Views and the kernel made over them once, then
  /// block by block.
  template <class Member>
  void run_blocks(const Member& member, const index_t begin, const index_t end) const {
    run_range(member, begin, end, std::index_sequence_for<V...>{});
  }

  template <class Member, std::size_t... I>
  void run_range(const Member& member, const index_t begin, const index_t end,
                 std::index_sequence<I...> seq) const {
    unsigned char* at = host_thread_scratch<unsigned char>(
        (std::size_t(0) + ... + packed_bytes<L>(std::get<I>(operands).view)));
    // Braces: the Views take the scratch in order.
    const std::tuple<packed_view_t<L, V>...> packed{packed_view<L>(std::get<I>(operands), at)...};
    const auto kernel = make(std::get<I>(packed)...);
    for (index_t block = begin / L; block * L < end; ++block) {
      const index_t first = block * L;
      if (batch - first >= L) run(member, kernel, packed, first, lanes_c<L>{}, seq);
      else run(member, kernel, packed, first, lanes_upto<L>{int(batch - first)}, seq);
    }
  }

  template <class Member, class Kernel, class Packed, class Lanes, std::size_t... I>
  void run(const Member& member, const Kernel& kernel, const Packed& packed, const index_t first,
           Lanes lanes, std::index_sequence<I...>) const {
    const bool next_full = first + 2 * index_t(L) <= batch;
    BlockPrefetch next;
    bool kernel_requests = false;
    if constexpr (takes_next_packed_block<Kernel>::value &&
                  sizeof...(V) <= std::size_t(BlockPrefetch::max_ranges)) {
      // As a block-interleaved View's next block (prefetch_next_block):
      // in batches past prefetch_above_bytes.
      kernel_requests =
          next_full &&
          prefetches_next_block<lanes_c<L>>(first, 1, batch, std::get<I>(operands).view...) &&
          kernel.requests_next_packed_block() &&
          (add_next_source_block<L>(next, std::get<I>(operands), first + L) && ...);
    }
    (pack_operand(member, std::get<I>(operands), std::get<I>(packed), first, lanes,
                  next_full && !kernel_requests),
     ...);
    if constexpr (takes_next_packed_block<Kernel>::value) {
      if (kernel_requests) kernel.run_requesting(member, index_t(0), lanes, next);
      else kernel(member, index_t(0), lanes);
    } else {
      kernel(member, index_t(0), lanes);
    }
    ((std::get<I>(operands).written
          ? unpack_block(lane_block(std::get<I>(packed), 0, lanes),
                         lane_block(std::get<I>(operands).view, first, lanes))
          : void()),
     ...);
  }
#endif
};

}  // namespace impl
}  // namespace ibla

namespace ibla {
namespace detail {

/// Whether batch-level kernels on ExecSpace pack blocks of these Views
/// (pack.hpp): on host, where one of them holds its lanes apart.
template <class ExecSpace, class... V>
inline constexpr bool packs_blocks_v = is_host_space_v<ExecSpace> && (lanes_apart_v<V> || ...);

/// The View type a batch-level kernel sees for an operand of type V: its
/// packed View where the call packs (Packs: packs_blocks_v of the call's
/// Views), else V. For the choices an operation makes from its Views'
/// types (the kernels of one order, see with_trsm_host_order).
template <bool Packs, int L, class V>
using kernel_view_t = std::conditional_t<Packs, impl::packed_view_t<L, V>, V>;

/// How the blocks of a call store their outputs (HostStores): through the
/// cache where the call packs (Packs: packed blocks store into scratch,
/// see for_each_block_of), else the operation's own choice for its Views.
template <bool Packs>
constexpr HostStores kernel_stores(const HostStores unpacked) {
  return Packs ? HostStores::cached : unpacked;
}

/// Pass as for_each_block_of's pack: every block of Views that hold their
/// lanes apart is packed, and the kernels on such Views themselves are not
/// compiled (each operation's set of them, every order, with runtime lane
/// strides: the six operations on LayoutStride Views took ibla_bench's
/// build from about 6 to 21 minutes on 2 cores).
using always_pack = std::true_type;

/// for_each_block over the block functor make(views...) returns, the Views
/// being operands' (BlockOperand): on host, where one of them holds its
/// lanes apart and pack is true (a bool, or always_pack), each block is
/// packed into scratch and make is called with the packed Views
/// (PackedBlocks), whose kernels store through the cache (Stores does not
/// apply); else make(operands' Views).
template <int L, HostStores Stores = HostStores::cached, class ExecSpace, class Pack, class Make,
          class... V>
void for_each_block_of(const ExecSpace& exec, const char* label, index_t batch,
                       index_t elements_per_problem, const Pack pack, const Make& make,
                       const impl::BlockOperand<V>&... operands) {
  static_assert(std::is_same<Pack, bool>::value || std::is_same<Pack, always_pack>::value,
                "pack: a bool, or always_pack");
  if constexpr (packs_blocks_v<ExecSpace, V...>) {
    if (bool(pack)) {
      for_each_block<L>(exec, label, batch, elements_per_problem,
                        impl::PackedBlocks<L, Make, V...>{make, {operands...}, batch});
      return;
    }
  }
  if constexpr (!(packs_blocks_v<ExecSpace, V...> && std::is_same<Pack, always_pack>::value))
    for_each_block<L, Stores>(exec, label, batch, elements_per_problem, make(operands.view...));
}

}  // namespace detail
}  // namespace ibla
