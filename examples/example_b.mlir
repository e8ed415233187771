// The NCCL M2N paper's Example B (seeds/001, Sections IV-V): a TP2 x PP2
// trainer on global ranks 0-3 hands its weights to a generator with TP1 x
// PP1 on global rank 4. With PP > 1 there is one reshard per pipeline
// stage, each on its own communicator made of that stage's trainer ranks
// plus the generator:
//
//   PP comm 0 = global ranks {0, 1, 4} -> comm ranks {0, 1, 2}
//   PP comm 1 = global ranks {2, 3, 4} -> comm ranks {0, 1, 2}
//
// Within each communicator the source mesh is the stage's TP axis (comm
// ranks 0-1, rows split) and the destination mesh is comm rank 2, which ends
// up holding every stage's full tensor.
//
// Try: m2n-opt examples/example_b.mlir

#stage_tp2 = #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>
#generator = #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>

func.func @example_b(%pp_comm0: !m2n.comm<3>, %pp_comm1: !m2n.comm<3>,
                     %stage0: !m2n.dist<1024x512xbf16, #stage_tp2>,
                     %stage1: !m2n.dist<1024x512xbf16, #stage_tp2>)
    -> (!m2n.dist<1024x512xbf16, #generator>, !m2n.dist<1024x512xbf16, #generator>) {
  %w0 = m2n.reshard %stage0 on %pp_comm0
      : !m2n.comm<3>, !m2n.dist<1024x512xbf16, #stage_tp2>
     -> !m2n.dist<1024x512xbf16, #generator>
  %w1 = m2n.reshard %stage1 on %pp_comm1
      : !m2n.comm<3>, !m2n.dist<1024x512xbf16, #stage_tp2>
     -> !m2n.dist<1024x512xbf16, #generator>
  return %w0, %w1 : !m2n.dist<1024x512xbf16, #generator>, !m2n.dist<1024x512xbf16, #generator>
}

// The same hand-off written on one 5-rank communicator with explicit rank
// lists instead of per-stage communicators: stage s owns global ranks
// {2s, 2s+1}.
func.func @example_b_one_comm(%world: !m2n.comm<5>,
    %stage0: !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[2], ranks = [0, 1]>, [shard<0>]>>,
    %stage1: !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<0>]>>)
    -> (!m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[1], base = 4>, [replicate]>>,
        !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[1], base = 4>, [replicate]>>) {
  %w0 = m2n.reshard %stage0 on %world
      : !m2n.comm<5>, !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[2], ranks = [0, 1]>, [shard<0>]>>
     -> !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[1], base = 4>, [replicate]>>
  %w1 = m2n.reshard %stage1 on %world
      : !m2n.comm<5>, !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[2], ranks = [2, 3]>, [shard<0>]>>
     -> !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[1], base = 4>, [replicate]>>
  return %w0, %w1 : !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[1], base = 4>, [replicate]>>,
                    !m2n.dist<1024x512xbf16, #m2n.layout<#m2n.mesh<[1], base = 4>, [replicate]>>
}
