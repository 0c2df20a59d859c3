// Enums and basic types shared by every ibla operation. These names are the
// public contract users write their code against.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ibla {

/// op(X) in BLAS terms: X, X^T, or X^H (C equals T for real types).
enum class Op { N, T, C };
/// Which triangle of a matrix holds the data.
enum class Uplo { Lower, Upper };
/// Whether the triangular matrix multiplies from the left or the right.
enum class Side { Left, Right };
/// Whether the diagonal of a triangular matrix is taken as all ones.
enum class Diag { NonUnit, Unit };

/// Offsets and strides are 64-bit everywhere so that batches whose storage
/// passes 2^31 elements are addressed correctly.
using index_t = std::ptrdiff_t;

inline const char* to_string(Op op) {
  return op == Op::N ? "N" : (op == Op::T ? "T" : "C");
}
inline const char* to_string(Uplo u) { return u == Uplo::Lower ? "Lower" : "Upper"; }
inline const char* to_string(Side s) { return s == Side::Left ? "Left" : "Right"; }
inline const char* to_string(Diag d) { return d == Diag::NonUnit ? "NonUnit" : "Unit"; }

}  // namespace ibla
