// --m2n-import-sdy: Shardy's reshards, explicit collectives and MPMD
// transfers (in Shardy's exact syntax) become m2n.reshard between casts;
// the imported programs are checked by value (m2n-sim), compiled and run
// (m2n-run), and compile to an artifact.
//
// RUN: m2n-opt %s --m2n-import-sdy --mlir-print-local-scope | FileCheck %s
// RUN: m2n-opt %s --m2n-import-sdy -o %t.mlir
// RUN: m2n-sim %t.mlir | FileCheck %s --check-prefix=SIM
// RUN: m2n-run %t.mlir --seed 5 | FileCheck %s --check-prefix=EXEC
// RUN: m2n-opt %t.mlir "--m2n-pipeline=artifact=%t.m2n" -o /dev/null
// RUN: m2n-opt %m2n_src_root/examples/integration/mpmd_refit.mlir --m2n-import-sdy | m2n-run - | FileCheck %s --check-prefix=EXAMPLE

// SIM: m2n-sim: PASS: 20 plans
// EXEC: 20 passed, 0 failed
// EXAMPLE: 3 passed, 0 failed

sdy.mesh @mesh = <["x"=2, "y"=4]>
sdy.mesh @perm = <["a"=2, "b"=2], device_ids=[3, 1, 2, 0]>

// Devices row-major over (x, y): mesh axes in Shardy's order.
// CHECK-LABEL: func.func @transpose
// CHECK: m2n.reshard {{.*}}#m2n.mesh<[2, 4]>, [shard<0>, shard<1>]>> -> !m2n.dist<8x16xf32, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<1>, shard<0>]>>
func.func @transpose(%arg0: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) -> tensor<8x16xf32> {
  %0 = sdy.reshard %arg0 <@mesh, [{"y"}, {"x"}]> : tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// Sub-axes cut y into its major and minor halves (a refined [2, 2, 2]
// grid; each sharding cuts only where its own sub-axes need); then each
// collective is the reshard its out_sharding names.
// CHECK-LABEL: func.func @subaxes_and_collectives
// CHECK: #m2n.mesh<[2, 2, 2]>, [shard<1>, shard<0>, shard<1>]>> -> !m2n.dist<8x16xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, replicate]>>
// CHECK: #m2n.mesh<[2, 4]>, [shard<0>, replicate]>> -> !m2n.dist<8x16xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, shard<0>]>>
// CHECK: #m2n.mesh<[2, 4]>, [shard<0>, shard<0>]>> -> !m2n.dist<8x16xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, replicate]>>
// CHECK: #m2n.mesh<[2, 4]>, [shard<0>, replicate]>> -> !m2n.dist<8x16xbf16, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<1>, replicate]>>
// CHECK: #m2n.mesh<[2, 4]>, [shard<1>, replicate]>> -> !m2n.dist<8x16xbf16, #m2n.layout<#m2n.mesh<[2, 2, 2]>, [replicate, replicate, shard<1>]>>
func.func @subaxes_and_collectives(%arg0: tensor<8x16xbf16> {sdy.sharding = #sdy.sharding<@mesh, [{"y":(1)2}, {"x", "y":(2)2}]>}) -> tensor<8x16xbf16> {
  %0 = sdy.reshard %arg0 <@mesh, [{"x", ?}, {}]> : tensor<8x16xbf16>
  %1 = sdy.all_slice [{"y"}, {}] %0 out_sharding=<@mesh, [{"x", "y"}, {}]> : tensor<8x16xbf16>
  %2 = sdy.all_gather [{"y"}, {}] %1 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x16xbf16>
  %3 = sdy.all_to_all [{"x"}: 0->1] %2 out_sharding=<@mesh, [{}, {"x"}]> : tensor<8x16xbf16>
  %4 = sdy.collective_permute %3 out_sharding=<@mesh, [{}, {"y":(2)2}]> : tensor<8x16xbf16>
  return %4 : tensor<8x16xbf16>
}

// Sub-axes that do not nest across the two shardings ("x":(1)2 and
// "x":(1)3 of a 6): each layout on its own refined grid.
sdy.mesh @six = <["x"=6]>
// CHECK-LABEL: func.func @sub_axes_of_six
// CHECK: #m2n.mesh<[2, 3]>, [shard<0>, replicate]>> -> !m2n.dist<12xf32, #m2n.layout<#m2n.mesh<[3, 2]>, [shard<0>, replicate]>>
func.func @sub_axes_of_six(%arg0: tensor<12xf32> {sdy.sharding = #sdy.sharding<@six, [{"x":(1)2}]>}) -> tensor<12xf32> {
  %0 = sdy.reshard %arg0 <@six, [{"x":(1)3}]> : tensor<12xf32>
  return %0 : tensor<12xf32>
}

// A dimension split by y then x: m2n lists y first (its mesh axes apply in
// increasing order), with an explicit rank list keeping every device.
// CHECK-LABEL: func.func @minor_axis_first
// CHECK: #m2n.mesh<[2, 4]>, [replicate, replicate]>> -> !m2n.dist<16xi8, #m2n.layout<#m2n.mesh<[4, 2], ranks = [0, 4, 1, 5, 2, 6, 3, 7]>, [shard<0>, shard<0>]>>
func.func @minor_axis_first(%arg0: tensor<16xi8> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> tensor<16xi8> {
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"y", "x"}]> : tensor<16xi8>
  return %0 : tensor<16xi8>
}

// device_ids: mesh position p is device device_ids[p]; unreduced axes are
// partial contributions, all_reduce reduces them.
// CHECK-LABEL: func.func @unreduced
// CHECK: #m2n.mesh<[2, 2], ranks = [3, 1, 2, 0]>, [shard<1>, partial<sum>]>> -> !m2n.dist<4x6xf32, #m2n.layout<#m2n.mesh<[2, 2], ranks = [3, 1, 2, 0]>, [shard<1>, replicate]>>
func.func @unreduced(%arg0: tensor<4x6xf32> {sdy.sharding = #sdy.sharding<@perm, [{}, {"a"}], unreduced={"b"}>}) -> tensor<4x6xf32> {
  %0 = sdy.all_reduce {"b"} %arg0 out_sharding=<@perm, [{}, {"a"}]> : tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// max contributions: reduce_scatter over y keeps x unreduced, all_reduce
// finishes it.
// CHECK-LABEL: func.func @reduce_scatter_max
// CHECK: [partial<max>, partial<max>]>> -> !m2n.dist<8x6xi32, #m2n.layout<#m2n.mesh<[2, 4]>, [partial<max>, shard<0>]>>
// CHECK: [partial<max>, shard<0>]>> -> !m2n.dist<8x6xi32, #m2n.layout<#m2n.mesh<[2, 4]>, [replicate, shard<0>]>>
func.func @reduce_scatter_max(%arg0: tensor<8x6xi32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}], unreduced=max{"x", "y"}>}) -> tensor<8x6xi32> {
  %0 = sdy.reduce_scatter max [{"y"}, {}] %arg0 out_sharding=<@mesh, [{"y"}, {}], unreduced=max{"x"}> : tensor<8x6xi32>
  %1 = sdy.all_reduce max {"x"} %0 out_sharding=<@mesh, [{"y"}, {}]> : tensor<8x6xi32>
  return %1 : tensor<8x6xi32>
}

// An inline mesh, an uneven split (7 rows over 4: 2, 2, 2, 1, as Shardy
// owns them) and a producer's #sdy.sharding_per_value.
// CHECK-LABEL: func.func @inline_mesh_uneven
// CHECK: #m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<7x3xf64, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>
func.func @inline_mesh_uneven(%arg0: tensor<7x3xf64> {sdy.sharding = #sdy.sharding<mesh<["w"=4]>, [{"w"}, {}]>}) -> tensor<7x3xf64> {
  %0 = sdy.reshard %arg0 <mesh<["w"=4]>, [{}, {"w"}]> : tensor<7x3xf64>
  return %0 : tensor<7x3xf64>
}

// MPMD: the topology's meshes one after the other (train: devices 0-3,
// gen: 4-7, its device_ids reversed); the sharding's @mesh is Shardy's
// placeholder for the named mesh; no sharding means replicated.
// CHECK-LABEL: func.func @refit
// CHECK: %[[W:.*]] = builtin.unrealized_conversion_cast %arg0 : !mpmd.mesh_tensor<"train", {{.*}}> to !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>>
// CHECK: m2n.reshard %[[W]] {{.*}} -> !m2n.dist<64x32xbf16, #m2n.layout<#m2n.mesh<[4], ranks = [7, 6, 5, 4]>, [shard<1>]>>
// CHECK: builtin.unrealized_conversion_cast {{.*}} to !mpmd.mesh_tensor<"gen", tensor<64x32xbf16>, sharding=<@mesh, [{}, {"tp"}]>>
// CHECK: -> !m2n.dist<32xf32, #m2n.layout<#m2n.mesh<[4], ranks = [7, 6, 5, 4]>, [replicate]>>
// CHECK: -> !m2n.dist<32xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<0>]>>
func.func @refit(%w: !mpmd.mesh_tensor<"train", tensor<64x32xbf16>, sharding=<@mesh, [{"tp"}, {"dp"}]>>,
                 %b: !mpmd.mesh_tensor<"train", tensor<32xf32>, sharding=<@mesh, [{"tp", "dp"}]>>)
    -> (!mpmd.mesh_tensor<"gen", tensor<64x32xbf16>, sharding=<@mesh, [{}, {"tp"}]>>,
        !mpmd.mesh_tensor<"train", tensor<32xf32>, sharding=<@mesh, [{"tp", "dp"}]>>)
    attributes {"topology"=#mpmd.topology<<"train": <["tp"=2, "dp"=2]>>, <"gen": <["tp"=4], device_ids=[3, 2, 1, 0]>>>} {
  %0 = mpmd.transfer %w : (!mpmd.mesh_tensor<"train", tensor<64x32xbf16>, sharding=<@mesh, [{"tp"}, {"dp"}]>>) -> !mpmd.mesh_tensor<"gen", tensor<64x32xbf16>, sharding=<@mesh, [{}, {"tp"}]>>
  %1 = mpmd.transfer %b : (!mpmd.mesh_tensor<"train", tensor<32xf32>, sharding=<@mesh, [{"tp", "dp"}]>>) -> !mpmd.mesh_tensor<"gen", tensor<32xf32>>
  %2 = mpmd.transfer %1 : (!mpmd.mesh_tensor<"gen", tensor<32xf32>>) -> !mpmd.mesh_tensor<"train", tensor<32xf32>, sharding=<@mesh, [{"tp", "dp"}]>>
  return %0, %2 : !mpmd.mesh_tensor<"gen", tensor<64x32xbf16>, sharding=<@mesh, [{}, {"tp"}]>>, !mpmd.mesh_tensor<"train", tensor<32xf32>, sharding=<@mesh, [{"tp", "dp"}]>>
}

// Gathered, sliced or moved axes may be parts of a dimension's axes (as in
// Shardy's collective_parse_print): "x":(4)2 is the minor half of "x" on 8
// devices, so gathering it with "z" leaves "x":(1)4.
sdy.mesh @eight = <["x"=8, "y"=2, "z"=2]>
// CHECK-LABEL: func.func @gather_suffix_of_a_whole_axis
// CHECK: #m2n.mesh<[8, 2, 2]>, [shard<1>, shard<0>, shard<1>]>> -> !m2n.dist<4x32xf32, #m2n.layout<#m2n.mesh<[4, 2, 2, 2]>, [shard<1>, replicate, shard<0>, replicate]>>
func.func @gather_suffix_of_a_whole_axis(%arg0: tensor<4x32xf32> {sdy.sharding = #sdy.sharding<@eight, [{"y"}, {"x", "z"}]>}) -> tensor<4x32xf32> {
  %0 = sdy.all_gather [{}, {"x":(4)2, "z"}] %arg0 out_sharding=<@eight, [{"y"}, {"x":(1)4}]> : tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}
// CHECK-LABEL: func.func @gather_suffix_of_a_sub_axis
// CHECK: [shard<1>, replicate, shard<0>, shard<1>]>> -> !m2n.dist<4x32xf32, #m2n.layout<#m2n.mesh<[2, 4, 2, 2], ranks = [0, 16, 2, 18,{{.*}}]>, [shard<1>, replicate, shard<0>, shard<1>]>>
func.func @gather_suffix_of_a_sub_axis(%arg0: tensor<4x32xf32> {sdy.sharding = #sdy.sharding<@eight, [{"y"}, {"z", "x":(1)4}]>}) -> tensor<4x32xf32> {
  %0 = sdy.all_gather [{}, {"x":(2)2}] %arg0 out_sharding=<@eight, [{"y"}, {"z", "x":(1)2}]> : tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}
// Slicing by the rest of "x" makes it whole again.
// CHECK-LABEL: func.func @slice_completes_an_axis
// CHECK: #m2n.mesh<[4, 2, 2, 2]>, [shard<1>, replicate, shard<0>, replicate]>> -> !m2n.dist<4x32xf32, #m2n.layout<#m2n.mesh<[8, 2, 2]>, [shard<1>, shard<0>, replicate]>>
func.func @slice_completes_an_axis(%arg0: tensor<4x32xf32> {sdy.sharding = #sdy.sharding<@eight, [{"y"}, {"x":(1)4}]>}) -> tensor<4x32xf32> {
  %0 = sdy.all_slice [{}, {"x":(4)2}] %arg0 out_sharding=<@eight, [{"y"}, {"x"}]> : tensor<4x32xf32>
  return %0 : tensor<4x32xf32>
}
// CHECK-LABEL: func.func @all_to_all_of_a_suffix
// CHECK: #m2n.mesh<[8, 2, 2]>, [shard<0>, replicate, replicate]>> -> !m2n.dist<16x8xf32, #m2n.layout<#m2n.mesh<[4, 2, 2, 2]>, [shard<0>, shard<1>, replicate, replicate]>>
func.func @all_to_all_of_a_suffix(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@eight, [{"x"}, {}]>}) -> tensor<16x8xf32> {
  %0 = sdy.all_to_all [{"x":(4)2}: 0->1] %arg0 out_sharding=<@eight, [{"x":(1)4}, {"x":(4)2}]> : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
// A part that does not end the dimension is refused
// (import-sdy-invalid.mlir).

// A dimension split unevenly over two axes: Shardy splits 30 once into 4
// parts of ceil(30 / 4) = 8 (8, 8, 8, 6), the first listed axis outermost;
// m2n's chunk rule would round axis by axis (15 -> 8, 7): explicit
// boundaries say Shardy's split.
sdy.mesh @uneven2x2 = <["x"=2, "y"=2]>
// CHECK-LABEL: func.func @uneven_over_two_axes
// CHECK: m2n.reshard {{.*}} !m2n.dist<30xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0, [0, 8, 16, 24, 30]>, shard<0>]>> -> !m2n.dist<30xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, replicate]>>
func.func @uneven_over_two_axes(%arg0: tensor<30xf32> {sdy.sharding = #sdy.sharding<@uneven2x2, [{"x", "y"}]>}) -> tensor<30xf32> {
  %0 = sdy.reshard %arg0 <@uneven2x2, [{}]> : tensor<30xf32>
  return %0 : tensor<30xf32>
}
