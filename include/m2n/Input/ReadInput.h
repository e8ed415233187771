//===- ReadInput.h - parse and verify the IR users give m2n -----*- C++ -*-===//
//
// Every tool that reads IR text (m2n-opt, m2n-sim, m2n-run, the compiler's C
// API, the fuzzers) reads it here: parsed without MLIR's verification, then
// checked for what upstream verifiers use before they check it, then
// verified. Upstream's shard collectives index the operand's shape with
// their tensor axis and divide by the device group's size inside
// verifySymbolUses, before any bounds check (mlir-opt itself crashes on
// `split_axis = -1` or a grid axis of size 0): those inputs are refused
// here with a diagnostic first.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_INPUT_READINPUT_H
#define M2N_INPUT_READINPUT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringRef.h"

#include <memory>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::m2n {

/// Diagnoses the inputs on which an upstream verifier would read out of
/// bounds or divide by zero; success when MLIR's verifier may run.
LogicalResult checkUpstreamVerifierPreconditions(Operation *root);

/// checkUpstreamVerifierPreconditions, then MLIR's verifier.
LogicalResult verifyInput(Operation *root);

/// Parses a module (an implicit one around top-level ops) and verifies it
/// with verifyInput. Null after a diagnostic.
OwningOpRef<ModuleOp> parseInput(llvm::StringRef text, MLIRContext *context,
                                 llvm::StringRef sourceName);
OwningOpRef<ModuleOp> parseInput(llvm::SourceMgr &sourceMgr,
                                 MLIRContext *context);

/// verifyInput as a pass: m2n-opt runs it first, in place of the
/// verification on parsing that MlirOptMain would do. It changes nothing
/// (so the pass manager does not verify again after it).
std::unique_ptr<Pass> createVerifyInputPass();
/// Registers it as `m2n-verify-input` (pipelines m2n-opt prints and crash
/// reproducers name it).
void registerVerifyInputPass();

} // namespace mlir::m2n

#endif // M2N_INPUT_READINPUT_H
