#!/usr/bin/env bash
# The fuzzers' seed corpora (fuzz/CMakeLists.txt runs this at build time):
#   make_corpus.sh SRC_ROOT BIN_DIR OUT_DIR
# OUT_DIR/ir: every split of the IR tests and examples; OUT_DIR/artifact:
# one small artifact per reshard of the examples, the GPU matrices' reshards
# (default lowering, SM path, 8-byte buffers, copy engine, network steps)
# and a small random matrix.
set -euo pipefail
src=$1 bin=$2 out=$3
python=${PYTHON:-python3}
rm -rf "$out" && mkdir -p "$out/ir" "$out/artifact" "$out/tmp"
"$python" "$src/fuzz/split_ir.py" "$out/ir" "$src"/examples/*.mlir \
  "$src"/test/Dialect/M2N/*.mlir "$src"/test/Conversion/*.mlir \
  "$src"/test/GPU/reshards.mlir "$src"/test/GPU/network.mlir
"$python" "$src/test/GPU/random_matrix.py" --cases 24 --seed 7 > "$out/tmp/random.mlir"
compile() { "$bin/m2n-opt" "$1" "--m2n-pipeline=artifact=$out/tmp/$2.m2n $3" -o /dev/null; }
compile "$src/examples/example_a.mlir" example_a ""
compile "$src/examples/example_b.mlir" example_b ""
compile "$src/test/GPU/reshards.mlir" reshards ""
compile "$src/test/GPU/reshards.mlir" reshards_engine "copy-engine=true engine-min-bytes=0"
compile "$out/tmp/random.mlir" random ""
compile "$out/tmp/random.mlir" random_vector "vector-below-bytes=256"
compile "$out/tmp/random.mlir" random_align8 "buffer-align=8"
compile "$src/test/GPU/network.mlir" network "topology=$src/test/GPU/split-by-gpu.json"
compile "$src/test/GPU/network.mlir" network_bcast "strategy=gather-bcast topology=$src/test/GPU/split-by-gpu.json"
"$bin/m2n-fuzz-seeds" "$out/artifact" "$out"/tmp/*.m2n
rm -rf "$out/tmp"
echo "fuzz corpus: $(ls "$out/ir" | wc -l) IR inputs, $(ls "$out/artifact" | wc -l) artifacts"
