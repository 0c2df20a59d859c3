// Turns a small runtime count into a compile-time one, so that tile loops of
// the kernels have constant trip counts and their accumulators live in
// registers.
#pragma once

#include <Kokkos_Macros.hpp>

#include <type_traits>
#include <utility>

namespace ibla::detail {

/// Calls f(std::integral_constant<int, r>{}) for 1 <= r <= Max.
template <int Max, class F>
KOKKOS_FORCEINLINE_FUNCTION void static_switch(int r, const F& f) {
  if constexpr (Max > 1) {
    if (r < Max) {
      static_switch<Max - 1>(r, f);
      return;
    }
  }
  f(std::integral_constant<int, Max>{});
}

template <class F, int... I>
void host_static_switch_over(const int r, const F& f, std::integer_sequence<int, I...>) {
  ((r == I + 1 ? (f(std::integral_constant<int, I + 1>{}), true) : false) || ...);
}

/// The same switch for host code that hands it a host lambda (the choice of
/// a kernel to launch), for 1 <= r <= Max. static_switch is a host-device
/// function, and nvcc warns (#20013-D, #20015-D) at every host lambda it
/// calls, once per instance: some 1,500 warnings in the CUDA build of the
/// tests.
template <int Max, class F>
void host_static_switch(const int r, const F& f) {
  host_static_switch_over(r, f, std::make_integer_sequence<int, Max>{});
}

}  // namespace ibla::detail
