//===- M2NProperties.h - m2n.move's typed properties ------------*- C++ -*-===//
//
// `m2n.move` stores its mechanism, counters, waits and repeats as the
// artifact's own C++ types (m2n::Mechanism, CounterRef, CounterWait, Repeat:
// Program.h), so the op, the artifact and the runtime share one definition
// of each and nothing packs them into integer arrays. These are the hooks
// ODS's property storage needs for them (M2NBase.td's M2N_*Prop): their
// attribute form (the generic syntax `<{...}>`), bytecode and hash. They
// live in namespace m2n so that the generated code finds them by
// argument-dependent lookup beside MLIR's own overloads.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_DIALECT_M2N_IR_M2NPROPERTIES_H
#define M2N_DIALECT_M2N_IR_M2NPROPERTIES_H

#include "m2n/Artifact/Program.h"

#include "mlir/Bytecode/BytecodeImplementation.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/Hashing.h"

namespace m2n {

// Attribute forms: the mechanism's name ("bulk"); a counter [rank, index];
// a wait [rank, index, value]; a repeat [count, src stride, dst stride, dim].
mlir::Attribute convertToAttribute(mlir::MLIRContext *context,
                                   Mechanism mechanism);
mlir::Attribute convertToAttribute(mlir::MLIRContext *context,
                                   const CounterRef &counter);
mlir::Attribute convertToAttribute(mlir::MLIRContext *context,
                                   const CounterWait &wait);
mlir::Attribute convertToAttribute(mlir::MLIRContext *context,
                                   const Repeat &repeat);
mlir::Attribute convertToAttribute(mlir::MLIRContext *context,
                                   const BlockLookup &lookup);

using PropertyDiagnostic = llvm::function_ref<mlir::InFlightDiagnostic()>;
llvm::LogicalResult convertFromAttribute(Mechanism &mechanism,
                                         mlir::Attribute attr,
                                         PropertyDiagnostic diag);
llvm::LogicalResult convertFromAttribute(CounterRef &counter,
                                         mlir::Attribute attr,
                                         PropertyDiagnostic diag);
llvm::LogicalResult convertFromAttribute(CounterWait &wait,
                                         mlir::Attribute attr,
                                         PropertyDiagnostic diag);
llvm::LogicalResult convertFromAttribute(Repeat &repeat, mlir::Attribute attr,
                                         PropertyDiagnostic diag);
llvm::LogicalResult convertFromAttribute(BlockLookup &lookup,
                                         mlir::Attribute attr,
                                         PropertyDiagnostic diag);

void writeToMlirBytecode(mlir::DialectBytecodeWriter &writer,
                         Mechanism mechanism);
void writeToMlirBytecode(mlir::DialectBytecodeWriter &writer,
                         const CounterRef &counter);
void writeToMlirBytecode(mlir::DialectBytecodeWriter &writer,
                         const CounterWait &wait);
void writeToMlirBytecode(mlir::DialectBytecodeWriter &writer,
                         const Repeat &repeat);
void writeToMlirBytecode(mlir::DialectBytecodeWriter &writer,
                         const BlockLookup &lookup);
llvm::LogicalResult readFromMlirBytecode(mlir::DialectBytecodeReader &reader,
                                         Mechanism &mechanism);
llvm::LogicalResult readFromMlirBytecode(mlir::DialectBytecodeReader &reader,
                                         CounterRef &counter);
llvm::LogicalResult readFromMlirBytecode(mlir::DialectBytecodeReader &reader,
                                         CounterWait &wait);
llvm::LogicalResult readFromMlirBytecode(mlir::DialectBytecodeReader &reader,
                                         Repeat &repeat);
llvm::LogicalResult readFromMlirBytecode(mlir::DialectBytecodeReader &reader,
                                         BlockLookup &lookup);

inline llvm::hash_code hash_value(Mechanism mechanism) {
  return llvm::hash_value(static_cast<unsigned>(mechanism));
}
inline llvm::hash_code hash_value(const CounterRef &counter) {
  return llvm::hash_combine(counter.rank, counter.index);
}
inline llvm::hash_code hash_value(const CounterWait &wait) {
  return llvm::hash_combine(wait.counter.rank, wait.counter.index, wait.value);
}
inline llvm::hash_code hash_value(const Repeat &repeat) {
  return llvm::hash_combine(repeat.count, repeat.srcStride, repeat.dstStride,
                            repeat.dim, repeat.entryStride);
}
inline llvm::hash_code hash_value(const BlockLookup &lookup) {
  return llvm::hash_combine(lookup.entry, lookup.phase, lookup.width);
}

} // namespace m2n

#endif // M2N_DIALECT_M2N_IR_M2NPROPERTIES_H
