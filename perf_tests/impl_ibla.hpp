// ibla, measured two ways:
//  - "ibla": on its native LayoutBlockInterleaved<L> Views (the data already
//    lives in ibla's layout, as in an application built around it);
//  - "ibla+conv": the user keeps strided storage (column-major matrices one
//    after another); each call converts the operands into block-interleaved
//    scratch Views with ibla::convert, computes, and converts the outputs back.
// Each at the block sizes of L x sizeof(T) = 64 and 128 bytes, and one SIMD
// register where that is narrower (32 bytes on AVX2: L = 4 doubles, 8
// floats), reported as the better per cell with the L in the variant column:
// L is the user's choice of layout, and which is faster depends on the
// operation and the size. Measured on AVX2 (Zen 3, double, GEMM, one thread,
// batch in L3): L = 16 best at n = 2, L = 8 at n = 5..16 (the per-block
// cost spread over more matrices), L = 4 at n = 32 (3 x 4 tiles of one
// register each, no spills). On AVX-512 one register is 64 bytes. One
// translation unit per block size (impl_ibla_one_vector.cpp,
// impl_ibla_two_vectors.cpp, impl_ibla_one_register.cpp), so they compile
// in parallel.
// Operations whose kernel header is not in this tree yet are reported absent
// (__has_include), so the benchmark builds at every stage of the project.
#pragma once

#include "bench.hpp"

#include <ibla/ibla.hpp>

#if __has_include(<ibla/kernels/trsm.hpp>)
#include <ibla/kernels/trsm.hpp>
#define IBLA_BENCH_HAS_TRSM 1
#endif
#if __has_include(<ibla/kernels/potrf.hpp>)
#include <ibla/kernels/potrf.hpp>
#define IBLA_BENCH_HAS_POTRF 1
#endif
#if __has_include(<ibla/kernels/getrf.hpp>)
#include <ibla/kernels/getrf.hpp>
#define IBLA_BENCH_HAS_GETRF 1
#endif
#if __has_include(<ibla/kernels/posv.hpp>)
#include <ibla/kernels/posv.hpp>
#define IBLA_BENCH_HAS_POSV 1
#endif
#if __has_include(<ibla/kernels/gesv.hpp>)
#include <ibla/kernels/gesv.hpp>
#define IBLA_BENCH_HAS_GESV 1
#endif

#include <Kokkos_Core.hpp>

namespace bench {
namespace {

/// Matrices per block of Bytes bytes per element.
template <class T, int Bytes>
inline constexpr unsigned block_lanes = unsigned(Bytes / int(sizeof(T)));

using Exec = Kokkos::DefaultHostExecutionSpace;
template <class T, unsigned L>
using Native3 = Kokkos::View<T***, ibla::LayoutBlockInterleaved<L>, Kokkos::HostSpace>;
// Pivots and info of a batch of T problems share the L of the T operands.
template <unsigned L>
using NativeInt2 = Kokkos::View<int**, ibla::LayoutBlockInterleaved<L>, Kokkos::HostSpace>;
template <unsigned L>
using NativeInt1 = Kokkos::View<int*, ibla::LayoutBlockInterleaved<L>, Kokkos::HostSpace>;
template <class T>
using Strided3 = Kokkos::View<T***, Kokkos::LayoutStride, Kokkos::HostSpace,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using Strided2 = Kokkos::View<T**, Kokkos::LayoutStride, Kokkos::HostSpace,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
using Strided1 = Kokkos::View<T*, Kokkos::LayoutStride, Kokkos::HostSpace,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

/// The strided batch as a (batch, rows, cols) View: column-major matrices one
/// after another.
template <class T>
Strided3<T> strided(T* p, index_t batch, int rows, int cols) {
  Kokkos::LayoutStride l(std::size_t(batch), std::size_t(rows) * std::size_t(cols),
                         std::size_t(rows), 1, std::size_t(cols), std::size_t(rows));
  return Strided3<T>(p, l);
}
template <class T>
Strided2<T> strided2(T* p, index_t batch, int rows) {
  Kokkos::LayoutStride l(static_cast<std::size_t>(batch), static_cast<std::size_t>(rows), static_cast<std::size_t>(rows), 1);
  return Strided2<T>(p, l);
}
template <class T>
Strided1<T> strided1(T* p, index_t batch) {
  Kokkos::LayoutStride l(static_cast<std::size_t>(batch), 1);
  return Strided1<T>(p, l);
}

bool ibla_has(OpKind op) {
  switch (op) {
    case OpKind::gemm: return true;
#ifdef IBLA_BENCH_HAS_TRSM
    case OpKind::trsm: return true;
#endif
#ifdef IBLA_BENCH_HAS_POTRF
    case OpKind::potrf: return true;
#endif
#ifdef IBLA_BENCH_HAS_GETRF
    case OpKind::getrf: return true;
#endif
#ifdef IBLA_BENCH_HAS_POSV
    case OpKind::posv: return true;
#endif
#ifdef IBLA_BENCH_HAS_GESV
    case OpKind::gesv: return true;
#endif
    default: return false;
  }
}

/// The native operands of one case.
template <class T, unsigned L>
struct NativeSet {
  Native3<T, L> A, B, C;
  NativeInt2<L> ipiv;
  NativeInt1<L> info;
  void allocate(const HostProblem<T>& p) {
    const Case& c = p.c;
    A             = Native3<T, L>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "A"), c.batch, c.n, c.n);
    if (p.has_B())
      B = Native3<T, L>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "B"), c.batch, c.n, p.b_cols());
    if (p.has_C())
      C = Native3<T, L>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "C"), c.batch, c.n, c.n);
    if (p.has_ipiv()) ipiv = NativeInt2<L>("ipiv", c.batch, c.n);
    if (p.has_info()) info = NativeInt1<L>("info", c.batch);
  }
  void spans(std::vector<Span>& out) const {
    auto add = [&](const auto& v) {
      if (v.data() != nullptr)
        out.push_back({v.data(), v.span() * sizeof(typename std::decay_t<decltype(v)>::value_type)});
    };
    add(A), add(B), add(C), add(ipiv), add(info);
  }
  /// Inputs <- strided storage (or outputs -> strided storage with to_native false).
  void convert(const Exec& exec, const HostProblem<T>& p, bool to_native, bool outputs_only) const {
    const Case& c = p.c;
    auto move = [&](auto s, auto n) {
      if (to_native) ibla::convert(exec, s, n);
      else ibla::convert(exec, n, s);
    };
    if (!outputs_only || p.writes_A()) move(strided(p.A.data(), c.batch, c.n, c.n), A);
    if (p.has_B() && (!outputs_only || p.writes_B())) move(strided(p.B.data(), c.batch, c.n, p.b_cols()), B);
    if (p.has_C()) move(strided(p.C.data(), c.batch, c.n, c.n), C);
    if (!to_native && p.has_ipiv()) ibla::convert(exec, ipiv, strided2(p.ipiv.data(), c.batch, c.n));
    if (!to_native && p.has_info()) ibla::convert(exec, info, strided1(p.info.data(), c.batch));
  }
  /// The operation itself on the native Views.
  void compute(const Exec& exec, const Case& c) const {
    switch (c.op) {
      case OpKind::gemm:
        ibla::gemm(exec, ibla::Op::N, ibla::Op::N, T(gemm_alpha), A, B, T(gemm_beta), C);
        break;
#ifdef IBLA_BENCH_HAS_TRSM
      case OpKind::trsm:
        ibla::trsm(exec, ibla::Side::Left, ibla::Uplo::Lower, ibla::Op::N, ibla::Diag::NonUnit,
                   T(trsm_alpha), A, B);
        break;
#endif
#ifdef IBLA_BENCH_HAS_POTRF
      case OpKind::potrf: ibla::potrf(exec, ibla::Uplo::Lower, A, info); break;
#endif
#ifdef IBLA_BENCH_HAS_GETRF
      case OpKind::getrf: ibla::getrf(exec, A, ipiv, info); break;
#endif
#ifdef IBLA_BENCH_HAS_POSV
      case OpKind::posv: ibla::posv(exec, ibla::Uplo::Lower, A, B, info); break;
#endif
#ifdef IBLA_BENCH_HAS_GESV
      case OpKind::gesv: ibla::gesv(exec, A, ipiv, B, info); break;
#endif
      default: break;
    }
  }
};

/// The spans of every operand of a problem in the user's strided storage.
template <class T>
void add_spans(const HostProblem<T>& p, std::vector<Span>& out) {
  out.push_back({p.A.data(), p.A.bytes()});
  if (p.has_B()) out.push_back({p.B.data(), p.B.bytes()});
  if (p.has_C()) out.push_back({p.C.data(), p.C.bytes()});
  if (p.has_ipiv()) out.push_back({p.ipiv.data(), p.ipiv.bytes()});
  if (p.has_info()) out.push_back({p.info.data(), p.info.bytes()});
}

/// to = from, every operand, outputs included (copy_operands: the inputs).
template <class T>
void copy_all(const HostProblem<T>& from, HostProblem<T>& to) {
  copy_operands(from, to);
  if (from.has_ipiv()) parallel_copy(to.ipiv.data(), from.ipiv.data(), from.ipiv.bytes());
  if (from.has_info()) parallel_copy(to.info.data(), from.info.data(), from.info.bytes());
}

template <class T, unsigned L>
struct IblaNative final : Impl<T> {
  const HostProblem<T>* in = nullptr;
  NativeSet<T, L> pristine, work;
  Exec exec;
  std::string group() const override { return "ibla"; }
  std::string name() const override { return "ibla<L=" + std::to_string(L) + ">"; }
  std::string absent(const Case& c) const override {
    return ibla_has(c.op) ? "" : "kernel not in this tree yet";
  }
  void setup(const HostProblem<T>& input) override {
    in = &input;
    pristine.allocate(input);
    work.allocate(input);
    pristine.convert(exec, input, true, false);
    exec.fence();
  }
  void restore() override {
    Kokkos::deep_copy(exec, work.A, pristine.A);
    if (in->has_B()) Kokkos::deep_copy(exec, work.B, pristine.B);
    if (in->has_C()) Kokkos::deep_copy(exec, work.C, pristine.C);
    exec.fence();
  }
  void spans(std::vector<Span>& out) const override { work.spans(out); }
  void run() override {
    work.compute(exec, in->c);
    exec.fence();
  }
  void fetch(HostProblem<T>& out) override {
    work.convert(exec, out, false, false);
    exec.fence();
  }
  void teardown() override { pristine = NativeSet<T, L>(), work = NativeSet<T, L>(); }
};

template <class T, unsigned L>
struct IblaConvert final : Impl<T> {
  const HostProblem<T>* in = nullptr;
  HostProblem<T> user;      // the user's strided storage
  NativeSet<T, L> scratch;  // block-interleaved scratch
  Exec exec;
  std::string group() const override { return "ibla+conv"; }
  std::string name() const override { return "ibla+conv<L=" + std::to_string(L) + ">"; }
  std::string absent(const Case& c) const override {
    return ibla_has(c.op) ? "" : "kernel not in this tree yet";
  }
  void setup(const HostProblem<T>& input) override {
    in = &input;
    user.allocate(input.c);
    scratch.allocate(input);
  }
  void restore() override { copy_operands(*in, user); }
  void spans(std::vector<Span>& out) const override {
    add_spans(user, out);
    scratch.spans(out);
  }
  void run() override {
    scratch.convert(exec, user, true, false);
    scratch.compute(exec, user.c);
    scratch.convert(exec, user, false, true);
    exec.fence();
  }
  void fetch(HostProblem<T>& out) override {
    copy_all(user, out);
  }
  void teardown() override { user = HostProblem<T>(), scratch = NativeSet<T, L>(); }
};

/// ibla called on the user's strided storage itself, nothing converted: the
/// same group as ibla+conv (a user who keeps that storage picks the faster
/// of the two). On host every operation copies each block into
/// block-interleaved scratch and back (kernels/ibla/kernels/pack.hpp) and
/// runs the kernels of LayoutBlockInterleaved<L> for the L of 64 bytes,
/// which impl_ibla_one_vector.cpp, the unit that instantiates this, has
/// compiled already: when the operations on LayoutStride Views gathered
/// their lanes instead, all six in a unit of their own took the benchmark's
/// build from about 6 to 21 minutes on 2 cores.
template <class T>
struct IblaOnStrided final : Impl<T> {
  const HostProblem<T>* in = nullptr;
  HostProblem<T> user;  // the user's strided storage
  Exec exec;
  std::string group() const override { return "ibla+conv"; }
  std::string name() const override { return "ibla<strided>"; }
  std::string absent(const Case& c) const override {
    return ibla_has(c.op) ? "" : "kernel not in this tree yet";
  }
  void setup(const HostProblem<T>& input) override {
    in = &input;
    user.allocate(input.c);
  }
  void restore() override { copy_operands(*in, user); }
  void spans(std::vector<Span>& out) const override {
    add_spans(user, out);
  }
  void run() override {
    const Case& c = user.c;
    const auto A  = strided(user.A.data(), c.batch, c.n, c.n);
    switch (c.op) {
      case OpKind::gemm:
        ibla::gemm(exec, ibla::Op::N, ibla::Op::N, T(gemm_alpha), A,
                   strided(user.B.data(), c.batch, c.n, c.n), T(gemm_beta),
                   strided(user.C.data(), c.batch, c.n, c.n));
        break;
#ifdef IBLA_BENCH_HAS_TRSM
      case OpKind::trsm:
        ibla::trsm(exec, ibla::Side::Left, ibla::Uplo::Lower, ibla::Op::N, ibla::Diag::NonUnit,
                   T(trsm_alpha), A, strided(user.B.data(), c.batch, c.n, user.b_cols()));
        break;
#endif
#ifdef IBLA_BENCH_HAS_POTRF
      case OpKind::potrf:
        ibla::potrf(exec, ibla::Uplo::Lower, A, strided1(user.info.data(), c.batch));
        break;
#endif
#ifdef IBLA_BENCH_HAS_GETRF
      case OpKind::getrf:
        ibla::getrf(exec, A, strided2(user.ipiv.data(), c.batch, c.n),
                    strided1(user.info.data(), c.batch));
        break;
#endif
#ifdef IBLA_BENCH_HAS_POSV
      case OpKind::posv:
        ibla::posv(exec, ibla::Uplo::Lower, A, strided(user.B.data(), c.batch, c.n, user.b_cols()),
                   strided1(user.info.data(), c.batch));
        break;
#endif
#ifdef IBLA_BENCH_HAS_GESV
      case OpKind::gesv:
        ibla::gesv(exec, A, strided2(user.ipiv.data(), c.batch, c.n),
                   strided(user.B.data(), c.batch, c.n, user.b_cols()),
                   strided1(user.info.data(), c.batch));
        break;
#endif
      default: break;
    }
    exec.fence();
  }
  void fetch(HostProblem<T>& out) override {
    copy_all(user, out);
  }
  void teardown() override { user = HostProblem<T>(); }
};

}  // namespace

/// ibla on blocks of Bytes bytes of lanes, both ways.
template <class T, int Bytes>
void add_ibla_blocks(ImplList<T>& out) {
  constexpr unsigned L = block_lanes<T, Bytes>;
  out.push_back(std::make_unique<IblaNative<T, L>>());
  out.push_back(std::make_unique<IblaConvert<T, L>>());
}

/// ibla on the user's strided storage, nothing converted (IblaOnStrided).
template <class T>
void add_ibla_on_strided(ImplList<T>& out) {
  out.push_back(std::make_unique<IblaOnStrided<T>>());
}

}  // namespace bench
