#!/usr/bin/env bash
# Packs what the Python frontend and m2n-run need on a machine without
# LLVM/MLIR (the GPU machine): libm2n_compiler.so, libm2n_runtime.so,
# bin/m2n-run and every shared library they load except the C/C++ runtime,
# into one archive (~61 MB):
#   test/GPU/pack_compiler_libs.sh .gpu-libs/compiler-libs.tar.xz     (here)
#   test/GPU/python_gpu.sh .gpu-libs/compiler-libs.tar.xz OUT         (GPU machine)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
archive=${1:?usage: pack_compiler_libs.sh ARCHIVE.tar.xz}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib" "$stage/bin"
cp "$root/build/lib/libm2n_compiler.so" "$root/build/lib/libm2n_runtime.so" "$stage/lib/"
cp "$root/build/bin/m2n-run" "$stage/bin/"
# Dependencies by the name the loader asks for (dereferenced), minus libc,
# libm, libstdc++, libgcc_s and the loader, which the target machine has.
for lib in "$root/build/lib/libm2n_compiler.so" "$root/build/lib/libm2n_runtime.so" "$root/build/bin/m2n-run"; do
  ldd "$lib" | awk '/=>/ {print $1, $3}'
done | sort -u | while read -r name path; do
  case "$name" in
    libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|ld-linux*|libpthread.so*|libdl.so*|librt.so*) ;;
    *) cp -L "$path" "$stage/lib/$name" ;;
  esac
done
mkdir -p "$(dirname "$archive")"
tar -C "$stage" -cf - lib bin | xz -T0 -6 > "$archive"
ls -la "$archive"
