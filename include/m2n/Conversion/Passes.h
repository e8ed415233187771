//===- Passes.h - m2n conversion passes -------------------------*- C++ -*-===//

#ifndef M2N_CONVERSION_PASSES_H
#define M2N_CONVERSION_PASSES_H

#include "m2n/Conversion/M2NToGPU/M2NToGPU.h"

namespace mlir::m2n {

#define GEN_PASS_REGISTRATION
#include "m2n/Conversion/Passes.h.inc"

/// Registers `--m2n-pipeline`: layout-level IR to PTX (see Pipeline.cpp).
void registerM2NPipeline();

/// Registers the dialects, extensions and translations an m2n compilation
/// reads and lowers through (Registration.cpp): m2n-opt and the compiler
/// library register the same.
void registerPipelineDialects(DialectRegistry &registry);

} // namespace mlir::m2n

#endif // M2N_CONVERSION_PASSES_H
