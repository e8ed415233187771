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

def PlanIntersections : Pass<"m2n-plan-intersections"> {
  let summary = "Derive the exact box transfers of every reshard";
  let description = [{
    Lowers every `m2n.reshard` (and every collective, through its expansion)
    to an `m2n.plan`: for each destination rank, the intersection of its
    local box with every source box it needs, as one `m2n.transfer` per
    (source box, destination rank, contributor). The algorithm is
    `m2n::IntersectionPlanner` (m2n/Layout/Planner.h), whose invariants are:

    * exact: every destination element receives one copy plus one reduce per
      further partial contributor, and nothing else;
    * replicated sources: each region comes from one replica; a destination
      that holds the region itself copies locally; the other destinations
      are spread over the replicas (loads differ by at most one);
    * whole boxes, no fragmentation; deterministic, so every rank derives the
      same plan without communicating.

    Input:

    ```mlir
    %1 = m2n.reshard %0 on %comm : !m2n.comm<3>,
        !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
     -> !m2n.dist<4xf32, #m2n.layout<#m2n.mesh<[1], base = 2>, [replicate]>>
    ```

    Output:

    ```mlir
    %1 = m2n.plan %0 on %comm : !m2n.comm<3>, ... -> ... {
      m2n.transfer copy from 0 [0:2] to 2 [0:2]
      m2n.transfer copy from 1 [0:2] to 2 [2:4]
    }
    ```
  }];
  let dependentDialects = ["::mlir::m2n::M2NDialect"];
}

def VerifyPlan : Pass<"m2n-verify-plan"> {
  let summary = "Check that every m2n.plan is in bounds and covers exactly";
  let description = [{
    For every `m2n.plan`, checks that each transfer's boxes lie inside the
    local buffers of its ranks and name the same global elements on both
    sides, and that every destination element receives exactly one copy and
    one reduction per further partial contributor (each contributor exactly
    once). Reports the offending transfer, or the destination rank and the
    local elements that are missed or written twice. Changes nothing.
  }];
}

#endif // M2N_DIALECT_M2N_TRANSFORMS_PASSES_TD
