//===- M2NAttrs.td - meshes, placements, layouts, topologies -*- tablegen -*-===//

#ifndef M2N_DIALECT_M2N_IR_M2NATTRS_TD
#define M2N_DIALECT_M2N_IR_M2NATTRS_TD

include "m2n/Dialect/M2N/IR/M2NBase.td"

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

def M2N_MeshAttr : M2N_Attr<"Mesh", "mesh"> {
  let summary = "A row-major grid of communicator ranks";
  let description = [{
    A mesh lays the ranks of a communicator out as a grid of shape
    `[d0, d1, ...]`, last axis fastest. By default the grid covers the
    contiguous ranks `base .. base + d0*d1*... - 1` (the NCCL M2N paper's
    `Mesh(dims, start_rank=base)`); alternatively an explicit rank list names
    the rank at every grid position in row-major order, which expresses
    strided groups such as one pipeline stage of a TP x PP trainer.

    Examples:

    ```mlir
    #trainer = #m2n.mesh<[1, 4]>              // ranks 0..3
    #gen     = #m2n.mesh<[2, 2], base = 4>    // ranks 4..7, rank 4 + 2*i + j at (i, j)
    #stage   = #m2n.mesh<[2], ranks = [1, 3]> // every other rank
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "mesh axis sizes">:$shape,
    DefaultValuedParameter<"int64_t", "0",
        "first communicator rank of a contiguous mesh">:$base,
    OptionalArrayRefParameter<"int64_t",
        "explicit communicator rank of every grid position, row-major">:$ranks
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$shape,
                     CArg<"int64_t", "0">:$base), [{
      return $_get($_ctxt, shape, base, ::llvm::ArrayRef<int64_t>());
    }]>
  ];
  let extraClassDeclaration = [{
    /// Number of mesh axes.
    int64_t getMeshRank() const { return getShape().size(); }
    /// Number of ranks in the mesh (product of the axis sizes).
    int64_t getNumRanks() const;
    /// Communicator rank at row-major grid position `linearIndex`.
    int64_t getRank(int64_t linearIndex) const;
    /// Grid position of communicator rank `rank`, or std::nullopt when the
    /// rank is not part of the mesh.
    std::optional<int64_t> getLinearIndex(int64_t rank) const;
    /// Largest communicator rank in the mesh.
    int64_t getMaxRank() const;
    /// Coordinates of row-major grid position `linearIndex`.
    ::llvm::SmallVector<int64_t> delinearize(int64_t linearIndex) const;
    /// Whether both meshes hold the same rank at every grid position and have
    /// the same shape (a base and an equal explicit list compare equal).
    bool isSameGrid(MeshAttr other) const;
  }];
}

//===----------------------------------------------------------------------===//
// Placements
//===----------------------------------------------------------------------===//

def M2N_PlacementAttrInterface : AttrInterface<"PlacementAttrInterface"> {
  let cppNamespace = "::mlir::m2n";
  let description = [{
    How a tensor is distributed along one mesh axis: `#m2n.shard<d>`,
    `#m2n.replicate` or `#m2n.partial<op>`. Only these three attributes
    implement the interface.
  }];
  let methods = [
    InterfaceMethod<[{
      Whether the ranks along the mesh axis hold final element values, as
      opposed to contributions that still have to be reduced.
    }], "bool", "holdsFinalValues">
  ];
}

def M2N_ShardAttr : M2N_Attr<"Shard", "shard",
    [DeclareAttrInterfaceMethods<M2N_PlacementAttrInterface>]> {
  let summary = "Split one tensor dimension across a mesh axis";
  let description = [{
    `#m2n.shard<d>` on a mesh axis of size `k` gives the rank at index `i`
    along that axis the `i`-th chunk of tensor dimension `d` as `torch.chunk`
    cuts it: chunk size `ceil(n/k)`, trailing chunks short or empty.

    `#m2n.shard<d, [b0, ..., bK]>` splits dimension `d` at explicit
    boundaries instead (upstream MLIR's `sharded_dims_offsets`, a vocabulary
    padded per rank, experts split by cost): the `K` parts of every mesh axis
    that shards `d`, numbered row-major over those axes (the first
    outermost), part `p` being `[b_p, b_{p+1})`. The boundaries start at 0,
    do not decrease (empty parts are allowed) and end at the extent; the
    first mesh axis sharding `d` carries them, the others are `shard<d>`.
    Boundaries that are `torch.chunk`'s are written `shard<d>`: a
    distributed tensor type parses them into that form.
  }];
  let parameters = (ins "int64_t":$dim,
                        OptionalArrayRefParameter<"int64_t">:$boundaries);
  let builders = [
    AttrBuilder<(ins "int64_t":$dim), [{
      return $_get($_ctxt, dim, ::llvm::ArrayRef<int64_t>());
    }]>
  ];
  let assemblyFormat = "`<` $dim (`,` `[` $boundaries^ `]`)? `>`";
  let genVerifyDecl = 1;
  let extraClassDefinition = [{
    bool $cppClass::holdsFinalValues() const { return true; }
  }];
}

def M2N_ReplicateAttr : M2N_Attr<"Replicate", "replicate",
    [DeclareAttrInterfaceMethods<M2N_PlacementAttrInterface>]> {
  let summary = "Every rank along the mesh axis holds the same data";
  let extraClassDefinition = [{
    bool $cppClass::holdsFinalValues() const { return true; }
  }];
}

def M2N_PartialAttr : M2N_Attr<"Partial", "partial",
    [DeclareAttrInterfaceMethods<M2N_PlacementAttrInterface>]> {
  let summary = "Every rank along the mesh axis holds a contribution";
  let description = [{
    `#m2n.partial<sum>` (or `max`, `min`): the logical value of every element
    is the reduction of the values that the ranks along the mesh axis hold.
  }];
  let parameters = (ins EnumParameter<M2N_ReductionKind>:$reduction);
  let assemblyFormat = "`<` $reduction `>`";
  let extraClassDefinition = [{
    bool $cppClass::holdsFinalValues() const { return false; }
  }];
}

//===----------------------------------------------------------------------===//
// Scaling
//===----------------------------------------------------------------------===//

def M2N_ScalingAttr : M2N_Attr<"Scaling", "scaling"> {
  let summary = "Which elements of a quantized tensor share one scale";
  let description = [{
    The scaling mode of an `m2n.reshard` into f8E4M3FN or f8E5M2 whose
    scales are computed from the values it moves, at every launch
    (docs/fp8-scaling.md):

    * `#m2n.scaling<tensor>`: one scale for the whole tensor;
    * `#m2n.scaling<block(R, C)>`: one f32 scale per R x C block of the last
      two dimensions (DeepSeek-V3's `weight_scale_inv`, 128 x 128);
    * `#m2n.scaling<mx>`: OCP MXFP8, one power-of-two scale (f8E8M0FNU) per
      32 consecutive elements of the last dimension.

    Blocks are numbered over the global tensor; a block's scale is computed
    from its absolute maximum, wherever its elements live.
  }];
  let parameters = (ins EnumParameter<M2N_ScalingKind>:$kind,
                        "int64_t":$blockRows, "int64_t":$blockCols);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The mode as the layout library's plain C++ value.
    ::m2n::Scaling getValue() const;
  }];
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

def M2N_LayoutAttr : M2N_Attr<"Layout", "layout"> {
  let summary = "A mesh and one placement per mesh axis";
  let description = [{
    A layout says which part of a global tensor every rank of a mesh holds.
    Inside the brackets the placements drop their `#m2n.` prefix.

    ```mlir
    // Trainer TP4 of the M2N paper's Example A: rows split over ranks 0..3.
    #src = #m2n.layout<#m2n.mesh<[1, 4]>, [replicate, shard<0>]>
    // Generator DP2 x TP2 on ranks 4..7: ranks 4 and 6 hold rows [0, 2),
    // ranks 5 and 7 rows [2, 4).
    #dst = #m2n.layout<#m2n.mesh<[2, 2], base = 4>, [replicate, shard<0>]>
    ```

    All partial placements of one layout use the same reduction: a mix of
    `sum` and `max` has no well-defined logical value.
  }];
  let parameters = (ins
    "MeshAttr":$mesh,
    ArrayRefParameter<"PlacementAttrInterface", "one placement per mesh axis">:$placements
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The reduction of the partial placements, or std::nullopt when the
    /// layout has none.
    std::optional<ReductionKind> getPartialReduction() const;
    /// Mesh axes whose placement is partial.
    ::llvm::SmallVector<int64_t> getPartialAxes() const;
    /// Tensor dimension sharded by mesh axis `axis`, if any.
    std::optional<int64_t> getShardDim(int64_t axis) const;
    /// The same mesh with other placements.
    LayoutAttr withPlacements(::llvm::ArrayRef<PlacementAttrInterface> placements) const;
  }];
}

//===----------------------------------------------------------------------===//
// Topology
//===----------------------------------------------------------------------===//

def M2N_TopologyAttr : M2N_Attr<"Topology", "topology"> {
  let summary = "NVLink domains and link bandwidths of a communicator";
  let description = [{
    The machine as data: `domains` lists the NVLink domains (sets of ranks
    with peer access to each other's memory), `nvlink_gbps` is the NVLink
    bandwidth per direction of one GPU and `network_gbps` the network
    injection bandwidth of one rank, both in GB/s (1e9 bytes per second).
    A rank in no domain is a domain of its own. Domains of consecutive
    ranks may be given by their size instead: `domain_size = N` puts rank r
    in domain r / N, whatever the communicator's size (the default topology
    of a `comm<P>` is `domain_size = P`, one domain).

    ```mlir
    // Two 8-GPU H200 boxes connected by one 400 Gb/s NIC per GPU.
    #topo = #m2n.topology<domains = [[0, 1, 2, 3, 4, 5, 6, 7],
                                     [8, 9, 10, 11, 12, 13, 14, 15]],
                          nvlink_gbps = 450.0, network_gbps = 50.0>
    // The same machine, and any number of such boxes.
    #boxes = #m2n.topology<domain_size = 8, nvlink_gbps = 450.0,
                           network_gbps = 50.0>
    ```

    A module or function carries its topology in the discardable attribute
    `m2n.topology`.
  }];
  let parameters = (ins
    "::mlir::ArrayAttr":$domains,
    APFloatParameter<"NVLink bandwidth per direction per GPU, GB/s">:$nvlinkGBps,
    APFloatParameter<"network injection bandwidth per rank, GB/s">:$networkGBps,
    DefaultValuedParameter<"int64_t", "0",
        "ranks per domain when `domains` is empty (0: listed)">:$domainSize
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Ranks of NVLink domain `index`.
    ::llvm::ArrayRef<int64_t> getDomain(int64_t index) const;
    /// Listed domains (none when the domains are given by their size).
    int64_t getNumDomains() const { return getDomains().size(); }
  }];
}

//===----------------------------------------------------------------------===//
// Launch
//===----------------------------------------------------------------------===//

def M2N_LaunchAttr : M2N_Attr<"Launch", "launch"> {
  let summary = "How one rank's transfer kernel is launched";
  let description = [{
    Written by `--m2n-choose-launch` on every `m2n.rank` and
    `m2n.group_rank`, stored in the artifact and launched by the runtime as
    it is: blocks of (`threads`, `walkers`), every walker (an issuing warp)
    with the kernel's stages of `stage_bytes` each. 128 threads (256 in a
    kernel that quantizes) is the SM path's block (vector items) and runs
    one walker; a table of small items
    runs several walkers of smaller stages.

    ```mlir
    m2n.rank 0 counters = 1 launch <threads = 32, walkers = 8, stage_bytes = 128> { ... }
    ```
  }];
  let parameters = (ins
    AttrParameter<"uint32_t", "threads of a walker: 32, or 128 or 256 (the SM path)">:$threads,
    AttrParameter<"uint32_t", "walkers (issuing warps) of a block">:$walkers,
    AttrParameter<"uint64_t", "bytes of each of a walker's stages">:$stage_bytes
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "const ::m2n::RankLaunch &":$launch), [{
      return $_get($_ctxt, launch.threads, launch.walkers, launch.stageBytes);
    }]>
  ];
  let extraClassDeclaration = [{
    ::m2n::RankLaunch getRankLaunch() const {
      return {getThreads(), getWalkers(), getStageBytes()};
    }
  }];
}

def M2N_KernelLaunchAttr : M2N_Attr<"KernelLaunch", "kernel_launch"> {
  let summary = "How the transfer kernel of a module is launched";
  let description = [{
    The module attribute `m2n.kernel_launch` (`--m2n-choose-launch`): the
    CTAs every rank's kernel launches, the block size of the SM path
    (`threads`: 256 when the kernel quantizes, else 128 when it has vector
    ops, else 32), the compiled
    shared-memory stages a CTA holds (`stages` of `stage_bytes`) and the most
    walkers a rank's launch may run. Every `launch` of the module fits it.

    ```mlir
    module attributes {m2n.kernel_launch = #m2n.kernel_launch<ctas = 16,
        threads = 32, stages = 3, stage_bytes = 65536, walkers = 8>} { ... }
    ```
  }];
  let parameters = (ins
    AttrParameter<"uint32_t", "CTAs a rank's kernel launches">:$ctas,
    AttrParameter<"uint32_t", "the SM path's block: 256 quantizing, 128 with vector ops, else 32">:$threads,
    AttrParameter<"uint32_t", "shared-memory stages of a walker">:$stages,
    AttrParameter<"uint64_t", "bytes of a compiled stage">:$stage_bytes,
    AttrParameter<"uint32_t", "the most walkers a rank's launch may run">:$walkers
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "const ::m2n::KernelLaunch &":$kernel), [{
      return $_get($_ctxt, kernel.ctas, kernel.threads, kernel.stages,
                   kernel.stageBytes, kernel.walkers);
    }]>
  ];
  let extraClassDeclaration = [{
    ::m2n::KernelLaunch getKernelLaunch() const {
      ::m2n::KernelLaunch kernel;
      kernel.ctas = getCtas();
      kernel.threads = getThreads();
      kernel.stages = getStages();
      kernel.stageBytes = getStageBytes();
      kernel.walkers = getWalkers();
      return kernel;
    }
  }];
}

#endif // M2N_DIALECT_M2N_IR_M2NATTRS_TD
