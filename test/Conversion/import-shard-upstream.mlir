// The resharding points upstream's shard-partition lowers (split the last
// grid axis further, unsplit it, move it to another dimension) import and
// check by value too; so do the collectives upstream's partitioner emits
// for them (partitioned code on local tensors).
//
// RUN: mlir-opt %s "--pass-pipeline=builtin.module(func.func(shard-partition))" | FileCheck %s --check-prefix=UPSTREAM
// RUN: m2n-opt %s --m2n-import-shard | m2n-sim - | FileCheck %s --check-prefix=SIM
// RUN: m2n-opt %s --m2n-import-shard | m2n-run - | FileCheck %s --check-prefix=EXEC
// RUN: mlir-opt %s "--pass-pipeline=builtin.module(func.func(shard-partition))" | m2n-opt --m2n-import-shard | m2n-sim - | FileCheck %s --check-prefix=PARTITIONED

// UPSTREAM: shard.all_slice
// UPSTREAM: shard.all_gather
// SIM: m2n-sim: PASS: 3 plans
// EXEC: 3 passed, 0 failed
// PARTITIONED: m2n-sim: PASS: 3 plans

shard.grid @grid(shape = 2x2)

func.func @split_last_axis(%arg0: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8x6xf32>
  %s1 = shard.sharding @grid split_axes = [[0, 1]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8x6xf32>
  return %1 : tensor<8x6xf32>
}

func.func @unsplit_last_axis(%arg0: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %s0 = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8x6xf32>
  %s1 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8x6xf32>
  return %1 : tensor<8x6xf32>
}

func.func @move_last_axis(%arg0: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %s0 = shard.sharding @grid split_axes = [[0, 1]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8x6xf32>
  %s1 = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8x6xf32>
  return %1 : tensor<8x6xf32>
}
