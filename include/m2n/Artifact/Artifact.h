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

constexpr uint32_t kArtifactVersion = 19;
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

/// The shared memory a launch of `kernel` may use: its stages, each rounded
/// up to 128 bytes (TMA tiles land on 128-byte aligned shared memory).
uint64_t sharedMemoryBudget(const KernelLaunch &kernel);

/// Why `kernel` cannot be launched, or std::nullopt: threads 32, 128 or 256,
/// 1-kMaxCtas CTAs, 1-kMaxWalkers walkers, 1-kMaxKernelBarriers stages of a
/// positive multiple of 16 bytes within kMaxStageMemory of shared memory.
std::optional<std::string> checkKernelLaunch(const KernelLaunch &kernel);

/// Why `launch` does not fit `kernel`, or std::nullopt: threads 32 or the
/// kernel's, stages no larger than the compiled ones (rounded up to 128),
/// walkers whose stages fit the compiled shared memory
/// (sharedMemoryBudget) and whose barriers the kernel has
/// (kMaxKernelBarriers). With checkLaunch(RankLaunch, LaunchDemand): the
/// one rule the IR verifier, the artifact loader and the runtime follow.
std::optional<std::string> checkLaunch(const KernelLaunch &kernel,
                                       const RankLaunch &launch);

/// The launch m2n-choose-launch gives a rank whose items ask `demand` of
/// `kernel`: a table with vector items (every thread of a CTA takes part)
/// or items as large as the compiled stage gets one walker with the
/// kernel's threads and stages; any other as many walkers (at most
/// kernel.walkers) as stages sized to its largest item, rounded up to 128
/// bytes, fit in the compiled shared memory: one thread issues ~1M items/s
/// (bench/results/engine-2026-12-02.md), so tables of small items are
/// bounded by issue, not bytes. `demand.largestItem` must fit the compiled
/// stage.
RankLaunch chooseLaunch(const KernelLaunch &kernel, const LaunchDemand &demand);

/// How the runtime launches a rank's table: its launch with the kernel's
/// stages, the walkers clamped to the block the loaded kernel allows
/// (`maxThreads`, from its registers).
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
LaunchShape launchShape(const KernelLaunch &kernel, const RankLaunch &launch,
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

/// The artifact's bytes (each reshard with a program of its own). A rank
/// without a launch (a program built in C++) is given chooseLaunch's.
std::string serializeArtifact(const Artifact &artifact);
/// The same in parts, for writers whose reshards share programs (the
/// tensors of one m2n.reshard_fn): the bytes of one reshard's program (all
/// of CompiledReshard but its name), and the artifact of `artifact`'s
/// kernel whose reshards are `tensors`, each a name and the index of its
/// program in `programs` (artifact.reshards is not read). A rank without a
/// launch is given chooseLaunch(kernel, ...)'s.
std::string serializeProgram(const CompiledReshard &reshard,
                             const KernelLaunch &kernel);
/// An artifact as the parts it is made of, in order (header, kernel and
/// tensors, each program, groups): a writer that streams it to a file need
/// not join megabytes in memory first.
struct ArtifactParts {
  std::vector<std::string> parts;
  uint64_t size() const;
  std::string join() const;
};
/// Groups are written from artifact.groups (names and members).
ArtifactParts
assembleArtifact(const Artifact &artifact, std::vector<std::string> programs,
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
