//===- M2NBase.td - m2n dialect definition ------------------*- tablegen -*-===//
//
// The m2n dialect: distributed tensors described by (mesh, placements)
// layouts, and the reshard that moves a tensor from one layout to another.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_DIALECT_M2N_IR_M2NBASE_TD
#define M2N_DIALECT_M2N_IR_M2NBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def M2N_Dialect : Dialect {
  let name = "m2n";
  let cppNamespace = "::mlir::m2n";
  let summary = "Layout-derived communication: reshards and collectives";
  let description = [{
    The `m2n` dialect describes tensors that are distributed over the ranks of a
    communicator, and the communication that moves them from one distribution
    to another.

    A distribution is a *layout*: a mesh (a row-major grid of communicator
    ranks, or an explicit rank list) and one *placement* per mesh axis:

    * `shard<d>` splits tensor dimension `d` across that mesh axis. Sizes follow
      `torch.chunk`: each of the `k` ranks along the axis gets `ceil(n/k)`
      elements, trailing ranks may get fewer or none. Several mesh axes may
      shard the same tensor dimension; mesh axis 0 is the outermost split.
    * `replicate`: every rank along the axis holds the same data.
    * `partial<sum|max|min>`: every rank along the axis holds a contribution;
      the logical value is the reduction of the contributions.

    These are exactly PyTorch DTensor's semantics, so a layout round-trips to a
    `DeviceMesh` plus `placements` without loss.

    The value of a distributed tensor is the whole logical (global) tensor; its
    type `!m2n.dist<shape x elt, #layout>` records which part each rank holds.
    `m2n.reshard` changes the layout of such a value; the named collectives
    (`m2n.all_gather`, `m2n.reduce_scatter`, `m2n.all_reduce`,
    `m2n.all_to_all`) are reshards with a fixed relation between the two
    layouts and expand into `m2n.reshard` (`--m2n-expand-collectives`).
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerAttributes();
    void registerTypes();

    /// Name of the discardable attribute that attaches a `#m2n.topology` to a
    /// module or function.
    static constexpr ::llvm::StringLiteral getTopologyAttrName() {
      return ::llvm::StringLiteral("m2n.topology");
    }

    /// Name of the discardable module attribute naming the op codes of the
    /// transfer kernel (m2n-convert-to-gpu):
    /// `{bulk = array<i32: ...>, tile = array<i32: ...>, vector = array<i32: ...>}`.
    static constexpr ::llvm::StringLiteral getKernelOpsAttrName() {
      return ::llvm::StringLiteral("m2n.kernel_ops");
    }

    /// Name of the discardable module attribute that holds the transfer
    /// kernel's `#m2n.kernel_launch` (m2n-choose-launch).
    static constexpr ::llvm::StringLiteral getKernelLaunchAttrName() {
      return ::llvm::StringLiteral("m2n.kernel_launch");
    }
  }];
}

def M2N_ReductionKind : I32EnumAttr<"ReductionKind",
    "reduction that combines the contributions of a partial placement", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::m2n";
}

def M2N_ScalingKind : I32EnumAttr<"ScalingKind",
    "which elements a quantizing reshard puts under one scale", [
      I32EnumAttrCase<"Tensor", 0, "tensor">,
      I32EnumAttrCase<"Block", 1, "block">,
      I32EnumAttrCase<"Mx", 2, "mx">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::m2n";
}

def M2N_BufferKind : I32EnumAttr<"BufferKind",
    "which buffer of a rank a schedule step reads or writes", [
      I32EnumAttrCase<"Source", 0, "src">,
      I32EnumAttrCase<"Destination", 1, "dst">,
      I32EnumAttrCase<"Scratch", 2, "scratch">,
      I32EnumAttrCase<"Slots", 3, "slots">,
      I32EnumAttrCase<"Holder", 4, "holder">,
      I32EnumAttrCase<"Scales", 5, "scales">,
      I32EnumAttrCase<"Quantizer", 6, "quantizer">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::m2n";
}

def M2N_StepKind : I32EnumAttr<"StepKind",
    "what a step of a quantizing schedule's amax exchange computes", [
      I32EnumAttrCase<"Amax", 1, "amax">,
      I32EnumAttrCase<"Scale", 2, "scale">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::m2n";
}

def M2N_LinkClass : I32EnumAttr<"LinkClass",
    "how a schedule step's bytes travel", [
      I32EnumAttrCase<"Local", 0, "local">,
      I32EnumAttrCase<"NVLink", 1, "nvlink">,
      I32EnumAttrCase<"Network", 2, "network">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::m2n";
}

def M2N_ReductionKindAttr : EnumAttr<M2N_Dialect, M2N_ReductionKind,
                                   "reduction"> {
  let assemblyFormat = "`<` $value `>`";
}
def M2N_BufferKindAttr : EnumAttr<M2N_Dialect, M2N_BufferKind, "buffer"> {
  let assemblyFormat = "`<` $value `>`";
}
def M2N_LinkClassAttr : EnumAttr<M2N_Dialect, M2N_LinkClass, "link"> {
  let assemblyFormat = "`<` $value `>`";
}

// A signless i64 attribute read as a signed value, so that ranks, ids and
// dimensions that are negative by mistake reach the verifiers as negative.
def M2N_I64Attr : TypedSignlessIntegerAttrBase<I64, "int64_t",
                                               "64-bit integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

class M2N_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<M2N_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

class M2N_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<M2N_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

class M2N_Op<string mnemonic, list<Trait> traits = []>
    : Op<M2N_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// m2n.move's typed properties
//===----------------------------------------------------------------------===//

// The artifact's own C++ types (m2n/Artifact/Program.h), stored in the op as
// they are: one definition of a mechanism, a counter, a wait and a repeat
// for the IR, the artifact and the runtime. Attribute form, bytecode and
// hash: m2n/Dialect/M2N/IR/M2NProperties.h.
class M2N_ArtifactProp<string cppType, string desc>
    : Property<"::m2n::" # cppType, desc> {
  let hashProperty = "::m2n::hash_value($_storage)";
}
def M2N_MechanismProp : M2N_ArtifactProp<"Mechanism", "a move's mechanism">;
def M2N_CounterRefProp
    : M2N_ArtifactProp<"CounterRef", "a counter (rank, index)">;
def M2N_CounterWaitProp
    : M2N_ArtifactProp<"CounterWait", "a wait (counter, value)">;
def M2N_RepeatProp : M2N_ArtifactProp<"Repeat", "a repeat level">;
def M2N_BlockLookupProp
    : M2N_ArtifactProp<"BlockLookup", "a block lookup (entry, phase, width)">;

#endif // M2N_DIALECT_M2N_IR_M2NBASE_TD
