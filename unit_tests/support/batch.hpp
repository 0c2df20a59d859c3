// Test support: a host-side reference copy of a batch (column-major matrices
// one after another, as LAPACK wants them), Views of every layout ibla
// supports, and copies between the two that go through View indexing only,
// so they do not depend on the code under test.
#pragma once

#include <ibla/ibla.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace ibla_test {

using ibla::index_t;

template <class T>
struct HostBatch {
  index_t batch = 0, rows = 0, cols = 0;
  std::vector<T> data;
  HostBatch() = default;
  HostBatch(index_t b, index_t m, index_t n) : batch(b), rows(m), cols(n), data(size_t(b * m * n)) {}
  T& operator()(index_t b, index_t i, index_t j) { return data[size_t((b * cols + j) * rows + i)]; }
  const T& operator()(index_t b, index_t i, index_t j) const {
    return data[size_t((b * cols + j) * rows + i)];
  }
  T* matrix(index_t b) { return data.data() + b * rows * cols; }
  const T* matrix(index_t b) const { return data.data() + b * rows * cols; }
};

/// Uniform in [-1, 1], reproducible per seed.
template <class T>
HostBatch<T> random_batch(index_t b, index_t m, index_t n, std::uint64_t seed) {
  HostBatch<T> h(b, m, n);
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (auto& x : h.data) x = T(dist(gen));
  return h;
}

// ---------------------------------------------------------------------------
// Layout tags for typed tests. LayoutStrideColMajor is a LayoutStride View of
// column-major matrices with a padded leading dimension and matrix stride.
struct LayoutStrideColMajor {};

template <class T, class Layout>
struct ViewOf {
  using type = Kokkos::View<T***, Layout>;
  static type make(const std::string& label, index_t b, index_t m, index_t n) {
    return type(label, b, m, n);
  }
};
template <class T>
struct ViewOf<T, LayoutStrideColMajor> {
  using type = Kokkos::View<T***, Kokkos::LayoutStride>;
  static type make(const std::string& label, index_t b, index_t m, index_t n) {
    const size_t ld = size_t(m) + 3, mstride = ld * size_t(n > 0 ? n : 1) + 5;
    Kokkos::LayoutStride layout(size_t(b), mstride, size_t(m), 1, size_t(n), ld);
    return type(label, layout);
  }
};
// LayoutStrideDenseColMajor: column-major matrices one after another with no
// padding (leading dimension m, matrix stride m * n), the storage of a user
// who keeps LAPACK's matrices in one array.
struct LayoutStrideDenseColMajor {};
template <class T>
struct ViewOf<T, LayoutStrideDenseColMajor> {
  using type = Kokkos::View<T***, Kokkos::LayoutStride>;
  static type make(const std::string& label, index_t b, index_t m, index_t n) {
    Kokkos::LayoutStride layout(size_t(b), size_t(m) * size_t(n), size_t(m), 1, size_t(n), size_t(m));
    return type(label, layout);
  }
};
template <class T, class Layout>
using view_t = typename ViewOf<T, Layout>::type;

/// A View in host memory for the tests that run host kernels directly: the
/// type of view_t (the type support/instances.hpp instantiates the
/// operations for) where the default memory space is the host's, so that
/// such a test compiles no kernel the instance units compile already; a
/// HostSpace View on a device build.
template <class T, class Layout>
using host_view_t =
    std::conditional_t<std::is_same<Kokkos::DefaultExecutionSpace::memory_space, Kokkos::HostSpace>::value,
                       view_t<T, Layout>, Kokkos::View<T***, Layout, Kokkos::HostSpace>>;

template <class T, class Layout>
view_t<T, Layout> make_view(const std::string& label, index_t b, index_t m, index_t n) {
  return ViewOf<T, Layout>::make(label, b, m, n);
}

// ---------------------------------------------------------------------------
// Rank-2 Views (batch, k) of any layout: pivots (int) and right-hand sides.
template <class V, class Layout>
struct Rank2ViewOf {
  using type = Kokkos::View<V**, Layout>;
  static type make(const std::string& label, index_t b, index_t k) { return type(label, b, k); }
};
template <class V>
struct Rank2ViewOf<V, LayoutStrideColMajor> {
  using type = Kokkos::View<V**, Kokkos::LayoutStride>;
  static type make(const std::string& label, index_t b, index_t k) {
    // Padded like the rank-3 strided Views: vectors k + 3 apart.
    Kokkos::LayoutStride layout(size_t(b), size_t(k) + 3, size_t(k), 1);
    return type(label, layout);
  }
};
template <class V, class Layout>
using rank2_view_t = typename Rank2ViewOf<V, Layout>::type;
template <class V, class Layout>
rank2_view_t<V, Layout> make_rank2_view(const std::string& label, index_t b, index_t k) {
  return Rank2ViewOf<V, Layout>::make(label, b, k);
}

// ---------------------------------------------------------------------------
// Rank-1 int Views (info) in every layout: the layout of the batch, and for
// LayoutStrideColMajor a LayoutStride View with every third int used.
template <class Layout>
struct InfoViewOf {
  using type = Kokkos::View<int*, Layout>;
  static type make(index_t b) { return type("info", b); }
};
template <>
struct InfoViewOf<LayoutStrideColMajor> {
  using type = Kokkos::View<int*, Kokkos::LayoutStride>;
  static type make(index_t b) { return type("info", Kokkos::LayoutStride(size_t(b), 3)); }
};
template <class Layout>
typename InfoViewOf<Layout>::type make_info(index_t b) {
  return InfoViewOf<Layout>::make(b);
}
template <class Layout>
using info_view_t = typename InfoViewOf<Layout>::type;

/// dst = src for a View and its Kokkos::create_mirror_view (same mapping by
/// construction): the allocation copied as one rank-1 View, or nothing when
/// the mirror is the View itself (host builds). ibla::deep_copy takes the
/// same path at run time, but it also instantiates its staged paths
/// (Kokkos::deep_copy between two layouts: ViewCopy kernels, device kernels
/// in a CUDA build) for every View type the tests use, which was a quarter of
/// the code of a solver test file (test_gesv.cpp.o). ibla::deep_copy itself
/// is tested in test_layouts.cpp and test_convert.cpp.
template <class Dst, class Src>
void mirror_copy(const Dst& dst, const Src& src) {
  if (!ibla::detail::same_mapping(dst, src))
    throw std::logic_error("ibla_test::mirror_copy: a View and its mirror differ in mapping");
  ibla::detail::copy_span(dst, src);
}

/// Host copy of an info View (rank 1, any layout), problem after problem.
template <class View>
std::vector<int> read_info(const View& v) {
  auto m = Kokkos::create_mirror_view(v);
  mirror_copy(m, v);
  std::vector<int> out(v.extent(0));
  for (size_t b = 0; b < out.size(); ++b) out[b] = m(b);
  return out;
}
/// Sets every entry of an info View to value.
template <class View>
void fill_info(const View& v, int value) {
  auto m = Kokkos::create_mirror_view(v);
  for (size_t b = 0; b < v.extent(0); ++b) m(b) = value;
  mirror_copy(v, m);
}

/// Rank-3 View <- host batch, element by element through View indexing.
template <class View, class T>
void fill_view(const View& v, const HostBatch<T>& h) {
  auto m = Kokkos::create_mirror_view(v);
  for (index_t b = 0; b < h.batch; ++b)
    for (index_t j = 0; j < h.cols; ++j)
      for (index_t i = 0; i < h.rows; ++i) m(b, i, j) = h(b, i, j);
  mirror_copy(v, m);
}

template <class View>
HostBatch<typename View::non_const_value_type> read_view(const View& v) {
  HostBatch<typename View::non_const_value_type> h(index_t(v.extent(0)), index_t(v.extent(1)),
                                                   index_t(v.extent(2)));
  auto m = Kokkos::create_mirror_view(v);
  mirror_copy(m, v);
  for (index_t b = 0; b < h.batch; ++b)
    for (index_t j = 0; j < h.cols; ++j)
      for (index_t i = 0; i < h.rows; ++i) h(b, i, j) = m(b, i, j);
  return h;
}

template <class T>
constexpr T eps() {
  return std::numeric_limits<T>::epsilon();
}

template <class Layout>
std::string layout_name() {
  if constexpr (std::is_same<Layout, Kokkos::LayoutLeft>::value) return "LayoutLeft";
  else if constexpr (std::is_same<Layout, Kokkos::LayoutRight>::value) return "LayoutRight";
  else if constexpr (std::is_same<Layout, LayoutStrideColMajor>::value ||
                     std::is_same<Layout, Kokkos::LayoutStride>::value)
    return "LayoutStride";
  else if constexpr (std::is_same<Layout, ibla::LayoutInterleaved>::value) return "Interleaved";
  else return "BlockInterleaved<" + std::to_string(Layout::lanes_per_block) + ">";
}

/// The many-block batch of the sweeps.
inline constexpr index_t large_batch = 1001;

/// IBLA_TEST_SHORT=1 (set by the sanitizer stage, scripts/test_stages/10-sanitizers.sh):
/// the sweeps keep every op and layout but run 16 of the 32 orders
/// (sweep_sizes), the 1001-problem batch for a few orders only
/// (large_batch_size), and of the small batch counts L - 1 (one partial
/// block) and L + 1 (a full block and a partial one), which between them run
/// every form of block that 1 and L do. Under ASan at -O0 one GEMM sweep
/// configuration took 150 s with every batch count, 21 s without most large
/// batches.
inline bool short_sweeps() {
  static const bool on = [] {
    const char* v = std::getenv("IBLA_TEST_SHORT");
    return v != nullptr && std::string(v) == "1";
  }();
  return on;
}

/// Whether a sweep may run large_batch for order n: always, or in short
/// sweeps for n = 2 (host teams then run groups of blocks, dispatch.hpp) and
/// an odd order with edge tiles. Under ASan at -O0 the n = 32 batches of
/// 1001 problems were most of the GEMM and GETRF sweeps' time; what they add
/// beyond the small batches is the prefetch of the next block, which reads
/// nothing the sanitizers see.
inline bool large_batch_size(int n) { return !short_sweeps() || n == 2 || n == 7; }

/// The orders the size sweeps run: 1..32, or in short sweeps 1..9 (every
/// residue of the 3- and 4-row tiles, every partial panel) and the orders
/// around the larger tile boundaries, 12, 13, 16, 17, 24, 31 and 32.
inline std::vector<int> sweep_sizes() {
  std::vector<int> out;
  for (int n = 1; n <= 32; ++n)
    if (!short_sweeps() || n <= 9 || n == 12 || n == 13 || n == 16 || n == 17 || n == 24 ||
        n >= 31)
      out.push_back(n);
  return out;
}
/// Whether order n is one of sweep_sizes().
inline bool sweep_size(int n) {
  for (int s : sweep_sizes())
    if (s == n) return true;
  return false;
}

/// Batch counts that exercise full, partial and single blocks of L lanes.
inline std::vector<index_t> batch_counts(int lanes) {
  std::vector<index_t> counts{1, index_t(lanes) - 1, lanes, index_t(lanes) + 1, large_batch};
  if (short_sweeps()) counts = {index_t(lanes) - 1, index_t(lanes) + 1, large_batch};
  std::vector<index_t> out;
  for (auto c : counts)
    if (c >= 1) out.push_back(c);
  return out;
}

/// The matrices [first, first + count) that team league_rank() of a user's
/// kernel takes, one block of L per team (count < L in the last): for the
/// tests that call the team-level API the way a user does.
struct TeamBlock {
  index_t first;
  int count;
};
template <int L, class Member>
KOKKOS_INLINE_FUNCTION TeamBlock team_block(const Member& member, const index_t batch) {
  const index_t first = index_t(member.league_rank()) * L;
  return {first, batch - first < L ? int(batch - first) : L};
}

}  // namespace ibla_test
