//===- ShardyOps.td - the part of Shardy that m2n imports ---*- tablegen -*-===//
//
// Shardy (openxla/shardy) is not packaged for Debian, and m2n does not vendor
// it: these are m2n's own definitions of the few `sdy` and `mpmd` ops,
// attributes and types that --m2n-import-sdy reads, parsing and printing
// Shardy's exact syntax (docs/integration.md). Nothing else of Shardy is
// registered; a program with other Shardy ops does not parse.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_DIALECT_SHARDY_SHARDYOPS_TD
#define M2N_DIALECT_SHARDY_SHARDYOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Sdy_Dialect : Dialect {
  let name = "sdy";
  let cppNamespace = "::mlir::m2n::sdy";
  let summary = "Shardy's sharding representation, as far as m2n imports it";
  let useDefaultAttributePrinterParser = 1;
}

def Mpmd_Dialect : Dialect {
  let name = "mpmd";
  let cppNamespace = "::mlir::m2n::mpmd";
  let summary = "Shardy's MPMD meshes and transfers, as far as m2n imports them";
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::mlir::m2n::sdy::SdyDialect"];
}

//===----------------------------------------------------------------------===//
// sdy attributes
//===----------------------------------------------------------------------===//

class Sdy_Attr<string name, string attrMnemonic> : AttrDef<Sdy_Dialect, name> {
  let mnemonic = attrMnemonic;
  let hasCustomAssemblyFormat = 1;
}

def Sdy_Mesh : Sdy_Attr<"Mesh", "mesh"> {
  let summary = "Named axes with sizes, and the devices in row-major order";
  let description = [{
    `<["x"=2, "y"=4]>`, `<["a"=2], device_ids=[1, 0]>`, `<[]>`. Devices are
    the row-major positions over the axes in order (the first axis major),
    or `device_ids[position]`.
  }];
  let parameters = (ins "::mlir::ArrayAttr":$axisNames,
                        ArrayRefParameter<"int64_t">:$axisSizes,
                        ArrayRefParameter<"int64_t">:$deviceIds);
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t deviceCount() const;
    /// The index of axis `name`, or -1.
    int64_t axisIndex(::llvm::StringRef name) const;
  }];
}

def Sdy_AxisRef : Sdy_Attr<"AxisRef", "axis_ref"> {
  let summary = "A mesh axis, or its sub-axis `\"x\":(pre)size`";
  let parameters = (ins "::mlir::StringAttr":$name, "int64_t":$preSize,
                        "int64_t":$size);
  let extraClassDeclaration = [{
    /// Whether it names the whole axis (no sub-axis).
    bool isWhole() const { return getSize() == 0; }
  }];
}

def Sdy_DimSharding : Sdy_Attr<"DimSharding", "dim_sharding"> {
  let summary = "The axes that split one tensor dimension, major first";
  let parameters = (ins ArrayRefParameter<"AxisRefAttr">:$axes,
                        "bool":$closed, "int64_t":$priority);
}

def Sdy_TensorSharding : Sdy_Attr<"TensorSharding", "sharding"> {
  let summary = "A tensor's sharding: mesh, dimension shardings, extras";
  let description = [{
    `<@mesh, [{"x"}, {"y", ?}p1, {} ], replicated={"z"}, unreduced=max{"w"}>`
    (Shardy's TensorShardingAttr): `mesh` is a symbol of an `sdy.mesh` or an
    inline mesh `mesh<[...]>`; `unreducedKind` is sum, max or min.
  }];
  let parameters = (ins "::mlir::Attribute":$mesh,
                        ArrayRefParameter<"DimShardingAttr">:$dims,
                        ArrayRefParameter<"AxisRefAttr">:$replicated,
                        ArrayRefParameter<"AxisRefAttr">:$unreduced,
                        "::mlir::StringAttr":$unreducedKind);
}

def Sdy_TensorShardingPerValue
    : Sdy_Attr<"TensorShardingPerValue", "sharding_per_value"> {
  let summary = "One sharding per result of an op";
  let parameters = (ins ArrayRefParameter<"TensorShardingAttr">:$shardings);
}

//===----------------------------------------------------------------------===//
// sdy ops
//===----------------------------------------------------------------------===//

class Sdy_Op<string mnemonic, list<Trait> traits = []>
    : Op<Sdy_Dialect, mnemonic, traits>;

def Sdy_MeshOp : Sdy_Op<"mesh", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "`sdy.mesh @name = <[\"x\"=2]>`";
  let arguments = (ins SymbolNameAttr:$sym_name, Sdy_Mesh:$mesh);
  let assemblyFormat = "$sym_name `=` $mesh attr-dict";
}

class Sdy_ShardingOp<string mnemonic>
    : Sdy_Op<mnemonic, [SameOperandsAndResultType]> {
  let arguments = (ins AnyRankedTensor:$input, Sdy_TensorSharding:$sharding);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input $sharding attr-dict `:` type($result)";
}

def Sdy_ReshardOp : Sdy_ShardingOp<"reshard"> {
  let summary = "Moves a tensor to another sharding";
}

def Sdy_ShardingConstraintOp : Sdy_ShardingOp<"sharding_constraint"> {
  let summary = "Constrains a tensor's sharding at this point";
}

// The collectives: `sdy.all_gather [{}, {"x"}] %x out_sharding=<...> : T`.
// What each does follows from its operand's sharding and out_sharding;
// --m2n-import-sdy imports it as that reshard (after checking that the
// op's parameters give out_sharding).
class Sdy_CollectiveOp<string mnemonic>
    : Sdy_Op<mnemonic, [SameOperandsAndResultType]> {
  let results = (outs AnyRankedTensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Sdy_AllGatherOp : Sdy_CollectiveOp<"all_gather"> {
  let summary = "Gathers the listed (minor-most) axes of each dimension";
  let arguments = (ins AnyRankedTensor:$tensor, ArrayAttr:$gatheringAxes,
                       Sdy_TensorSharding:$outSharding);
}
def Sdy_AllSliceOp : Sdy_CollectiveOp<"all_slice"> {
  let summary = "Splits each dimension further by the listed axes";
  let arguments = (ins AnyRankedTensor:$tensor, ArrayAttr:$slicingAxes,
                       Sdy_TensorSharding:$outSharding);
}
def Sdy_AllToAllOp : Sdy_CollectiveOp<"all_to_all"> {
  let summary = "Moves axes from the end of one dimension to another's";
  let arguments = (ins AnyRankedTensor:$tensor, ArrayAttr:$params,
                       Sdy_TensorSharding:$outSharding);
}
def Sdy_CollectivePermuteOp : Sdy_CollectiveOp<"collective_permute"> {
  let summary = "Reorders or replaces the axes of each dimension";
  let arguments = (ins AnyRankedTensor:$tensor,
                       Sdy_TensorSharding:$outSharding);
}
def Sdy_AllReduceOp : Sdy_CollectiveOp<"all_reduce"> {
  let summary = "Reduces the unreduced contributions along the listed axes";
  let arguments = (ins AnyRankedTensor:$tensor, ArrayAttr:$reductionAxes,
                       StrAttr:$kind, Sdy_TensorSharding:$outSharding);
}
def Sdy_ReduceScatterOp : Sdy_CollectiveOp<"reduce_scatter"> {
  let summary = "all_reduce over the listed axes, then all_slice by them";
  let arguments = (ins AnyRankedTensor:$tensor, ArrayAttr:$reduceScatterAxes,
                       StrAttr:$kind, Sdy_TensorSharding:$outSharding);
}

//===----------------------------------------------------------------------===//
// mpmd
//===----------------------------------------------------------------------===//

def Mpmd_Topology : AttrDef<Mpmd_Dialect, "Topology"> {
  let mnemonic = "topology";
  let summary = "The named meshes of an MPMD program";
  let description = [{
    `#mpmd.topology<<"m1": <["x"=2]>>, <"m2": <["x"=4]>>>` on the main
    function: each mesh is its own set of devices.
  }];
  let parameters = (ins "::mlir::ArrayAttr":$names,
                        ArrayRefParameter<"::mlir::m2n::sdy::MeshAttr">:$meshes);
  let hasCustomAssemblyFormat = 1;
}

def Mpmd_MeshTensor : TypeDef<Mpmd_Dialect, "MeshTensor"> {
  let mnemonic = "mesh_tensor";
  let summary = "A tensor on one mesh of the topology, with its sharding";
  let description = [{
    `!mpmd.mesh_tensor<"m1", tensor<8x16xf32>, sharding=<@mesh, [{"x"}, {} ]>>`
    (no sharding: replicated; `memory_kind="..."` is kept, not used). The
    sharding's mesh symbol is a placeholder: the mesh is the topology's
    mesh of that name.
  }];
  let parameters = (ins "::mlir::StringAttr":$meshName,
                        "::mlir::RankedTensorType":$rankedTensorType,
                        "::mlir::m2n::sdy::TensorShardingAttr":$sharding,
                        "::mlir::StringAttr":$memoryKind);
  let hasCustomAssemblyFormat = 1;
}

class Mpmd_Op<string mnemonic, list<Trait> traits = []>
    : Op<Mpmd_Dialect, mnemonic, traits>;

def Mpmd_TransferOp : Mpmd_Op<"transfer"> {
  let summary = "Moves a distributed tensor from one mesh to another";
  let arguments = (ins Mpmd_MeshTensor:$tensor);
  let results = (outs Mpmd_MeshTensor:$result);
  let assemblyFormat = "attr-dict $tensor `:` functional-type(operands, results)";
}

def Mpmd_AssignOp : Mpmd_Op<"assign"> {
  let summary = "Places a local tensor on a mesh";
  let arguments = (ins AnyRankedTensor:$tensor);
  let results = (outs Mpmd_MeshTensor:$result);
  let assemblyFormat = "attr-dict $tensor `:` functional-type(operands, results)";
}

def Mpmd_UnassignOp : Mpmd_Op<"unassign"> {
  let summary = "The local tensor of a mesh tensor";
  let arguments = (ins Mpmd_MeshTensor:$tensor);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "attr-dict $tensor `:` functional-type(operands, results)";
}

def Mpmd_FragmentOp : Mpmd_Op<"fragment", [
    SingleBlockImplicitTerminator<"ReturnOp">, IsolatedFromAbove]> {
  let summary = "A computation on one mesh (kept as it is by the import)";
  let description = [{
    `%r = mpmd.fragment<mesh="m1", origin=["f"(1)], stage=0,
    in_shardings=[...], out_shardings=[...]> (%x) {attrs} (%a: tensor<...>)
    { ... mpmd.return %v : tensor<...> } : (types) -> (types)`: its region
    computes on local tensors; --m2n-import-sdy leaves it alone and imports
    the transfers between fragments.
  }];
  let arguments = (ins Variadic<AnyType>:$inputs, StrAttr:$mesh_name,
                       ArrayAttr:$origin, OptionalAttr<I64Attr>:$stage_id,
                       OptionalAttr<ArrayAttr>:$in_shardings,
                       OptionalAttr<ArrayAttr>:$out_shardings);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$region);
  let hasCustomAssemblyFormat = 1;
}

def Mpmd_ReturnOp : Mpmd_Op<"return", [Terminator, HasParent<"FragmentOp">]> {
  let summary = "The results of a fragment";
  let arguments = (ins Variadic<AnyType>:$results);
  let assemblyFormat = "attr-dict ($results^ `:` type($results))?";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
}

#endif // M2N_DIALECT_SHARDY_SHARDYOPS_TD
