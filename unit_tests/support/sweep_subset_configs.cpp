// The configuration lists of IBLA_TESTS_SWEEP_SUBSET (support/configs.hpp),
// compiled in every host build of the tests (CI's main and sanitizer
// builds; device builds leave it out) so that their static_asserts run
// where CI compiles. The option is used only in device builds for a GPU
// (sm_90 SASS, never built in CI), and its lists had fallen out of the order
// those asserts require (native group first) unnoticed until such a build.
// Declarations only: nothing is instantiated, and nothing links this object.
#define IBLA_TEST_SWEEP_SUBSET
#include "support/configs.hpp"
