//===- KernelTableCheck.h - the kernel's walk against the expansion -------===//
//
// What every kernel table must hold: walker w of a grid of G materializes,
// in order, exactly items w, w + G, ... of the rank's expansion (every
// movement's instances one item each, m2n::encodeItems), bit for bit; and
// as many items as kernelItemCount counts from the program.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_UNITTESTS_CODEGEN_KERNELTABLECHECK_H
#define M2N_UNITTESTS_CODEGEN_KERNELTABLECHECK_H

#include "m2n/Artifact/KernelTable.h"

#include <gtest/gtest.h>

#include <cstring>

namespace m2n {

/// Distinct bases for every buffer, counter and tensor map.
inline ItemAddresses distinctAddresses() {
  ItemAddresses addresses;
  addresses.buffer = [](const BufferRef &ref) {
    return (uint64_t{1} << 44) * (static_cast<uint64_t>(ref.kind) + 1) +
           (uint64_t{1} << 36) * static_cast<uint64_t>(ref.rank) +
           (uint64_t{1} << 32) * static_cast<uint64_t>(ref.scratch + 1) +
           (uint64_t{1} << 24) * static_cast<uint64_t>(ref.tensor + 1);
  };
  addresses.counter = [](const CounterRef &counter) {
    return (uint64_t{1} << 50) +
           8 * static_cast<uint64_t>(counter.rank * 4096 + counter.index);
  };
  addresses.tensorMap = [](int64_t map) { return uint64_t{1} << 20 | map; };
  return addresses;
}

/// Checks the walk of every rank of `program` for a grid of `grid`
/// walkers.
inline void expectWalkMatchesExpansion(const TransferProgram &program,
                                       uint64_t grid) {
  const ItemAddresses addresses = distinctAddresses();
  for (const auto &[rank, rankProgram] : program.ranks) {
    std::vector<KernelItem> expanded;
    KernelTable table;
    for (const Movement &m : rankProgram.items) {
      EXPECT_EQ(encodeItems(m, program, addresses, expanded), std::nullopt);
      EXPECT_EQ(encodeTemplates(m, program, addresses, table.templates),
                std::nullopt);
    }
    walkTemplates(table, grid);
    EXPECT_EQ(table.items, expanded.size()) << "rank " << rank;
    // What the runtime counts before it encodes (its co-residency check).
    EXPECT_EQ(kernelItemCount(rankProgram), table.items) << "rank " << rank;
    for (uint64_t w = 0; w < grid; ++w) {
      const std::vector<KernelItem> walked = walkerItems(table, w);
      uint64_t k = 0;
      for (uint64_t g = w; g < expanded.size(); g += grid, ++k) {
        ASSERT_LT(k, walked.size()) << "rank " << rank << " walker " << w;
        ASSERT_EQ(std::memcmp(&walked[k], &expanded[g], sizeof(KernelItem)), 0)
            << "rank " << rank << " walker " << w << " item " << g << " of "
            << expanded.size() << " (grid " << grid << ")";
      }
      ASSERT_EQ(k, walked.size()) << "rank " << rank << " walker " << w;
    }
  }
}

} // namespace m2n

#endif // M2N_UNITTESTS_CODEGEN_KERNELTABLECHECK_H
