// --m2n-import-sdy on a program whose computation is StableHLO: m2n has no
// StableHLO dialect, so such programs come in generic form
// (`stablehlo-opt --mlir-print-op-generic`) and are read with
// --allow-unregistered-dialect. Every collective is imported, in every
// function; the computation between them stays as it is (its results
// carry their sharding, as Shardy writes it, #sdy.sharding_per_value).
//
// RUN: m2n-opt %s --allow-unregistered-dialect --m2n-import-sdy --mlir-print-local-scope | FileCheck %s
// RUN: not m2n-opt %s --m2n-import-sdy 2>&1 | FileCheck %s --check-prefix=UNREGISTERED

sdy.mesh @mesh = <["x"=2, "y"=2]>

// CHECK-LABEL: func.func @gather_then_compute
// CHECK: %[[R:.*]] = m2n.reshard %{{.*}} on %{{.*}} : !m2n.comm<4>, !m2n.dist<16x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, replicate]>> -> !m2n.dist<16x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, replicate]>>
// CHECK: %[[T:.*]] = builtin.unrealized_conversion_cast %[[R]] {{.*}} to tensor<16x8xf32>
// CHECK: %[[SUM:.*]] = "stablehlo.add"(%[[T]], %[[T]])
// CHECK: m2n.reshard
// CHECK-SAME: [replicate, replicate]>> -> !m2n.dist<16x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<1>, replicate]>>
// UNREGISTERED: error: operation being parsed with an unregistered dialect
func.func @gather_then_compute(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<16x8xf32> {
  %0 = sdy.all_gather [{"x"}, {}] %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<16x8xf32>
  %1 = "stablehlo.add"(%0, %0) {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {}]>]>} : (tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<16x8xf32>
  %2 = sdy.all_slice [{}, {"x"}] %1 out_sharding=<@mesh, [{}, {"x"}]> : tensor<16x8xf32>
  return %2 : tensor<16x8xf32>
}

// CHECK-LABEL: func.func @only_collectives
// CHECK: m2n.reshard
func.func @only_collectives(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<16x8xf32> {
  %0 = sdy.all_gather [{"x"}, {}] %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
