//===- ShardyDialect.h - the sdy and mpmd subset m2n imports ----*- C++ -*-===//
//
// m2n's own definitions of the Shardy ops, attributes and types that
// --m2n-import-sdy reads (ShardyOps.td says why they are not Shardy's).
//
//===----------------------------------------------------------------------===//

#ifndef M2N_DIALECT_SHARDY_SHARDYDIALECT_H
#define M2N_DIALECT_SHARDY_SHARDYDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "m2n/Dialect/Shardy/MpmdDialect.h.inc"
#include "m2n/Dialect/Shardy/SdyDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "m2n/Dialect/Shardy/SdyAttrs.h.inc"
#define GET_ATTRDEF_CLASSES
#include "m2n/Dialect/Shardy/MpmdAttrs.h.inc"
#define GET_TYPEDEF_CLASSES
#include "m2n/Dialect/Shardy/MpmdTypes.h.inc"
#define GET_OP_CLASSES
#include "m2n/Dialect/Shardy/ShardyOps.h.inc"

#endif // M2N_DIALECT_SHARDY_SHARDYDIALECT_H
