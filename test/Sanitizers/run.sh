#!/usr/bin/env bash
# The sanitizer job (the README's test command runs it after the main
# suite): m2n's code built with clang-22 under AddressSanitizer and
# UndefinedBehaviorSanitizer, the gtest and lit suites run on that build,
# then each fuzz target under libFuzzer for a bounded number of inputs with
# a fixed seed (fuzz/README.md).
#   test/Sanitizers/run.sh [BUILD_DIR]        (default: build-san)
#
# allow_user_poisoning=0: LLVM's headers poison and unpoison the memory of
# their containers and allocators through ASan's interface when the code
# that includes them is instrumented; Debian's libLLVM and libMLIR are not,
# so memory they hand over keeps stale poison and ASan reports accesses
# that are fine. With user poisoning off, ASan's own checks (heap, stack and
# global bounds, use after free, double free) stay on everywhere.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build-san}
llvm=/usr/lib/llvm-22/bin
CC=clang-22 CXX=clang++-22 cmake -G Ninja -S "$root" -B "$build" \
  -DM2N_SANITIZE=address,undefined -DM2N_FUZZ_ENGINE=libfuzzer \
  -DM2N_FUZZ_RUNS="${M2N_FUZZ_RUNS:-20000}" \
  -DM2N_FUZZ_COMPILE_RUNS="${M2N_FUZZ_COMPILE_RUNS:-2000}" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG"
ninja -C "$build"
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=0:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_SYMBOLIZER_PATH=$llvm/llvm-symbolizer
"$llvm/lit" -q "$build/test"
# The Python and packaging tests are not registered in this build (an
# uninstrumented interpreter cannot load instrumented libraries, a plain
# consumer cannot link them): they run in the main job.
ctest --test-dir "$build" -j2 --output-on-failure
