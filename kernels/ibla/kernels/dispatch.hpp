// The batch-level machinery shared by every operation: choosing the block
// size, validating Views, and running one team per block of matrices.
#pragma once

#include <ibla/core/error.hpp>
#include <ibla/core/lanes.hpp>
#include <ibla/core/types.hpp>
#include <ibla/layouts/lane_block.hpp>
#include <ibla/layouts/layouts.hpp>

#include <Kokkos_Core.hpp>

#include <initializer_list>
#include <type_traits>
#include <utility>

namespace ibla {

/// True for execution spaces whose lanes are SIMD elements of one thread.
template <class ExecSpace>
inline constexpr bool is_host_space_v =
    Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

/// Matrices per block when no operand is block-interleaved: one 64-byte
/// vector of lanes on host (one AVX-512 register, two AVX2 ones), one warp on
/// device.
template <class T, class ExecSpace>
inline constexpr int default_block_lanes = is_host_space_v<ExecSpace> ? int(64 / sizeof(T)) : 32;

namespace detail {

/// L of the first block-interleaved View type among Views, else the default.
template <class T, class ExecSpace, class... Views>
constexpr int choose_block_lanes() {
  int lanes = 0;
  ((lanes = (lanes == 0 ? block_lanes_of<Views>::value : lanes)), ...);
  return lanes != 0 ? lanes : default_block_lanes<T, ExecSpace>;
}

struct NamedLanes {
  const char* name;
  int lanes;  // L, or 0 when not block-interleaved
};

/// Every block-interleaved operand must use the same L.
inline void require_same_block_lanes(const char* routine, std::initializer_list<NamedLanes> ops) {
  const NamedLanes* first = nullptr;
  for (const auto& op : ops) {
    if (op.lanes == 0) continue;
    if (first == nullptr) {
      first = &op;
    } else if (op.lanes != first->lanes) {
      fail(routine, op.name, "LayoutBlockInterleaved<", op.lanes, "> but ", first->name,
           " is LayoutBlockInterleaved<", first->lanes,
           ">: all block-interleaved operands of one call must use the same L");
    }
  }
}

template <class View>
NamedLanes named(const char* name, const View&) {
  return NamedLanes{name, block_lanes_of<View>::value};
}

template <class ExecSpace, class View>
constexpr void static_check_view() {
  static_assert(Kokkos::is_view<View>::value, "ibla: batch operands must be Kokkos::Views");
  static_assert(View::rank >= 1 && View::rank <= 3, "ibla: batch Views have rank 1, 2 or 3");
  static_assert(Kokkos::SpaceAccessibility<ExecSpace, typename View::memory_space>::accessible,
                "ibla: a View is not accessible from the execution space of the call");
}

template <class View>
constexpr void static_check_writable() {
  static_assert(!std::is_const<typename View::value_type>::value,
                "ibla: an output View has a const value type");
}

inline void require_extent(const char* routine, const char* name, int dim, index_t got,
                           index_t expected, const char* what) {
  require(got == expected, routine, name, "extent(", dim, ") = ", got, " but ", what, " is ",
          expected);
}

/// A View whose data pointer is null while its extents are not (a
/// default-constructed View passed by mistake).
template <class View>
void require_allocated(const char* routine, const char* name, const View& v) {
  // The product of the extents, not v.size(): the mdspan-based View (Kokkos
  // >= 4.6.99) reports size() == 0 whenever its data pointer is null.
  size_t elements = 1;
  for (unsigned r = 0; r < unsigned(View::rank); ++r) elements *= size_t(v.extent(r));
  require(elements == 0 || v.data() != nullptr, routine, name,
          "is not allocated (null data with ", elements, " elements)");
}

/// A: a rank-3 View (batch, n, n) of square matrices.
template <class AV>
void require_square(const char* routine, const char* name, const AV& A) {
  static_assert(AV::rank == 3, "ibla: the matrix operand is a rank-3 View (batch, n, n)");
  require(A.extent(1) == A.extent(2), routine, name, "is not square: extent(1) = ", A.extent(1),
          ", extent(2) = ", A.extent(2));
}

/// info: a rank-1 int View with one entry per problem.
template <class IV>
void require_info_view(const char* routine, const IV& info, index_t batch) {
  static_assert(IV::rank == 1, "ibla: info is a rank-1 View (batch)");
  static_assert(std::is_same<typename IV::non_const_value_type, int>::value,
                "ibla: info holds int");
  require_extent(routine, "info", 0, index_t(info.extent(0)), batch, "the batch count of A");
  require_allocated(routine, "info", info);
}

/// B: rank-3 (batch, n, nrhs) or rank-2 (batch, n) right-hand sides for the
/// n x n matrices of A.
template <class AV, class BV>
void require_rhs(const char* routine, const AV& A, const BV& B) {
  static_assert(BV::rank == 2 || BV::rank == 3,
                "ibla: B is a rank-3 View (batch, n, nrhs) or rank-2 (batch, n)");
  require_extent(routine, "B", 0, index_t(B.extent(0)), index_t(A.extent(0)),
                 "the batch count of A");
  require_extent(routine, "B", 1, index_t(B.extent(1)), index_t(A.extent(1)),
                 "the order n of A");
  require_allocated(routine, "B", B);
}

/// Runs op(member, first, lanes) once per block of L consecutive matrices;
/// lanes is lanes_c<L> for full blocks and lanes_upto<L> for the last partial
/// one (bit-identical results either way; see lanes.hpp).
template <int L, class Op>
struct BlockLoop {
  Op op;
  index_t batch;
  template <class Member>
  KOKKOS_INLINE_FUNCTION void operator()(const Member& member) const {
    const index_t first     = index_t(member.league_rank()) * L;
    const index_t remaining = batch - first;
    if (remaining >= L) {
      op(member, first, lanes_c<L>{});
    } else {
      op(member, first, lanes_upto<L>{int(remaining)});
    }
  }
};

constexpr int vector_length_for(int lanes) {
  int v = 1;
  while (v < lanes && v < 32) v *= 2;
  return v;
}

template <int L, class ExecSpace, class Op>
void for_each_block(const ExecSpace& exec, const char* label, index_t batch, const Op& op) {
  if (batch <= 0) return;
  const index_t nblocks = (batch + L - 1) / L;
  // Host: one thread per block, the lanes are its SIMD elements. Device: the
  // lanes of a block are the vector threads of the team.
  constexpr int vector_length = is_host_space_v<ExecSpace> ? 1 : vector_length_for(L);
  Kokkos::TeamPolicy<ExecSpace> policy(exec, int(nblocks), 1, vector_length);
  Kokkos::parallel_for(label, policy, BlockLoop<L, Op>{op, batch});
}

}  // namespace detail
}  // namespace ibla
