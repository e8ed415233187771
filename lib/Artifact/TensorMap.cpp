//===- TensorMap.cpp - a tile's tensor map as the TMA unit takes it -------===//

#include "m2n/Artifact/TensorMap.h"

namespace m2n {

std::optional<std::string> tensorMapGeometry(const TensorMapSpec &spec,
                                             int64_t elementBytes,
                                             TensorMapGeometry &geometry) {
  const int64_t rank = static_cast<int64_t>(spec.extents.size());
  if (rank < 1 || rank > TensorMapGeometry::kMaxRank)
    return "has " + std::to_string(rank) + " dimensions (1 to " +
           std::to_string(TensorMapGeometry::kMaxRank) + ")";
  if (static_cast<int64_t>(spec.box.size()) != rank)
    return "has a box of " + std::to_string(spec.box.size()) +
           " dimensions over " + std::to_string(rank);
  if (elementBytes < 1 || elementBytes > 8)
    return "has elements of " + std::to_string(elementBytes) + " bytes";
  geometry = TensorMapGeometry();
  geometry.rank = static_cast<int>(rank);
  constexpr int64_t kMaxExtent = int64_t(1) << 32;
  constexpr int64_t kMaxStride = int64_t(1) << 40;
  int64_t pitch = elementBytes; // Bytes of one row of the dimension below.
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t dim = rank - 1 - d; // The spec's order: outermost first.
    const int64_t extent = spec.extents[dim], box = spec.box[dim];
    if (extent < 1 || extent > kMaxExtent)
      return "dimension " + std::to_string(dim) + " has " +
             std::to_string(extent) + " elements (1 to 2^32)";
    if (box < 1 || box > 256 || box > extent)
      return "dimension " + std::to_string(dim) + " has a box of " +
             std::to_string(box) + " elements (1 to 256, within " +
             std::to_string(extent) + ")";
    if (d > 0) {
      if (pitch % 16 || pitch >= kMaxStride)
        return "dimension " + std::to_string(dim) + " has a stride of " +
               std::to_string(pitch) +
               " bytes (a multiple of 16 below 2^40)";
      geometry.strides[d - 1] = static_cast<uint64_t>(pitch);
    }
    geometry.dims[d] = static_cast<uint64_t>(extent);
    geometry.box[d] = static_cast<uint32_t>(box);
    // The extents are at most 2^32 each and the pitch below 2^40 (checked
    // before it grows further): the product stays within int64.
    if (d + 1 < rank && pitch > kMaxStride / extent)
      return "dimension " + std::to_string(dim - 1) + " has a stride of " +
             "2^40 bytes or more";
    pitch *= extent;
  }
  if ((geometry.box[0] * elementBytes) % 16)
    return "has box rows of " + std::to_string(geometry.box[0] * elementBytes) +
           " bytes (a multiple of 16)";
  return std::nullopt;
}

} // namespace m2n
