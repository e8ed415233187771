//===- Artifact.h - the compiler-to-runtime handoff --------------*- C++ -*-===//
//
// An m2n artifact holds everything the runtime needs to execute compiled
// reshards, and nothing that needs MLIR: the PTX of the transfer kernel, its
// launch configuration, and for every reshard its layouts and the per-rank
// programs (kernel work items, network receives, counters) with every
// address relative to a rank's source, destination or scratch buffer.
//
// Binary format, little endian (docs/artifact.md):
//   header:  "M2NA" | u32 version | u64 payload size | u64 FNV-1a of payload
//   payload: the fields of Artifact, in declaration order; strings and
//            vectors as a u64/u32 count followed by their elements.
// Readers verify the magic, the version, the size and the checksum before
// trusting anything, and every field as they read it.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ARTIFACT_ARTIFACT_H
#define M2N_ARTIFACT_ARTIFACT_H

#include "m2n/Artifact/Program.h"
#include "m2n/Base/Layout.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace m2n {

constexpr uint32_t kArtifactVersion = 8;

struct KernelLaunch {
  std::string name = "m2n_transfer";
  uint32_t threads = 32;
  uint32_t ctas = 16;
  uint64_t stageBytes = 65536;
  uint32_t stages = 3;
};

struct CompiledReshard {
  std::string name; // "@func#index"
  /// The destination's element type; a cast's source type and scale are
  /// the program's (TransferProgram::sourceType, scale).
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  Layout src, dst;
  std::string strategy;
  TransferProgram program;
};

struct Artifact {
  std::string ptx;
  std::string chip;
  KernelLaunch kernel;
  std::vector<CompiledReshard> reshards;
};

/// The artifact's bytes.
std::string serializeArtifact(const Artifact &artifact);
/// The same in two parts, for writers that serialize reshards in parallel:
/// one reshard's bytes, and the artifact of `artifact`'s kernel with the
/// given reshard bytes (artifact.reshards is not read).
std::string serializeReshard(const CompiledReshard &reshard);
/// serializeReshard in its two parts: the leading name, and what follows
/// it, which reshards of the same layouts, shape and types share.
std::string serializeReshardName(const std::string &name);
std::string serializeReshardAfterName(const CompiledReshard &reshard);
std::string assembleArtifact(const Artifact &artifact,
                             const std::vector<std::string> &reshards);
/// The same from `reshardCount` reshards' bytes given as consecutive
/// segments (a name, then bytes shared with other reshards).
std::string assembleArtifact(const Artifact &artifact, size_t reshardCount,
                             const std::vector<std::string_view> &segments);
/// Parses and verifies `bytes`; returns a message naming the problem.
std::optional<std::string> deserializeArtifact(const std::string &bytes,
                                               Artifact &artifact);
/// A readable listing (m2n-artifact-dump).
std::string describeArtifact(const Artifact &artifact, bool withPtx);

} // namespace m2n

#endif // M2N_ARTIFACT_ARTIFACT_H
