// Kokkos Kernels 3.4 KokkosBatched Serial* kernels, one problem per
// iteration of a Kokkos parallel_for, measured with Algo Blocked and
// Unblocked (the better is reported):
//  - "kk-serial": on plain Views over the strided storage (LayoutStride
//    subviews, one matrix per iteration);
//  - "kk-simd": on packed Views of Vector<SIMD<T>, V> (V matrices interleaved
//    per element, V = 8 doubles / 16 floats), one pack per iteration: Kokkos
//    Kernels' own interleaved format;
//  - "kk-simd+conv": the same, packing from strided storage and unpacking the
//    outputs inside the timed region.
// KokkosBatched 3.4 has no Cholesky (POTRF/POSV absent) and its LU does not
// pivot: GETRF/GESV run on the diagonally dominant input only, reported as
// 'nopiv'.
#include "bench.hpp"

#include <Kokkos_Core.hpp>

#include <KokkosBatched_Gemm_Decl.hpp>
#include <KokkosBatched_Gemm_Serial_Impl.hpp>
#include <KokkosBatched_LU_Decl.hpp>
#include <KokkosBatched_LU_Serial_Impl.hpp>
#include <KokkosBatched_Trsm_Decl.hpp>
#include <KokkosBatched_Trsm_Serial_Impl.hpp>
#include <KokkosBatched_Util.hpp>
#include <KokkosBatched_Vector.hpp>

namespace bench {
namespace {

namespace KB = KokkosBatched;
using Exec   = Kokkos::DefaultHostExecutionSpace;

template <class T>
inline constexpr int simd_v = 64 / int(sizeof(T));
template <class T>
using Pack = KB::Vector<KB::SIMD<T>, simd_v<T>>;

template <class T>
using Strided3 = Kokkos::View<T***, Kokkos::LayoutStride, Kokkos::HostSpace,
                              Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
template <class T>
Strided3<T> strided(T* p, index_t batch, int rows, int cols) {
  Kokkos::LayoutStride l(std::size_t(batch), std::size_t(rows) * std::size_t(cols),
                         std::size_t(rows), 1, std::size_t(cols), std::size_t(rows));
  return Strided3<T>(p, l);
}

std::string kk_absent(const Case& c) {
  switch (c.op) {
    case OpKind::potrf:
    case OpKind::posv: return "no Cholesky in KokkosBatched 3.4";
    case OpKind::getrf:
    case OpKind::gesv:
      return c.random_input ? "KokkosBatched 3.4 LU does not pivot" : "";
    default: return "";
  }
}

/// The operation on one problem (plain) or one pack (SIMD): A, B, C are
/// rank-2 Views.
template <class Algo, class T, class VA, class VB, class VC>
KOKKOS_INLINE_FUNCTION void kk_one(OpKind op, const VA& A, const VB& B, const VC& C) {
  switch (op) {
    case OpKind::gemm:
      KB::SerialGemm<KB::Trans::NoTranspose, KB::Trans::NoTranspose, Algo>::invoke(
          T(gemm_alpha), A, B, T(gemm_beta), C);
      break;
    case OpKind::trsm:
      KB::SerialTrsm<KB::Side::Left, KB::Uplo::Lower, KB::Trans::NoTranspose, KB::Diag::NonUnit,
                     Algo>::invoke(T(trsm_alpha), A, B);
      break;
    case OpKind::getrf: KB::SerialLU<Algo>::invoke(A); break;
    case OpKind::gesv:
      KB::SerialLU<Algo>::invoke(A);
      // SerialSolveLU's two triangular solves, with a scalar alpha (3.4's
      // SerialSolveLU passes alpha as a Vector, which does not compile for
      // SIMD packs).
      KB::SerialTrsm<KB::Side::Left, KB::Uplo::Lower, KB::Trans::NoTranspose, KB::Diag::Unit,
                     Algo>::invoke(T(1), A, B);
      KB::SerialTrsm<KB::Side::Left, KB::Uplo::Upper, KB::Trans::NoTranspose, KB::Diag::NonUnit,
                     Algo>::invoke(T(1), A, B);
      break;
    default: break;
  }
}

template <class T>
void fill_nopiv_outputs(HostProblem<T>& out) {
  if (out.has_ipiv())
    for (index_t b = 0; b < out.c.batch; ++b)
      for (int i = 0; i < out.c.n; ++i) out.ipiv[std::size_t(b) * out.c.n + i] = i + 1;
  if (out.has_info())
    for (index_t b = 0; b < out.c.batch; ++b) out.info[b] = 0;
}

template <class T>
void operand_spans(const HostProblem<T>& p, std::vector<Span>& out) {
  out.push_back({p.A.data(), p.A.bytes()});
  if (p.has_B()) out.push_back({p.B.data(), p.B.bytes()});
  if (p.has_C()) out.push_back({p.C.data(), p.C.bytes()});
}

// ---------------------------------------------------------------------------
template <class T, class Algo>
struct KKSerial final : Impl<T> {
  const HostProblem<T>* in = nullptr;
  HostProblem<T> w;
  std::string group() const override { return "kk-serial"; }
  std::string name() const override { return std::string("kk-serial/") + Algo::name(); }
  std::string absent(const Case& c) const override { return kk_absent(c); }
  std::string note(const Case& c) const override {
    return c.op == OpKind::getrf || c.op == OpKind::gesv ? "nopiv" : "";
  }
  void setup(const HostProblem<T>& input) override {
    in = &input;
    w.allocate(input.c);
  }
  void restore() override { copy_operands(*in, w); }
  void spans(std::vector<Span>& out) const override { operand_spans(w, out); }
  void run() override {
    const Case& c = w.c;
    const OpKind op = c.op;
    const auto A = strided(w.A.data(), c.batch, c.n, c.n);
    const auto B = w.has_B() ? strided(w.B.data(), c.batch, c.n, w.b_cols()) : Strided3<T>();
    const auto C = w.has_C() ? strided(w.C.data(), c.batch, c.n, c.n) : Strided3<T>();
    const bool hasB = w.has_B(), hasC = w.has_C();
    Kokkos::parallel_for(
        "kk-serial", Kokkos::RangePolicy<Exec>(0, c.batch), KOKKOS_LAMBDA(const index_t b) {
          auto a = Kokkos::subview(A, b, Kokkos::ALL(), Kokkos::ALL());
          auto bb = hasB ? Kokkos::subview(B, b, Kokkos::ALL(), Kokkos::ALL()) : decltype(a)();
          auto cc = hasC ? Kokkos::subview(C, b, Kokkos::ALL(), Kokkos::ALL()) : decltype(a)();
          kk_one<Algo, T>(op, a, bb, cc);
        });
    Kokkos::fence();
  }
  void fetch(HostProblem<T>& out) override {
    copy_operands(w, out);
    fill_nopiv_outputs(out);
  }
  void teardown() override { w = HostProblem<T>(); }
};

// ---------------------------------------------------------------------------
template <class T>
using PackView = Kokkos::View<Pack<T>***, Kokkos::LayoutRight, Kokkos::HostSpace>;

/// Packed operands: element (i, j) of pack p is one Vector of V matrices.
template <class T>
struct PackSet {
  PackView<T> A, B, C;
  void allocate(const HostProblem<T>& p) {
    const index_t packs = (p.c.batch + simd_v<T> - 1) / simd_v<T>;
    A = PackView<T>("A", packs, p.c.n, p.c.n);
    if (p.has_B()) B = PackView<T>("B", packs, p.c.n, p.b_cols());
    if (p.has_C()) C = PackView<T>("C", packs, p.c.n, p.c.n);
  }
  void spans(std::vector<Span>& out) const {
    for (const auto* v : {&A, &B, &C})
      if (v->data() != nullptr) out.push_back({v->data(), v->span() * sizeof(Pack<T>)});
  }
};

/// Strided <-> packed for one operand, in parallel over packs. Lanes past the
/// end of the batch get `pad` on the diagonal (identity matrices keep the
/// factorizations of the padding finite).
template <class T>
void pack(const T* src, const PackView<T>& dst, index_t batch, int rows, int cols, T pad) {
  constexpr int V  = simd_v<T>;
  const index_t np = index_t(dst.extent(0));
  const std::size_t mm = std::size_t(rows) * std::size_t(cols);
  T* d = reinterpret_cast<T*>(dst.data());
#pragma omp parallel for schedule(static)
  for (index_t p = 0; p < np; ++p) {
    T* out = d + std::size_t(p) * mm * V;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j)
        for (int l = 0; l < V; ++l) {
          const index_t b = p * V + l;
          out[(std::size_t(i) * cols + j) * V + l] =
              b < batch ? src[std::size_t(b) * mm + std::size_t(j) * rows + i] : (i == j ? pad : T(0));
        }
  }
}
template <class T>
void unpack(const PackView<T>& src, T* dst, index_t batch, int rows, int cols) {
  constexpr int V  = simd_v<T>;
  const index_t np = index_t(src.extent(0));
  const std::size_t mm = std::size_t(rows) * std::size_t(cols);
  const T* s = reinterpret_cast<const T*>(src.data());
#pragma omp parallel for schedule(static)
  for (index_t p = 0; p < np; ++p) {
    const T* in = s + std::size_t(p) * mm * V;
    for (int l = 0; l < V; ++l) {
      const index_t b = p * V + l;
      if (b >= batch) break;
      for (int j = 0; j < cols; ++j)
        for (int i = 0; i < rows; ++i)
          dst[std::size_t(b) * mm + std::size_t(j) * rows + i] = in[(std::size_t(i) * cols + j) * V + l];
    }
  }
}

template <class T, class Algo>
void run_packs(const Case& c, const PackSet<T>& s) {
  const OpKind op = c.op;
  const auto A = s.A, B = s.B, C = s.C;
  const bool hasB = B.data() != nullptr, hasC = C.data() != nullptr;
  Kokkos::parallel_for(
      "kk-simd", Kokkos::RangePolicy<Exec>(0, index_t(A.extent(0))), KOKKOS_LAMBDA(const index_t p) {
        auto a  = Kokkos::subview(A, p, Kokkos::ALL(), Kokkos::ALL());
        auto bb = hasB ? Kokkos::subview(B, p, Kokkos::ALL(), Kokkos::ALL()) : decltype(a)();
        auto cc = hasC ? Kokkos::subview(C, p, Kokkos::ALL(), Kokkos::ALL()) : decltype(a)();
        kk_one<Algo, T>(op, a, bb, cc);
      });
  Kokkos::fence();
}

template <class T>
T pad_of(const Case& c) {
  return c.op == OpKind::gemm ? T(0) : T(1);
}

template <class T, class Algo>
struct KKSimd final : Impl<T> {
  const HostProblem<T>* in = nullptr;
  PackSet<T> pristine, work;
  std::string group() const override { return "kk-simd"; }
  std::string name() const override {
    return "kk-simd<" + std::to_string(simd_v<T>) + ">/" + Algo::name();
  }
  std::string absent(const Case& c) const override { return kk_absent(c); }
  std::string note(const Case& c) const override {
    return c.op == OpKind::getrf || c.op == OpKind::gesv ? "nopiv" : "";
  }
  void setup(const HostProblem<T>& input) override {
    in = &input;
    const Case& c = input.c;
    pristine.allocate(input);
    work.allocate(input);
    pack(input.A.data(), pristine.A, c.batch, c.n, c.n, pad_of<T>(c));
    if (input.has_B()) pack(input.B.data(), pristine.B, c.batch, c.n, input.b_cols(), T(0));
    if (input.has_C()) pack(input.C.data(), pristine.C, c.batch, c.n, c.n, T(0));
  }
  void restore() override {
    Kokkos::deep_copy(work.A, pristine.A);
    if (in->has_B()) Kokkos::deep_copy(work.B, pristine.B);
    if (in->has_C()) Kokkos::deep_copy(work.C, pristine.C);
  }
  void spans(std::vector<Span>& out) const override { work.spans(out); }
  void run() override { run_packs<T, Algo>(in->c, work); }
  void fetch(HostProblem<T>& out) override {
    const Case& c = in->c;
    unpack(work.A, out.A.data(), c.batch, c.n, c.n);
    if (in->has_B()) unpack(work.B, out.B.data(), c.batch, c.n, in->b_cols());
    if (in->has_C()) unpack(work.C, out.C.data(), c.batch, c.n, c.n);
    fill_nopiv_outputs(out);
  }
  void teardown() override { pristine = PackSet<T>(), work = PackSet<T>(); }
};

template <class T, class Algo>
struct KKSimdConvert final : Impl<T> {
  const HostProblem<T>* in = nullptr;
  HostProblem<T> user;
  PackSet<T> scratch;
  std::string group() const override { return "kk-simd+conv"; }
  std::string name() const override {
    return "kk-simd<" + std::to_string(simd_v<T>) + ">+conv/" + Algo::name();
  }
  std::string absent(const Case& c) const override { return kk_absent(c); }
  std::string note(const Case& c) const override {
    return c.op == OpKind::getrf || c.op == OpKind::gesv ? "nopiv" : "";
  }
  void setup(const HostProblem<T>& input) override {
    in = &input;
    user.allocate(input.c);
    scratch.allocate(input);
  }
  void restore() override { copy_operands(*in, user); }
  void spans(std::vector<Span>& out) const override {
    operand_spans(user, out);
    scratch.spans(out);
  }
  void run() override {
    const Case& c = user.c;
    pack(user.A.data(), scratch.A, c.batch, c.n, c.n, pad_of<T>(c));
    if (user.has_B()) pack(user.B.data(), scratch.B, c.batch, c.n, user.b_cols(), T(0));
    if (user.has_C()) pack(user.C.data(), scratch.C, c.batch, c.n, c.n, T(0));
    run_packs<T, Algo>(c, scratch);
    if (user.writes_A()) unpack(scratch.A, user.A.data(), c.batch, c.n, c.n);
    if (user.writes_B()) unpack(scratch.B, user.B.data(), c.batch, c.n, user.b_cols());
    if (user.has_C()) unpack(scratch.C, user.C.data(), c.batch, c.n, c.n);
  }
  void fetch(HostProblem<T>& out) override {
    copy_operands(user, out);
    fill_nopiv_outputs(out);
  }
  void teardown() override { user = HostProblem<T>(), scratch = PackSet<T>(); }
};

}  // namespace

template <class T>
void add_kokkos_kernels(ImplList<T>& out) {
  using Blocked   = KB::Algo::Level3::Blocked;
  using Unblocked = KB::Algo::Level3::Unblocked;
  out.push_back(std::make_unique<KKSerial<T, Blocked>>());
  out.push_back(std::make_unique<KKSerial<T, Unblocked>>());
  out.push_back(std::make_unique<KKSimd<T, Blocked>>());
  out.push_back(std::make_unique<KKSimd<T, Unblocked>>());
  out.push_back(std::make_unique<KKSimdConvert<T, Blocked>>());
}

template void add_kokkos_kernels<float>(ImplList<float>&);
template void add_kokkos_kernels<double>(ImplList<double>&);

}  // namespace bench
