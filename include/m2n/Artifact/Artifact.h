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
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace m2n {

constexpr uint32_t kArtifactVersion = 11;
/// The most bytes of serialized programs the reshards of a loaded artifact
/// may stand for, each reshard counting its program once: 4 GiB (a
/// DeepSeek-V3 refit: 81 MB, or 904 MB in 4 MiB chunks). The loader gives
/// every reshard its own copy of its program.
constexpr uint64_t kMaxLoadedProgramBytes = uint64_t{1} << 32;

struct KernelLaunch {
  std::string name = "m2n_transfer";
  uint32_t threads = 32;
  uint32_t ctas = 16;
  uint64_t stageBytes = 65536;
  uint32_t stages = 3;
  /// The most walkers (issuing warps, blocks of (32, walkers)) a CTA may
  /// run for a table without vector items; 1: one issuing thread per CTA.
  uint32_t walkers = 1;
};

/// The most CTAs a rank's kernel may launch: a grid far beyond any GPU's
/// SMs (an H200 has 132), and a bound on what a file may ask for.
constexpr uint32_t kMaxCtas = 65536;

/// The most walkers a CTA may run: 8 warps (256 threads) fit every build of
/// the kernel (the one with every op has 166 registers a thread, 384
/// threads a block on H200); measured up to 8 (engine-2026-12-02.md).
constexpr uint32_t kMaxWalkers = 8;

/// The shared memory a launch of `kernel` may use: its stages, each rounded
/// up to 128 bytes (TMA tiles land on 128-byte aligned shared memory).
uint64_t sharedMemoryBudget(const KernelLaunch &kernel);

/// How the runtime launches the kernel for one rank's table: blocks of
/// (threads, walkers), each walker with `stages` stages of `stageBytes`.
struct LaunchShape {
  uint32_t threads = 32, walkers = 1;
  uint64_t stageBytes = 65536;
  uint32_t stages = 3;
  uint64_t sharedBytes() const { return stageBytes * stages * walkers; }
  bool operator==(const LaunchShape &o) const {
    return threads == o.threads && walkers == o.walkers &&
           stageBytes == o.stageBytes && stages == o.stages;
  }
};

/// The launch of `rank`'s items under `kernel`: a table with vector items
/// (every thread of a CTA takes part) or a single walker as compiled; any
/// other gets as many walkers (at most kernel.walkers) as stages sized to
/// its largest item, rounded up to 128 bytes, fit in the compiled shared
/// memory (sharedMemoryBudget): one thread issues ~1M items/s
/// (bench/results/engine-2026-12-02.md), so tables of small items are
/// bounded by issue, not bytes. `maxThreads`: the block size the loaded
/// kernel allows (its registers); the walkers stay within it.
LaunchShape launchShape(const KernelLaunch &kernel, const RankProgram &rank,
                        uint32_t maxThreads = 1024);

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

/// Reshards compiled to run together (an m2n.group): its members, indices
/// into Artifact::reshards in the group's order, and their merged program
/// (mergePrograms, by the layout --m2n-merge-groups wrote and the verifier
/// checked), which the loader builds and the runtime binds as it is.
struct CompiledGroup {
  std::string name;
  std::vector<uint32_t> members;
  std::shared_ptr<const TransferProgram> program;
};

struct Artifact {
  std::string ptx;
  std::string chip;
  KernelLaunch kernel;
  std::vector<CompiledReshard> reshards;
  std::vector<CompiledGroup> groups;
};

/// The artifact's bytes (each reshard with a program of its own).
std::string serializeArtifact(const Artifact &artifact);
/// The same in parts, for writers whose reshards share programs (the
/// tensors of one m2n.reshard_fn): the bytes of one reshard's program (all
/// of CompiledReshard but its name), and the artifact of `artifact`'s
/// kernel whose reshards are `tensors`, each a name and the index of its
/// program in `programs` (artifact.reshards is not read).
std::string serializeProgram(const CompiledReshard &reshard);
/// Groups are written from artifact.groups (names and members).
std::string
assembleArtifact(const Artifact &artifact,
                 const std::vector<std::string_view> &programs,
                 const std::vector<std::pair<std::string, uint32_t>> &tensors);
/// Rewrites the header's payload size and checksum to match the bytes
/// after it, as a writer would that wrote a wrong field: the corrupted-
/// artifact tests and the fuzz targets use it so that their corruptions
/// reach the field checks instead of the checksum.
void resealArtifact(std::string &bytes);
/// Parses and verifies `bytes`; returns a message naming the problem.
std::optional<std::string> deserializeArtifact(const std::string &bytes,
                                               Artifact &artifact);
/// A readable listing (m2n-artifact-dump).
std::string describeArtifact(const Artifact &artifact, bool withPtx);

} // namespace m2n

#endif // M2N_ARTIFACT_ARTIFACT_H
