//===- CompileRequest.h - a structured request as a module ------*- C++ -*-===//
//
// The frontends describe what they compile by values (m2n-c/Compiler.h:
// m2n_compile_request): layouts as meshes and placements, element types,
// casts and scalings. This builds the module they describe, the same
// module an m2n-opt user would write, after checking every descriptor with
// the layout library's rules (the runtime's m2n_layout_local_box checks the
// same way).
//
//===----------------------------------------------------------------------===//

#ifndef M2N_COMPILER_COMPILEREQUEST_H
#define M2N_COMPILER_COMPILEREQUEST_H

#include "m2n-c/Compiler.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace m2n {

/// The module of `request`, or null with the reason in `error`.
mlir::OwningOpRef<mlir::ModuleOp>
buildRequestModule(mlir::MLIRContext &context,
                   const m2n_compile_request &request, std::string &error);

} // namespace m2n

#endif // M2N_COMPILER_COMPILEREQUEST_H
