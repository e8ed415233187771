// RUN: not m2n-opt %s "--m2n-pipeline=artifact=%t.m2n" -o /dev/null 2>&1 | FileCheck %s
// CHECK: error: element type 'f8E4M3FN' has no executor yet

func.func @f8(%c: !m2n.comm<2>, %x: !m2n.dist<64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) {
  %0 = m2n.all_gather %x on %c mesh_axes = [0] : !m2n.comm<2>, !m2n.dist<64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<64xf8E4M3FN, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
  return
}
