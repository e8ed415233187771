// A `shard` program whose resharding point upstream's shard-partition cannot
// lower (the split axes of the two dimensions swap), and m2n can:
//   build/bin/m2n-opt examples/integration/shard_transpose.mlir --m2n-import-shard -o /tmp/t.mlir
//   build/bin/m2n-sim /tmp/t.mlir            # plans and checks every element
//   build/bin/m2n-run /tmp/t.mlir            # compiles and runs (host or GPU)
// Upstream:
//   mlir-opt-22 examples/integration/shard_transpose.mlir \
//     "--pass-pipeline=builtin.module(func.func(shard-partition))"
//   -> error: Dimension size mismatch for result axis 1
shard.grid @grid(shape = 2x2)

func.func @transpose_split(%arg0: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %s0 = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8x6xf32>
  %s1 = shard.sharding @grid split_axes = [[1], [0]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8x6xf32>
  return %1 : tensor<8x6xf32>
}
