//===- TransferKernel.h - the transfer kernel, built for an artifact -*- C++ -*-===//

#ifndef M2N_CONVERSION_M2NTOGPU_TRANSFERKERNEL_H
#define M2N_CONVERSION_M2NTOGPU_TRANSFERKERNEL_H

#include "m2n/Artifact/KernelABI.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::m2n {

/// Adds gpu.module @m2n_kernels with the transfer kernel `m2n_transfer`
/// implementing exactly the op codes of `ops` (lib/Conversion/M2NToGPU/
/// TransferKernel.cpp describes it), unless `module` has it already. The
/// module gets no target: nvvm-attach-target adds it.
LogicalResult buildTransferKernel(ModuleOp module, const ::m2n::KernelOps &ops);

} // namespace mlir::m2n

#endif // M2N_CONVERSION_M2NTOGPU_TRANSFERKERNEL_H
