//===- M2NOps.h - m2n operations --------------------------------*- C++ -*-===//

#ifndef M2N_DIALECT_M2N_IR_M2NOPS_H
#define M2N_DIALECT_M2N_IR_M2NOPS_H

#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "m2n/Artifact/Program.h"
#include "m2n/Dialect/M2N/IR/M2NProperties.h"

#include <map>

#define GET_OP_CLASSES
#include "m2n/Dialect/M2N/IR/M2NOps.h.inc"

#endif // M2N_DIALECT_M2N_IR_M2NOPS_H
