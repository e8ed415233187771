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

def OutlineReshards : Pass<"m2n-outline-reshards", "::mlir::ModuleOp"> {
  let summary = "Share one reshard among the tensors that move alike";
  let description = [{
    A model's layers on one pipeline stage move alike: the same layouts,
    shape, element types, scale and topology give the same plan, schedule
    and program. This pass makes one `m2n.reshard_fn` of each distinct
    `m2n.reshard` and replaces every reshard by an `m2n.call` of it, so the
    later stages plan, route, lower and verify each distinct reshard once
    (DeepSeek-V3's refit: 1025 tensors, 116 distinct) and the artifact
    stores each tensor under its own name. A topology attached to the
    reshard or to its function moves onto the reshard in the function.

    Input:

    ```mlir
    func.func @f(%comm: !m2n.comm<4>, %a: !m2n.dist<8xf32, #src>,
                 %b: !m2n.dist<8xf32, #src>) -> ... {
      %0 = m2n.reshard %a on %comm : !m2n.comm<4>, !m2n.dist<8xf32, #src> -> !m2n.dist<8xf32, #dst>
      %1 = m2n.reshard %b on %comm : !m2n.comm<4>, !m2n.dist<8xf32, #src> -> !m2n.dist<8xf32, #dst>
      ...
    ```

    Output:

    ```mlir
    func.func @f(...) {
      %0 = m2n.call @reshard_0(%a) on %comm : ...
      %1 = m2n.call @reshard_0(%b) on %comm : ...
      ...
    }
    m2n.reshard_fn @reshard_0 {
    ^bb0(%in: !m2n.dist<8xf32, #src>, %c: !m2n.comm<4>):
      %0 = m2n.reshard %in on %c : ...
      m2n.yield %0 : !m2n.dist<8xf32, #dst>
    }
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
    `m2n::IntersectionPlanner` (m2n/Plan/Planner.h), whose invariants are:

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

def VerifySchedule : Pass<"m2n-verify-schedule"> {
  let summary = "Check that every m2n.schedule delivers exactly the destination";
  let description = [{
    For every `m2n.schedule`, routed or written by hand, executes its steps
    abstractly in dependency order, tracking which global elements and which
    partial contributions every region of every buffer holds, and checks
    that each destination rank ends with its own local elements, each once,
    reduced over exactly its contributors. Refuses boxes outside their
    buffers, writes to sources, regions copied into twice, reads of regions
    nothing wrote, contributions counted twice, and reads or reductions that
    do not wait (through their dependencies) for the steps that write their
    region. Reports the offending step, or the destination rank and its
    local elements. Changes nothing.
  }];
}

def VerifyProgram : Pass<"m2n-verify-program"> {
  let summary = "Check every m2n.program as the runtime will trust it";
  let description = [{
    For every `m2n.program`, runs the check the artifact loader runs before
    the runtime trusts a program (`m2n::verifyTransferProgram`): every move
    inside existing buffers (tiles through tensor maps of their own
    buffers), every counter it names existing and every wait value exactly
    what one execution adds, every reduction one its mechanism has, over
    whole elements, copy-engine copies plain copies, repeats well formed;
    then what the waits order (`m2n::checkProgramOrder`): every destination
    byte copied by exactly one move, every reduction after that copy (one on
    the SM path ordered against every other reduction of its bytes), every
    read of a destination or scratch byte after every move that writes it,
    no cycle of waits. A problem of one move is reported on that move. The op verifier checks
    only the structure of each op, so that verifying a whole refit's module
    after every pass stays cheap; the pipeline runs this pass once, after
    the lowering. Changes nothing.
  }];
}

def VerifyGroups : Pass<"m2n-verify-groups"> {
  let summary = "Check that every merged m2n.group is its members' programs merged";
  let description = [{
    For every `m2n.group` that `--m2n-merge-groups` merged, checks that each
    member is lowered to a program and that the `m2n.group_rank` ops are
    exactly the merge of the members' programs (m2n::groupLayout: one per
    rank that runs a member, the members in the group's order, each
    member's counter base, the rank's counters) and that a group rank's
    launch is its members' launches of that rank combined
    (m2n::combineLaunches). The op verifier checks only the structure of
    the group, so that verifying a whole refit's module (one group of 1025
    members) after every pass stays cheap; the pipeline runs this pass
    once, after m2n-choose-launch. Changes nothing.
  }];
}

def RouteTopology : Pass<"m2n-route-topology"> {
  let summary = "Give every transfer of every m2n.plan a path over the topology";
  let description = [{
    Turns each `m2n.plan` into an `m2n.schedule`: per-rank steps, each a copy
    or reduce of one box from a local, NVLink-peer or network source, with
    explicit dependencies. The algorithm is `m2n::TopologyRouter`
    (m2n/Route/Router.h) with one of three strategies:

    * `flat`: every contribution sent to every destination replica;
    * `gather-bcast`: the legacy path, gather to a root, ring broadcast of the
      whole tensor, each destination copies its part;
    * `hierarchical` (default): each region crosses the network at most once
      per destination domain, into a balanced leader; domains form a ring;
      replicas pull from their leader over NVLink.

    Steps larger than `chunk-bytes` are split along their outermost
    dimension and dependencies are derived per chunk, so a leader forwards
    chunk i while chunk i+1 is still arriving. A step is cut into at most
    1024 chunks (larger steps get larger chunks), so the schedule of a
    4 TiB tensor stays small.

    A quantizing plan (`scaling`) gets its amax exchange as steps too, in
    at most `scale-bands` bands of block rows; with `quantize-once`,
    hierarchical routes quantize each region once per domain (one replica
    quantizes, the others copy its fp8 bytes); with `quantize-on-sources`
    as well, the domain's source replicas quantize bands of it too.

    The topology comes from the `topology` option (a JSON file), else the
    nearest enclosing `m2n.topology` attribute, else one NVLink domain over
    the whole communicator.

    Input (`%0` on 2 domains {0-3} and {4-7}):

    ```mlir
    %1 = m2n.plan %0 on %comm : ... {
      m2n.transfer copy from 0 [0:1, 0:8] to 4 [0:1, 0:8]
      m2n.transfer copy from 0 [0:1, 0:8] to 6 [0:1, 0:8]
      ...
    }
    ```

    Output:

    ```mlir
    %1 = m2n.schedule %0 on %comm strategy = "hierarchical" topology(...) : ... {
      m2n.step 0 copy src(0) [0:1, 0:8] -> dst(4) [0:1, 0:8] via network
      m2n.step 1 copy dst(4) [0:1, 0:8] -> dst(6) [0:1, 0:8] via nvlink after [0]
      ...
    }
    ```
  }];
  let options = [
    Option<"strategy", "strategy", "std::string", "\"hierarchical\"",
           "Routing strategy: flat, gather-bcast or hierarchical">,
    Option<"topologyFile", "topology", "std::string", "\"\"",
           "JSON topology file (overrides m2n.topology attributes)">,
    Option<"chunkBytes", "chunk-bytes", "int64_t", "4194304",
           "Split steps larger than this many bytes (0: never)">,
    Option<"reduceShare", "reduce-share", "std::string", "\"auto\"",
           "Hierarchical: reduce a region needed by several replicas of one "
           "domain once, chunk by chunk, then share it (reduce-scatter + "
           "all-gather): on, off, or auto (where the cost model finds it "
           "cheaper)">,
    Option<"scaleBands", "scale-bands", "int64_t", "1",
           "Quantizing reshards: at most this many bands of block rows "
           "(one per chunk-bytes of the tensor, at most 8), each band's "
           "amaxes exchanged before its data moves; 1: the amax pass, then "
           "the data">,
    Option<"quantizeOnce", "quantize-once", "bool", "true",
           "Hierarchical, quantizing reshards: one destination of a region "
           "in a domain quantizes it, the others copy its fp8 bytes">,
    Option<"quantizeOnSources", "quantize-on-sources", "bool", "false",
           "Hierarchical, with quantize-once: a region no destination of "
           "a domain holds is cut at block boundaries into bands shared by "
           "the domain's source replicas (each quantizing into a scratch of "
           "its own) and its destinations, so that every rank's CTAs run "
           "the element loop">
  ];
  let dependentDialects = ["::mlir::m2n::M2NDialect"];
}

def Estimate : Pass<"m2n-estimate"> {
  let summary = "Print the SOL cost of every plan under every strategy";
  let description = [{
    For every `m2n.plan`, routes it with flat, gather-bcast and hierarchical
    and prints, per strategy, the bytes per link class (network, NVLink,
    local), the busiest link, T_network, T_NVLink and
    T_SOL = max(T_network, T_NVLink) of the aggregate data-movement model
    (m2n/Route/CostModel.h). An `m2n.schedule` is estimated as it is. Output
    goes to stdout as a text table, or as JSON with `format=json`. The IR is
    not changed. The topology is resolved as in `m2n-route-topology`.
  }];
  let options = [
    Option<"format", "format", "std::string", "\"text\"",
           "Output format: text or json">,
    Option<"topologyFile", "topology", "std::string", "\"\"",
           "JSON topology file (overrides m2n.topology attributes)">
  ];
}

#endif // M2N_DIALECT_M2N_TRANSFORMS_PASSES_TD
