// What upstream's shard verifiers read or divide by before checking it
// (mlir-opt crashes on each of these inputs): m2n's reader refuses it first
// (m2n/Input/ReadInput.h), and the well-formed neighbours still verify.
// RUN: m2n-opt %s --split-input-file --verify-diagnostics
// RUN: not m2n-sim %S/Inputs/negative-split-axis.mlir 2>&1 | FileCheck %s --check-prefix=SIM
// SIM: error: 'shard.all_to_all' op split_axis -1 is not a dimension of the operand (rank 2)

shard.grid @grid(shape = 3)
func.func @split_axis_2_pow_31(%arg0: tensor<3x2xi8>) -> tensor<3x2xi8> {
  // expected-error@+1 {{'shard.all_to_all' op split_axis 2147483648 is not a dimension of the operand (rank 2)}}
  %0 = shard.all_to_all %arg0 on @grid grid_axes = [0] split_axis = 2147483648 concat_axis = 0 : tensor<3x2xi8> -> tensor<3x2xi8>
  return %0 : tensor<3x2xi8>
}

// -----

shard.grid @grid(shape = 3)
func.func @negative_split_axis(%arg0: tensor<3x2xi8>) -> tensor<3x2xi8> {
  // expected-error@+1 {{'shard.all_to_all' op split_axis -1 is not a dimension of the operand (rank 2)}}
  %0 = shard.all_to_all %arg0 on @grid grid_axes = [0] split_axis = -1 concat_axis = 0 : tensor<3x2xi8> -> tensor<3x2xi8>
  return %0 : tensor<3x2xi8>
}

// -----

shard.grid @grid(shape = 3)
func.func @concat_axis_past_the_rank(%arg0: tensor<3x2xi8>) -> tensor<3x2xi8> {
  // expected-error@+1 {{'shard.all_to_all' op concat_axis 5 is not a dimension of the operand (rank 2)}}
  %0 = shard.all_to_all %arg0 on @grid grid_axes = [0] split_axis = 0 concat_axis = 5 : tensor<3x2xi8> -> tensor<3x2xi8>
  return %0 : tensor<3x2xi8>
}

// -----

shard.grid @grid(shape = 3)
func.func @gather_axis(%arg0: tensor<3x2xi8>) -> tensor<9x2xi8> {
  // expected-error@+1 {{'shard.all_gather' op gather_axis 7 is not a dimension of the operand (rank 2)}}
  %0 = shard.all_gather %arg0 on @grid grid_axes = [0] gather_axis = 7 : tensor<3x2xi8> -> tensor<9x2xi8>
  return %0 : tensor<9x2xi8>
}

// -----

shard.grid @grid(shape = 3)
func.func @rooted_gather_axis(%arg0: tensor<3x2xi8>) -> tensor<9x2xi8> {
  // expected-error@+1 {{'shard.gather' op gather_axis 9 is not a dimension of the operand (rank 2)}}
  %0 = shard.gather %arg0 on @grid grid_axes = [0] gather_axis = 9 root = [0] : (tensor<3x2xi8>) -> tensor<9x2xi8>
  return %0 : tensor<9x2xi8>
}

// -----

shard.grid @grid(shape = 3)
func.func @slice_axis(%arg0: tensor<3x2xi8>) -> tensor<1x2xi8> {
  // expected-error@+1 {{'shard.all_slice' op slice_axis 7 is not a dimension of the operand (rank 2)}}
  %0 = shard.all_slice %arg0 on @grid grid_axes = [0] slice_axis = 7 : tensor<3x2xi8> -> tensor<1x2xi8>
  return %0 : tensor<1x2xi8>
}

// -----

shard.grid @grid(shape = 3)
func.func @scatter_axis(%arg0: tensor<3x2xf32>) -> tensor<1x2xf32> {
  // expected-error@+1 {{'shard.reduce_scatter' op scatter_axis 7 is not a dimension of the operand (rank 2)}}
  %0 = shard.reduce_scatter %arg0 on @grid grid_axes = [0] scatter_axis = 7 : tensor<3x2xf32> -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}

// -----

shard.grid @grid(shape = 3)
func.func @rooted_scatter_axis(%arg0: tensor<3x2xi8>) -> tensor<1x2xi8> {
  // expected-error@+1 {{'shard.scatter' op scatter_axis 9 is not a dimension of the operand (rank 2)}}
  %0 = shard.scatter %arg0 on @grid grid_axes = [0] scatter_axis = 9 root = [0] : (tensor<3x2xi8>) -> tensor<1x2xi8>
  return %0 : tensor<1x2xi8>
}

// -----

shard.grid @grid(shape = 0)
func.func @empty_device_group(%arg0: tensor<3x2xf32>) -> tensor<1x2xf32> {
  // expected-error@+1 {{'shard.reduce_scatter' op groups devices along axis 0 of grid @grid, which has size 0: a collective needs devices}}
  %0 = shard.reduce_scatter %arg0 on @grid grid_axes = [0] scatter_axis = 0 : tensor<3x2xf32> -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}

// -----

shard.grid @grid(shape = 4294967296x4294967296)
func.func @device_count_overflows(%arg0: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'shard.all_reduce' op groups more than 2^63 devices (grid axes [0, 1] of grid @grid)}}
  %0 = shard.all_reduce %arg0 on @grid grid_axes = [0, 1] : tensor<3x2xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// The op verifier's own diagnostics come first where it checks (ranks).
shard.grid @grid(shape = 3)
func.func @ranks_differ(%arg0: tensor<3x2xi8>) -> tensor<3xi8> {
  // expected-error@+1 {{'shard.all_to_all' op result type has different rank than operands}}
  %0 = shard.all_to_all %arg0 on @grid grid_axes = [0] split_axis = 7 concat_axis = 0 : tensor<3x2xi8> -> tensor<3xi8>
  return %0 : tensor<3xi8>
}

// -----

// The neighbours of the refused inputs verify: the last dimension, a grid
// axis of size 0 that no collective groups by, an unknown grid left to the
// verifier.
shard.grid @grid(shape = 3x0)
func.func @valid(%arg0: tensor<3x2xi8>) -> tensor<3x2xi8> {
  %0 = shard.all_to_all %arg0 on @grid grid_axes = [0] split_axis = 1 concat_axis = 1 : tensor<3x2xi8> -> tensor<3x2xi8>
  return %0 : tensor<3x2xi8>
}

// -----

// A dynamic axis makes the group's size dynamic: upstream divides and
// multiplies nothing then, so the sizes after it are not refused.
shard.grid @grid(shape = ?x1099511627776x1099511627776)
func.func @dynamic_group(%arg0: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = shard.all_reduce %arg0 on @grid grid_axes = [0, 1, 2] : tensor<3x2xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @unknown_grid(%arg0: tensor<3x2xi8>) -> tensor<3x2xi8> {
  // expected-error@+1 {{Undefined required grid symbol "nowhere".}}
  %0 = shard.all_to_all %arg0 on @nowhere grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<3x2xi8> -> tensor<3x2xi8>
  return %0 : tensor<3x2xi8>
}
