//===- KernelABI.h - the transfer kernel's work-item record ------*- C++ -*-===//
//
// The host-side mirror of the 128-byte record the transfer kernel reads
// (lib/Conversion/M2NToGPU/TransferKernel.mlir). The runtime fills it; its
// layout is part of the artifact's contract with the kernel.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_CODEGEN_KERNELABI_H
#define M2N_CODEGEN_KERNELABI_H

#include <cstddef>
#include <cstdint>

namespace m2n {

struct KernelItem {
  uint64_t src, dst;    // Addresses (bulk) or CUtensorMap addresses (tile).
  uint32_t bytes, op;   // Bytes moved; copy or reduction.
  uint64_t signal;      // Counter to increment once the bytes landed, or 0.
  uint64_t wait0, value0, wait1, value1; // Counters and values (x epoch).
  uint32_t kind, rank;  // 0 bulk, 1 tile; tile rank (1-5).
  int32_t srcCoords[5], dstCoords[5]; // Tile corners, innermost first.
  uint32_t flags;       // KernelItemFlags.
  uint32_t pad;
  uint64_t readDone;    // A peer's counter to increment once the bytes are
                        // read (the item reads that peer's buffer), or 0.
};

/// Bits of KernelItem::flags.
enum KernelItemFlags : uint32_t {
  /// The waits order only the store: the load may be issued ahead.
  kStoreWaits = 1,
};
static_assert(sizeof(KernelItem) == 128, "the kernel reads 128-byte items");
static_assert(offsetof(KernelItem, flags) == 112 &&
                  offsetof(KernelItem, readDone) == 120,
              "field offsets are the kernel's (TransferKernel.mlir)");

} // namespace m2n

#endif // M2N_CODEGEN_KERNELABI_H
