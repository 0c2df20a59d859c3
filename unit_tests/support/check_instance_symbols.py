#!/usr/bin/env python3
"""Checks that the kernels whose code depends on the order list are not
shared between the test instances compiled with the list and the rest of the
test suite.

support/instances/factor_and_solve_other_layouts.cpp is compiled with
IBLA_HOST_SPECIALISED_ORDERS (unit_tests/CMakeLists.txt), which changes the
body of every kernel function that dispatches on the matrices' order to
forms the list leaves out. If such a function were also instantiated, with
the same template arguments, in an object compiled without the list, a test
executable linking both would hold two definitions of one inline function
(an ODR violation): the linker keeps one of them, and the tests would run
the forms of the other object's list without saying so.

The list leaves out orders of GETRF's forms (getrf_block_general) and of
the one-column register forms of GETRS, POTRS and TRSM on compile-time
row strides (getrs_masked, potrs_masked, trsm_one_column_registers, which
team::trsm and batch-level TRSM call): a symbol of GETRF, GETRS, GESV,
LASWP, POTRS, POSV or of those TRSM functions (their functions, lambdas
and functors) that the listed object defines must be defined by no other
object. Template arguments name the lane-block types, and the other
layouts' lane blocks are not the native ones, so there should be none.
The triangular solves' register forms (TRSM, POTRS, GETRS on runtime row
strides) are shared: a transposed native block has the lane block of
LayoutInterleaved or LayoutLeft. Every one of their orders is listed (a static_assert in
factor_and_solve_other_layouts.cpp), so those functions are the same code
with and without the list; what other functions of ibla the objects share
is counted, not checked. (Sizes cannot tell: the same function compiled in
two units differs by the inlining each unit chose.)

Usage: check_instance_symbols.py NM LISTED_SUBSTRING OBJECT...
  an OBJECT whose path contains LISTED_SUBSTRING is a listed one; the others
  are those it is linked with (instance units and test files).
"""
import re
import subprocess
import sys


def defined_symbols(nm, path):
    """Functions of namespace ibla an object defines (global and weak)."""
    out = subprocess.run([nm, "-P", "--defined-only", path], check=True,
                         capture_output=True, text=True).stdout
    symbols = set()
    for line in out.splitlines():
        fields = line.split()
        # name type value [size]: code (T, W), not data (a function's static
        # variable is one object in every unit); local symbols cannot clash.
        if len(fields) < 2 or fields[1] not in ("T", "W"):
            continue
        if "4ibla" not in fields[0]:  # mangled names of namespace ibla
            continue
        symbols.add(fields[0])
    return symbols


def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), check=True,
                             capture_output=True, text=True).stdout
        return out.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return names


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    nm, marker, objects = argv[1], argv[2], argv[3:]
    listed = [o for o in objects if marker in o]
    others = [o for o in objects if marker not in o]
    if not listed or not others:
        print(f"check_instance_symbols: need objects with and without '{marker}' in their path",
              file=sys.stderr)
        return 2
    seen = {}  # symbol -> object, over the objects compiled without the list
    for path in others:
        for name in defined_symbols(nm, path):
            seen.setdefault(name, path)
    shared = [(name, path) for path in listed for name in defined_symbols(nm, path) if name in seen]
    names = demangle([name for name, _ in shared])
    order_dependent = re.compile(r"getr[fs]|gesv|laswp|potrs|posv|team::trsm<|TrsmBlocks|trsm_one_column",
                                 re.IGNORECASE)
    clashes = [(pretty, path, seen[name]) for (name, path), pretty in zip(shared, names)
               if order_dependent.search(pretty)]
    for pretty, path, other in clashes:
        print(f"{pretty[:400]}\n  defined in {path}\n  and in {other}")
    if clashes:
        print(f"check_instance_symbols: FAILED: {len(clashes)} functions of GETRF, GETRS, GESV, "
              f"LASWP, POTRS, POSV or TRSM's one-column forms are defined both with and without the order list (see the docstring)")
        return 1
    print(f"check_instance_symbols: {len(listed)} listed object(s) against {len(others)} others: "
          f"no function of GETRF, GETRS, GESV, LASWP, POTRS, POSV or TRSM's one-column forms in both; {len(shared)} other functions "
          f"of ibla in both")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
