//===- RandomLayouts.h - random layouts for property tests -------*- C++ -*-===//

#ifndef M2N_UNITTESTS_LAYOUT_RANDOMLAYOUTS_H
#define M2N_UNITTESTS_LAYOUT_RANDOMLAYOUTS_H

#include "m2n/Base/Layout.h"
#include "m2n/Base/ElementType.h"
#include "m2n/Base/Scaling.h"

#include <algorithm>
#include <cstdlib>
#include <random>

namespace m2n {

constexpr int64_t kCommSize = 16;

/// Random shapes, meshes (contiguous or permuted explicit rank lists of a
/// 16-rank communicator), placements and element types.
class RandomLayouts {
public:
  explicit RandomLayouts(uint64_t seed) : rng(seed) {}

  int64_t uniform(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }

  std::vector<int64_t> shape() {
    std::vector<int64_t> result(uniform(0, 4));
    for (int64_t &extent : result)
      extent = uniform(0, 9) == 0 ? uniform(0, 2) : uniform(1, 9);
    return result;
  }

  Mesh mesh() {
    std::vector<int64_t> shape;
    int64_t size = 1;
    for (int64_t axes = uniform(1, 3); axes > 0; --axes) {
      int64_t extent = uniform(1, 4);
      if (size * extent > kCommSize)
        extent = 1;
      shape.push_back(extent);
      size *= extent;
    }
    if (uniform(0, 1))
      return Mesh::contiguous(shape, uniform(0, kCommSize - size));
    std::vector<int64_t> ranks(kCommSize);
    for (int64_t r = 0; r < kCommSize; ++r)
      ranks[r] = r;
    std::shuffle(ranks.begin(), ranks.end(), rng);
    ranks.resize(size);
    return Mesh::explicitRanks(shape, ranks);
  }

  Placement placement(int64_t tensorRank, bool allowPartial, Reduction op) {
    int64_t choice = uniform(0, 9);
    if (allowPartial && choice < 2)
      return Placement::partial(op);
    if (tensorRank > 0 && choice < 7)
      return Placement::shard(uniform(0, tensorRank - 1));
    return Placement::replicate();
  }

  Layout layout(int64_t tensorRank, bool allowPartial) {
    Layout result{mesh(), {}};
    Reduction op = static_cast<Reduction>(uniform(0, 2));
    for (int64_t axis = 0; axis < result.mesh.meshRank(); ++axis)
      result.placements.push_back(placement(tensorRank, allowPartial, op));
    return result;
  }

  /// A destination that keeps a non-empty subset of the source's partial
  /// axes (all of them a third of the time) and reduces the others.
  Layout keepPartial(const Layout &src, int64_t tensorRank) {
    Layout result = src;
    bool keepAll = uniform(0, 2) == 0, keptOne = false;
    for (Placement &placement : result.placements) {
      bool keep = placement.isPartial() &&
                  (keepAll || !keptOne || uniform(0, 1) == 0);
      keptOne |= keep;
      if (!keep)
        placement = this->placement(tensorRank, false, Reduction::Sum);
    }
    return result;
  }

  /// The destination of a random reshard from `src`: a fresh layout without
  /// partials or, when `src` has partial axes, one that keeps some of them
  /// (one time in five; three times in four with several partial axes).
  Layout destination(const Layout &src, int64_t tensorRank) {
    int64_t partialAxes = std::count_if(
        src.placements.begin(), src.placements.end(),
        [](const Placement &placement) { return placement.isPartial(); });
    // Several partial axes: keep some of them three times in four.
    if (partialAxes > 1 ? uniform(0, 3) != 0 : partialAxes == 1 && uniform(0, 4) == 0)
      return keepPartial(src, tensorRank);
    return layout(tensorRank, /*allowPartial=*/false);
  }

  /// `layout` with, one time in three for each sharded dimension of
  /// `shape`, explicit random boundaries (empty parts one time in four, in
  /// canonical form: those equal to torch.chunk's dropped).
  Layout withBoundaries(Layout layout, const std::vector<int64_t> &shape) {
    for (Placement &placement : layout.placements) {
      if (!placement.isShard() || layout.boundariesOf(placement.dim) ||
          &placement != firstShard(layout, placement.dim) ||
          uniform(0, 2) != 0)
        continue;
      int64_t parts = layout.partsOf(placement.dim);
      int64_t extent = shape[placement.dim];
      bool emptyParts = uniform(0, 3) == 0;
      std::vector<int64_t> cuts(parts - 1);
      for (int64_t &cut : cuts)
        cut = emptyParts && uniform(0, 1) ? (uniform(0, 1) ? 0 : extent)
                                          : uniform(0, extent);
      std::sort(cuts.begin(), cuts.end());
      placement.boundaries = {0};
      placement.boundaries.insert(placement.boundaries.end(), cuts.begin(),
                                  cuts.end());
      placement.boundaries.push_back(extent);
    }
    return canonicalLayout(std::move(layout), shape);
  }

  /// A reducible type (the 8-bit floats are drawn separately).
  ElementType elementType() {
    return reducibleTypeAt(static_cast<int>(uniform(0, kReducibleTypeCount - 1)));
  }

public:
  std::mt19937_64 rng;

  static const Placement *firstShard(const Layout &layout, int64_t dim) {
    for (const Placement &placement : layout.placements)
      if (placement.isShard() && placement.dim == dim)
        return &placement;
    return nullptr;
  }

  /// A small shape of `rank` dims (1 to 9 each) and a scaling it admits:
  /// tensor, block(1-4, 1-4) (rank >= 2) or mx (the last dim 32, 64 or 96).
  Scaling quantizing(int64_t rank, std::vector<int64_t> &shape) {
    shape.assign(rank, 0);
    for (int64_t &extent : shape)
      extent = uniform(1, 9);
    int64_t mode = uniform(0, 2);
    if (mode == 1 && rank >= 2) {
      int64_t rows = uniform(1, 4); // One draw per statement.
      return Scaling::block(rows, uniform(1, 4));
    }
    if (mode == 2) {
      shape.back() = 32 * uniform(1, 3);
      return Scaling::mx();
    }
    return Scaling::tensor();
  }
};

/// M2N_PROPERTY_SEED overrides the fixed default seed.
inline uint64_t propertySeed() {
  if (const char *env = std::getenv("M2N_PROPERTY_SEED"))
    return std::strtoull(env, nullptr, 10);
  return 20261130;
}

/// M2N_PROPERTY_CASES overrides the default number of cases.
inline int64_t propertyCases(int64_t defaultCases) {
  if (const char *env = std::getenv("M2N_PROPERTY_CASES"))
    return std::strtoll(env, nullptr, 10);
  return defaultCases;
}

} // namespace m2n

#endif // M2N_UNITTESTS_LAYOUT_RANDOMLAYOUTS_H
