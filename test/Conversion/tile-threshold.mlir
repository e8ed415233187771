// Boxes whose contiguous runs are shorter than tile-below-run-bytes (16 KiB by
// default) move as TMA tensor tiles; 0 keeps every run a bulk copy.
//
// RUN: m2n-opt %s "--m2n-pipeline=artifact=%t.tiles.m2n" -o /dev/null
// RUN: m2n-artifact-dump %t.tiles.m2n | FileCheck %s --check-prefix=TILES
// The reader written from docs/artifact.md reads repeated movements too:
// RUN: %python %S/../Tools/m2n-artifact-dump/read_artifact.py %t.tiles.m2n | FileCheck %s --check-prefix=DOC
// DOC: rank 0: 1 counters, 3 items, 0 receives, 0 engine copies; launch
// RUN: m2n-opt %s "--m2n-pipeline=artifact=%t.bulk.m2n tile-below-run-bytes=0" -o /dev/null
// RUN: m2n-artifact-dump %t.bulk.m2n | FileCheck %s --check-prefix=BULK

// Rank 0 keeps rows 0-31 of columns 0-2047: 32 runs of 4 KiB (and waits,
// last, until rank 1 has read its part).
// TILES: map0 over src(0) [32x4096] box [32x256]
// A step's tiles are one movement, repeated along the columns.
// TILES: rank 0: 17 items in 3 movements
// TILES-NEXT: item copy tile src(0) map0(0,0) -> dst(0) map1(0,0) 16384B times 8 along 1 by (+256,+256)
// BULK-NOT: map0
// BULK: rank 0: 65 items in 3 movements
// BULK-NEXT: item copy src(0)+0 -> dst(0)+0 4096B times 32 by (+8192,+4096)
// BULK-NEXT: item copy src(1)+0 -> dst(0)+131072 4096B times 32 by (+8192,+4096) read-done 1:0

func.func @rows(%c: !m2n.comm<2>, %x: !m2n.dist<64x4096xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = 1 : !m2n.comm<2>, !m2n.dist<64x4096xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<64x4096xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return
}
