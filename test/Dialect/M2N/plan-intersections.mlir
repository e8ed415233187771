// RUN: m2n-opt %s --m2n-plan-intersections --m2n-verify-plan | FileCheck %s
// RUN: m2n-sim %s | FileCheck %s --check-prefix=SIM

// SIM: m2n-sim: PASS: 8 plans, 54 transfers

// The M2N paper's Example B, one PP stage: the stage's TP2 rows land in
// the generator's full tensor.
// CHECK-LABEL: func.func @example_b_stage
// CHECK: m2n.plan
// CHECK-NEXT: m2n.transfer copy from 0 [0:512, 0:512] to 2 [0:512, 0:512]
// CHECK-NEXT: m2n.transfer copy from 1 [0:512, 0:512] to 2 [512:1024, 0:512]
// CHECK-NEXT: }
func.func @example_b_stage(%c: !m2n.comm<3>, %x: !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) -> !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<3>, !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>
  return %0 : !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>
}

// Replicated sources: destinations 0-3 hold the data and copy locally; 4-7
// are spread over the four replicas, two transfers each.
// CHECK-LABEL: func.func @replicated_to_shards
// CHECK: m2n.plan
// CHECK-NEXT: m2n.transfer copy from 0 [0:2, 0:4] to 0 [0:2, 0:4]
// CHECK-NEXT: m2n.transfer copy from 1 [2:4, 0:4] to 1 [0:2, 0:4]
// CHECK-NEXT: m2n.transfer copy from 2 [4:6, 0:4] to 2 [0:2, 0:4]
// CHECK-NEXT: m2n.transfer copy from 3 [6:8, 0:4] to 3 [0:2, 0:4]
// CHECK-NEXT: m2n.transfer copy from 0 [8:10, 0:4] to 4 [0:2, 0:4]
// CHECK-NEXT: m2n.transfer copy from 1 [10:12, 0:4] to 5 [0:2, 0:4]
// CHECK-NEXT: m2n.transfer copy from 2 [12:14, 0:4] to 6 [0:2, 0:4]
// CHECK-NEXT: m2n.transfer copy from 3 [14:16, 0:4] to 7 [0:2, 0:4]
// CHECK-NEXT: }
func.func @replicated_to_shards(%c: !m2n.comm<8>, %x: !m2n.dist<16x4xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>) -> !m2n.dist<16x4xf32, #m2n.layout<#m2n.mesh<[8]>, [shard<0>]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<16x4xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>> -> !m2n.dist<16x4xf32, #m2n.layout<#m2n.mesh<[8]>, [shard<0>]>>
  return %0 : !m2n.dist<16x4xf32, #m2n.layout<#m2n.mesh<[8]>, [shard<0>]>>
}

// Uneven torch.chunk splits on both sides (5 rows over 4 ranks: 2, 2, 1, 0;
// 7 columns over 3 ranks: 3, 3, 1): rank 3 holds nothing and sends nothing.
// CHECK-LABEL: func.func @uneven_transpose
// CHECK: m2n.plan
// CHECK-NEXT: m2n.transfer copy from 0 [0:2, 0:3] to 1 [0:2, 0:3]
// CHECK-NEXT: m2n.transfer copy from 1 [0:2, 0:3] to 1 [2:4, 0:3]
// CHECK-NEXT: m2n.transfer copy from 2 [0:1, 0:3] to 1 [4:5, 0:3]
// CHECK-NEXT: m2n.transfer copy from 0 [0:2, 3:6] to 2 [0:2, 0:3]
// CHECK-NEXT: m2n.transfer copy from 1 [0:2, 3:6] to 2 [2:4, 0:3]
// CHECK-NEXT: m2n.transfer copy from 2 [0:1, 3:6] to 2 [4:5, 0:3]
// CHECK-NEXT: m2n.transfer copy from 0 [0:2, 6:7] to 3 [0:2, 0:1]
// CHECK-NEXT: m2n.transfer copy from 1 [0:2, 6:7] to 3 [2:4, 0:1]
// CHECK-NEXT: m2n.transfer copy from 2 [0:1, 6:7] to 3 [4:5, 0:1]
// CHECK-NEXT: }
func.func @uneven_transpose(%c: !m2n.comm<4>, %x: !m2n.dist<5x7xi32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) -> !m2n.dist<5x7xi32, #m2n.layout<#m2n.mesh<[3], base = 1>, [shard<1>]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<5x7xi32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<5x7xi32, #m2n.layout<#m2n.mesh<[3], base = 1>, [shard<1>]>>
  return %0 : !m2n.dist<5x7xi32, #m2n.layout<#m2n.mesh<[3], base = 1>, [shard<1>]>>
}

// Partial -> Shard: each rank copies its own contribution, then reduces the
// other one into it.
// CHECK-LABEL: func.func @reduce_scatter
// CHECK: m2n.plan
// CHECK-NEXT: m2n.transfer copy from 0 [0:2, 0:2] to 0 [0:2, 0:2]
// CHECK-NEXT: m2n.transfer reduce<sum> from 1 [0:2, 0:2] to 0 [0:2, 0:2]
// CHECK-NEXT: m2n.transfer copy from 1 [2:4, 0:2] to 1 [0:2, 0:2]
// CHECK-NEXT: m2n.transfer reduce<sum> from 0 [2:4, 0:2] to 1 [0:2, 0:2]
// CHECK-NEXT: }
func.func @reduce_scatter(%c: !m2n.comm<2>, %x: !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>) -> !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> {
  %0 = m2n.reduce_scatter %x on %c mesh_axes = [0] scatter_dim = 0 : !m2n.comm<2>, !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>> -> !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
  return %0 : !m2n.dist<4x2xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
}

// An all-gather along the shard axis of a partial layout: contributions stay
// on their ranks, no reduction.
// CHECK-LABEL: func.func @keep_partial
// CHECK: m2n.plan
// CHECK-NEXT: m2n.transfer copy from 0 [0:2] to 0 [0:2]
// CHECK-NEXT: m2n.transfer copy from 1 [0:2] to 0 [2:4]
// CHECK-NEXT: m2n.transfer copy from 0 [0:2] to 1 [0:2]
// CHECK-NEXT: m2n.transfer copy from 1 [0:2] to 1 [2:4]
// CHECK-NEXT: m2n.transfer copy from 2 [0:2] to 2 [0:2]
// CHECK-NEXT: m2n.transfer copy from 3 [0:2] to 2 [2:4]
// CHECK-NEXT: m2n.transfer copy from 2 [0:2] to 3 [0:2]
// CHECK-NEXT: m2n.transfer copy from 3 [0:2] to 3 [2:4]
// CHECK-NEXT: }
func.func @keep_partial(%c: !m2n.comm<4>, %x: !m2n.dist<4xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<max>, shard<0>]>>) -> !m2n.dist<4xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<max>, replicate]>> {
  %0 = m2n.all_gather %x on %c mesh_axes = [1] : !m2n.comm<4>, !m2n.dist<4xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<max>, shard<0>]>> -> !m2n.dist<4xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<max>, replicate]>>
  return %0 : !m2n.dist<4xf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<max>, replicate]>>
}

// Shard(0) -> Shard(1) on the same two ranks.
// CHECK-LABEL: func.func @all_to_all
// CHECK: m2n.plan
// CHECK-NEXT: m2n.transfer copy from 0 [0:2, 0:2] to 0 [0:2, 0:2]
// CHECK-NEXT: m2n.transfer copy from 1 [0:2, 0:2] to 0 [2:4, 0:2]
// CHECK-NEXT: m2n.transfer copy from 0 [0:2, 2:4] to 1 [0:2, 0:2]
// CHECK-NEXT: m2n.transfer copy from 1 [0:2, 2:4] to 1 [2:4, 0:2]
// CHECK-NEXT: }
func.func @all_to_all(%c: !m2n.comm<2>, %x: !m2n.dist<4x4xi64, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>) -> !m2n.dist<4x4xi64, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>> {
  %0 = m2n.all_to_all %x on %c mesh_axes = [0] split_dim = 1 : !m2n.comm<2>, !m2n.dist<4x4xi64, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<4x4xi64, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
  return %0 : !m2n.dist<4x4xi64, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
}

// A 0-d partial<min> value reduced onto one rank of an explicit rank list.
// CHECK-LABEL: func.func @scalar
// CHECK: m2n.plan
// CHECK-NEXT: m2n.transfer copy from 1 [] to 1 []
// CHECK-NEXT: m2n.transfer reduce<min> from 0 [] to 1 []
// CHECK-NEXT: m2n.transfer reduce<min> from 2 [] to 1 []
// CHECK-NEXT: }
func.func @scalar(%c: !m2n.comm<3>, %x: !m2n.dist<f64, #m2n.layout<#m2n.mesh<[3]>, [partial<min>]>>) -> !m2n.dist<f64, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<3>, !m2n.dist<f64, #m2n.layout<#m2n.mesh<[3]>, [partial<min>]>> -> !m2n.dist<f64, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
  return %0 : !m2n.dist<f64, #m2n.layout<#m2n.mesh<[1], ranks = [1]>, [replicate]>>
}


// DTensor's [P, S(0), P] -> [S(1), S(0), P] on a [2, 1, 4] mesh: rank
// (a0, 0, a2) copies its own contribution to its column half and reduces the
// one of (1 - a0, 0, a2); the kept axis 2 is never mixed.
// CHECK-LABEL: func.func @reduce_one_partial_axis_keep_the_other
// CHECK: m2n.plan
// CHECK-NEXT: m2n.transfer copy from 0 [0:2, 0:2] to 0 [0:2, 0:2]
// CHECK-NEXT: m2n.transfer reduce<sum> from 4 [0:2, 0:2] to 0 [0:2, 0:2]
// CHECK-NEXT: m2n.transfer copy from 1 [0:2, 0:2] to 1 [0:2, 0:2]
// CHECK-NEXT: m2n.transfer reduce<sum> from 5 [0:2, 0:2] to 1 [0:2, 0:2]
// CHECK:      m2n.transfer copy from 7 [0:2, 2:4] to 7 [0:2, 0:2]
// CHECK-NEXT: m2n.transfer reduce<sum> from 3 [0:2, 2:4] to 7 [0:2, 0:2]
// CHECK-NEXT: }
func.func @reduce_one_partial_axis_keep_the_other(%c: !m2n.comm<8>, %x: !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2, 1, 4]>, [partial<sum>, shard<0>, partial<sum>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2, 1, 4]>, [partial<sum>, shard<0>, partial<sum>]>> -> !m2n.dist<2x4xf32, #m2n.layout<#m2n.mesh<[2, 1, 4]>, [shard<1>, shard<0>, partial<sum>]>>
  return
}
