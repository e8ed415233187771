// --m2n-import-shard: each resharding point of the upstream `shard` dialect
// (an annotation of an annotation's result with another sharding, as
// upstream's shard-partition sees them) becomes an m2n.reshard between casts; the imported program is
// planned and checked by value (m2n-sim), compiled and run (m2n-run), and
// compiles to an artifact. Upstream's partitioner fails on the transposed
// split (examples/integration/shard_transpose.mlir).
//
// RUN: m2n-opt %s --m2n-import-shard --mlir-print-local-scope | FileCheck %s
// RUN: m2n-opt %s --m2n-import-shard -o %t.mlir
// RUN: m2n-sim %t.mlir | FileCheck %s --check-prefix=SIM
// RUN: m2n-run %t.mlir --seed 5 | FileCheck %s --check-prefix=EXEC
// RUN: m2n-opt %t.mlir "--m2n-pipeline=artifact=%t.m2n" -o /dev/null
// RUN: m2n-opt %m2n_src_root/examples/integration/shard_transpose.mlir --m2n-import-shard | m2n-sim - | FileCheck %s --check-prefix=EXAMPLE
// RUN: not mlir-opt %m2n_src_root/examples/integration/shard_transpose.mlir "--pass-pipeline=builtin.module(func.func(shard-partition))" 2>&1 | FileCheck %s --check-prefix=UPSTREAM

// SIM: m2n-sim: PASS: 27 plans
// EXEC: 27 passed, 0 failed
// EXAMPLE: m2n-sim: PASS: 1 plan
// UPSTREAM: error: Dimension size mismatch

shard.grid @grid4(shape = 4)
shard.grid @grid2x2(shape = 2x2)
shard.grid @grid2x3(shape = 2x3)
shard.grid @grid2(shape = 2)
shard.grid @grid3(shape = 3)

// What upstream lowers too: the split moves from dim 0 to dim 1.
// CHECK-LABEL: func.func @move_split
// CHECK: %[[COMM:.*]] = builtin.unrealized_conversion_cast to !m2n.comm<4>
// CHECK: %[[IN:.*]] = builtin.unrealized_conversion_cast %arg0 : tensor<8x8xf32> to !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
// CHECK: %[[MOVED:.*]] = m2n.reshard %[[IN]] on %[[COMM]] : !m2n.comm<4>, !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<8x8xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>
// CHECK: %[[OUT:.*]] = builtin.unrealized_conversion_cast %[[MOVED]] : {{.*}} to tensor<8x8xf32>
// CHECK: return %[[OUT]]
// CHECK-NOT: shard.shard
func.func @move_split(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %s0 = shard.sharding @grid4 split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8x8xf32>
  %s1 = shard.sharding @grid4 split_axes = [[], [0]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8x8xf32>
  return %1 : tensor<8x8xf32>
}

// The split axes swap: grid axis 1 splits dim 0 in the result, so the m2n
// mesh lists grid axis 1 first and keeps each device's number.
// CHECK-LABEL: func.func @transpose_split
// CHECK: m2n.reshard {{.*}} -> !m2n.dist<8x6xf32, #m2n.layout<#m2n.mesh<[2, 2], ranks = [0, 2, 1, 3]>, [shard<0>, shard<1>]>>
func.func @transpose_split(%arg0: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %s0 = shard.sharding @grid2x2 split_axes = [[0], [1]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8x6xf32>
  %s1 = shard.sharding @grid2x2 split_axes = [[1], [0]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8x6xf32>
  return %1 : tensor<8x6xf32>
}

// Two grid axes split one dimension, in either order (the first listed is
// the outermost, as upstream linearizes an in-group index).
// CHECK-LABEL: func.func @multi_axis
// CHECK: m2n.reshard {{.*}} : !m2n.comm<6>, !m2n.dist<12x5xbf16, #m2n.layout<#m2n.mesh<[2, 3]>, [shard<0>, shard<0>]>> -> !m2n.dist<12x5xbf16, #m2n.layout<#m2n.mesh<[3, 2], ranks = [0, 3, 1, 4, 2, 5]>, [shard<0>, shard<0>]>>
func.func @multi_axis(%arg0: tensor<12x5xbf16>) -> tensor<12x5xbf16> {
  %s0 = shard.sharding @grid2x3 split_axes = [[0, 1]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<12x5xbf16>
  %s1 = shard.sharding @grid2x3 split_axes = [[1, 0]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<12x5xbf16>
  return %1 : tensor<12x5xbf16>
}

// Uneven shards through sharded_dims_offsets (torch.chunk's boundaries).
// CHECK-LABEL: func.func @uneven
// CHECK: m2n.reshard {{.*}} !m2n.dist<7x4xi32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<7x4xi32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
func.func @uneven(%arg0: tensor<7x4xi32>) -> tensor<7x4xi32> {
  %s0 = shard.sharding @grid2 split_axes = [[0]] sharded_dims_offsets = [0, 4, 7] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<7x4xi32>
  %s1 = shard.sharding @grid2 split_axes = [[], [0]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<7x4xi32>
  return %1 : tensor<7x4xi32>
}

// An uneven all-gather: 10 rows over 4 devices (3, 3, 3, 1) to every device.
// CHECK-LABEL: func.func @gather_uneven
// CHECK: m2n.reshard {{.*}} !m2n.dist<10x3xf64, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>> -> !m2n.dist<10x3xf64, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
func.func @gather_uneven(%arg0: tensor<10x3xf64>) -> tensor<10x3xf64> {
  %s0 = shard.sharding @grid4 split_axes = [[0]] sharded_dims_offsets = [0, 3, 6, 9, 10] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<10x3xf64>
  %s1 = shard.sharding @grid4 split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<10x3xf64>
  return %1 : tensor<10x3xf64>
}

// From a grid of 2 devices to one of 4 (both numbered from 0): M to N.
// CHECK-LABEL: func.func @two_grids
// CHECK: m2n.reshard {{.*}} : !m2n.comm<4>, !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>> -> !m2n.dist<16xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
func.func @two_grids(%arg0: tensor<16xf32>) -> tensor<16xf32> {
  %s0 = shard.sharding @grid2 split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<16xf32>
  %s1 = shard.sharding @grid4 split_axes = [[0]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<16xf32>
  return %1 : tensor<16xf32>
}

// Any sharded_dims_offsets upstream accepts: the dimension's explicit
// boundaries. Upstream's example of 7 rows over 3 devices at [0, 2, 5, 7]
// to torch.chunk's rows (spelled out: upstream needs offsets for any uneven
// split).
// CHECK-LABEL: func.func @arbitrary_offsets
// CHECK: m2n.reshard {{.*}} !m2n.dist<7x5xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0, [0, 2, 5, 7]>]>> -> !m2n.dist<7x5xf32, #m2n.layout<#m2n.mesh<[3]>, [shard<0>]>>
func.func @arbitrary_offsets(%arg0: tensor<7x5xf32>) -> tensor<7x5xf32> {
  %s0 = shard.sharding @grid3 split_axes = [[0]] sharded_dims_offsets = [0, 2, 5, 7] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<7x5xf32>
  %s1 = shard.sharding @grid3 split_axes = [[0]] sharded_dims_offsets = [0, 3, 6, 7] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<7x5xf32>
  return %1 : tensor<7x5xf32>
}

// Upstream's documented example (shards of 2, 3, 4 and 5 columns) to an
// uneven split of the rows, both sides at explicit offsets.
// CHECK-LABEL: func.func @offsets_both_sides
// CHECK: m2n.reshard {{.*}} !m2n.dist<4x14xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<1, [0, 2, 5, 9, 14]>]>> -> !m2n.dist<4x14xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0, [0, 0, 1, 3, 4]>]>>
func.func @offsets_both_sides(%arg0: tensor<4x14xf32>) -> tensor<4x14xf32> {
  %s0 = shard.sharding @grid4 split_axes = [[], [0]] sharded_dims_offsets = [0, 2, 5, 9, 14] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<4x14xf32>
  %s1 = shard.sharding @grid4 split_axes = [[0]] sharded_dims_offsets = [0, 0, 1, 3, 4] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<4x14xf32>
  return %1 : tensor<4x14xf32>
}

// An uneven split of one dimension over two grid axes (the first listed
// outermost), and offsets on two dimensions at once. A 2 x 3 grid has 6
// shards: 7 offsets.
// CHECK-LABEL: func.func @offsets_over_two_axes
// CHECK: m2n.reshard {{.*}} !m2n.dist<6x5xi16, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0, [0, 2, 4, 6, 6]>, shard<0>]>> -> !m2n.dist<6x5xi16, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0, [0, 1, 6]>, shard<1, [0, 4, 5]>]>>
func.func @offsets_over_two_axes(%arg0: tensor<6x5xi16>) -> tensor<6x5xi16> {
  %s0 = shard.sharding @grid2x2 split_axes = [[0, 1]] sharded_dims_offsets = [0, 2, 4, 6, 6] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<6x5xi16>
  %s1 = shard.sharding @grid2x2 split_axes = [[0], [1]] sharded_dims_offsets = [0, 1, 6, 0, 4, 5] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<6x5xi16>
  return %1 : tensor<6x5xi16>
}

// CHECK-LABEL: func.func @offsets_over_six_shards
// CHECK: m2n.reshard {{.*}} !m2n.dist<12xf32, #m2n.layout<#m2n.mesh<[2, 3]>, [shard<0, [0, 1, 2, 4, 4, 9, 12]>, shard<0>]>> -> !m2n.dist<12xf32, #m2n.layout<#m2n.mesh<[2, 3]>, [replicate, replicate]>>
func.func @offsets_over_six_shards(%arg0: tensor<12xf32>) -> tensor<12xf32> {
  %s0 = shard.sharding @grid2x3 split_axes = [[0, 1]] sharded_dims_offsets = [0, 1, 2, 4, 4, 9, 12] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<12xf32>
  %s1 = shard.sharding @grid2x3 split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<12xf32>
  return %1 : tensor<12xf32>
}

// The same sharding on both sides moves nothing: left as it is.
// CHECK-LABEL: func.func @unchanged
// CHECK-NOT: m2n.reshard
// CHECK: shard.shard %{{.*}} annotate_for_users
func.func @unchanged(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %s0 = shard.sharding @grid4 split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8xf32>
  %1 = shard.shard %0 to %s0 annotate_for_users : tensor<8xf32>
  return %1 : tensor<8xf32>
}

// The collectives of partitioned code act on each device's local tensor,
// in groups along grid_axes; the devices along the other grid axes are
// independent groups. Each becomes one m2n collective on a tensor with a
// leading dimension per other grid axis, sharded by it (a device's local
// part has the local tensor's bytes).
// CHECK-LABEL: func.func @all_gather
// CHECK: %[[IN:.*]] = builtin.unrealized_conversion_cast %arg0 : tensor<2x2xi8> to !m2n.dist<2x2x4xi8, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<2>]>>
// CHECK: m2n.all_gather %[[IN]] on %{{.*}} mesh_axes = [1] : {{.*}} -> !m2n.dist<2x2x4xi8, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, replicate]>>
// CHECK: builtin.unrealized_conversion_cast %{{.*}} to tensor<2x4xi8>
func.func @all_gather(%arg0: tensor<2x2xi8>) -> tensor<2x4xi8> {
  %1 = shard.all_gather %arg0 on @grid2x2 grid_axes = [1] gather_axis = 1 : tensor<2x2xi8> -> tensor<2x4xi8>
  return %1 : tensor<2x4xi8>
}

// CHECK-LABEL: func.func @all_reduce_max
// CHECK: m2n.all_reduce %{{.*}} mesh_axes = [1] : !m2n.comm<4>, !m2n.dist<2x5xf32, #m2n.layout<#m2n.mesh<[2, 2], ranks = [0, 2, 1, 3]>, [shard<0>, partial<max>]>>
func.func @all_reduce_max(%arg0: tensor<5xf32>) -> tensor<5xf32> {
  %1 = shard.all_reduce %arg0 on @grid2x2 grid_axes = [0] reduction = max : tensor<5xf32> -> tensor<5xf32>
  return %1 : tensor<5xf32>
}

// CHECK-LABEL: func.func @all_reduce_whole_grid
// CHECK: m2n.all_reduce %{{.*}} mesh_axes = [0, 1] : !m2n.comm<6>, !m2n.dist<3x3xi32, #m2n.layout<#m2n.mesh<[3, 2], ranks = [0, 3, 1, 4, 2, 5]>, [partial<sum>, partial<sum>]>>
func.func @all_reduce_whole_grid(%arg0: tensor<3x3xi32>) -> tensor<3x3xi32> {
  %1 = shard.all_reduce %arg0 on @grid2x3 grid_axes = [1, 0] : tensor<3x3xi32> -> tensor<3x3xi32>
  return %1 : tensor<3x3xi32>
}

// CHECK-LABEL: func.func @all_gather_two_axes
// CHECK: m2n.all_gather %{{.*}} mesh_axes = [0, 1] : !m2n.comm<4>, !m2n.dist<12xf32, #m2n.layout<#m2n.mesh<[2, 2], ranks = [0, 2, 1, 3]>, [shard<0>, shard<0>]>>
func.func @all_gather_two_axes(%arg0: tensor<3xf32>) -> tensor<12xf32> {
  %1 = shard.all_gather %arg0 on @grid2x2 grid_axes = [1, 0] gather_axis = 0 : tensor<3xf32> -> tensor<12xf32>
  return %1 : tensor<12xf32>
}

// CHECK-LABEL: func.func @reduce_scatter_max
// CHECK: m2n.reduce_scatter %{{.*}} mesh_axes = [1] scatter_dim = 1 : !m2n.comm<4>, !m2n.dist<2x2x2xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, partial<max>]>> -> !m2n.dist<2x2x2xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<1>]>>
func.func @reduce_scatter_max(%arg0: tensor<2x2xf32>) -> tensor<1x2xf32> {
  %1 = shard.reduce_scatter %arg0 on @grid2x2 grid_axes = [1] reduction = max scatter_axis = 0 : tensor<2x2xf32> -> tensor<1x2xf32>
  return %1 : tensor<1x2xf32>
}

// CHECK-LABEL: func.func @all_to_all
// CHECK: m2n.all_to_all %{{.*}} mesh_axes = [0] split_dim = 0 : !m2n.comm<3>, !m2n.dist<6x6xi16, #m2n.layout<#m2n.mesh<[3]>, [shard<1>]>> -> !m2n.dist<6x6xi16, #m2n.layout<#m2n.mesh<[3]>, [shard<0>]>>
func.func @all_to_all(%arg0: tensor<6x2xi16>) -> tensor<2x6xi16> {
  %1 = shard.all_to_all %arg0 on @grid3 grid_axes = [0] split_axis = 0 concat_axis = 1 : tensor<6x2xi16> -> tensor<2x6xi16>
  return %1 : tensor<2x6xi16>
}

// all_slice keeps each device's chunk of a group-replicated tensor: a
// reshard from replicate to shard, which m2n plans as local copies.
// CHECK-LABEL: func.func @all_slice
// CHECK: m2n.reshard %{{.*}} : !m2n.comm<4>, !m2n.dist<2x3x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, replicate]>> -> !m2n.dist<2x3x8xf32, #m2n.layout<#m2n.mesh<[2, 2]>, [shard<0>, shard<2>]>>
func.func @all_slice(%arg0: tensor<3x8xf32>) -> tensor<3x4xf32> {
  %1 = shard.all_slice %arg0 on @grid2x2 grid_axes = [1] slice_axis = 1 : tensor<3x8xf32> -> tensor<3x4xf32>
  return %1 : tensor<3x4xf32>
}

// Rooted collectives: one side is the mesh of each group's root device (its
// in-group index over grid_axes, in their order), the other every device of
// the group; what upstream leaves undefined (non-root results) m2n leaves
// alone.
shard.grid @grid2x4(shape = 2x4)
// CHECK-LABEL: func.func @broadcast
// CHECK: m2n.reshard {{.*}}!m2n.dist<2x3x5xf32, #m2n.layout<#m2n.mesh<[2], ranks = [2, 6]>, [shard<0>]>> -> !m2n.dist<2x3x5xf32, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, replicate]>>
func.func @broadcast(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %0 = shard.broadcast %x on @grid2x4 grid_axes = [1] root = [2] : (tensor<3x5xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
// CHECK-LABEL: func.func @broadcast_whole_grid
// CHECK: m2n.reshard {{.*}}!m2n.dist<7xi16, #m2n.layout<#m2n.mesh<[1], ranks = [7]>, [replicate]>> -> !m2n.dist<7xi16, #m2n.layout<#m2n.mesh<[4, 2], ranks = [0, 4, 1, 5, 2, 6, 3, 7]>, [replicate, replicate]>>
func.func @broadcast_whole_grid(%x: tensor<7xi16>) -> tensor<7xi16> {
  %0 = shard.broadcast %x on @grid2x4 grid_axes = [1, 0] root = [3, 1] : (tensor<7xi16>) -> tensor<7xi16>
  return %0 : tensor<7xi16>
}
// CHECK-LABEL: func.func @gather
// CHECK: m2n.reshard {{.*}}!m2n.dist<2x2x12xf32, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, shard<2>]>> -> !m2n.dist<2x2x12xf32, #m2n.layout<#m2n.mesh<[2], ranks = [1, 5]>, [shard<0>]>>
func.func @gather(%x: tensor<2x3xf32>) -> tensor<2x12xf32> {
  %0 = shard.gather %x on @grid2x4 grid_axes = [1] gather_axis = 1 root = [1] : (tensor<2x3xf32>) -> tensor<2x12xf32>
  return %0 : tensor<2x12xf32>
}
// CHECK-LABEL: func.func @reduce
// CHECK: m2n.reshard {{.*}}!m2n.dist<4x3x4xi32, #m2n.layout<#m2n.mesh<[4, 2], ranks = [0, 4, 1, 5, 2, 6, 3, 7]>, [shard<0>, partial<max>]>> -> !m2n.dist<4x3x4xi32, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>>
func.func @reduce(%x: tensor<3x4xi32>) -> tensor<3x4xi32> {
  %0 = shard.reduce %x on @grid2x4 grid_axes = [0] reduction = max root = [1] : (tensor<3x4xi32>) -> tensor<3x4xi32>
  return %0 : tensor<3x4xi32>
}
// CHECK-LABEL: func.func @scatter
// CHECK: m2n.reshard {{.*}}!m2n.dist<4x4x2xbf16, #m2n.layout<#m2n.mesh<[4], ranks = [4, 5, 6, 7]>, [shard<0>]>> -> !m2n.dist<4x4x2xbf16, #m2n.layout<#m2n.mesh<[4, 2], ranks = [0, 4, 1, 5, 2, 6, 3, 7]>, [shard<0>, shard<1>]>>
func.func @scatter(%x: tensor<4x2xbf16>) -> tensor<2x2xbf16> {
  %0 = shard.scatter %x on @grid2x4 grid_axes = [0] scatter_axis = 0 root = [1] : (tensor<4x2xbf16>) -> tensor<2x2xbf16>
  return %0 : tensor<2x2xbf16>
}

// A rotating shift: device i's tensor goes to device i + offset (mod the
// axis size) along shift_axis, every other grid axis an independent line:
// one reshard of the stacked lines to a mesh with rotated ranks.
// CHECK-LABEL: func.func @shift
// CHECK: m2n.reshard {{.*}}!m2n.dist<2x4x3xi32, #m2n.layout<#m2n.mesh<[2, 4]>, [shard<0>, shard<1>]>> -> !m2n.dist<2x4x3xi32, #m2n.layout<#m2n.mesh<[2, 4], ranks = [1, 2, 3, 0, 5, 6, 7, 4]>, [shard<0>, shard<1>]>>
func.func @shift(%x: tensor<3xi32>) -> tensor<3xi32> {
  %0 = shard.shift %x on @grid2x4 grid_axes = [1] shift_axis = 1 offset = 1 rotate : tensor<3xi32> -> tensor<3xi32>
  return %0 : tensor<3xi32>
}
// CHECK-LABEL: func.func @shift_back
// CHECK: m2n.reshard {{.*}} -> !m2n.dist<4x2x2x2xf32, #m2n.layout<#m2n.mesh<[4, 2], ranks = [4, 0, 5, 1, 6, 2, 7, 3]>, [shard<0>, shard<1>]>>
func.func @shift_back(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = shard.shift %x on @grid2x4 grid_axes = [0, 1] shift_axis = 0 offset = -1 rotate : tensor<2x2xf32> -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// Upstream's shard-partition reshards every shard.shard of a shard.shard's
// result with another sharding, whatever their annotate_for_users flags
// (upstream's partition.mlir @sharding_triplet gathers at the third
// annotation): so does the import.
// CHECK-LABEL: func.func @sharding_triplet
// CHECK: %[[IN:.*]] = builtin.unrealized_conversion_cast %arg0 : tensor<2xf32> to !m2n.dist<2xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
// CHECK: %[[R:.*]] = m2n.reshard %[[IN]] {{.*}} -> !m2n.dist<2xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
// CHECK: %[[OUT:.*]] = builtin.unrealized_conversion_cast %[[R]]
// CHECK-NEXT: return %[[OUT]]
func.func @sharding_triplet(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %s0 = shard.sharding @grid2 split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<2xf32>
  %s1 = shard.sharding @grid2 split_axes = [[0]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<2xf32>
  %s2 = shard.sharding @grid2 split_axes = [[]] : !shard.sharding
  %2 = shard.shard %1 to %s2 : tensor<2xf32>
  return %2 : tensor<2xf32>
}

// A chain of resharding points reshards step by step, each from the result
// of the one before.
// CHECK-LABEL: func.func @reshard_chain
// CHECK: %[[IN:.*]] = builtin.unrealized_conversion_cast %arg0 : tensor<8x4xf32> to !m2n.dist<8x4xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
// CHECK: %[[R1:.*]] = m2n.reshard %[[IN]] {{.*}} -> !m2n.dist<8x4xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
// CHECK: %[[T1:.*]] = builtin.unrealized_conversion_cast %[[R1]] {{.*}} to tensor<8x4xf32>
// CHECK: %[[IN2:.*]] = builtin.unrealized_conversion_cast %[[T1]] : tensor<8x4xf32> to !m2n.dist<8x4xf32, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
// CHECK: %[[R2:.*]] = m2n.reshard %[[IN2]] {{.*}} -> !m2n.dist<8x4xf32, #m2n.layout<#m2n.mesh<[4]>, [shard<1>]>>
// CHECK: %[[OUT:.*]] = builtin.unrealized_conversion_cast %[[R2]]
// CHECK-NEXT: return %[[OUT]]
func.func @reshard_chain(%arg0: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %s0 = shard.sharding @grid4 split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8x4xf32>
  %s1 = shard.sharding @grid4 split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8x4xf32>
  %s2 = shard.sharding @grid4 split_axes = [[], [0]] : !shard.sharding
  %2 = shard.shard %1 to %s2 : tensor<8x4xf32>
  return %2 : tensor<8x4xf32>
}
