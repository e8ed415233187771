//===- Layout.cpp - DTensor layout math without MLIR -----------------------===//

#include "m2n/Base/Layout.h"

#include <algorithm>
#include <sstream>
#include <unordered_set>

namespace m2n {

const char *toString(Reduction reduction) {
  switch (reduction) {
  case Reduction::Sum:
    return "sum";
  case Reduction::Max:
    return "max";
  case Reduction::Min:
    return "min";
  }
  return "?";
}

bool Placement::operator==(const Placement &other) const {
  if (kind != other.kind)
    return false;
  if (kind == Kind::Shard)
    return dim == other.dim && boundaries == other.boundaries;
  if (kind == Kind::Partial)
    return reduction == other.reduction;
  return true;
}

static std::string joinInts(const std::vector<int64_t> &values) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? ", " : "") << values[i];
  os << ']';
  return os.str();
}

std::string Placement::str() const {
  switch (kind) {
  case Kind::Shard:
    return "shard<" + std::to_string(dim) +
           (boundaries.empty() ? "" : ", " + joinInts(boundaries)) + ">";
  case Kind::Replicate:
    return "replicate";
  case Kind::Partial:
    return std::string("partial<") + toString(reduction) + ">";
  }
  return "?";
}


//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

Mesh Mesh::contiguous(std::vector<int64_t> shape, int64_t base) {
  Mesh mesh;
  int64_t size = 1;
  for (int64_t extent : shape)
    size *= std::max<int64_t>(extent, 0);
  mesh.shape = std::move(shape);
  mesh.ranks.resize(size);
  for (int64_t i = 0; i < size; ++i)
    mesh.ranks[i] = base + i;
  return mesh;
}

Mesh Mesh::explicitRanks(std::vector<int64_t> shape,
                         std::vector<int64_t> ranks) {
  Mesh mesh;
  mesh.shape = std::move(shape);
  mesh.ranks = std::move(ranks);
  return mesh;
}

std::optional<int64_t> Mesh::indexOf(int64_t rank) const {
  // Ranks are distinct: where the contiguous guess holds it is the answer,
  // in O(1) for the meshes of contiguous ranks almost every layout has.
  if (!ranks.empty() && rank >= ranks.front() &&
      rank - ranks.front() < size() && ranks[rank - ranks.front()] == rank)
    return rank - ranks.front();
  auto it = std::find(ranks.begin(), ranks.end(), rank);
  if (it == ranks.end())
    return std::nullopt;
  return it - ranks.begin();
}

MeshIndex::MeshIndex(const Mesh &mesh) : count(mesh.size()) {
  first = mesh.ranks.empty() ? 0 : mesh.ranks.front();
  for (int64_t i = 0; i < count && contiguous; ++i)
    contiguous = mesh.ranks[i] == first + i;
  if (contiguous)
    return;
  position.reserve(count);
  for (int64_t i = 0; i < count; ++i)
    position.emplace(mesh.ranks[i], i); // The first position of a rank wins.
}

std::vector<int64_t> Mesh::coords(int64_t linearIndex) const {
  std::vector<int64_t> result(shape.size());
  for (int64_t axis = meshRank() - 1; axis >= 0; --axis) {
    result[axis] = linearIndex % shape[axis];
    linearIndex /= shape[axis];
  }
  return result;
}

int64_t Mesh::maxRank() const {
  return ranks.empty() ? -1 : *std::max_element(ranks.begin(), ranks.end());
}

//===----------------------------------------------------------------------===//
// Intervals and boxes
//===----------------------------------------------------------------------===//

Interval chunkOf(int64_t size, int64_t parts, int64_t index) {
  int64_t chunk = size / parts + (size % parts != 0); // ceil, no overflow
  int64_t begin = std::min(index * chunk, size);
  return {begin, std::min(begin + chunk, size)};
}

int64_t Box::volume() const {
  int64_t volume = 1;
  for (int64_t size : sizes)
    volume *= std::max<int64_t>(size, 0);
  return volume;
}

bool Box::empty() const {
  return std::any_of(sizes.begin(), sizes.end(),
                     [](int64_t size) { return size <= 0; });
}

Box Box::intersect(const Box &other) const {
  Box result{Dims(sizes.size()), Dims(sizes.size())};
  for (size_t d = 0; d < sizes.size(); ++d) {
    int64_t begin = std::max(offsets[d], other.offsets[d]);
    int64_t end = std::min(offsets[d] + sizes[d],
                           other.offsets[d] + other.sizes[d]);
    result.offsets[d] = begin;
    result.sizes[d] = std::max<int64_t>(end - begin, 0);
  }
  return result;
}

bool Box::contains(const Box &other) const {
  if (other.sizes.size() != sizes.size())
    return false;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (other.offsets[d] < offsets[d] ||
        other.offsets[d] + other.sizes[d] > offsets[d] + sizes[d])
      return false;
  return true;
}

Box Box::relativeTo(const Dims &origin) const {
  Box result = *this;
  for (size_t d = 0; d < sizes.size(); ++d)
    result.offsets[d] -= origin[d];
  return result;
}

std::string Box::str() const {
  std::ostringstream os;
  os << '[';
  for (size_t d = 0; d < sizes.size(); ++d)
    os << (d ? ", " : "") << offsets[d] << ':' << offsets[d] + sizes[d];
  os << ']';
  return os.str();
}

//===----------------------------------------------------------------------===//
// Layout
//===----------------------------------------------------------------------===//

int64_t Layout::numContributors() const {
  int64_t count = 1;
  for (size_t axis = 0; axis < placements.size(); ++axis)
    if (placements[axis].isPartial())
      count *= mesh.shape[axis];
  return count;
}

int64_t Layout::contributorIndex(int64_t linearIndex) const {
  std::vector<int64_t> coords = mesh.coords(linearIndex);
  int64_t index = 0;
  for (size_t axis = 0; axis < placements.size(); ++axis)
    if (placements[axis].isPartial())
      index = index * mesh.shape[axis] + coords[axis];
  return index;
}

std::optional<Reduction> Layout::reduction() const {
  for (const Placement &placement : placements)
    if (placement.isPartial())
      return placement.reduction;
  return std::nullopt;
}

Box Layout::localBox(const std::vector<int64_t> &shape,
                     int64_t linearIndex) const {
  Box box{Dims(shape.size(), 0), Dims(shape)};
  std::vector<int64_t> coords = mesh.coords(linearIndex);
  for (size_t axis = 0; axis < placements.size(); ++axis) {
    const Placement &placement = placements[axis];
    if (!placement.isShard())
      continue;
    int64_t d = placement.dim;
    if (const Placement *explicitParts = boundariesOf(d)) {
      if (explicitParts != &placement)
        continue; // The first axis sharding d placed it.
      int64_t part = 0;
      for (size_t a = axis; a < placements.size(); ++a)
        if (placements[a].isShard() && placements[a].dim == d)
          part = part * mesh.shape[a] + coords[a];
      box.offsets[d] = placement.boundaries[part];
      box.sizes[d] =
          placement.boundaries[part + 1] - placement.boundaries[part];
      continue;
    }
    Interval part = chunkOf(box.sizes[d], mesh.shape[axis], coords[axis]);
    box.offsets[d] += part.begin;
    box.sizes[d] = part.size();
  }
  return box;
}

int64_t Layout::partsOf(int64_t dim) const {
  int64_t parts = 1;
  for (size_t axis = 0; axis < placements.size(); ++axis)
    if (placements[axis].isShard() && placements[axis].dim == dim)
      parts *= mesh.shape[axis];
  return parts;
}

const Placement *Layout::boundariesOf(int64_t dim) const {
  for (const Placement &placement : placements)
    if (placement.isShard() && placement.dim == dim)
      return placement.boundaries.empty() ? nullptr : &placement;
  return nullptr;
}

bool Layout::hasBoundaries() const {
  return std::any_of(placements.begin(), placements.end(),
                     [](const Placement &placement) {
                       return !placement.boundaries.empty();
                     });
}

std::optional<std::string> checkBoundaries(const Layout &layout) {
  for (size_t axis = 0; axis < layout.placements.size(); ++axis) {
    const Placement &placement = layout.placements[axis];
    if (placement.boundaries.empty())
      continue;
    std::string where = "mesh axis " + std::to_string(axis);
    if (!placement.isShard())
      return where + " has boundaries but does not shard";
    for (size_t before = 0; before < axis; ++before)
      if (layout.placements[before].isShard() &&
          layout.placements[before].dim == placement.dim)
        return where + " has boundaries of dimension " +
               std::to_string(placement.dim) + ", but mesh axis " +
               std::to_string(before) +
               " shards it first: the first axis carries every part's "
               "boundaries";
    if (axis >= layout.mesh.shape.size())
      continue; // validateLayout names the missing axis.
    // Parts over the axes sharding dim, bounded like a mesh (no overflow).
    int64_t parts = 1;
    for (size_t a = axis; a < layout.placements.size() &&
                          a < layout.mesh.shape.size();
         ++a)
      if (layout.placements[a].isShard() &&
          layout.placements[a].dim == placement.dim)
        parts = std::min(parts * std::clamp<int64_t>(layout.mesh.shape[a], 0,
                                                     kMaxCommunicatorRanks),
                         kMaxCommunicatorRanks + 1);
    const std::vector<int64_t> &b = placement.boundaries;
    if (static_cast<int64_t>(b.size()) != parts + 1)
      return where + " gives " + std::to_string(b.size()) +
             " boundaries of dimension " + std::to_string(placement.dim) +
             " but the mesh axes sharding it cut it into " +
             std::to_string(parts) + " parts (" + std::to_string(parts + 1) +
             " boundaries)";
    if (b.front() != 0)
      return where + ": the boundaries of dimension " +
             std::to_string(placement.dim) + " start at " +
             std::to_string(b.front()) + ", not 0";
    for (size_t i = 1; i < b.size(); ++i)
      if (b[i] < b[i - 1])
        return where + ": the boundaries of dimension " +
               std::to_string(placement.dim) + " decrease (" +
               std::to_string(b[i - 1]) + " then " + std::to_string(b[i]) +
               ")";
  }
  return std::nullopt;
}

std::vector<int64_t> chunkBoundaries(const Layout &layout, int64_t dim,
                                     int64_t extent) {
  std::vector<int64_t> sizes; // Of the axes sharding dim, outermost first.
  for (size_t axis = 0; axis < layout.placements.size(); ++axis)
    if (layout.placements[axis].isShard() &&
        layout.placements[axis].dim == dim)
      sizes.push_back(layout.mesh.shape[axis]);
  std::vector<int64_t> boundaries;
  // Part p's begin: nested chunks, its digits outermost first.
  std::vector<int64_t> digits(sizes.size(), 0);
  for (int64_t parts = layout.partsOf(dim), p = 0; p < parts; ++p) {
    Interval range{0, extent};
    for (size_t level = 0; level < sizes.size(); ++level) {
      Interval inner = chunkOf(range.size(), sizes[level], digits[level]);
      range = {range.begin + inner.begin, range.begin + inner.end};
    }
    boundaries.push_back(range.begin);
    for (size_t level = sizes.size(); level-- > 0;) {
      if (++digits[level] < sizes[level])
        break;
      digits[level] = 0;
    }
  }
  boundaries.push_back(extent);
  return boundaries;
}

Layout withoutBoundaries(Layout layout) {
  for (Placement &placement : layout.placements)
    placement.boundaries.clear();
  return layout;
}

Layout canonicalLayout(Layout layout, const std::vector<int64_t> &shape) {
  for (Placement &placement : layout.placements)
    if (!placement.boundaries.empty() &&
        placement.boundaries ==
            chunkBoundaries(layout, placement.dim, shape[placement.dim]))
      placement.boundaries.clear();
  return layout;
}

std::string Layout::str() const {
  std::ostringstream os;
  os << "mesh " << joinInts(mesh.shape) << " ranks " << joinInts(mesh.ranks)
     << ", [";
  for (size_t i = 0; i < placements.size(); ++i)
    os << (i ? ", " : "") << placements[i].str();
  os << ']';
  return os.str();
}

std::optional<std::string> checkMeshShape(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "mesh must have at least one axis";
  int64_t size = 1;
  for (size_t axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] <= 0)
      return "mesh axis " + std::to_string(axis) + " has size " +
             std::to_string(shape[axis]);
    if (shape[axis] > kMaxCommunicatorRanks / size)
      return "mesh has more than " + std::to_string(kMaxCommunicatorRanks) +
             " ranks";
    size *= shape[axis];
  }
  return std::nullopt;
}

std::optional<std::string> validateLayout(const Layout &layout,
                                          const std::vector<int64_t> &shape,
                                          int64_t commSize) {
  const Mesh &mesh = layout.mesh;
  if (std::optional<std::string> wrong = checkMeshShape(mesh.shape))
    return wrong;
  int64_t size = 1;
  for (int64_t extent : mesh.shape)
    size *= extent;
  if (size != mesh.size())
    return "mesh of " + std::to_string(size) + " ranks has a rank list of " +
           std::to_string(mesh.size()) + " entries";
  std::unordered_set<int64_t> seen;
  for (int64_t rank : mesh.ranks) {
    if (rank < 0 || rank >= commSize)
      return "mesh rank " + std::to_string(rank) +
             " is outside the communicator of " + std::to_string(commSize) +
             " ranks";
    if (!seen.insert(rank).second)
      return "mesh contains rank " + std::to_string(rank) + " more than once";
  }
  return validatePlacements(layout, shape);
}

std::optional<std::string>
validatePlacements(const Layout &layout, const std::vector<int64_t> &shape) {
  const Mesh &mesh = layout.mesh;
  if (layout.placements.size() != mesh.shape.size())
    return "layout has " + std::to_string(layout.placements.size()) +
           " placements but its mesh has " + std::to_string(mesh.meshRank()) +
           " axes";
  std::optional<Reduction> reduction;
  for (size_t axis = 0; axis < layout.placements.size(); ++axis) {
    const Placement &placement = layout.placements[axis];
    if (placement.isShard() &&
        (placement.dim < 0 ||
         placement.dim >= static_cast<int64_t>(shape.size())))
      return "mesh axis " + std::to_string(axis) + " shards dimension " +
             std::to_string(placement.dim) + " of a rank-" +
             std::to_string(shape.size()) + " tensor";
    if (placement.isPartial()) {
      if (reduction && *reduction != placement.reduction)
        return "partial placements use different reductions";
      reduction = placement.reduction;
    }
  }
  for (int64_t extent : shape)
    if (extent < 0)
      return "tensor extents must be non-negative";
  if (std::optional<std::string> wrong = checkBoundaries(layout))
    return wrong;
  for (size_t axis = 0; axis < layout.placements.size(); ++axis) {
    const Placement &placement = layout.placements[axis];
    if (!placement.boundaries.empty() &&
        placement.boundaries.back() != shape[placement.dim])
      return "mesh axis " + std::to_string(axis) +
             ": the boundaries of dimension " + std::to_string(placement.dim) +
             " end at " + std::to_string(placement.boundaries.back()) +
             ", not at its extent " + std::to_string(shape[placement.dim]);
  }
  return std::nullopt;
}

std::optional<std::string> validateReshard(const Layout &src,
                                           const Layout &dst,
                                           const std::vector<int64_t> &shape,
                                           int64_t commSize) {
  if (auto error = validateLayout(src, shape, commSize))
    return "source: " + *error;
  if (auto error = validateLayout(dst, shape, commSize))
    return "destination: " + *error;
  return checkPartialDestination(src, dst);
}

std::optional<std::string> checkPartialDestination(const Layout &src,
                                                   const Layout &dst) {
  if (!dst.hasPartial())
    return std::nullopt;
  if (src.mesh.shape != dst.mesh.shape || src.mesh.ranks != dst.mesh.ranks)
    return "destination has partial placements, so its mesh must be the "
           "source mesh: a reshard keeps partial contributions on the ranks "
           "that hold them";
  for (size_t axis = 0; axis < dst.placements.size(); ++axis)
    if (dst.placements[axis].isPartial() &&
        !src.placements[axis].isPartial())
      return "destination is partial on mesh axis " + std::to_string(axis) +
             " where the source is " + src.placements[axis].str() +
             "; a reshard reduces partial axes or keeps them, it does not "
             "create them";
  if (src.reduction() != dst.reduction())
    return std::string("destination reduction '") + toString(*dst.reduction()) +
           "' differs from source reduction '" + toString(*src.reduction()) +
           "'";
  return std::nullopt;
}

int64_t keptContributor(const Layout &src, const Layout &dst,
                        int64_t srcContributor) {
  // Peel the source contributor's coordinates off, last partial axis first,
  // and keep those of the axes that stay partial.
  int64_t kept = 0, keptStride = 1;
  for (size_t a = src.placements.size(); a-- > 0;) {
    if (!src.placements[a].isPartial())
      continue;
    int64_t extent = src.mesh.shape[a];
    int64_t coord = srcContributor % extent;
    srcContributor /= extent;
    if (a < dst.placements.size() && dst.placements[a].isPartial()) {
      kept += coord * keptStride;
      keptStride *= extent;
    }
  }
  return kept;
}

std::vector<int64_t> contributorsOf(const Layout &src, const Layout &dst,
                                    int64_t dstLinearIndex) {
  const int64_t own = dst.contributorIndex(dstLinearIndex);
  std::vector<int64_t> result;
  for (int64_t c = 0; c < src.numContributors(); ++c)
    if (keptContributor(src, dst, c) == own)
      result.push_back(c);
  return result;
}

int64_t linearize(const std::vector<int64_t> &index,
                  const std::vector<int64_t> &shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    linear = linear * shape[d] + index[d];
  return linear;
}

int64_t linearize(const Dims &index, const Dims &shape) {
  int64_t linear = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    linear = linear * shape[d] + index[d];
  return linear;
}

} // namespace m2n
