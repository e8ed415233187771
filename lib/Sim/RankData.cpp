//===- RankData.cpp - seeded test values of one rank's buffers ------------===//

#include "m2n/Sim/RankData.h"

#include <cmath>

namespace m2n {

namespace {
/// Calls fn(localIndex, globalLinearIndex) over a box of a tensor.
template <typename Fn>
void forEachElementOf(const Box &box, const std::vector<int64_t> &shape,
                      Fn fn) {
  int64_t volume = box.volume();
  std::vector<int64_t> index(box.rank(), 0), global(box.rank());
  for (int64_t local = 0; local < volume; ++local) {
    for (int64_t d = 0; d < box.rank(); ++d)
      global[d] = box.offsets[d] + index[d];
    fn(local, linearize(global, shape));
    for (int64_t d = box.rank() - 1; d >= 0; --d) {
      if (++index[d] < box.sizes[d])
        break;
      index[d] = 0;
    }
  }
}
} // namespace

int64_t sourceValue(uint64_t seed, int64_t g, int64_t q) {
  uint64_t x = seed ^ (static_cast<uint64_t>(g) * 0x9E3779B97F4A7C15ull) ^
               (static_cast<uint64_t>(q + 1) * 0xC2B2AE3D27D4EB4Full);
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 29;
  return static_cast<int64_t>(x % 33) - 16;
}

std::vector<uint8_t> sourceBytes(const Layout &src,
                                 const std::vector<int64_t> &shape,
                                 ElementType type, int64_t rank,
                                 uint64_t seed) {
  std::optional<int64_t> index = src.mesh.indexOf(rank);
  if (!index)
    return {};
  const int64_t size = elementSize(type);
  Box box = src.localBox(shape, *index);
  std::vector<uint8_t> bytes(box.volume() * size);
  int64_t q = src.contributorIndex(*index);
  forEachElementOf(box, shape, [&](int64_t local, int64_t g) {
    storeElement(type, bytes.data() + local * size, sourceValue(seed, g, q));
  });
  return bytes;
}

std::optional<std::string>
checkDestination(const Layout &src, const Layout &dst,
                 const std::vector<int64_t> &shape, ElementType type,
                 int64_t rank, uint64_t seed, const uint8_t *buffer,
                 std::optional<ElementType> sourceType, float scale) {
  std::optional<int64_t> index = dst.mesh.indexOf(rank);
  if (!index)
    return std::nullopt;
  const int64_t size = elementSize(type);
  const std::optional<Reduction> op = src.reduction();
  // The contributions this rank's value combines (all of them, or those of
  // its own coordinates on the partial axes a destination keeps).
  const std::vector<int64_t> contributors = contributorsOf(src, dst, *index);
  std::vector<uint8_t> expected(size), term(size);
  std::optional<std::string> problem;
  forEachElementOf(dst.localBox(shape, *index), shape,
                   [&](int64_t local, int64_t g) {
                     if (problem)
                       return;
                     if (sourceType && *sourceType != type) {
                       std::vector<uint8_t> source(elementSize(*sourceType));
                       storeElement(*sourceType, source.data(),
                                    sourceValue(seed, g, contributors.front()));
                       castElement(*sourceType, type, scale, expected.data(),
                                   source.data());
                     }
                     for (int64_t q : sourceType && *sourceType != type
                                          ? std::vector<int64_t>{}
                                          : contributors) {
                       bool first = q == contributors.front();
                       std::vector<uint8_t> &slot = first ? expected : term;
                       storeElement(type, slot.data(), sourceValue(seed, g, q));
                       if (!first)
                         reduceElement(type, *op, expected.data(),
                                       term.data());
                     }
                     const uint8_t *got = buffer + local * size;
                     if (sameBits(type, got, expected.data()))
                       return;
                     problem = "rank " + std::to_string(rank) + " element " +
                               std::to_string(local) + ": expected " +
                               std::to_string(loadElement(type, expected.data())) +
                               ", got " +
                               std::to_string(loadElement(type, got));
                   });
  return problem;
}

} // namespace m2n
