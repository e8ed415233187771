// The NCCL M2N paper's Example A (seeds/001, Section IV): after every RL
// step the trainer, TP4 on ranks 0-3, hands a weight to the generator,
// DP2 x TP2 on ranks 4-7. Rows are split four ways on the trainer and two
// ways on the generator, and every generator row block exists twice.
//
//   trainer  (mesh [1, 4] at rank 0, [replicate, shard<0>]):
//     rank 0: rows [0, 1)   rank 1: rows [1, 2)   rank 2: rows [2, 3)   rank 3: rows [3, 4)
//   generator (mesh [2, 2] at rank 4, [replicate, shard<0>]):
//     rank 4: rows [0, 2)   rank 5: rows [2, 4)   rank 6: rows [0, 2)   rank 7: rows [2, 4)
//
// Try: m2n-opt examples/example_a.mlir
//      m2n-opt examples/example_a.mlir --m2n-expand-collectives

#trainer_tp4 = #m2n.layout<#m2n.mesh<[1, 4]>, [replicate, shard<0>]>
#generator_dp2_tp2 = #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<0>]>

// Two H200 boxes would put trainer and generator in separate NVLink domains.
module attributes {m2n.topology = #m2n.topology<domains = [[0, 1, 2, 3], [4, 5, 6, 7]], nvlink_gbps = 450.0, network_gbps = 50.0>} {

// The paper's 4x8 tensor.
func.func @example_a(%comm: !m2n.comm<8>,
                     %w: !m2n.dist<4x8xbf16, #trainer_tp4>)
    -> !m2n.dist<4x8xbf16, #generator_dp2_tp2> {
  %0 = m2n.reshard %w on %comm
      : !m2n.comm<8>, !m2n.dist<4x8xbf16, #trainer_tp4>
     -> !m2n.dist<4x8xbf16, #generator_dp2_tp2>
  return %0 : !m2n.dist<4x8xbf16, #generator_dp2_tp2>
}

// The same reshard for a realistically sized projection weight, preceded by
// the trainer's own gradient all-reduce over a DP2 axis (ranks 0-3 as
// DP2 x TP2, contributions summed before the hand-off), written with the
// named collective that expands into a reshard.
func.func @refit_after_allreduce(
    %comm: !m2n.comm<8>,
    %grad_sum: !m2n.dist<7168x2048xbf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0>]>>)
    -> !m2n.dist<7168x2048xbf16, #generator_dp2_tp2> {
  %reduced = m2n.all_reduce %grad_sum on %comm mesh_axes = [0]
      : !m2n.comm<8>, !m2n.dist<7168x2048xbf16, #m2n.layout<#m2n.mesh<[2, 2]>, [partial<sum>, shard<0>]>>
     -> !m2n.dist<7168x2048xbf16, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, shard<0>]>>
  %refit = m2n.reshard %reduced on %comm
      : !m2n.comm<8>, !m2n.dist<7168x2048xbf16, #m2n.layout<#m2n.mesh<[2, 2]>, [replicate, shard<0>]>>
     -> !m2n.dist<7168x2048xbf16, #generator_dp2_tp2>
  return %refit : !m2n.dist<7168x2048xbf16, #generator_dp2_tp2>
}

}
