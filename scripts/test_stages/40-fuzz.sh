#!/usr/bin/env bash
# Builds the libFuzzer harness unit_tests/fuzz/fuzz_ibla.cpp with clang 14
# (ASan + UBSan + libFuzzer) against the Kokkos in .deps (built by g++; both
# use libstdc++, and LLVM's libomp also provides the GOMP entry points the
# g++-built Kokkos calls), then runs a short bounded fuzz over the corpus kept
# in unit_tests/fuzz/corpus/: every seed first, then fixed -runs with a time
# cap. New inputs found go to a scratch directory, not into the repository.
# Skips (exit 0) with a message when clang-14 or libFuzzer is not installed.
# Environment: IBLA_FUZZ_RUNS (default 3000), IBLA_FUZZ_SECONDS (default 60),
# IBLA_FUZZ_DIR (build/scratch directory, default <main build>-fuzz),
# IBLA_FUZZ_OPT (default -O0), IBLA_FUZZ_ORDERS (default 1,2,3,4,5,6,7,8;
# empty: every order; see below).
# -O0: the harness instantiates every operation on many layout mixes; at -O1
# clang took about 22 min on the loaded 2-core machine, at -O0 about 6 min
# CPU. The bounded run then executes fewer inputs in its time cap (measured
# 1,374 in 60 s under load, every corpus seed included); a long fuzz
# campaign is better built at -O1 (IBLA_FUZZ_OPT=-O1).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cxx=${IBLA_FUZZ_CXX:-clang++-14}
if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "fuzz: skipped ($cxx not found; scripts/setup_deps.sh installs clang-14)"
  exit 0
fi
if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }' |
    "$cxx" -x c++ -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
  echo "fuzz: skipped ($cxx cannot link -fsanitize=fuzzer; install libclang-rt-14-dev)"
  exit 0
fi
prefix=$("$here/scripts/setup_deps.sh" | tail -n1)
prefix=${prefix%%;*}
dir=${IBLA_FUZZ_DIR:-${IBLA_BUILD_DIR:-$here/build}-fuzz}
mkdir -p "$dir/new"
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
bin=$dir/fuzz_ibla
src=$here/unit_tests/fuzz/fuzz_ibla.cpp
# Rebuild when the harness or any ibla header changed.
if [ ! -x "$bin" ] || [ -n "$(find "$src" "$here/core" "$here/layouts" "$here/kernels" -newer "$bin" -print -quit)" ]; then
  start=$(date +%s)
  # UBSan's null, alignment and pointer-overflow checks are off as in the
  # sanitizer stage (see 10-sanitizers.sh), and its signed-overflow check
  # too: at -O0 clang's UBSan code was most of the harness's build, and these
  # two the largest part of it (float object, 2 parallel compiles, 2026-11-25:
  # 166 s with both, 113 s without pointer-overflow, 78 s without either,
  # 45 s without UBSan at all). Signed overflow of the index arithmetic is
  # still checked over the whole unit-test suite in the sanitizer stage;
  # what the fuzzer's inputs add is values (NaN, Inf, tiny pivots) and
  # shapes, which the checks left on here cover (float-to-int casts,
  # shifts, bounds, bool and enum loads, division by zero).
  # Nor -fsanitize=function (part of clang's -fsanitize=undefined, which
  # GCC's, in the sanitizer stage, does not have): it checks the type of
  # calls through function pointers, which ibla does not make, and to do so
  # gives every function a prologue with its type's RTTI; at -O0 over the
  # harness's template instances that took 2.4x the time and memory of all
  # the other UBSan checks together (gesv float object, 2026-11-26: 155 s and
  # 9.9 GB with it, 64 s and 3.8 GB without, 44 s and 2.8 GB with no UBSan).
  # Eleven objects of the one source (see the end of fuzz_ibla.cpp). Line
  # tables are the debug information a crash report's stack needs: full -g
  # took the gesv/potrs object from 11.3 to 12.2 GB and 153 to 171 s.
  # KOKKOS_FORCEINLINE_FUNCTION as plain inline, as in the sanitizer stage
  # (see 10-sanitizers.sh): clang too inlines always_inline at -O0, and the
  # float object of operations 0..31 took 78 CPU-s and 4.5 GB with it, 32 s
  # and 1.7 GB without (2026-11-28). IBLA_FUZZ_FORCE_INLINE=1 keeps it.
  no_force_inline=(-DKOKKOS_IMPL_FORCEINLINE_FUNCTION=inline -DKOKKOS_IMPL_FORCEINLINE=)
  [ "${IBLA_FUZZ_FORCE_INLINE:-0}" = 1 ] && no_force_inline=()
  # The kernels' fixed-order forms for the orders of this list only
  # (IBLA_HOST_SPECIALISED_ORDERS, kernels/ibla/kernels/static_switch.hpp);
  # inputs of other orders take the runtime-order forms, which are fuzzed at
  # every order. The list is that of the unit tests' other layouts
  # (IBLA_TESTS_OTHER_LAYOUT_ORDERS, unit_tests/CMakeLists.txt): every order
  # up to 8, leaving out orders 9 and up of GETRF's Crout forms and of the
  # one-column register forms of GETRS, POTRS and TRSM. Every form of every order runs under ASan and UBSan in
  # the sanitizer stage, on the unit tests' inputs; what the fuzzer adds is
  # values and shapes. The double gesv object took 22.7 CPU-s with every
  # order, 19.2 with 1..8 and 12 (clang 14, -O0, 2026-11-28, one after the
  # other beside the same compile); the harness 124 s on 2 cores with that
  # list, against 139 and 144 s in the last two fresh clones without.
  orders=${IBLA_FUZZ_ORDERS-1,2,3,4,5,6,7,8}
  orders_flag=()
  [ -n "$orders" ] && orders_flag=(-DIBLA_HOST_SPECIALISED_ORDERS="$orders")
  flags=(-std=c++17 "${IBLA_FUZZ_OPT:--O0}" -gline-tables-only -fno-omit-frame-pointer -fopenmp -march=native
         -Wno-pass-failed -fsanitize=fuzzer,address,undefined
         -fno-sanitize=alignment,null,pointer-overflow,signed-integer-overflow,function
         -fno-sanitize-recover=all
         "${no_force_inline[@]}" "${orders_flag[@]}"
         -I"$here/core" -I"$here/layouts" -I"$here/kernels" -I"$prefix/include" -I"/usr/include/$arch")
  # Objects side by side, as many as there are cores and as memory allows,
  # longest first, each counted at its peak in GB (clang 14, -O0, ASan,
  # measured on 2026-11-26 without -fsanitize=function: gesv 3.7 double
  # in 57 s, 3.8 float, operations 0..31 3.5 float in 58 s; the others
  # smaller). With that check on, the gesv objects took 9.2/9.9 GB and
  # 127/149 s, and with gesv and potrs in one object (11.3 GB) neither value
  # type's could compile beside another large one under the 20 GB free
  # here: the cores were 68% busy over the stage and the harness took 668 s
  # (fresh clone, 2026-11-26).
  jobs=$(nproc)
  mem_gb=$(awk '/^MemTotal:/ {print int($2 / 1048576)}' /proc/meminfo 2>/dev/null || echo 0)
  budget=$(( mem_gb > 4 ? mem_gb - 3 : 1 ))
  peak() { case "$1" in *_3 | *_0) echo 4 ;; entry) echo 1 ;; *) echo 3 ;; esac; }
  compile_part() {
    local define=()
    [ "$1" = entry ] || define=(-DIBLA_FUZZ_VALUE_TYPE="${1%_*}" -DIBLA_FUZZ_PART="${1#*_}")
    "$cxx" "${flags[@]}" "${define[@]}" -c "$src" -o "$dir/fuzz_ibla_$1.o"
  }
  parts=(float_3 double_3 float_0 double_0 float_1 double_1 float_2 double_2 float_4 double_4 entry)
  declare -A running=()  # pid -> GB
  used=0
  reap_one() {
    local pid
    wait -n -p pid "${!running[@]}" || { echo "fuzz: FAILED: the harness does not compile" >&2; exit 1; }
    used=$((used - running[$pid]))
    unset "running[$pid]"
  }
  for part in "${parts[@]}"; do
    need=$(peak "$part")
    while [ "${#running[@]}" -gt 0 ] &&
          { [ $((used + need)) -gt "$budget" ] || [ "${#running[@]}" -ge "$jobs" ]; }; do
      reap_one
    done
    compile_part "$part" &
    running[$!]=$need
    used=$((used + need))
  done
  while [ "${#running[@]}" -gt 0 ]; do reap_one; done
  objects=()
  for part in "${parts[@]}"; do objects+=("$dir/fuzz_ibla_$part.o"); done
  "$cxx" -fopenmp -fsanitize=fuzzer,address,undefined "${objects[@]}" -o "$bin" \
    "$prefix/lib/libkokkoscore.a" -lhwloc -ldl \
    -llapacke -L"/usr/lib/$arch/lapack" -Wl,-rpath,"/usr/lib/$arch/lapack" -llapack \
    -L"/usr/lib/$arch/blas" -Wl,-rpath,"/usr/lib/$arch/blas" -lblas
  echo "fuzz: harness built in $(( $(date +%s) - start )) s"
fi
runs=${IBLA_FUZZ_RUNS:-3000}
secs=${IBLA_FUZZ_SECONDS:-60}
start=$(date +%s)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=false
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
log=$dir/fuzz.log
set +e
# Seeds first: every corpus file must pass on its own. Then a bounded fuzz
# run that starts from the corpus (-seed fixed: the same inputs every time).
"$bin" "$here"/unit_tests/fuzz/corpus/* >"$log" 2>&1 &&
  "$bin" -runs="$runs" -max_total_time="$secs" -max_len=512 -seed=1 -print_final_stats=1 \
    "$dir/new" "$here/unit_tests/fuzz/corpus" >>"$log" 2>&1
rc=$?
set -e
if [ "$rc" != 0 ]; then
  tail -n 80 "$log"
else
  grep -E "^(Executed|#[0-9]+ +DONE|stat::number_of_executed_units|stat::peak_rss_mb)" "$log" || true
fi
echo "fuzz: $runs runs (cap ${secs} s) in $(( $(date +%s) - start )) s, exit $rc"
exit "$rc"
