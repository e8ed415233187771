// RUN: m2n-opt %s --m2n-expand-collectives --mlir-print-local-scope | FileCheck %s

// CHECK-LABEL: func.func @all_gather
// CHECK-SAME: (%[[C:.*]]: !m2n.comm<8>, %[[X:.*]]: !m2n.dist
// CHECK-NOT: m2n.all_gather
// CHECK: %[[R:.*]] = m2n.reshard %[[X]] on %[[C]] : !m2n.comm<8>, !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, shard<1>]>> -> !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, replicate]>>
// CHECK: return %[[R]]
func.func @all_gather(%c: !m2n.comm<8>, %x: !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, shard<1>]>>) -> !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, replicate]>> {
  %0 = m2n.all_gather %x on %c mesh_axes = [1] : !m2n.comm<8>, !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, shard<1>]>> -> !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, replicate]>>
  return %0 : !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, replicate]>>
}

// CHECK-LABEL: func.func @reduce_scatter
// CHECK-NOT: m2n.reduce_scatter
// CHECK: m2n.reshard %{{.*}} : !m2n.comm<4>, !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>> -> !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
func.func @reduce_scatter(%c: !m2n.comm<4>, %x: !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>) -> !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> {
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 0 : !m2n.comm<4>, !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>> -> !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
  return %0 : !m2n.dist<1024xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
}

// CHECK-LABEL: func.func @all_reduce
// CHECK-NOT: m2n.all_reduce
// CHECK: m2n.reshard %{{.*}} : !m2n.comm<4>, !m2n.dist<1024xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<max>, shard<0>]>> -> !m2n.dist<1024xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, shard<0>]>>
func.func @all_reduce(%c: !m2n.comm<4>, %x: !m2n.dist<1024xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<max>, shard<0>]>>) -> !m2n.dist<1024xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, shard<0>]>> {
  %0 = m2n.all_reduce %x on %c mesh_axes = [0] : !m2n.comm<4>, !m2n.dist<1024xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<max>, shard<0>]>> -> !m2n.dist<1024xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, shard<0>]>>
  return %0 : !m2n.dist<1024xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, shard<0>]>>
}

// CHECK-LABEL: func.func @all_to_all
// CHECK-NOT: m2n.all_to_all
// CHECK: m2n.reshard %{{.*}} : !m2n.comm<8>, !m2n.dist<16x16x4xi32, #m2n.layout<#m2n.mesh<[8]>, [shard<0>]>> -> !m2n.dist<16x16x4xi32, #m2n.layout<#m2n.mesh<[8]>, [shard<1>]>>
func.func @all_to_all(%c: !m2n.comm<8>, %x: !m2n.dist<16x16x4xi32, #m2n.layout<#m2n.mesh<[8]>, [shard<0>]>>) -> !m2n.dist<16x16x4xi32, #m2n.layout<#m2n.mesh<[8]>, [shard<1>]>> {
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = 1 : !m2n.comm<8>, !m2n.dist<16x16x4xi32, #m2n.layout<#m2n.mesh<[8]>, [shard<0>]>> -> !m2n.dist<16x16x4xi32, #m2n.layout<#m2n.mesh<[8]>, [shard<1>]>>
  return %0 : !m2n.dist<16x16x4xi32, #m2n.layout<#m2n.mesh<[8]>, [shard<1>]>>
}

// The pass only rewrites collectives: a reshard already present and an unused
// collective both remain (as reshards), nothing is folded away.
// CHECK-LABEL: func.func @mixed
// CHECK: m2n.reshard %{{.*}} -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
// CHECK-NEXT: m2n.reshard %{{.*}} -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
// CHECK-NEXT: return
func.func @mixed(%c: !m2n.comm<4>, %x: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
  %1 = m2n.all_gather %0 on %c mesh_axes = [0] : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}

// Reducing one of two partial axes keeps the other partial: the expansion is
// the reshard that the verifier accepts by the same rule.
// CHECK-LABEL: func.func @all_reduce_one_of_two_partial_axes
// CHECK-NOT: m2n.all_reduce
// CHECK: m2n.reshard %{{.*}} : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, partial<sum>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, replicate]>>
func.func @all_reduce_one_of_two_partial_axes(%c: !m2n.comm<4>, %x: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, partial<sum>]>>) {
  %0 = m2n.all_reduce %x on %c mesh_axes = [1] : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, partial<sum>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, replicate]>>
  return
}

// CHECK-LABEL: func.func @reduce_scatter_one_of_two_partial_axes
// CHECK: m2n.reshard %{{.*}} -> !m2n.dist<6xi32, #m2n.layout<#m2n.mesh<[2, 3]>, [shard<0>, partial<max>]>>
func.func @reduce_scatter_one_of_two_partial_axes(%c: !m2n.comm<6>, %x: !m2n.dist<6xi32, #m2n.layout<#m2n.mesh<[2, 3]>, [partial<max>, partial<max>]>>) {
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 0 : !m2n.comm<6>, !m2n.dist<6xi32, #m2n.layout<#m2n.mesh<[2, 3]>, [partial<max>, partial<max>]>> -> !m2n.dist<6xi32, #m2n.layout<#m2n.mesh<[2, 3]>, [shard<0>, partial<max>]>>
  return
}
