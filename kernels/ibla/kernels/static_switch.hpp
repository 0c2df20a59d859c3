// Turns a small runtime count into a compile-time one, so that tile loops of
// the kernels have constant trip counts and their accumulators live in
// registers.
#pragma once

#include <Kokkos_Macros.hpp>

#include <type_traits>

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

}  // namespace ibla::detail
