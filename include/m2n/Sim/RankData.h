//===- RankData.h - seeded test values of one rank's buffers ----*- C++ -*-===//
//
// The values drivers fill sources with and check destinations against, one
// rank at a time, so that a process running some of the ranks checks its
// own: m2n-run (host backend) and the GPU runner (CUDA backend, one process
// or one per GPU) share them.
//
// Element g of contributor q holds a small integer drawn from (seed, g, q):
// exactly representable in every element type, and sums of up to 8
// contributions stay exact even in bf16, so reductions are checked exactly
// whatever the order of the additions.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_SIM_RANKDATA_H
#define M2N_SIM_RANKDATA_H

#include "m2n/Base/Layout.h"
#include "m2n/Base/ElementType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace m2n {

/// The value of global element `g` of contributor `q`: in [-16, 16].
int64_t sourceValue(uint64_t seed, int64_t g, int64_t q);

/// Rank `rank`'s source buffer of a reshard from `src` (empty outside its
/// mesh), filled from `seed`.
std::vector<uint8_t> sourceBytes(const Layout &src,
                                 const std::vector<int64_t> &shape,
                                 ElementType type, int64_t rank,
                                 uint64_t seed);

/// Bytes that poison a destination before a run (0x5A: a NaN pattern for
/// no float type, an unlikely integer).
constexpr uint8_t kPoisonByte = 0x5A;

/// Checks rank `rank`'s destination buffer (of `dst`) after a reshard from
/// sources filled from `seed`: std::nullopt, or the first wrong element.
/// With `sourceType` (an in-flight cast: sources filled in that type), each
/// element is expected to be castElement(*sourceType, type, scale) of its
/// source value.
std::optional<std::string>
checkDestination(const Layout &src, const Layout &dst,
                 const std::vector<int64_t> &shape, ElementType type,
                 int64_t rank, uint64_t seed, const uint8_t *buffer,
                 std::optional<ElementType> sourceType = std::nullopt,
                 float scale = 1.0f);

} // namespace m2n

#endif // M2N_SIM_RANKDATA_H
