// Bitwise comparison of host batches, for the determinism tests: results
// must be the same bits (memcmp), no tolerance. Except that any NaN matches
// any NaN: IEEE 754 leaves the sign of a NaN result uninterpreted (6.3) and
// does not say which input NaN an operation passes on (6.2.3). x86 FMA
// passes on the NaN of its first source operand, and which operand is first
// (vfnmadd132/213/231) is the register allocator's choice: two forms with
// the same operations in the same order gave NaN and -NaN where both the
// accumulated element and a multiplier were NaN.
#pragma once

#include "support/batch.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <ios>

namespace ibla_test {

/// Matrices [got_first, got_first + count) of got against [want_first, ...)
/// of want (count < 0: the whole batches, whose shapes must agree); names
/// the first element that differs.
template <class T>
::testing::AssertionResult bitwise_same(const HostBatch<T>& got, const HostBatch<T>& want,
                                        index_t got_first = 0, index_t want_first = 0,
                                        index_t count = -1) {
  if (count < 0) {
    if (got.batch != want.batch || got.rows != want.rows || got.cols != want.cols)
      return ::testing::AssertionFailure() << "shapes differ";
    count = got.batch;
  }
  const index_t per = got.rows * got.cols;
  for (index_t b = 0; b < count; ++b)
    for (index_t e = 0; e < per; ++e) {
      const T x = got.matrix(got_first + b)[e], y = want.matrix(want_first + b)[e];
      if (std::memcmp(&x, &y, sizeof(T)) != 0 && !(x != x && y != y))
        return ::testing::AssertionFailure()
               << "matrix " << got_first + b << " vs " << want_first + b << ", element (" << e % got.rows
               << "," << e / got.rows << "): " << std::hexfloat << x << " vs " << y
               << std::defaultfloat << " (difference " << (double(x) - double(y)) << ")";
    }
  return ::testing::AssertionSuccess();
}

}  // namespace ibla_test
