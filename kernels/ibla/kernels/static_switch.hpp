// Turns a small runtime count into a compile-time one, so that tile loops of
// the kernels have constant trip counts and their accumulators live in
// registers.
#pragma once

#include <ibla/core/lanes.hpp>

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

/// Whether n is one of Listed: the order lists of
/// IBLA_HOST_SPECIALISED_ORDERS and IBLA_DEVICE_SPECIALISED_ORDERS below.
template <int... Listed>
KOKKOS_INLINE_FUNCTION constexpr bool order_listed(const int n) {
  return ((Listed == n) || ...);
}

/// Whether the host kernels compile their forms of fixed order N (the
/// register and fixed-order forms that static_switch dispatches to by the
/// matrices' order). Every order, unless the build defines
/// IBLA_HOST_SPECIALISED_ORDERS as a comma-separated list of orders (e.g.
/// -DIBLA_HOST_SPECIALISED_ORDERS=4,8,13): then those only, and a block of
/// any other order takes the operation's runtime-order form, the one it
/// takes past its largest compiled order (as accurate; slower). For an
/// application that solves few orders, a shorter build and less code; the
/// test build of ibla_bench compiles at -O3 only the orders its smoke test
/// runs (perf_tests/CMakeLists.txt). Device forms are not affected.
#if defined(IBLA_HOST_SPECIALISED_ORDERS) && !IBLA_IMPL_DEVICE_PASS
KOKKOS_INLINE_FUNCTION constexpr bool host_order_listed(const int n) {
  return order_listed<IBLA_HOST_SPECIALISED_ORDERS>(n);
}
template <int N>
inline constexpr bool host_order_specialised = host_order_listed(N);
#else
template <int N>
inline constexpr bool host_order_specialised = true;
#endif

/// host_order_specialised for an order known at run time, for the test
/// that leads to a static_switch over the orders: a constant true where
/// every order is compiled, so that the switch and the code around it are
/// what they are without the list. Inside the switch, each order's form
/// sits under `if constexpr (host_order_specialised<N>)`. Not one helper
/// taking the form as a lambda: the callers' lambdas are compiled under
/// their own tuning pragma (IBLA_IMPL_OPERANDS_IN_REGISTERS_BEGIN), GCC 12
/// did not inline them into a lambda defined here, and without the list
/// that helper changed the code (13 KB more in the benchmark's -O3 unit).
KOKKOS_FORCEINLINE_FUNCTION constexpr bool host_order_compiled([[maybe_unused]] const int n) {
#if defined(IBLA_HOST_SPECIALISED_ORDERS) && !IBLA_IMPL_DEVICE_PASS
  return host_order_listed(n);
#else
  return true;
#endif
}

/// Whether the batch-level device kernels of one order alone are compiled
/// for order N: GETRF's and GESV's register-form kernels
/// (impl::with_getrf_device_order) and GETRF's row-per-thread kernel
/// (impl::getrf_team_rows), one kernel per order, which the host chooses
/// by the batch's order. Every order, unless the build defines
/// IBLA_DEVICE_SPECIALISED_ORDERS as a comma-separated list of orders: then
/// those only, and a batch of any other order runs the general kernel (as
/// accurate; slower). The device counterpart of IBLA_HOST_SPECIALISED_ORDERS
/// (host forms are not affected), for the same reason: each such kernel is
/// a launch's worth of Kokkos host code and a device function of its own,
/// 313 of the 343 kernels of the CUDA build's GETRF/GESV test unit
/// (support/instances/factor_and_solve_other_layouts.cpp). The CI's
/// compile-only CUDA build uses it (scripts/test_stages/30-cuda-build.sh).
/// A host decision, the same in both passes of nvcc. nvcc splits a -D value
/// at its commas: give it the list as 4\,13 (either macro).
#if defined(IBLA_DEVICE_SPECIALISED_ORDERS)
constexpr bool device_order_listed(const int n) {
  return order_listed<IBLA_DEVICE_SPECIALISED_ORDERS>(n);
}
#else
constexpr bool device_order_listed(const int) { return true; }
#endif

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

/// The choice of a host batch-level kernel of one order (GETRF's and
/// GESV's, TRSM's): calls f(std::integral_constant<int, N>{}) for n = N in
/// 1..Most where this build compiles that order (host_order_specialised)
/// and returns true; returns false, f not called, otherwise.
template <int Most, class F>
bool with_host_kernel_order(const int n, const F& f) {
  bool called = false;
  if constexpr (Most > 0) {
    if (n >= 1 && n <= Most && host_order_compiled(n))
      host_static_switch<Most>(n, [&](auto order) {
        if constexpr (host_order_specialised<decltype(order)::value>) {
          f(order);
          called = true;
        }
      });
  }
  return called;
}

}  // namespace ibla::detail
