// The simulator holds every rank's buffers in memory: a reshard whose
// buffers would not fit is refused by name (it used to abort in the
// allocator); --max-bytes (default 16 GiB) moves the bound.
//
// RUN: not m2n-sim %s 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not m2n-sim %s --max-bytes=191 2>&1 | FileCheck %s --check-prefix=SMALL
// @small needs 64 bytes of sources and 2 x 64 of destinations: 192 fit.
// HUGE: m2n-sim: FAIL: plan 1 in @huge: simulating needs 3298534883328 bytes of rank buffers, more than --max-bytes=17179869184
// SMALL: m2n-sim: FAIL: plan 0 in @small: simulating needs 192 bytes of rank buffers, more than --max-bytes=191

func.func @small(%c: !m2n.comm<2>, %x: !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}

func.func @huge(%c: !m2n.comm<2>, %x: !m2n.dist<1099511627776xi8, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<2>, !m2n.dist<1099511627776xi8, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<1099511627776xi8, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
