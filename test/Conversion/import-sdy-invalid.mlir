// --m2n-import-sdy: every Shardy construct without an m2n layout is a
// diagnostic naming it; so are malformed Shardy attributes.
// RUN: m2n-opt %s --split-input-file --m2n-import-sdy --verify-diagnostics

sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @unknown_axis(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  // expected-error@+1 {{axis "z" is not an axis of the mesh}}
  %0 = sdy.reshard %arg0 <@mesh, [{"z"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @sub_axis_does_not_divide(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  // expected-error@+1 {{sub-axis "y":(3)2 does not divide the axis of size 4}}
  %0 = sdy.reshard %arg0 <@mesh, [{"y":(3)2}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @axis_twice(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  // expected-error@+1 {{axis "x" is used twice in one sharding}}
  %0 = sdy.reshard %arg0 <@mesh, [{"x"}, {"x"}]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @rank_mismatch(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  // expected-error@+1 {{the sharding has 1 dimension shardings for a rank-2 tensor}}
  %0 = sdy.reshard %arg0 <@mesh, [{"x"}]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @unknown_operand_sharding(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{the sharding of the operand is not known: give it an sdy.sharding}}
  %0 = sdy.reshard %arg0 <@mesh, [{"x"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @not_a_mesh(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@nowhere, [{"x"}]>}) -> tensor<8xf32> {
  // expected-error@+1 {{names mesh @nowhere, which is not an sdy.mesh}}
  %0 = sdy.reshard %arg0 <@nowhere, [{}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @gather_not_minor(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}) -> tensor<8xf32> {
  // expected-error@+1 {{gathers axes that are not the minor-most of dimension 0}}
  %0 = sdy.all_gather [{"x"}] %arg0 out_sharding=<@mesh, [{"y"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// "y":(1)2 is the major half of "y": gathering it would leave a hole.
sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @gather_major_part(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}]>}) -> tensor<8xf32> {
  // expected-error@+1 {{gathers axes that are not the minor-most of dimension 0}}
  %0 = sdy.all_gather [{"y":(1)2}] %arg0 out_sharding=<@mesh, [{"x", "y":(2)2}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @out_sharding_mismatch(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8xf32> {
  // expected-error@+1 {{out_sharding does not match what the op's axes make of its operand's sharding (dimension 0)}}
  %0 = sdy.all_slice [{"y"}] %arg0 out_sharding=<@mesh, [{"y", "x"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @all_to_all_bad_dims(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}) -> tensor<8x8xf32> {
  // expected-error@+1 {{moves axes between dimensions 0 and 2 of a rank-2 tensor}}
  %0 = sdy.all_to_all [{"x"}: 0->2] %arg0 out_sharding=<@mesh, [{}, {"x"}]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @reduce_replicas(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> tensor<8xf32> {
  // expected-error@+1 {{reduces axis "x", which the operand's sharding does not have unreduced (m2n reduces contributions, not replicas)}}
  %0 = sdy.all_reduce {"x"} %arg0 out_sharding=<@mesh, [{}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @kind_mismatch(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}], unreduced={"x"}>}) -> tensor<8xf32> {
  // expected-error@+1 {{reduces with max, the operand's unreduced axes with sum}}
  %0 = sdy.all_reduce max {"x"} %arg0 out_sharding=<@mesh, [{}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// An inline mesh of a sharding is checked where it is written.
func.func @device_ids_count(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=2]>, [{"x"}]>}) -> tensor<8xf32> {
  // expected-error@+1 {{the mesh has 3 device ids for 2 devices}}
  %0 = sdy.reshard %arg0 <mesh<["x"=2], device_ids=[0, 1, 2]>, [{}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=4]>
func.func @dynamic(%arg0: tensor<?xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<?xf32> {
  // expected-error@+1 {{reshards of tensors with dynamic shapes cannot be imported}}
  %0 = sdy.reshard %arg0 <@mesh, [{}]> : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @no_topology(%arg0: !mpmd.mesh_tensor<"m1", tensor<8xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<8xf32>> {
  // expected-error@+1 {{needs the #mpmd.topology of its function (the attribute 'topology')}}
  %0 = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<8xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<8xf32>>
  return %0 : !mpmd.mesh_tensor<"m2", tensor<8xf32>>
}

// -----

func.func @mesh_not_in_topology(%arg0: !mpmd.mesh_tensor<"m1", tensor<8xf32>>) -> !mpmd.mesh_tensor<"m3", tensor<8xf32>>
    attributes {topology = #mpmd.topology<<"m1": <["x"=2]>>, <"m2": <["x"=2]>>>} {
  // expected-error@+1 {{mesh "m3" is not in the function's topology}}
  %0 = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<8xf32>>) -> !mpmd.mesh_tensor<"m3", tensor<8xf32>>
  return %0 : !mpmd.mesh_tensor<"m3", tensor<8xf32>>
}

// -----

func.func @tensor_changes(%arg0: !mpmd.mesh_tensor<"m1", tensor<8xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
    attributes {topology = #mpmd.topology<<"m1": <["x"=2]>>, <"m2": <["x"=2]>>>} {
  // expected-error@+1 {{moves a 'tensor<8xf32>' to a 'tensor<4xf32>'}}
  %0 = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<8xf32>>) -> !mpmd.mesh_tensor<"m2", tensor<4xf32>>
  return %0 : !mpmd.mesh_tensor<"m2", tensor<4xf32>>
}

// -----

// Partial contributions stay on the devices that hold them: a transfer
// cannot move unreduced values to another mesh (reduce them first).
func.func @unreduced_across_meshes(%arg0: !mpmd.mesh_tensor<"m1", tensor<8xf32>, sharding=<@mesh, [{}], unreduced={"x"}>>) -> !mpmd.mesh_tensor<"m2", tensor<8xf32>, sharding=<@mesh, [{}], unreduced={"x"}>>
    attributes {topology = #mpmd.topology<<"m1": <["x"=2]>>, <"m2": <["x"=2]>>>} {
  // expected-error@+1 {{destination has partial placements, so its mesh must be the source mesh}}
  %0 = mpmd.transfer %arg0 : (!mpmd.mesh_tensor<"m1", tensor<8xf32>, sharding=<@mesh, [{}], unreduced={"x"}>>) -> !mpmd.mesh_tensor<"m2", tensor<8xf32>, sharding=<@mesh, [{}], unreduced={"x"}>>
  return %0 : !mpmd.mesh_tensor<"m2", tensor<8xf32>, sharding=<@mesh, [{}], unreduced={"x"}>>
}

// -----

sdy.mesh @mesh = <["x"=6]>
func.func @sub_axes_not_nested(%arg0: tensor<12xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}]>}) -> tensor<12xf32> {
  // expected-error@+1 {{sub-axes of axis "x" overlap without nesting (cuts at 2 and 3)}}
  %0 = sdy.reshard %arg0 <@mesh, [{"x":(1)2}], replicated={"x":(1)3}> : tensor<12xf32>
  return %0 : tensor<12xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "z"=2]>
func.func @gather_drops_unreduced(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}], unreduced={"z"}>}) -> tensor<8xf32> {
  // expected-error@+1 {{out_sharding's unreduced axes are not the operand's, less those the op reduces}}
  %0 = sdy.all_gather [{"x"}] %arg0 out_sharding=<@mesh, [{}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
func.func @all_reduce_moves_axes(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}], unreduced={"z"}>}) -> tensor<8xf32> {
  // expected-error@+1 {{out_sharding does not match what the op's axes make of its operand's sharding (dimension 0)}}
  %0 = sdy.all_reduce {"z"} %arg0 out_sharding=<@mesh, [{"y"}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2]>
func.func @partial_with_reordered_split(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}], unreduced={"z"}>}) -> tensor<8xf32> {
  // expected-error@+1 {{keeps unreduced axes while it reorders the axes that split a dimension; m2n keeps partial contributions on the source's mesh order (reduce first, or keep the split order)}}
  %0 = sdy.reshard %arg0 <@mesh, [{"y", "x"}], unreduced={"z"}> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @operand_sharding_of_another_rank(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8x8xf32> {
  // expected-error@+1 {{needs one axis list per dimension}}
  %0 = sdy.all_slice [{}, {"x"}] %arg0 out_sharding=<@mesh, [{"x"}, {"x"}]> : tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

// Shardy's collective_permute rules (its collective_verification tests):
// the operand's mesh axes, and every dimension split over as many devices.
sdy.mesh @mesh1 = <["x"=2, "y"=4]>
sdy.mesh @mesh2 = <["x"=4, "y"=2]>
func.func @permute_to_other_axes(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh2, [{"x"}, {"y"}]>}) -> tensor<16x8xf32> {
  // expected-error@+1 {{result mesh has different axes than operand mesh}}
  %0 = sdy.collective_permute %arg0 out_sharding=<@mesh1, [{"y"}, {"x"}]> : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

sdy.mesh @mesh1 = <["x"=2, "y"=4]>
sdy.mesh @mesh2 = <["x"=2, "y"=4]>
func.func @permute_to_a_renamed_mesh(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh1, [{"x"}, {"y"}]>}) -> tensor<16x8xf32> {
  // expected-error@+1 {{result mesh name is different but same device ids as operand}}
  %0 = sdy.collective_permute %arg0 out_sharding=<@mesh2, [{"x"}, {"y"}]> : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2, "z"=2, "w"=4]>
func.func @permute_changes_a_dims_split(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {"z"}]>}) -> tensor<16x8xf32> {
  // expected-error@+1 {{sharded size of result doesn't match operand on dimension 1: 4 != 2}}
  %0 = sdy.collective_permute %arg0 out_sharding=<@mesh, [{"y", "x"}, {"w"}]> : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2, "z"=4, "w"=4]>
func.func @permute_changes_a_split_of_subaxes(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"z":(1)2, "w"}, {"x", "y"}]>}) -> tensor<16x8xf32> {
  // expected-error@+1 {{sharded size of result doesn't match operand on dimension 0: 4 != 8}}
  %0 = sdy.collective_permute %arg0 out_sharding=<@mesh, [{"w":(2)2, "z":(1)2}, {"y", "x"}]> : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=4, "z"=2]>
func.func @permute_moves_devices_between_dims(%arg0: tensor<16x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x", "y"}, {"z"}]>}) -> tensor<16x8xf32> {
  // expected-error@+1 {{sharded size of result doesn't match operand on dimension 0: 2 != 8}}
  %0 = sdy.collective_permute %arg0 out_sharding=<@mesh, [{"x"}, {"y", "z"}]> : tensor<16x8xf32>
  return %0 : tensor<16x8xf32>
}
