#!/usr/bin/env bash
# One bounded fuzz run (ctest, .ci/run):
#   run_fuzzer.sh FUZZER WORK_DIR RUNS CORPUS_DIR...
# WORK_DIR receives new inputs (libFuzzer writes to its first corpus
# directory) and crashing inputs. The seed is fixed unless M2N_FUZZ_SEED is
# set; the fuzzer prints it.
set -euo pipefail
fuzzer=$1 work=$2 runs=$3
shift 3
rm -rf "$work" && mkdir -p "$work/new"
exec "$fuzzer" -runs="$runs" -seed="${M2N_FUZZ_SEED:-1}" -max_len=65536 \
  -timeout=60 -rss_limit_mb=4096 -artifact_prefix="$work/" "$work/new" "$@"
