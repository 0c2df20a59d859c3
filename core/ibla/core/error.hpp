// Argument errors. Every batch-level call validates all of its arguments once,
// before any data is touched, and throws ibla::argument_error on the first bad
// one. The message names the routine, the argument and the offending values.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace ibla {

class argument_error : public std::invalid_argument {
 public:
  argument_error(std::string routine, std::string argument, const std::string& what)
      : std::invalid_argument("ibla::" + routine + ": argument " + argument + ": " + what),
        routine_(std::move(routine)),
        argument_(std::move(argument)) {}
  /// The routine that rejected the call, e.g. "gemm".
  const std::string& routine() const noexcept { return routine_; }
  /// The name of the argument at fault, e.g. "C".
  const std::string& argument() const noexcept { return argument_; }

 private:
  std::string routine_;
  std::string argument_;
};

namespace detail {

/// Builds a message from streamable pieces: fail("gemm", "C", "extent(1) = ", n).
template <class... Pieces>
[[noreturn]] void fail(const char* routine, const char* argument, const Pieces&... pieces) {
  std::ostringstream os;
  (os << ... << pieces);
  throw argument_error(routine, argument, os.str());
}

/// Throws unless cond holds.
template <class... Pieces>
void require(bool cond, const char* routine, const char* argument, const Pieces&... pieces) {
  if (!cond) fail(routine, argument, pieces...);
}

}  // namespace detail
}  // namespace ibla
