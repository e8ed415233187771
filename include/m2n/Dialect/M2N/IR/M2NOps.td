//===- M2NOps.td - reshard and collective operations -------*- tablegen -*-===//

#ifndef M2N_DIALECT_M2N_IR_M2NOPS_TD
#define M2N_DIALECT_M2N_IR_M2NOPS_TD

include "m2n/Dialect/M2N/IR/M2NBase.td"
include "m2n/Dialect/M2N/IR/M2NAttrs.td"
include "m2n/Dialect/M2N/IR/M2NTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// reshard
//===----------------------------------------------------------------------===//

def M2N_ReshardOp : M2N_Op<"reshard", [Pure]> {
  let summary = "Move a distributed tensor from one layout to another";
  let description = [{
    The result holds the same logical tensor as the input, distributed as the
    result type's layout says. The two meshes may be disjoint (the M-to-N case:
    a trainer group hands weights to a generator group), overlapping, or the
    same mesh (in-place redistribution, the DTensor `redistribute` case).
    Every rank of both meshes must belong to the communicator `comm`.

    Each destination rank receives exactly the elements its local part needs
    (interval intersection of the source and destination boxes), each region
    from one owner among the replicas that hold it; partial sources are
    reduced.

    The NCCL M2N paper's Example A, trainer TP4 on ranks 0-3 to generator
    DP2 x TP2 on ranks 4-7, for a 4x8 weight:

    ```mlir
    %w1 = m2n.reshard %w on %comm
        : !m2n.comm<8>,
          !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[1, 4]>, [replicate, shard<0>]>>
       -> !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<0>]>>
    ```

    ```
      source (rows)            destination (rows)
      rank 0: [0, 1)    --+--> rank 4: [0, 2)   rank 6: [0, 2)
      rank 1: [1, 2)    --+
      rank 2: [2, 3)    --+--> rank 5: [2, 4)   rank 7: [2, 4)
      rank 3: [3, 4)    --+
    ```

    A destination layout may keep partial placements only where the
    contributions stay where they are: same mesh, partial on the same mesh
    axes with the same reduction as the source. Producing a new partial
    split of a value is not a communication and is rejected.

    In-flight cast: the result's element type may differ from the input's,
    between f32, f16, bf16, f8E4M3FN and f8E5M2: every element becomes
    `to(from(x) * scale)` (one f32 multiply, round to nearest even, the 8-bit
    floats saturating), converted where the bytes leave the source (into
    staging before a network transfer), never in a pass of its own. `scale`
    (default 1) needs a cast; a partial source keeps its element type.

    ```mlir
    %q = m2n.reshard %w on %comm {scale = 2.0 : f32}
        : !m2n.comm<8>,
          !m2n.dist<4x8xbf16, #m2n.layout<#m2n.mesh<[4]>, [shard<0>]>>
       -> !m2n.dist<4x8xf8E4M3FN, #m2n.layout<#m2n.mesh<[4], base = 4>, [replicate]>>
    ```

    Quantizing with scales taken from the data (`scaling`, docs/fp8-scaling.md):
    the result is f8E4M3FN or f8E5M2 and a second result holds the scales,
    computed at every launch from the values moved: one per block of
    `#m2n.scaling<tensor>`, `<block(R, C)>` or `<mx>`, shaped as the blocks
    over the global tensor (f32; f8E8M0FNU for mx), its type naming the
    quantized result's layout, every element written as
    `to_fp8(x / scale)`. A rank holds the scales of the blocks its elements
    touch: the layout's chunk of the scale tensor where shard boundaries
    fall on block boundaries, more where a block straddles two shards
    (every rank holds the one scale of `tensor` scaling).

    ```mlir
    %q, %s = m2n.reshard %w on %comm {scaling = #m2n.scaling<block(128, 128)>}
        : !m2n.comm<8>,
          !m2n.dist<7168x18432xbf16, #m2n.layout<#m2n.mesh<[8]>, [shard<1>]>>
       -> !m2n.dist<7168x18432xf8E4M3FN, #m2n.layout<#m2n.mesh<[2, 4]>, [replicate, shard<1>]>>,
          !m2n.dist<56x144xf32, #m2n.layout<#m2n.mesh<[2, 4]>, [replicate, shard<1>]>>
    ```
  }];
  let arguments = (ins M2N_AnyDist:$input, M2N_AnyComm:$comm,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<M2N_ScalingAttr>:$scaling);
  let results = (outs M2N_AnyDist:$result, Optional<M2N_AnyDist>:$scales);
  let assemblyFormat = [{
    $input `on` $comm attr-dict `:` qualified(type($comm)) `,` qualified(type($input)) `->` qualified(type($result)) (`,` qualified(type($scales))^)?
  }];
  let builders = [
    // A reshard or a cast by a constant factor: one result.
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::mlir::Value":$comm, "::mlir::FloatAttr":$scale), [{
      build($_builder, $_state, result, /*scales=*/::mlir::Type(), input,
            comm, scale, /*scaling=*/ScalingAttr());
    }]>
  ];
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

class M2N_CollectiveOp<string mnemonic, dag extraArgs = (ins),
                       string extraFormat = ""> : M2N_Op<mnemonic, [Pure]> {
  let arguments = !con((ins M2N_AnyDist:$input, M2N_AnyComm:$comm,
                            DenseI64ArrayAttr:$mesh_axes), extraArgs);
  let results = (outs M2N_AnyDist:$result);
  let assemblyFormat = "$input `on` $comm `mesh_axes` `=` $mesh_axes "
      # extraFormat # " attr-dict `:` qualified(type($comm)) `,` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
  code commonExtraClassDeclaration = "";
}

def M2N_AllGatherOp : M2N_CollectiveOp<"all_gather"> {
  let summary = "Gather the shards of the given mesh axes onto every rank";
  let description = [{
    The placements of the `mesh_axes` must be `shard<d>`; they become
    `replicate`. Equivalent to `m2n.reshard` with those placements.

    ```mlir
    // 2 ranks, rows split: rank 0 [0, 2), rank 1 [2, 4) -> both hold [0, 4).
    %1 = m2n.all_gather %0 on %comm mesh_axes = [0]
        : !m2n.comm<2>,
          !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
       -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [replicate]>>
    ```
  }];
  let extraClassDeclaration = commonExtraClassDeclaration # [{
    /// The result type of an all-gather of `input` over `meshAxes`, or a
    /// failure reported through `emitError`.
    static ::mlir::FailureOr<DistType> inferResultType(
        DistType input, ::llvm::ArrayRef<int64_t> meshAxes,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError);
  }];
}

def M2N_ReduceScatterOp : M2N_CollectiveOp<"reduce_scatter",
    (ins M2N_I64Attr:$scatter_dim), "`scatter_dim` `=` $scatter_dim"> {
  let summary = "Reduce partial contributions and split the result";
  let description = [{
    The placements of the `mesh_axes` must be `partial<op>`; they become
    `shard<scatter_dim>`, every rank keeping the reduction of its chunk.
    Equivalent to `m2n.reshard` with those placements.

    ```mlir
    // 2 ranks each hold a full 4x8 contribution; afterwards rank 0 holds the
    // summed rows [0, 2), rank 1 the summed rows [2, 4).
    %1 = m2n.reduce_scatter %0 on %comm mesh_axes = [0] scatter_dim = 0
        : !m2n.comm<2>,
          !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [partial<sum>]>>
       -> !m2n.dist<4x8xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
    ```
  }];
  let extraClassDeclaration = commonExtraClassDeclaration # [{
    static ::mlir::FailureOr<DistType> inferResultType(
        DistType input, ::llvm::ArrayRef<int64_t> meshAxes, int64_t scatterDim,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError);
  }];
}

def M2N_AllReduceOp : M2N_CollectiveOp<"all_reduce"> {
  let summary = "Reduce partial contributions onto every rank";
  let description = [{
    The placements of the `mesh_axes` must be `partial<op>`; they become
    `replicate`. Equivalent to `m2n.reshard` with those placements.

    ```mlir
    // Every rank holds the sum of the four contributions afterwards.
    %1 = m2n.all_reduce %0 on %comm mesh_axes = [0]
        : !m2n.comm<4>,
          !m2n.dist<1024xbf16, #m2n.layout<#m2n.mesh<[4]>, [partial<sum>]>>
       -> !m2n.dist<1024xbf16, #m2n.layout<#m2n.mesh<[4]>, [replicate]>>
    ```
  }];
  let extraClassDeclaration = commonExtraClassDeclaration # [{
    static ::mlir::FailureOr<DistType> inferResultType(
        DistType input, ::llvm::ArrayRef<int64_t> meshAxes,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError);
  }];
}

def M2N_AllToAllOp : M2N_CollectiveOp<"all_to_all",
    (ins M2N_I64Attr:$split_dim), "`split_dim` `=` $split_dim"> {
  let summary = "Re-split a sharded tensor along another dimension";
  let description = [{
    The placements of the `mesh_axes` must be `shard<d>` with `d` different
    from `split_dim`; they become `shard<split_dim>`: every rank gathers
    dimension `d` and splits dimension `split_dim` (the MoE token exchange).
    Equivalent to `m2n.reshard` with those placements.

    ```mlir
    // rank r holds rows [2r, 2r+2) of all columns -> all rows of columns
    // [2r, 2r+2).
    %1 = m2n.all_to_all %0 on %comm mesh_axes = [0] split_dim = 1
        : !m2n.comm<2>,
          !m2n.dist<4x4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<0>]>>
       -> !m2n.dist<4x4xf32, #m2n.layout<#m2n.mesh<[2]>, [shard<1>]>>
    ```
  }];
  let extraClassDeclaration = commonExtraClassDeclaration # [{
    static ::mlir::FailureOr<DistType> inferResultType(
        DistType input, ::llvm::ArrayRef<int64_t> meshAxes, int64_t splitDim,
        ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError);
  }];
}

//===----------------------------------------------------------------------===//
// Plan level
//===----------------------------------------------------------------------===//

def M2N_PlanOp : M2N_Op<"plan", [Pure, SingleBlock, NoTerminator]> {
  let summary = "A reshard as the exact list of box transfers between ranks";
  let description = [{
    The plan level of a reshard (produced by `--m2n-plan-intersections`): the
    same input, communicator and result as the `m2n.reshard` it replaces, and
    a body of `m2n.transfer` ops saying which box of which source rank's local
    buffer lands where in which destination rank's local buffer. The result
    carries the destination layout, so later stages and the reference
    executor know every local buffer's shape.

    Semantics: all copies happen before all reductions; together they must
    give every destination element exactly one copy and one reduction per
    further partial contributor (`--m2n-verify-plan` checks this).

    ```mlir
    %1 = m2n.plan %0 on %comm : !m2n.comm<8>, !m2n.dist<4x8xbf16, #src>
                             -> !m2n.dist<4x8xbf16, #dst> {
      m2n.transfer copy from 0 [0:1, 0:8] to 4 [0:1, 0:8]
      m2n.transfer copy from 1 [0:1, 0:8] to 4 [1:2, 0:8]
      ...
    }
    ```
  }];
  let arguments = (ins M2N_AnyDist:$input, M2N_AnyComm:$comm,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<M2N_ScalingAttr>:$scaling);
  let results = (outs M2N_AnyDist:$result, Optional<M2N_AnyDist>:$scales);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $input `on` $comm attr-dict `:` qualified(type($comm)) `,` qualified(type($input)) `->` qualified(type($result)) (`,` qualified(type($scales))^)? $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Type":$resultType, "::mlir::Value":$input,
                   "::mlir::Value":$comm)>,
    // A quantizing reshard's plan: its scales' type as a second result.
    OpBuilder<(ins "::mlir::Type":$resultType, "::mlir::Type":$scalesType,
                   "::mlir::Value":$input, "::mlir::Value":$comm,
                   "ScalingAttr":$scaling)>
  ];
}

def M2N_AmaxOp : M2N_Op<"amax", [HasParent<"PlanOp">]> {
  let summary = "A source rank's share of a quantizing plan's block amaxes";
  let description = [{
    In the plan of a reshard with a `scaling` (docs/fp8-scaling.md):
    `m2n.amax on R blocks [a:b, c:d]` says that source rank `R` computes,
    for every block of the box (in the scale tensor's coordinates), the
    amax of its own elements of the block into the block's slot. Every
    element of the tensor lies in exactly one share (`--m2n-verify-plan`).

    ```mlir
    m2n.amax on 0 blocks [0:14, 0:144]
    ```
  }];
  let arguments = (ins I64Prop:$rank, ArrayProp<I64Prop>:$offsets,
                       ArrayProp<I64Prop>:$sizes);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def M2N_ExchangeOp : M2N_Op<"exchange", [HasParent<"PlanOp">]> {
  let summary = "Move partial amaxes from a rank's slots into a scale table";
  let description = [{
    In the plan of a reshard with a `scaling`: `m2n.exchange copy from S
    [a:b] to D quantizer [c:d]` copies a box of source rank `S`'s amax slots
    (coordinates relative to the blocks its local box touches) into the
    `quantizer` table of rank `D` (the blocks of the elements `D` sends) or
    its `holder` table (the blocks of its scale tensor); `max` max-reduces
    instead. Copies happen before reductions; afterwards every table entry
    is its block's amax, from which every rank computes the same scale.

    ```mlir
    m2n.exchange copy from 0 [0:1, 0:1] to 3 holder [0:1, 0:1]
    m2n.exchange max from 1 [0:1, 0:1] to 3 holder [0:1, 0:1]
    ```
  }];
  let arguments = (ins I64Prop:$src_rank, ArrayProp<I64Prop>:$src_offsets,
                       I64Prop:$dst_rank, ArrayProp<I64Prop>:$dst_offsets,
                       ArrayProp<I64Prop>:$sizes, BoolProp:$holder,
                       BoolProp:$reduces);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def M2N_TransferOp : M2N_Op<"transfer", [HasParent<"PlanOp">]> {
  let summary = "Move one box from a source rank to a destination rank";
  let description = [{
    `m2n.transfer copy from S [a:b, c:d] to D [e:f, g:h]` copies the box of
    source rank `S`'s local buffer given by the half-open ranges into the box
    of destination rank `D`'s local buffer; both boxes have the same sizes.
    `reduce<sum>` (or `max`, `min`) instead combines the source elements into
    the destination elements. Ranks are communicator ranks; boxes are in the
    coordinates of the ranks' local buffers (their local part of the tensor,
    row-major).

    ```mlir
    m2n.transfer copy from 0 [0:1, 0:8] to 4 [1:2, 0:8]
    m2n.transfer reduce<sum> from 1 [0:4] to 0 [0:4]
    ```
  }];
  // Properties, as m2n.step's: a refit's plans have ~50k transfers.
  let arguments = (ins I64Prop:$src_rank, ArrayProp<I64Prop>:$src_offsets,
                       I64Prop:$dst_rank, ArrayProp<I64Prop>:$dst_offsets,
                       ArrayProp<I64Prop>:$sizes,
                       OptionalProp<EnumProp<M2N_ReductionKind>>:$reduction);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Schedule level
//===----------------------------------------------------------------------===//

def M2N_ScheduleOp : M2N_Op<"schedule", [Pure, SingleBlock, NoTerminator]> {
  let summary = "A reshard as per-rank steps with paths and dependencies";
  let description = [{
    The schedule level of a reshard (produced by `--m2n-route-topology`):
    every byte of the plan has a path. The body declares scratch buffers
    (`m2n.scratch`) and lists steps (`m2n.step`), each moving one box from a
    buffer of one rank to a buffer of another over a link class, after the
    steps it names. Step `i` has id `i`; the rank that executes a step is the
    one it writes to (it pulls over NVLink, or receives a network transfer
    whose send the runtime posts on the source rank). `strategy` records the
    route that produced it and `topology` the machine it was routed for.

    ```mlir
    %1 = m2n.schedule %0 on %comm strategy = "hierarchical"
        topology(#m2n.topology<domains = [[0, 1, 2, 3], [4, 5, 6, 7]], ...>)
        : !m2n.comm<8>, !m2n.dist<4x8xbf16, #src> -> !m2n.dist<4x8xbf16, #dst> {
      m2n.step 0 copy src(0) [0:1, 0:8] -> dst(4) [0:1, 0:8] via network
      m2n.step 1 copy dst(4) [0:1, 0:8] -> dst(6) [0:1, 0:8] via nvlink after [0]
      ...
    }
    ```
  }];
  let arguments = (ins M2N_AnyDist:$input, M2N_AnyComm:$comm,
                       StrAttr:$strategy, M2N_TopologyAttr:$topology,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<M2N_ScalingAttr>:$scaling);
  let results = (outs M2N_AnyDist:$result, Optional<M2N_AnyDist>:$scales);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $input `on` $comm `strategy` `=` $strategy `topology` `(` qualified($topology) `)` attr-dict
    `:` qualified(type($comm)) `,` qualified(type($input)) `->` qualified(type($result)) (`,` qualified(type($scales))^)? $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Type":$resultType, "::mlir::Value":$input,
                   "::mlir::Value":$comm, "::llvm::StringRef":$strategy,
                   "TopologyAttr":$topology)>,
    // A quantizing reshard's schedule: its scales' type as a second result.
    OpBuilder<(ins "::mlir::Type":$resultType, "::mlir::Type":$scalesType,
                   "::mlir::Value":$input, "::mlir::Value":$comm,
                   "::llvm::StringRef":$strategy, "TopologyAttr":$topology,
                   "ScalingAttr":$scaling)>
  ];
}

def M2N_ScratchOp : M2N_Op<"scratch", [ParentOneOf<["ScheduleOp", "ProgramOp"]>]> {
  let summary = "A temporary buffer of one rank, for the length of a schedule";
  let description = [{
    `m2n.scratch 3 on 6 [16, 256]` declares scratch buffer 3 on rank 6, a
    row-major array of the tensor's element type with the given shape (a
    leader's landing zone for raw partial contributions, the root's full
    tensor in gather-bcast). Scratch ids count from 0 in order. With
    `amaxes` it holds f32 amaxes in blocks instead (a quantizing reshard's
    exchange staged for the network by `--m2n-stage-network-steps`).
  }];
  let arguments = (ins M2N_I64Attr:$id, M2N_I64Attr:$rank,
                       DenseI64ArrayAttr:$shape, UnitAttr:$amaxes);
  let assemblyFormat = "$id `on` $rank $shape (`amaxes` $amaxes^)? attr-dict";
}

def M2N_StepOp : M2N_Op<"step", [HasParent<"ScheduleOp">]> {
  let summary = "Move one box between buffers of two ranks";
  let description = [{
    `m2n.step 1 copy dst(4) [0:1, 0:8] -> dst(6) [0:1, 0:8] via nvlink after [0]`
    copies (or, with `reduce<sum|max|min>`, combines) a box of one buffer into
    a box of the same sizes of another. Buffers are `src(R)` (rank R's local
    part of the input, read only), `dst(R)` (its local part of the result) and
    `scratchK(R)`. `via` is the link class the bytes use (`local`, `nvlink`,
    `network`); `after` lists the steps that must complete first.

    A quantizing schedule (one with a `scaling`, docs/fp8-scaling.md) adds
    its amax exchange, in blocks of the scale tensor relative to each
    buffer: `slots(R)` and `quantizer(R)` (a source rank's partial amaxes,
    and the amaxes it quantizes with, of the blocks its box touches),
    `holder(R)` (a destination rank's amaxes of the blocks its box touches)
    and `scales(R)` (its scale tensor). `amax src(R) [..] -> slots(R) [..]`
    computes the amaxes of rank R's elements of those blocks, `copy` and
    `reduce<max>` move them from slots into quantizer and holder tables, and
    `scale holder(R) [..] -> scales(R) [..]` turns amaxes into scales. Every
    move out of a source then quantizes with its source rank's quantizer
    table, whoever executes it.

    ```mlir
    m2n.step 0 amax src(0) [0:2, 0:1] -> slots(0) [0:2, 0:1] via local
    m2n.step 2 copy slots(0) [0:2, 0:1] -> holder(4) [0:2, 0:1] via nvlink after [0]
    m2n.step 4 scale holder(4) [0:2, 0:2] -> scales(4) [0:2, 0:2] via local after [2, 3]
    ```
  }];
  // Properties, as m2n.move's: a refit's schedule has ~50k steps.
  let arguments = (ins I64Prop:$id,
                       EnumProp<M2N_BufferKind>:$from_kind, I64Prop:$from_rank,
                       I64Prop:$from_scratch, ArrayProp<I64Prop>:$from_offsets,
                       EnumProp<M2N_BufferKind>:$to_kind, I64Prop:$to_rank,
                       I64Prop:$to_scratch, ArrayProp<I64Prop>:$to_offsets,
                       ArrayProp<I64Prop>:$sizes,
                       OptionalProp<EnumProp<M2N_ReductionKind>>:$reduction,
                       EnumProp<M2N_LinkClass>:$link, ArrayProp<I64Prop>:$deps,
                       OptionalProp<EnumProp<M2N_StepKind>>:$kind);
  let hasCustomAssemblyFormat = 1;
}

//===----------------------------------------------------------------------===//
// Program level
//===----------------------------------------------------------------------===//

def M2N_ProgramOp : M2N_Op<"program", [Pure, SingleBlock, NoTerminator]> {
  let summary = "A reshard as per-rank programs of typed work items";
  let description = [{
    The program level of a reshard (produced by `--m2n-lower-schedule`): what
    each rank executes. The body declares the schedule's scratch buffers
    (`m2n.scratch`), the tensor maps tiles move through (`m2n.tensor_map`),
    and one `m2n.rank` per rank that runs anything, listing its moves
    (`m2n.move`) in a topological order. The artifact is a translation of
    this level; `m2n-artifact-dump` prints the same items.

    `buffer_alignment` (default 16) is the alignment the program assumes of
    every caller buffer (`buffer-align`); below 16 no TMA move (bulk, tile)
    may touch one, and the runtime refuses buffers that lack it.

    ```mlir
    %1 = m2n.program %0 on %comm strategy = "hierarchical"
        : !m2n.comm<2>, !m2n.dist<4096xf32, #src> -> !m2n.dist<4096xf32, #dst> {
      m2n.rank 0 counters = 1 {
        m2n.move engine copy src(0)+0 -> dst(0)+0 16384B
        m2n.move bulk reduce<sum> src(1)+0 -> dst(0)+0 4096B read_done 1:0
        m2n.move bulk copy src(0)+0 -> src(0)+0 0B wait 0:0>=4
      }
      ...
    }
    ```
  }];
  let arguments = (ins M2N_AnyDist:$input, M2N_AnyComm:$comm,
                       StrAttr:$strategy,
                       DefaultValuedAttr<M2N_I64Attr, "16">:$buffer_alignment,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<M2N_ScalingAttr>:$scaling);
  let results = (outs M2N_AnyDist:$result, Optional<M2N_AnyDist>:$scales);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $input `on` $comm `strategy` `=` $strategy
    (`buffer_alignment` `=` $buffer_alignment^)? attr-dict
    `:` qualified(type($comm)) `,` qualified(type($input)) `->` qualified(type($result)) (`,` qualified(type($scales))^)? $body
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Type":$resultType, "::mlir::Value":$input,
                   "::mlir::Value":$comm, "::llvm::StringRef":$strategy,
                   "int64_t":$bufferAlignment)>,
    // A quantizing reshard's program: its scales' type as a second result.
    OpBuilder<(ins "::mlir::Type":$resultType, "::mlir::Type":$scalesType,
                   "::mlir::Value":$input, "::mlir::Value":$comm,
                   "::llvm::StringRef":$strategy, "int64_t":$bufferAlignment,
                   "ScalingAttr":$scaling)>
  ];  let extraClassDeclaration = [{
    /// The counters each rank of the program owns (every m2n.rank), by
    /// ascending rank.
    ::m2n::RankCounters getRankCounters();
  }];
}

def M2N_TensorMapOp : M2N_Op<"tensor_map", [HasParent<"ProgramOp">]> {
  let summary = "A TMA tensor map over one buffer, for tile moves";
  let description = [{
    `m2n.tensor_map 0 of src(1) [64, 32] box [16, 32]` declares tensor map 0
    over rank 1's source buffer (a row-major array of the given extents) with
    tiles of the box's sizes. Map ids count from 0 in order.
  }];
  let arguments = (ins M2N_I64Attr:$id, M2N_BufferKindAttr:$kind,
                       M2N_I64Attr:$rank, M2N_I64Attr:$scratch,
                       DenseI64ArrayAttr:$extents, DenseI64ArrayAttr:$box);
  let hasCustomAssemblyFormat = 1;
}

def M2N_RankOp : M2N_Op<"rank", [HasParent<"ProgramOp">, SingleBlock,
                                 NoTerminator]> {
  let summary = "The program of one rank: its moves and its counters";
  let description = [{
    `m2n.rank 3 counters = 2 { ... }`: rank 3 owns counters 3:0 and 3:1
    (peer-visible, raised by the moves that signal them) and executes the
    moves of the body in order: copy-engine copies first (before its kernel),
    network receives, and its kernel's work items. `launch <...>`
    (`#m2n.launch`, written by `--m2n-choose-launch`) is how its kernel is
    launched; it must run every item (vector items take one walker of 128
    threads, every item fits a stage).
  }];
  let arguments = (ins M2N_I64Attr:$rank, M2N_I64Attr:$counters,
                       OptionalAttr<M2N_LaunchAttr>:$launch);
  let regions = (region SizedRegion<1>:$body);
  // `$rank counters = $counters (launch $launch)? attr-dict-with-keyword
  // $body`, written by hand: the generated printer builds the op's attribute
  // dictionary for attr-dict (a refit prints ~15k ranks).
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// What the rank's kernel items ask of its launch (the program's
    /// verifier checks the launch against it).
    ::m2n::LaunchDemand getLaunchDemand();
  }];
}

def M2N_MoveOp : M2N_Op<"move", [HasParent<"RankOp">]> {
  let summary = "One work item: a run or a tile, by one mechanism";
  let description = [{
    `m2n.move bulk reduce<sum> src(1)+0 -> dst(0)+4096 4096B signal 0:1
    wait 0:0>=2 read_done 1:0` moves (or combines) bytes between two buffers.
    The mechanism says how: `bulk` (TMA bulk copy or reduction, 16-byte
    aligned), `tile` (TMA tensor maps: `src(1) map 0 (0, 16)` names a map and
    the tile's corner), `vector` (the SM path), `engine` (a copy-engine copy
    before the kernel) or `network` (a receive the runtime posts through
    NCCL). `times N by (+S,+D)` repeats the move N times, each instance S
    bytes further in the source and D in the destination (tiles: `times N
    along K by (+S,+D)` advances coordinate K); several levels nest, the
    last fastest, and the runtime expands them into N items (or receives).
    `signal R:I` raises counter I of rank R once the bytes landed (each
    instance once),
    `wait R:I>=V` (at most two) waits for it first, `read_done R:I` tells the
    owner of the source that its bytes were read. `step N` records the
    schedule step it comes from. `acc src(0)` (a vector reduction only)
    names its accumulator: the move writes acc ⊕ src, reading the
    accumulator at the source's offsets, instead of dst ⊕ src (a rank's copy
    of its own partial fused with the first reduction onto it).

    A quantizing reshard (docs/fp8-scaling.md) adds three kinds of vector
    moves. `m2n.move vector amax src(0)+0 -> slots(0)+0 256B blocks 0+0/128`
    max-combines the |x| of a run of the source into the slots its blocks
    have (slots start at zero every execution). `m2n.move vector scale
    holder(4)+0 -> scales(4)+0 8B` turns f32 amaxes into scales (f32, or
    e8m0 for mx). A move out of a source quantizes: `copy vector src(0)+0
    -> dst(4)+0 128B blocks 3+5/128` divides element i of its run by the
    scale of entry `3 + (5 + i) / 128` of its source rank's quantizer
    table (`blocks E+P/W`: the first element's entry, its phase in its
    block, the blocks' width). A repeat level of such moves may advance the
    entry too: `times N by (+S,+D,+E)`.
  }];
  // Properties, not attributes: a refit's program has ~50k moves, and
  // plain values in the op need no uniquing, hashing or constraint check.
  // Mechanism, counters, waits and repeats are the artifact's C++ types.
  let arguments = (ins M2N_MechanismProp:$mechanism,
                       OptionalProp<EnumProp<M2N_ReductionKind>>:$reduction,
                       EnumProp<M2N_BufferKind>:$src_kind, I64Prop:$src_rank,
                       I64Prop:$src_scratch, I64Prop:$src_offset,
                       EnumProp<M2N_BufferKind>:$dst_kind, I64Prop:$dst_rank,
                       I64Prop:$dst_scratch, I64Prop:$dst_offset,
                       I64Prop:$bytes,
                       I64Prop:$src_map, ArrayProp<I64Prop>:$src_coords,
                       I64Prop:$dst_map, ArrayProp<I64Prop>:$dst_coords,
                       OptionalProp<M2N_CounterRefProp>:$signal,
                       ArrayProp<M2N_CounterWaitProp>:$waits,
                       OptionalProp<M2N_CounterRefProp>:$read_done,
                       I64Prop:$step, ArrayProp<M2N_RepeatProp>:$repeats,
                       OptionalProp<EnumProp<M2N_StepKind>>:$kind,
                       OptionalProp<M2N_BlockLookupProp>:$lookup,
                       OptionalProp<EnumProp<M2N_BufferKind>>:$acc_kind,
                       I64Prop:$acc_rank, I64Prop:$acc_scratch);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// Adds what this move asks of its rank's launch (a kernel item's
    /// mechanism and bytes; nothing for copy-engine copies and receives).
    void addLaunchDemand(::m2n::LaunchDemand &demand);
  }];
}

//===----------------------------------------------------------------------===//
// Shared reshards
//===----------------------------------------------------------------------===//

def M2N_ReshardFnOp : M2N_Op<"reshard_fn", [Symbol, IsolatedFromAbove,
    SingleBlock, HasParent<"::mlir::ModuleOp">]> {
  let summary = "One reshard that many tensors share";
  let description = [{
    The reshard of every tensor with the same layouts, shape, element types,
    scale and topology (a model's layers on one pipeline stage), compiled
    once and called by each of them (`m2n.call`); `--m2n-outline-reshards`
    makes them. The body takes the input and the communicator as its block
    arguments and yields the result; it holds one reshard at whatever level
    the pipeline has brought it to (`m2n.reshard`, `m2n.plan`,
    `m2n.schedule`, `m2n.program`). The artifact holds each tensor under
    its own name and the program once per function.

    ```mlir
    m2n.reshard_fn @reshard_0 {
    ^bb0(%in: !m2n.dist<4x8xbf16, #src>, %comm: !m2n.comm<8>):
      %0 = m2n.reshard %in on %comm : !m2n.comm<8>, !m2n.dist<4x8xbf16, #src>
                                    -> !m2n.dist<4x8xbf16, #dst>
      m2n.yield %0 : !m2n.dist<4x8xbf16, #dst>
    }
    ```

    A quantizing reshard yields its scales too, and its calls have them as
    a second result.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::BlockArgument getInput() { return getBody().getArgument(0); }
    ::mlir::BlockArgument getComm() { return getBody().getArgument(1); }
    /// The value the body yields.
    ::mlir::Value getResult();
    /// The type of the scales a quantizing reshard yields, or null.
    ::mlir::Type getScalesType();
    /// The one op of the body that computes the result (a reshard, plan,
    /// schedule or program).
    ::mlir::Operation *getReshard() { return getResult().getDefiningOp(); }
  }];
}

def M2N_YieldOp : M2N_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"ReshardFnOp">]> {
  let summary = "The result of an m2n.reshard_fn";
  let description = [{
    The reshard's result and, for a quantizing reshard, its scales.
  }];
  let arguments = (ins M2N_AnyDist:$result, Optional<M2N_AnyDist>:$scales);
  let assemblyFormat = [{
    $result (`,` $scales^)? attr-dict `:` qualified(type($result)) (`,` qualified(type($scales))^)?
  }];
}

def M2N_CallOp : M2N_Op<"call", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Reshard a tensor by a shared m2n.reshard_fn";
  let description = [{
    Moves `input` as the named `m2n.reshard_fn` does; the types are the
    function's. In the artifact the call is a reshard of its own, named
    after its function and position (`@func#index`) as an `m2n.reshard`
    there would be.

    ```mlir
    %r = m2n.call @reshard_0(%w) on %comm
        : !m2n.comm<8>, !m2n.dist<4x8xbf16, #src> -> !m2n.dist<4x8xbf16, #dst>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, M2N_AnyDist:$input,
                       M2N_AnyComm:$comm);
  let results = (outs M2N_AnyDist:$result, Optional<M2N_AnyDist>:$scales);
  let assemblyFormat = [{
    $callee `(` $input `)` `on` $comm attr-dict `:` qualified(type($comm)) `,` qualified(type($input)) `->` qualified(type($result)) (`,` qualified(type($scales))^)?
  }];
}

//===----------------------------------------------------------------------===//
// Groups
//===----------------------------------------------------------------------===//

def M2N_GroupOp : M2N_Op<"group", [SingleBlock, NoTerminator]> {
  let summary = "Reshards launched together, as one program per rank";
  let description = [{
    `m2n.group "refit"(%0, %1, %2) : ...` names reshards (the results of
    `m2n.reshard`, `m2n.call` or any reshard-level op of this block) that run
    at the same time: one kernel per rank for all of them, one completion
    (every weight of a model in a refit: what `m2n.reshard_many` and
    `m2n-refit` produce). Members share nothing: no member reads another's
    result, and the caller gives each its own buffers.

    `--m2n-merge-groups` (after lowering) fills the body with the merged
    program: one `m2n.group_rank` per rank that runs anything, listing the
    members it runs in their order and where each member's counters of that
    rank begin. The artifact holds the group under its name; the runtime
    binds and launches it as one program. The op verifier checks the
    structure; that the body is the merge of the members' programs is
    `--m2n-verify-groups`'s check (a whole group's, run once).

    ```mlir
    m2n.group "refit"(%0, %1) : !m2n.dist<8xf32, #a>, !m2n.dist<8xf32, #b> merged {
      m2n.group_rank 0 counters = 3 members = [0, 1] counter_bases = [0, 2]
      m2n.group_rank 1 counters = 1 members = [1] counter_bases = [0]
    }
    ```
  }];
  let arguments = (ins StrAttr:$name, Variadic<M2N_AnyDist>:$members);
  let regions = (region AnyRegion:$ranks);
  let assemblyFormat = [{
    $name `(` $members `)` attr-dict `:` qualified(type($members))
    (`merged` $ranks^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether --m2n-merge-groups has written the merged program.
    bool isMerged() { return !getRanks().empty(); }
    /// The program member `index` runs (its m2n.program, or that of the
    /// m2n.reshard_fn it calls); null while it is not lowered.
    ProgramOp getMemberProgram(unsigned index,
                               ::mlir::SymbolTableCollection &symbols);
    /// Every member's program, in member order (null where not lowered):
    /// looked up once, for passes that visit members rank by rank (a
    /// refit's group: ~1000 members, each run by many ranks).
    ::llvm::SmallVector<ProgramOp, 4>
    getMemberPrograms(::mlir::SymbolTableCollection &symbols);
    /// Whether the merged body is the members' programs merged
    /// (m2n::groupLayout) with their launches combined; diagnostics on the
    /// group rank that differs. Success for a group not merged yet.
    ::mlir::LogicalResult verifyMerge(::mlir::SymbolTableCollection &symbols);
    /// Visits every group under `root` (groups live beside their members:
    /// the walk skips reshard bodies); stops when `visit` interrupts.
    static ::mlir::WalkResult
    walkGroups(::mlir::Operation *root,
               ::llvm::function_ref<::mlir::WalkResult(GroupOp)> visit);
  }];
}

def M2N_GroupRankOp : M2N_Op<"group_rank", [HasParent<"GroupOp">]> {
  let summary = "One rank's program in a group: its members, in order";
  let description = [{
    `m2n.group_rank 0 counters = 3 members = [0, 2] counter_bases = [0, 2]`:
    rank 0 runs member 0's program of rank 0, then member 2's (their copy-
    engine copies, receives and kernel items, member after member), and owns
    3 counters: member 0's from 0:0, member 2's from 0:2. Every rank runs its
    members in the group's order (no rank may run a later member before an
    earlier one: the queues then stay subsequences of one topological order
    and the group cannot deadlock); `--m2n-verify-groups` checks the bases against
    the members' programs. `launch <...>` (`--m2n-choose-launch`) is the
    members' launches of the rank combined (m2n::combineLaunches: the most
    threads, the fewest walkers, the largest stages).
  }];
  let arguments = (ins I64Prop:$rank, I64Prop:$counters,
                       ArrayProp<I64Prop>:$members,
                       ArrayProp<I64Prop>:$counter_bases,
                       OptionalAttr<M2N_LaunchAttr>:$launch);
  // `$rank counters = $counters members = $members counter_bases =
  // $counter_bases (launch $launch)? attr-dict`, written by hand as
  // m2n.rank's.
  let hasCustomAssemblyFormat = 1;
}

#endif // M2N_DIALECT_M2N_IR_M2NOPS_TD
