//===- TensorMap.h - a tile's tensor map for the TMA unit -------*- C++ -*-===//
//
// A program's TensorMapSpec (a buffer's extents and the tile box, outermost
// dimension first) turned into the arguments of cuTensorMapEncodeTiled
// (innermost first, strides in bytes), with the limits the TMA unit has.
// Plain C++, so that the runtime's encoding is tested on machines without a
// GPU and the program verifier refuses a map the driver would.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ARTIFACT_TENSORMAP_H
#define M2N_ARTIFACT_TENSORMAP_H

#include "m2n/Artifact/Program.h"

#include <cstdint>
#include <optional>
#include <string>

namespace m2n {

/// What cuTensorMapEncodeTiled takes, innermost dimension first.
struct TensorMapGeometry {
  static constexpr int kMaxRank = 5;
  int rank = 0;
  uint64_t dims[kMaxRank] = {};        // Elements per dimension.
  uint64_t strides[kMaxRank - 1] = {}; // Bytes between rows of dimension d+1.
  uint32_t box[kMaxRank] = {};         // The tile's elements per dimension.
};

/// The geometry of `spec` over elements of `elementBytes` bytes, or why the
/// TMA unit cannot take it: 1 to 5 dimensions, at most 2^32 elements per
/// dimension, strides multiples of 16 bytes below 2^40, boxes of 1 to 256
/// elements per dimension inside the extents, a box row a multiple of 16
/// bytes.
std::optional<std::string> tensorMapGeometry(const TensorMapSpec &spec,
                                             int64_t elementBytes,
                                             TensorMapGeometry &geometry);

} // namespace m2n

#endif // M2N_ARTIFACT_TENSORMAP_H
