// deep_copy and create_mirror_view_and_copy that work for ibla's layouts
// across memory spaces.
//
// Why: when the batch is not a multiple of L, a LayoutBlockInterleaved View
// has a padded last block, its span is not contiguous, and Kokkos' own
// deep_copy between memory spaces that cannot see each other (CudaSpace and
// HostSpace) has no copy mechanism for it: it throws "no available copy
// mechanism" (seen on an H100). Two Views of the same ibla layout and the
// same extents have the same mapping, so their whole allocations (padding
// included) are byte-for-byte interchangeable: copying the span as one
// rank-1 View is exact and is what Kokkos does for contiguous Views anyway.
//
//   auto h = ibla::create_mirror_view_and_copy(Kokkos::HostSpace(), A);
//   ibla::deep_copy(A, h);             // or ibla::deep_copy(exec, A, h)
//
// Between spaces that reach each other (either side's execution space can
// access the other's memory) both are Kokkos::deep_copy itself. Between
// spaces that do not, any layout on either side (ibla's, Kokkos' LayoutLeft,
// LayoutRight, LayoutStride, padded or not): Views with the same mapping
// copy their spans; Views of different mappings are staged, the span of one
// side copied into a View of its mapping in the other side's space and
// converted there by Kokkos::deep_copy, which works inside one space.
//
// Both are function objects, not function templates: a Kokkos::View whose
// layout is an ibla type has namespace ibla among its associated namespaces,
// so an ibla::deep_copy *function* would be found by argument-dependent
// lookup next to Kokkos::deep_copy in unqualified calls (Kokkos' own
// create_mirror_view_and_copy makes one) and could make them ambiguous.
// Argument-dependent lookup ignores objects.
#pragma once

#include <ibla/core/error.hpp>
#include <ibla/layouts/layouts.hpp>

#include <Kokkos_Core.hpp>

#include <type_traits>

namespace ibla {
namespace detail {

/// Whether Kokkos::deep_copy can copy between these spaces whatever the
/// layouts: one side's execution space reaches the other's memory.
template <class Dst, class Src>
constexpr bool spaces_reach_each_other() {
  return Kokkos::SpaceAccessibility<typename Dst::execution_space,
                                    typename Src::memory_space>::accessible ||
         Kokkos::SpaceAccessibility<typename Src::execution_space,
                                    typename Dst::memory_space>::accessible;
}

template <class Dst, class Src>
void require_same_extents(const Dst& dst, const Src& src) {
  for (unsigned r = 0; r < unsigned(Dst::rank); ++r)
    require(dst.extent(r) == src.extent(r), "deep_copy", "dst", "extent(", r, ") = ",
            dst.extent(r), " differs from src.extent(", r, ") = ", src.extent(r));
}

/// Same layout type, value type, extents, strides and span: element (b,i,j)
/// sits at the same offset on both sides, padding included. For ibla's
/// layouts the extents decide it; strides and span tell padded Kokkos
/// layouts and LayoutStride apart.
template <class A, class B>
bool same_mapping(const A& a, const B& b) {
  if constexpr (!std::is_same<typename A::array_layout, typename B::array_layout>::value ||
                !std::is_same<typename A::non_const_value_type,
                              typename B::non_const_value_type>::value ||
                unsigned(A::rank) != unsigned(B::rank)) {
    return false;
  } else {
    for (unsigned r = 0; r < unsigned(A::rank); ++r)
      if (a.extent(r) != b.extent(r) || a.stride(r) != b.stride(r)) return false;
    return a.span() == b.span();
  }
}

/// The whole allocation of src into that of dst, as rank-1 Views: exact when
/// same_mapping(dst, src).
template <class Dst, class Src, class... Exec>
void copy_span(const Dst& dst, const Src& src, const Exec&... exec) {
  using T = typename Dst::non_const_value_type;
  if (static_cast<const void*>(dst.data()) == static_cast<const void*>(src.data())) return;
  Kokkos::View<T*, typename Dst::memory_space, Kokkos::MemoryUnmanaged> d(dst.data(), dst.span());
  Kokkos::View<const T*, typename Src::memory_space, Kokkos::MemoryUnmanaged> s(src.data(),
                                                                                src.span());
  Kokkos::deep_copy(exec..., d, s);
}

/// A new View of v's layout (and so, for every layout Kokkos rebuilds from
/// layout(), of v's mapping) and value type in another memory space.
template <class Space, class V>
auto view_like_in(const V& v) {
  using Like = Kokkos::View<typename V::non_const_data_type, typename V::array_layout, Space>;
  return Like(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("ibla::deep_copy staging")),
              v.layout());
}

/// How deep_copy_across_spaces copied (tests check each one).
enum class CopyPath { span, staged_beside_dst, staged_beside_src };

/// dst = src for Views in any two memory spaces, without Kokkos::deep_copy
/// ever copying between non-contiguous Views of two spaces. Compiles and is
/// exact for Views of one space too (tests run it on host Views).
template <class Dst, class Src, class... Exec>
CopyPath deep_copy_across_spaces(const Dst& dst, const Src& src, const Exec&... exec) {
  if (same_mapping(dst, src)) {
    copy_span(dst, src, exec...);
    return CopyPath::span;
  }
  // src's mapping beside dst, then converted there.
  auto beside_dst = view_like_in<typename Dst::memory_space>(src);
  if (same_mapping(beside_dst, src)) {
    copy_span(beside_dst, src, exec...);
    Kokkos::deep_copy(exec..., dst, beside_dst);
    return CopyPath::staged_beside_dst;
  }
  // A src whose mapping its layout does not rebuild (Kokkos' padded
  // LayoutLeft/Right): converted beside itself into dst's mapping.
  auto beside_src = view_like_in<typename Src::memory_space>(dst);
  require(same_mapping(beside_src, dst), "deep_copy", "dst",
          "neither dst's nor src's mapping can be rebuilt from its layout in the other's memory"
          " space (both padded?)");
  Kokkos::deep_copy(exec..., beside_src, src);
  copy_span(dst, beside_src, exec...);
  return CopyPath::staged_beside_src;
}

template <class Dst, class Src, class... Exec>
void deep_copy_views(const Dst& dst, const Src& src, const Exec&... exec) {
  static_assert(Kokkos::is_view<Dst>::value && Kokkos::is_view<Src>::value,
                "ibla::deep_copy copies a Kokkos::View into another");
  static_assert(unsigned(Dst::rank) == unsigned(Src::rank),
                "ibla::deep_copy: dst and src must have the same rank");
  static_assert(std::is_same<typename Dst::value_type, typename Dst::non_const_value_type>::value,
                "ibla::deep_copy: dst must not be a View of const");
  require_same_extents(dst, src);
  if constexpr (spaces_reach_each_other<Dst, Src>())
    Kokkos::deep_copy(exec..., dst, src);
  else
    deep_copy_across_spaces(dst, src, exec...);
}

struct DeepCopy {
  /// dst = src, element by element, whatever their layouts and memory
  /// spaces; extents must be equal (ibla::argument_error naming dst
  /// otherwise, nothing copied). Fences like Kokkos::deep_copy(dst, src).
  template <class Dst, class Src>
  void operator()(const Dst& dst, const Src& src) const {
    deep_copy_views(dst, src);
  }
  /// The same, ordered in exec like Kokkos::deep_copy(exec, dst, src).
  template <class ExecSpace, class Dst, class Src>
  void operator()(const ExecSpace& exec, const Dst& dst, const Src& src) const {
    static_assert(Kokkos::is_execution_space<ExecSpace>::value,
                  "ibla::deep_copy(exec, dst, src): exec must be an execution space instance");
    deep_copy_views(dst, src, exec);
  }
};

struct CreateMirrorViewAndCopy {
  /// A View in space's memory holding a copy of v, or v itself when it is
  /// already there, like Kokkos::create_mirror_view_and_copy.
  template <class Space, class V>
  auto operator()(const Space& space, const V& v) const {
    auto mirror = Kokkos::create_mirror_view(space, v);
    deep_copy_views(mirror, v);  // nothing to copy when mirror is v
    return mirror;
  }
};

}  // namespace detail

inline constexpr detail::DeepCopy deep_copy{};
inline constexpr detail::CreateMirrorViewAndCopy create_mirror_view_and_copy{};

}  // namespace ibla
