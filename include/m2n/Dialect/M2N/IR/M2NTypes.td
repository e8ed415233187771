//===- M2NTypes.td - communicator and distributed tensor types -*- tablegen -*-===//

#ifndef M2N_DIALECT_M2N_IR_M2NTYPES_TD
#define M2N_DIALECT_M2N_IR_M2NTYPES_TD

include "m2n/Dialect/M2N/IR/M2NAttrs.td"

def M2N_CommType : M2N_Type<"Comm", "comm"> {
  let summary = "A communicator of a fixed number of ranks";
  let description = [{
    `!m2n.comm<P>` is a communicator with ranks `0 .. P-1`. Meshes name ranks
    of the communicator that the operation runs on; at run time the value is
    the runtime's communicator handle.
  }];
  let parameters = (ins "int64_t":$size);
  let assemblyFormat = "`<` $size `>`";
  let genVerifyDecl = 1;
}

def M2N_DistType : M2N_Type<"Dist", "dist"> {
  let summary = "A global tensor distributed over a mesh";
  let description = [{
    `!m2n.dist<4096x8192xbf16, #layout>`: a logical tensor of static global
    shape and element type, of which every rank of the layout's mesh holds the
    local part its placements give it. Ranks outside the mesh hold nothing.

    Element types are integers and floats of whole bytes (i8 .. i64, f8 ..
    f64, bf16).
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "global shape">:$shape,
    "::mlir::Type":$elementType,
    "LayoutAttr":$layout
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    /// The same global tensor in another layout.
    DistType withLayout(LayoutAttr layout) const {
      return get(getContext(), getShape(), getElementType(), layout);
    }
  }];
}

def M2N_AnyDist : Type<CPred<"::llvm::isa<::mlir::m2n::DistType>($_self)">,
                       "distributed tensor", "::mlir::m2n::DistType">;
def M2N_AnyComm : Type<CPred<"::llvm::isa<::mlir::m2n::CommType>($_self)">,
                       "communicator", "::mlir::m2n::CommType">;

#endif // M2N_DIALECT_M2N_IR_M2NTYPES_TD
