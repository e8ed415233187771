// m2n's definitions of the Shardy subset it imports parse and print
// Shardy's own syntax (inputs as Shardy's lit tests write them), and the
// printed form parses back.
// RUN: m2n-opt %s | FileCheck %s
// RUN: m2n-opt %s | m2n-opt | FileCheck %s

// CHECK: sdy.mesh @mesh = <["x"=2, "y"=4]>
// CHECK: sdy.mesh @empty_mesh = <[]>
// CHECK: sdy.mesh @maximal_mesh = <[], device_ids=[3]>
// CHECK: sdy.mesh @two_axes = <["a"=2, "b"=1], device_ids=[1, 0]>
sdy.mesh @mesh = <["x"=2, "y"=4]>
sdy.mesh @empty_mesh = <[]>
sdy.mesh @maximal_mesh = <[], device_ids=[3]>
sdy.mesh @two_axes = <["a"=2, "b"=1], device_ids=[1, 0]>

// Dimension shardings: open, priorities, sub-axes; replicated and
// unreduced axes (sum not printed); inline meshes; per-value shardings.
// CHECK-LABEL: func.func @shardings
// CHECK-SAME: sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p0, {?}]>
// CHECK-SAME: sdy.sharding = #sdy.sharding<@mesh, [{"y":(1)2, "x", "y":(2)2}, {}p12], replicated={"y"}>
// CHECK-SAME: sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced=max{"x"}>
// CHECK-SAME: sdy.sharding = #sdy.sharding<mesh<["x"=2], device_ids=[1, 0]>, [{"x"}, {}], unreduced={"x"}>
// CHECK-SAME: test.per_value = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {"y"}]>]>
func.func @shardings(
    %a: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", ?}p0, {?}]>},
    %b: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y": (1)2, "x", "y":(2)2}, {}p12], replicated={"y"}>},
    %c: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced=max{"x"}>},
    %d: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=2], device_ids=[1, 0]>, [{"x"}, {}], unreduced=sum{"x"}>})
    attributes {test.per_value = #sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {"y"}]>]>} {
  return
}

// CHECK-LABEL: func.func @ops
// CHECK: sdy.reshard %{{.*}} <@mesh, [{"x", ?}, {?}]> : tensor<16x8xf32>
// CHECK: sdy.sharding_constraint %{{.*}} <@mesh, [{}, {}], unreduced={"x"}> : tensor<16x8xf32>
// CHECK: sdy.all_gather [{}, {"x"}] %{{.*}} out_sharding=<@mesh, [{"y"}, {}]> : tensor<16x8xf32>
// CHECK: sdy.all_slice [{"x"}, {}] %{{.*}} out_sharding=<@mesh, [{"y", "x"}, {}]> : tensor<16x8xf32>
// CHECK: sdy.all_to_all [{"x"}: 0->1] %{{.*}} out_sharding=<@mesh, [{}, {}]> : tensor<16x8xf32>
// CHECK: sdy.collective_permute %{{.*}} out_sharding=<@mesh, [{"y"}, {}]> : tensor<16x8xf32>
// CHECK: sdy.all_reduce {"y"} %{{.*}} out_sharding=<@mesh, [{}, {"x"}]> : tensor<16x8xf32>
// CHECK: sdy.all_reduce max {"y"} %{{.*}} out_sharding=<@mesh, [{}, {"x"}]> : tensor<16x8xf32>
// CHECK: sdy.reduce_scatter min [{"y"}, {}] %{{.*}} out_sharding=<@mesh, [{"y"}, {}]> : tensor<16x8xf32>
func.func @ops(%arg0: tensor<16x8xf32>) {
  %0 = sdy.reshard %arg0 <@mesh, [{"x", ?}, {?}]> : tensor<16x8xf32>
  %1 = sdy.sharding_constraint %0 <@mesh, [{}, {}], unreduced={"x"}> : tensor<16x8xf32>
  %2 = sdy.all_gather [{}, {"x"}] %1 out_sharding=<@mesh, [{"y"}, {}]> : tensor<16x8xf32>
  %3 = sdy.all_slice [{"x"}, {}] %2 out_sharding=<@mesh, [{"y", "x"}, {}]> : tensor<16x8xf32>
  %4 = sdy.all_to_all [{"x"}: 0->1] %3 out_sharding=<@mesh, [{}, {}]> : tensor<16x8xf32>
  %5 = sdy.collective_permute %4 out_sharding=<@mesh, [{"y"}, {}]> : tensor<16x8xf32>
  %6 = sdy.all_reduce {"y"} %5 out_sharding=<@mesh, [{}, {"x"}]> :  tensor<16x8xf32>
  %7 = sdy.all_reduce max {"y"} %6 out_sharding=<@mesh, [{}, {"x"}]> :  tensor<16x8xf32>
  %8 = sdy.reduce_scatter min [{"y"}, {}] %7 out_sharding=<@mesh, [{"y"}, {}]> : tensor<16x8xf32>
  return
}

// CHECK-LABEL: func.func @transfer
// CHECK-SAME: !mpmd.mesh_tensor<"mesh1", tensor<12x16xf32>, sharding=<@mesh, [{?}, {"y"}]>, memory_kind="pinned_host">
// CHECK-SAME: topology = #mpmd.topology<<"mesh1" : <["x"=2, "y"=4]>>, <"mesh2" : <["z"=3], device_ids=[2, 0, 1]>>>
// CHECK: mpmd.transfer %{{.*}} : (!mpmd.mesh_tensor<"mesh1", {{.*}}>) -> !mpmd.mesh_tensor<"mesh2", tensor<12x16xf32>, sharding=<@mesh, [{"z"}, {?}]>>
// CHECK: mpmd.unassign %{{.*}} : (!mpmd.mesh_tensor<"mesh2", {{.*}}>) -> tensor<12x16xf32>
// CHECK: mpmd.assign %{{.*}} : (tensor<12x16xf32>) -> !mpmd.mesh_tensor<"mesh1", tensor<12x16xf32>>
func.func @transfer(%arg0 : !mpmd.mesh_tensor<"mesh1", tensor<12x16xf32>, sharding=<@mesh, [{?}, {"y"}]>, memory_kind="pinned_host">)
    attributes {"topology"=#mpmd.topology<
      <"mesh1": <["x"=2, "y"=4]>>,
      <"mesh2": <["z"=3], device_ids=[2, 0, 1]>>
    >} {
  %0 = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"mesh1", tensor<12x16xf32>, sharding=<@mesh, [{?}, {"y"}]>, memory_kind="pinned_host">) -> !mpmd.mesh_tensor<"mesh2", tensor<12x16xf32>, sharding=<@mesh, [{"z"}, {?}]>>
  %1 = mpmd.unassign %0 : (!mpmd.mesh_tensor<"mesh2", tensor<12x16xf32>, sharding=<@mesh, [{"z"}, {?}]>>) -> tensor<12x16xf32>
  %2 = mpmd.assign %1 : (tensor<12x16xf32>) -> !mpmd.mesh_tensor<"mesh1", tensor<12x16xf32>>
  return
}

// CHECK-LABEL: func.func @fragments
// CHECK: mpmd.fragment<mesh="m1", origin=["f"(1), "g"], stage=0, in_shardings=[<@mesh, [{"x"}, {}]>]> (%{{.*}}) {call_counter = 3 : ui32} (%{{.*}}: tensor<4x8xf32>) {
// CHECK: mpmd.return %{{.*}} : tensor<4x8xf32>
// CHECK: } : (!mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{"x"}, {}]>>) -> !mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{"x"}, {}]>>
// CHECK: mpmd.fragment<mesh="m1", origin=[]> (%{{.*}}) (%{{.*}}: tensor<4x8xf32>) {
func.func @fragments(%arg0: !mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{"x"}, {}]>>)
    attributes {topology = #mpmd.topology<<"m1": <["x"=2]>>>} {
  %0 = mpmd.fragment<mesh="m1", origin=["f"(1), "g"], stage=0, in_shardings=[<@mesh, [{"x"}, {}]>]> (%arg0) {call_counter = 3 : ui32} (%a: tensor<4x8xf32>) {
    %c = arith.addf %a, %a : tensor<4x8xf32>
    mpmd.return %c : tensor<4x8xf32>
  } : (!mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{"x"}, {}]>>) -> !mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{"x"}, {}]>>
  %1 = mpmd.fragment<mesh="m1", origin=[]> (%0) (%b: tensor<4x8xf32>) {
    mpmd.return %b : tensor<4x8xf32>
  } : (!mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{"x"}, {}]>>) -> (!mpmd.mesh_tensor<"m1", tensor<4x8xf32>, sharding=<@mesh, [{"x"}, {}]>>)
  return
}

// Two parameters, sources ascending, every dimension used once.
// CHECK-LABEL: func.func @two_params
// CHECK: sdy.all_to_all [{"x"}: 0->1, {"y"}: 2->3] %{{.*}} out_sharding=<@mesh, [{}, {"x"}, {}, {"y"}]> : tensor<8x4x4x4xf32>
func.func @two_params(%arg0: tensor<8x4x4x4xf32>) -> tensor<8x4x4x4xf32> {
  %0 = sdy.all_to_all [{"x"}: 0->1, {"y"}: 2->3] %arg0 out_sharding=<@mesh, [{}, {"x"}, {}, {"y"}]> : tensor<8x4x4x4xf32>
  return %0 : tensor<8x4x4x4xf32>
}
