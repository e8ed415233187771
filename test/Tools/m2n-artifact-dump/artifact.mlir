// The pipeline writes a versioned artifact; m2n-artifact-dump verifies and
// prints it; truncated, corrupted or foreign files are rejected by name.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: m2n-opt %s "--m2n-pipeline=artifact=%t/a.m2n max-ctas=8 chunk-bytes=64 fuse-reductions=true" -o /dev/null
// RUN: m2n-artifact-dump %t/a.m2n | FileCheck %s
// RUN: m2n-artifact-dump %t/a.m2n --ptx | FileCheck %s --check-prefix=PTX
// What binding uploads: one 192-byte template per movement (none repeats
// here), a 48-byte walker record per walker of the CTAs a rank launches (5
// items need one CTA of 8 walkers, not the 8 CTAs compiled) and a 16-byte
// visit per walker a movement's instances go to.
// RUN: m2n-artifact-dump %t/a.m2n --kernel-tables | FileCheck %s --check-prefix=TABLES
// TABLES: @transpose#0: 2 ranks, 10 instances in 10 templates, 10 visits
// TABLES-NEXT: one item per instance: 1280 B (0.001 MB), host {{.*}} ms
// TABLES-NEXT: kernel tables: 2848 B (0.003 MB), host {{.*}} ms
// TABLES-NEXT: the largest rank (0): 640 B of items, a 1424 B table
// TABLES-NEXT: @all_reduce#1: 2 ranks, 10 instances in 10 templates, 10 visits
// RUN: m2n-opt %s "--m2n-pipeline=artifact=%t/one.m2n max-ctas=8 chunk-bytes=64 walkers=1" -o /dev/null
// RUN: m2n-artifact-dump %t/one.m2n | FileCheck %s --check-prefix=ONE
// ONE: kernel m2n_transfer: 8 CTAs x 32 threads, 3 stages of 65536 bytes, up to 1 walkers
// ONE: rank 0: 5 items, 0 network receives, 1 counters; launch 1 walker x 32 threads, 3 stages of 65536 B
// A reader written from docs/artifact.md alone reads the same artifact
// (header, FNV-1a checksum, every field):
// RUN: %python %S/read_artifact.py %t/a.m2n | FileCheck %s --check-prefix=DOC
// DOC: kernel: 8 CTAs x 256 threads, 3 stages of 65536 bytes, up to 8 walkers
// DOC-NEXT: reshard @transpose#0: f32[8x16] hierarchical, buffers aligned to 16
// DOC-NEXT: rank 0: 1 counters, 5 items, 0 receives, 0 engine copies; launch 8 x 32 threads, stages of 128 B
// DOC-NEXT: rank 1: 1 counters, 5 items, 0 receives, 0 engine copies; launch 8 x 32 threads, stages of 128 B
// DOC-NEXT: reshard @all_reduce#1: f32[64] hierarchical, buffers aligned to 16
// DOC-NEXT: rank 0: 1 counters, 5 items, 0 receives, 0 engine copies; launch 1 x 256 threads
// RUN: head -c 100 %t/a.m2n > %t/truncated.m2n
// RUN: not m2n-artifact-dump %t/truncated.m2n 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: %python -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[-5] ^= 1; open(sys.argv[2], 'wb').write(b)" %t/a.m2n %t/flipped.m2n
// RUN: not m2n-artifact-dump %t/flipped.m2n 2>&1 | FileCheck %s --check-prefix=CORRUPTED
// RUN: %python -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[4] = 16; open(sys.argv[2], 'wb').write(b)" %t/a.m2n %t/version.m2n
// RUN: not m2n-artifact-dump %t/version.m2n 2>&1 | FileCheck %s --check-prefix=VERSION
// RUN: not m2n-artifact-dump %s 2>&1 | FileCheck %s --check-prefix=MAGIC
// RUN: not m2n-artifact-dump %t/missing.m2n 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK: m2n artifact version 19, chip sm_90a, PTX {{[0-9]+}} bytes
// CHECK-NEXT: kernel m2n_transfer: 8 CTAs x 256 threads, 3 stages of 65536 bytes, up to 8 walkers
// CHECK-NEXT: reshard @transpose#0: f32[8x16] hierarchical
// CHECK-NEXT: src mesh [2] ranks [0, 1], [shard<0>]
// CHECK-NEXT: dst mesh [2] ranks [0, 1], [shard<1>]
// Rows of 32 bytes are short: the column halves move as 2x8 tiles (the
// routing chunks of 64 bytes) through tensor maps over each buffer. Rank 0
// keeps columns 0-7 of its own rows and pulls those of rank 1.
// CHECK-NEXT: map0 over src(0) [4x16] box [2x8]
// CHECK-NEXT: map1 over dst(0) [8x8] box [2x8]
// CHECK-NEXT: map2 over src(1) [4x16] box [2x8]
// CHECK-NEXT: map3 over dst(1) [8x8] box [2x8]
// Items of at most 64 bytes: 8 walkers per CTA, each with 3 stages of 128
// bytes (m2n-choose-launch wrote it, the artifact stores it).
// CHECK-NEXT: rank 0: 5 items, 0 network receives, 1 counters; launch 8 walkers x 32 threads, 3 stages of 128 B
// Local and NVLink steps interleave in proportion to their bytes. Reads of
// the peer's buffer tell the peer (read-done); each rank's last item waits
// until the peer has read what it pulls from this rank.
// CHECK-NEXT: item copy tile src(0) map0(0,0) -> dst(0) map1(0,0) 64B
// CHECK-NEXT: item copy tile src(1) map2(0,0) -> dst(0) map1(4,0) 64B read-done 1:0
// CHECK-NEXT: item copy tile src(0) map0(2,0) -> dst(0) map1(2,0) 64B
// CHECK-NEXT: item copy tile src(1) map2(2,0) -> dst(0) map1(6,0) 64B read-done 1:0
// CHECK-NEXT: item copy src(0)+0 -> src(0)+0 0B wait 0:0>=2
// CHECK-NEXT: rank 1: 5 items, 0 network receives, 1 counters
// CHECK-NEXT: item copy tile src(0) map0(0,8) -> dst(1) map3(0,0) 64B read-done 0:0
// CHECK-NEXT: item copy tile src(1) map2(0,8) -> dst(1) map3(4,0) 64B
// CHECK: reshard @all_reduce#1: f32[64] hierarchical
// Each chunk is the rank's own contribution plus the other one, read and
// added at once (the own partial is the reduction's accumulator: no copy
// first, fuse-reductions=true); the vector adds make the kernel's block 256
// threads.
// CHECK: rank 0: 5 items, 0 network receives, 1 counters; launch 1 walker x 256 threads
// CHECK-NEXT: item add.f32 vector src(1)+0 -> dst(0)+0 64B acc src(0) read-done 1:0
// CHECK-NEXT: item add.f32 vector src(1)+64 -> dst(0)+64 64B acc src(0) read-done 1:0

// PTX: --- PTX ---
// PTX: .visible .entry m2n_transfer(

// TRUNCATED: m2n-artifact-dump: {{.*}}truncated.m2n: artifact truncated: the header announces {{[0-9]+}} payload bytes, the file has 76
// CORRUPTED: m2n-artifact-dump: {{.*}}flipped.m2n: artifact corrupted: checksum mismatch
// VERSION: m2n-artifact-dump: {{.*}}version.m2n: artifact version 16 is not supported (this build reads version 19)
// MAGIC: m2n-artifact-dump: {{.*}}artifact.mlir: not an m2n artifact (bad magic)
// MISSING: m2n-artifact-dump: cannot open '{{.*}}missing.m2n'

func.func @transpose(%c: !m2n.comm<2>, %x: !m2n.dist<8x16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = 1 : !m2n.comm<2>, !m2n.dist<8x16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<8x16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}

func.func @all_reduce(%c: !m2n.comm<2>, %x: !m2n.dist<64xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<64xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<64xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
