// RUN: m2n-opt %s --canonicalize --split-input-file --mlir-print-local-scope | FileCheck %s

// A reshard to the layout the value already has is the value itself.
// CHECK-LABEL: func.func @identity
// CHECK-SAME: (%{{.*}}: !m2n.comm<4>, %[[X:.*]]: !m2n.dist
// CHECK-NOT: m2n.reshard
// CHECK: return %[[X]]
func.func @identity(%c: !m2n.comm<4>, %x: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
  return %0 : !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
}

// -----

// Two reshards in a row become one from the first layout to the last.
// CHECK-LABEL: func.func @compose
// CHECK-SAME: (%[[C:.*]]: !m2n.comm<8>, %[[X:.*]]: !m2n.dist
// CHECK: %[[R:.*]] = m2n.reshard %[[X]] on %[[C]] : !m2n.comm<8>, !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<1>]>>
// CHECK-NOT: m2n.reshard
// CHECK: return %[[R]]
func.func @compose(%c: !m2n.comm<8>, %x: !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) -> !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<1>]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<8>, !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  %1 = m2n.reshard %0 on %c : !m2n.comm<8>, !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [replicate]>> -> !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<1>]>>
  return %1 : !m2n.dist<8x8xbf16, #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<1>]>>
}

// -----

// Composing back to the starting layout leaves nothing to do.
// CHECK-LABEL: func.func @round_trip
// CHECK-SAME: (%{{.*}}: !m2n.comm<4>, %[[X:.*]]: !m2n.dist
// CHECK-NOT: m2n.reshard
// CHECK: return %[[X]]
func.func @round_trip(%c: !m2n.comm<4>, %x: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  %1 = m2n.reshard %0 on %c : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
  return %1 : !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
}

// -----

// The intermediate layout is used elsewhere: both reshards stay.
// CHECK-LABEL: func.func @shared_intermediate
// CHECK: %[[A:.*]] = m2n.reshard %{{.*}} on
// CHECK: %[[B:.*]] = m2n.reshard %[[A]] on
// CHECK: return %[[A]], %[[B]]
func.func @shared_intermediate(%c: !m2n.comm<4>, %x: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) -> (!m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  %1 = m2n.reshard %0 on %c : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
  return %0, %1 : !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
}

// -----

// Reshards on different communicators are not composed.
// CHECK-LABEL: func.func @different_comms
// CHECK: m2n.reshard %{{.*}} on %[[C0:[^ ]*]]
// CHECK: m2n.reshard %{{.*}} on %[[C1:[^ ]*]]
func.func @different_comms(%c0: !m2n.comm<4>, %c1: !m2n.comm<4>, %x: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>> {
  %0 = m2n.reshard %x on %c0 : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  %1 = m2n.reshard %0 on %c1 : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
  return %1 : !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[2], base = 2>, [shard<0>]>>
}

// -----

// Unused reshards have no effect and disappear.
// CHECK-LABEL: func.func @dead
// CHECK-NOT: m2n.reshard
func.func @dead(%c: !m2n.comm<4>, %x: !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) {
  %0 = m2n.reshard %x on %c : !m2n.comm<4>, !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  return
}

// -----

// Casts are not composed (two roundings) nor folded away.
// CHECK-LABEL: func.func @casts_stay
// CHECK: m2n.reshard %{{.*}} {scale = 2.000000e+00 : f32} {{.*}}xbf16{{.*}} -> {{.*}}xf8E4M3FN
// CHECK: m2n.reshard {{.*}}xf8E4M3FN{{.*}} -> {{.*}}xf32
func.func @casts_stay(%c: !m2n.comm<4>, %x: !m2n.dist<8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>) -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> {
  %0 = m2n.reshard %x on %c {scale = 2.0 : f32} : !m2n.comm<4>, !m2n.dist<8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8xf8E4M3FN, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
  %1 = m2n.reshard %0 on %c : !m2n.comm<4>, !m2n.dist<8xf8E4M3FN, #m2n.layout<#m2n.mesh<[4]>, [replicate]>> -> !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
  return %1 : !m2n.dist<8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
}
