//===- Passes.h - m2n transformation passes ---------------------*- C++ -*-===//

#ifndef M2N_DIALECT_M2N_TRANSFORMS_PASSES_H
#define M2N_DIALECT_M2N_TRANSFORMS_PASSES_H

#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace m2n {

#define GEN_PASS_DECL
#include "m2n/Dialect/M2N/Transforms/Passes.h.inc"

/// Patterns that rewrite each named collective into `m2n.reshard`.
void populateExpandCollectivesPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "m2n/Dialect/M2N/Transforms/Passes.h.inc"

} // namespace m2n
} // namespace mlir

#endif // M2N_DIALECT_M2N_TRANSFORMS_PASSES_H
