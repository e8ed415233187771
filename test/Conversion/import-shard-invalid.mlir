// --m2n-import-shard names every construct it cannot map.
// RUN: m2n-opt %s --m2n-import-shard --split-input-file --verify-diagnostics

shard.grid @grid(shape = 2)
func.func @halo(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{halo sizes have no m2n layout (a reshard moves owned elements only)}}
  %s0 = shard.sharding @grid split_axes = [[0]] halo_sizes = [1, 1] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8xf32>
  %s1 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// expected-error@+1 {{grid axis 0 is dynamic; m2n needs static grid shapes}}
shard.grid @grid(shape = ?)
func.func @dynamic_grid(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8xf32>
  %s1 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

shard.grid @grid(shape = 3)
func.func @offsets_not_from_zero(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{sharded_dims_offsets of dimension 0 (1, 3, 5, 8) do not start at 0}}
  %s0 = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [1, 3, 5, 8] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8xf32>
  %s1 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @offsets_short_of_the_extent(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error@+1 {{sharded_dims_offsets of dimension 1 (0, 3, 7) do not end at its extent 8}}
  %s0 = shard.sharding @grid split_axes = [[], [0]] sharded_dims_offsets = [0, 3, 7] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<4x8xf32>
  %s1 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @uneven_without_offsets(%arg0: tensor<7xf32>) -> tensor<7xf32> {
  // expected-error@+1 {{splits dimension 0 of extent 7 into 2 uneven parts without sharded_dims_offsets (upstream requires an even split)}}
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<7xf32>
  %s1 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<7xf32>
  return %1 : tensor<7xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @dynamic_shape(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<?xf32>
  %s1 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  // expected-error@+1 {{reshards of tensors with dynamic shapes cannot be imported}}
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<?xf32>
  return %1 : tensor<?xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @product(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{reduction 'product' has no m2n form (sum, max and min do)}}
  %1 = shard.all_reduce %arg0 on @grid grid_axes = [0] reduction = product : tensor<4xf32> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @memref(%arg0: memref<4xf32>) -> memref<4xf32> {
  // expected-error@+1 {{collectives on memrefs or on tensors with dynamic shapes cannot be imported}}
  %1 = shard.all_reduce %arg0 on @grid grid_axes = [0] : memref<4xf32> -> memref<4xf32>
  return %1 : memref<4xf32>
}

// -----

shard.grid @grid(shape = 3)
func.func @permuting_all_to_all(%arg0: tensor<3x2xi8>) -> tensor<3x2xi8> {
  // expected-error@+1 {{an all_to_all that splits and concatenates the same axis permutes pieces of one dimension; it has no m2n layout}}
  %1 = shard.all_to_all %arg0 on @grid grid_axes = [0] split_axis = 0 concat_axis = 0 : tensor<3x2xi8> -> tensor<3x2xi8>
  return %1 : tensor<3x2xi8>
}

// -----

shard.grid @grid(shape = 4)
func.func @dynamic_root(%arg0: tensor<4xf32>, %r: index) -> tensor<4xf32> {
  // expected-error@+1 {{a dynamic root cannot be imported (plans are computed at compile time)}}
  %1 = shard.broadcast %arg0 on @grid grid_axes = [0] root = [%r] : (tensor<4xf32>, index) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// Upstream's ops.mlir @all_reduce and @reduce_scatter_static_dimensions:
// the result in a wider type became an f32 m2n op cast to f64.
shard.grid @grid(shape = 4)
func.func @all_reduce_wider(%arg0: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error@+1 {{converts 'f32' to 'f64'; m2n moves and reduces in the tensor's own element type}}
  %1 = shard.all_reduce %arg0 on @grid grid_axes = [0] : tensor<4xf32> -> tensor<4xf64>
  return %1 : tensor<4xf64>
}

// -----

shard.grid @grid(shape = 4)
func.func @reduce_scatter_wider(%arg0: tensor<4xf32>) -> tensor<1xf64> {
  // expected-error@+1 {{converts 'f32' to 'f64'; m2n moves and reduces in the tensor's own element type}}
  %1 = shard.reduce_scatter %arg0 on @grid grid_axes = [0] scatter_axis = 0 : tensor<4xf32> -> tensor<1xf64>
  return %1 : tensor<1xf64>
}

// -----

shard.grid @grid(shape = 4)
func.func @accumulate_wider(%arg0: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error@+1 {{converts 'f32' to 'f64'; m2n moves and reduces in the tensor's own element type}}
  %1 = shard.reduce %arg0 on @grid grid_axes = [0] root = [0] : (tensor<4xf32>) -> tensor<4xf64>
  return %1 : tensor<4xf64>
}

// -----

shard.grid @grid(shape = 4)
func.func @shift_without_rotate(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{a shift without rotate leaves devices without a source undefined; only rotating shifts are imported}}
  %1 = shard.shift %arg0 on @grid grid_axes = [0] shift_axis = 0 offset = 1 : tensor<4xf32> -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @send(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{point-to-point send/recv pairs (two ops of the program) are not imported yet}}
  %1 = shard.send %arg0 on @grid grid_axes = [0] destination = [1] : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// expected-error@+1 {{grid axis 0 has 0 devices; an m2n mesh axis has at least one}}
shard.grid @grid(shape = 0)
func.func @empty_grid(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8xf32>
  %s1 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// expected-error@+1 {{grid @g has more than 2147483648 devices, the most one communicator holds}}
shard.grid @g(shape = 2x4294967296)
func.func @huge_grid(%x: tensor<7xi16>) -> tensor<7xi16> {
  %0 = shard.broadcast %x on @g grid_axes = [1, 0] root = [3, 1] : (tensor<7xi16>) -> tensor<7xi16>
  return %0 : tensor<7xi16>
}

// -----

// A halo reached through a chain of annotations (upstream's partition.mlir
// @test_shard_update_halo) is a resharding point too: refused by name, not
// skipped.
shard.grid @grid_1d_4(shape = 4)
func.func @halo_chain(%arg0: tensor<1200x1200xi64>) -> tensor<1200x1200xi64> {
  %sharding = shard.sharding @grid_1d_4 split_axes = [[0]] : !shard.sharding
  %sharded = shard.shard %arg0 to %sharding : tensor<1200x1200xi64>
  // expected-error@+1 {{halo sizes have no m2n layout (a reshard moves owned elements only)}}
  %sharding_0 = shard.sharding @grid_1d_4 split_axes = [[0]] halo_sizes = [2, 2] : !shard.sharding
  %sharded_1 = shard.shard %sharded to %sharding_0 : tensor<1200x1200xi64>
  %sharded_3 = shard.shard %sharded_1 to %sharding_0 annotate_for_users : tensor<1200x1200xi64>
  return %sharded_3 : tensor<1200x1200xi64>
}

// -----

shard.grid @grid(shape = 2)
func.func @too_many_offsets(%arg0: tensor<6xf32>) -> tensor<6xf32> {
  // expected-error@+1 {{sharded_dims_offsets has too many entries: 3 (one per shard of each split dimension, and its end), 4 given}}
  %s0 = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 2, 6, 6] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<6xf32>
  %s1 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<6xf32>
  return %1 : tensor<6xf32>
}

// -----

// A 2 x 3 grid splitting one dimension has 6 shards: 7 offsets (upstream's
// verifier counts 2 + 3 + 1 and lets this 6 through).
shard.grid @grid(shape = 2x3)
func.func @offsets_per_shard(%arg0: tensor<12xf32>) -> tensor<12xf32> {
  // expected-error@+1 {{sharded_dims_offsets has too few entries: dimension 0 needs 7 (one per shard of the grid axes splitting it, and the end)}}
  %s0 = shard.sharding @grid split_axes = [[0, 1]] sharded_dims_offsets = [0, 2, 4, 6, 8, 12] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<12xf32>
  %s1 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<12xf32>
  return %1 : tensor<12xf32>
}
