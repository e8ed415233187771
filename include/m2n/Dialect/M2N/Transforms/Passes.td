//===- Passes.td - m2n transformation passes ---------------*- tablegen -*-===//

#ifndef M2N_DIALECT_M2N_TRANSFORMS_PASSES_TD
#define M2N_DIALECT_M2N_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ExpandCollectives : Pass<"m2n-expand-collectives"> {
  let summary = "Rewrite the named collectives into m2n.reshard";
  let description = [{
    Every collective is a reshard with a fixed relation between its layouts;
    the planner only understands `m2n.reshard`. This pass rewrites
    `m2n.all_gather`, `m2n.reduce_scatter`, `m2n.all_reduce` and
    `m2n.all_to_all` into the equivalent reshard, whose destination layout is
    the collective's (already verified) result layout.

    Input:

    ```mlir
    %1 = m2n.all_gather %0 on %comm mesh_axes = [0]
        : !m2n.comm<2>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
       -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
    ```

    Output:

    ```mlir
    %1 = m2n.reshard %0 on %comm
        : !m2n.comm<2>, !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
       -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
    ```
  }];
  let dependentDialects = ["::mlir::m2n::M2NDialect"];
}

#endif // M2N_DIALECT_M2N_TRANSFORMS_PASSES_TD
