//===- Layout.h - DTensor layout math without MLIR ---------------*- C++ -*-===//
//
// Plain C++ (standard library only) so that the runtime, the simulator and
// the compiler share one definition of "which part of the tensor does rank r
// hold". The semantics are PyTorch DTensor's:
//
//  * A mesh is a row-major grid (last axis fastest) of communicator ranks.
//  * shard(d) on a mesh axis of size k gives the rank at index i along it the
//    i-th torch.chunk of the *current* extent of dimension d: chunk size
//    ceil(n/k), chunk i = [min(i*c, n), min((i+1)*c, n)). Mesh axes apply in
//    order, so with several axes sharding one dimension, axis 0 is outermost.
//  * shard(d) with explicit boundaries (upstream MLIR's sharded_dims_offsets,
//    a padded vocabulary, experts split by cost) instead: the mesh axes that
//    shard d number its parts row-major (the first axis outermost), and part
//    p is [b[p], b[p+1]). The first axis sharding d carries all the parts'
//    boundaries; boundaries equal to the chunk rule's are that rule
//    (canonicalLayout drops them).
//  * replicate: every rank along the axis holds the same elements.
//  * partial(op): every rank along the axis holds a contribution to the same
//    elements; the contributor index of a rank is its row-major position
//    over the partial axes only.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_BASE_LAYOUT_H
#define M2N_BASE_LAYOUT_H

#include "m2n/Base/InlineList.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace m2n {

enum class Reduction { Sum, Max, Min };

/// "sum", "max" or "min".
const char *toString(Reduction reduction);

/// How a tensor is distributed along one mesh axis.
struct Placement {
  enum class Kind { Shard, Replicate, Partial };

  Kind kind = Kind::Replicate;
  int64_t dim = -1;                     // Shard only.
  Reduction reduction = Reduction::Sum; // Partial only.
  /// Shard only, on the first mesh axis that shards `dim`: the explicit
  /// boundaries of its parts (parts + 1 offsets, non-decreasing, from 0 to
  /// the extent). Empty: torch.chunk's rule.
  std::vector<int64_t> boundaries;

  static Placement shard(int64_t dim, std::vector<int64_t> boundaries = {}) {
    return {Kind::Shard, dim, {}, std::move(boundaries)};
  }
  static Placement replicate() { return {Kind::Replicate, -1, {}, {}}; }
  static Placement partial(Reduction op) {
    return {Kind::Partial, -1, op, {}};
  }

  bool isShard() const { return kind == Kind::Shard; }
  bool isReplicate() const { return kind == Kind::Replicate; }
  bool isPartial() const { return kind == Kind::Partial; }
  bool operator==(const Placement &other) const;
  bool operator!=(const Placement &other) const { return !(*this == other); }
  /// "shard<0>", "shard<0, [0, 2, 5, 7]>", "replicate", "partial<sum>".
  std::string str() const;
};

/// A row-major grid of communicator ranks.
struct Mesh {
  /// The most ranks a mesh holds: every rank's part is computed, and its
  /// rank list held, so a mesh is bounded well below the 2^31 ranks a
  /// communicator may number (2^20 is several times the largest cluster).
  static constexpr int64_t kMaxSize = int64_t(1) << 20;

  std::vector<int64_t> shape;
  /// Communicator rank at every grid position, row-major.
  std::vector<int64_t> ranks;

  /// The contiguous ranks base .. base + prod(shape) - 1.
  static Mesh contiguous(std::vector<int64_t> shape, int64_t base = 0);
  static Mesh explicitRanks(std::vector<int64_t> shape,
                            std::vector<int64_t> ranks);

  int64_t size() const { return static_cast<int64_t>(ranks.size()); }
  int64_t meshRank() const { return static_cast<int64_t>(shape.size()); }
  int64_t rankAt(int64_t linearIndex) const { return ranks[linearIndex]; }
  /// Grid position of a communicator rank, if it is in the mesh.
  std::optional<int64_t> indexOf(int64_t rank) const;
  /// Coordinates of a grid position.
  std::vector<int64_t> coords(int64_t linearIndex) const;
  /// Largest rank in the mesh (-1 for an empty mesh).
  int64_t maxRank() const;
};

/// Mesh::indexOf in constant time for any mesh, for code that asks once per
/// transfer or step: Mesh::indexOf scans a mesh whose ranks are not
/// contiguous (pipeline stages, strided groups).
class MeshIndex {
public:
  explicit MeshIndex(const Mesh &mesh);
  std::optional<int64_t> indexOf(int64_t rank) const {
    if (contiguous)
      return rank >= first && rank - first < count
                 ? std::optional<int64_t>(rank - first)
                 : std::nullopt;
    auto it = position.find(rank);
    return it == position.end() ? std::nullopt
                                : std::optional<int64_t>(it->second);
  }

private:
  bool contiguous = true;
  int64_t first = 0, count = 0;
  std::unordered_map<int64_t, int64_t> position; // Rank -> grid position.
};

/// A half-open interval [begin, end).
struct Interval {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
  bool empty() const { return end <= begin; }
};

/// Chunk `index` of `parts` of an extent `size`, as torch.chunk cuts it.
Interval chunkOf(int64_t size, int64_t parts, int64_t index);

/// A short list of extents or coordinates, stored inline up to 6 entries.
/// Plans hold one box per transfer and hundreds of thousands of transfers;
/// keeping boxes off the heap makes planning several times faster.
class Dims : public InlineList<int64_t, 6> {
public:
  using InlineList::InlineList;
  Dims() = default;
  explicit Dims(size_t count, int64_t value = 0) { resize(count, value); }
};

/// An axis-aligned box: per dimension an offset and a size.
struct Box {
  Dims offsets, sizes;

  int64_t rank() const { return static_cast<int64_t>(sizes.size()); }
  int64_t volume() const;
  bool empty() const;
  /// The common part of two boxes of the same rank (possibly empty).
  Box intersect(const Box &other) const;
  /// Whether `other` lies inside this box.
  bool contains(const Box &other) const;
  /// The same box with `origin` subtracted from its offsets.
  Box relativeTo(const Dims &origin) const;
  bool operator==(const Box &other) const {
    return offsets == other.offsets && sizes == other.sizes;
  }
  /// "[0:1, 0:8]" (half-open ranges).
  std::string str() const;
};

/// A mesh with one placement per mesh axis.
struct Layout {
  Mesh mesh;
  std::vector<Placement> placements;

  /// Number of partial contributors (product of the partial axis sizes; 1
  /// when there is no partial placement).
  int64_t numContributors() const;
  /// Contributor index of grid position `linearIndex` (0 when not partial).
  int64_t contributorIndex(int64_t linearIndex) const;
  /// The reduction of the partial placements, if any.
  std::optional<Reduction> reduction() const;
  bool hasPartial() const { return reduction().has_value(); }
  /// Global box held by grid position `linearIndex` of a tensor of `shape`.
  Box localBox(const std::vector<int64_t> &shape, int64_t linearIndex) const;
  /// The parts that the mesh axes sharding tensor dimension `dim` cut it
  /// into (1 where none does).
  int64_t partsOf(int64_t dim) const;
  /// The placement carrying dimension `dim`'s explicit boundaries, or
  /// nullptr where its parts follow the chunk rule.
  const Placement *boundariesOf(int64_t dim) const;
  /// Whether some dimension has explicit boundaries.
  bool hasBoundaries() const;
  /// "mesh [2, 2] ranks [4, 5, 6, 7], [replicate, shard<0>]".
  std::string str() const;
};

/// The most ranks a communicator has (the IR's `!m2n.comm<N>` bound): every
/// rank fits the C APIs' `int`.
constexpr int64_t kMaxCommunicatorRanks = int64_t(1) << 31;

/// Checks a layout against a global shape and a communicator size; returns
/// a message naming the problem, or std::nullopt when the layout is valid.
std::optional<std::string> validateLayout(const Layout &layout,
                                          const std::vector<int64_t> &shape,
                                          int64_t commSize);

/// Checks a mesh's axes: at least one, each at least 1, at most
/// kMaxCommunicatorRanks positions in all.
std::optional<std::string> checkMeshShape(const std::vector<int64_t> &shape);

/// validateLayout without the mesh's rank list (what a layout says about a
/// tensor of `shape` given only its mesh's axes): one placement per axis,
/// dimensions in range, one reduction, explicit boundaries that fit.
std::optional<std::string> validatePlacements(const Layout &layout,
                                              const std::vector<int64_t> &shape);

/// Checks what a layout's explicit boundaries say without the tensor's
/// extents: only on the first mesh axis sharding their dimension, one more
/// than its parts, from 0, non-decreasing. Returns a message naming the
/// problem, or std::nullopt. validateLayout adds that each ends at its
/// dimension's extent.
std::optional<std::string> checkBoundaries(const Layout &layout);

/// The boundaries that the chunk rule gives dimension `dim` (of extent
/// `extent`) of `layout`: partsOf(dim) + 1 offsets.
std::vector<int64_t> chunkBoundaries(const Layout &layout, int64_t dim,
                                     int64_t extent);

/// `layout` (valid for `shape`) without the explicit boundaries that equal
/// the chunk rule's: one spelling of every partition.
Layout canonicalLayout(Layout layout, const std::vector<int64_t> &shape);

/// `layout` with every dimension split by torch.chunk's rule: the layout a
/// quantizing reshard's scale tensor names (its ranks hold the blocks their
/// parts touch, not a split of it).
Layout withoutBoundaries(Layout layout);

/// The rule for a partial destination, shared by every front end: it uses the
/// source mesh, is partial only on mesh axes where the source is partial
/// (a reshard reduces some partial axes and keeps the others, as DTensor
/// does; it never creates one) and keeps the source reduction. Returns a
/// message naming the problem, or std::nullopt.
std::optional<std::string> checkPartialDestination(const Layout &src,
                                                   const Layout &dst);

/// The destination contributor that source contributor `srcContributor`
/// feeds: its coordinates on the mesh axes that `dst` keeps partial (0 when
/// `dst` has none). `dst` must pass checkPartialDestination.
int64_t keptContributor(const Layout &src, const Layout &dst,
                        int64_t srcContributor);

/// The source contributors, in increasing order, whose reduction destination
/// grid position `dstLinearIndex` holds: all of them for a destination
/// without partial axes, those with its coordinates on the kept axes
/// otherwise.
std::vector<int64_t> contributorsOf(const Layout &src, const Layout &dst,
                                    int64_t dstLinearIndex);

/// Whether a reshard from `src` to `dst` combines contributions (some source
/// partial axis is not kept).
inline bool reducesContributions(const Layout &src, const Layout &dst) {
  return src.numContributors() > dst.numContributors();
}

/// Checks that a reshard from `src` to `dst` is well defined (both layouts
/// valid, checkPartialDestination).
std::optional<std::string> validateReshard(const Layout &src,
                                           const Layout &dst,
                                           const std::vector<int64_t> &shape,
                                           int64_t commSize);

/// Row-major linear index of `index` in a tensor of `shape`.
int64_t linearize(const std::vector<int64_t> &index,
                  const std::vector<int64_t> &shape);
int64_t linearize(const Dims &index, const Dims &shape);

} // namespace m2n

#endif // M2N_BASE_LAYOUT_H
