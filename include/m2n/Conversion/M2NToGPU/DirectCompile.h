//===- DirectCompile.h - many reshards to an artifact without IR -*- C++ -*-===//
//
// What --m2n-pipeline computes for a module of m2n.reshard ops, computed
// straight from the reshards: the same planner, router, chunking, lowering,
// kernel and artifact writer, called as C++ functions instead of through one
// IR op per transfer, step and move. A whole-model refit (DeepSeek-V3: 1025
// tensors, ~465k steps on 256 ranks) is far too large to materialize as IR
// quickly; its decisions stay printable by compiling the same reshards
// through the pipeline, which produces byte-identical artifacts (tested).
//
//===----------------------------------------------------------------------===//

#ifndef M2N_CONVERSION_M2NTOGPU_DIRECTCOMPILE_H
#define M2N_CONVERSION_M2NTOGPU_DIRECTCOMPILE_H

#include "m2n/Artifact/Artifact.h"
#include "m2n/Base/Topology.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::m2n {

/// One reshard: what an m2n.reshard op says. `name` is the artifact's
/// ("@func#index", as the pipeline names the reshards of a function).
struct ReshardRequest {
  std::string name;
  ::m2n::Layout src, dst;
  std::vector<int64_t> shape;
  ::m2n::ElementType type = ::m2n::ElementType::F32; // The destination's.
  /// An in-flight cast: the source's element type and the factor.
  std::optional<::m2n::ElementType> sourceType;
  float scale = 1.0f;
  /// The communicator's size (the default topology spans it).
  int64_t commSize = 0;
  /// The topology when the pipeline option names no file (the
  /// m2n.topology attribute of the module); default: one domain.
  std::optional<::m2n::Topology> topology;
};

/// Wall time of each phase, in milliseconds; planning, routing and
/// lowering are summed over the worker threads.
struct DirectCompileTimes {
  double planMs = 0, routeMs = 0, lowerMs = 0, serializeMs = 0;
  double reshardsMs = 0; // Wall time of the four over all reshards.
  double kernelMs = 0;   // 0 when the kernel came from the cache.
  double artifactMs = 0; // Assembling the artifact and its checksum.
  bool kernelCached = false;
  int64_t steps = 0, movements = 0, items = 0;
  /// Reshards compiled: those of the same layouts, shape, types and
  /// topology are compiled once and share their program.
  int64_t distinct = 0;
};

/// Compiles `reshards` with the options of --m2n-pipeline (`pipelineOptions`,
/// e.g. "strategy=hierarchical topology=FILE chunk-bytes=0") on `threads`
/// worker threads, into the serialized artifact. The kernel's PTX is kept
/// per (kernel ops, chip, features) for the process: a second compile with
/// the same ops reuses it. Returns the artifact, or a message naming the
/// reshard and the problem.
FailureOr<std::string> compileReshardsDirectly(
    MLIRContext &context, llvm::ArrayRef<ReshardRequest> reshards,
    llvm::StringRef pipelineOptions, unsigned threads, std::string &error,
    DirectCompileTimes *times = nullptr);

} // namespace mlir::m2n

#endif // M2N_CONVERSION_M2NTOGPU_DIRECTCOMPILE_H
