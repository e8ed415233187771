//===- m2n-run.cpp - compile a program and run it through the runtime ------===//
//
//   m2n-run FILE.mlir|FILE.m2n [--pipeline=OPTIONS] [--seed N]
//           [--backend host|cuda] [--bench N]
//
// Compiles FILE.mlir with --m2n-pipeline (the same C++ pipeline as m2n-opt
// and the JIT), loads the artifact through the runtime's C API and executes
// every reshard. Sources get fresh random values (seeded; replicas of one
// contribution agree), destinations are poisoned, and every destination
// element is checked against the reduction of the contributions it should
// hold. One line per reshard, then "N passed, M failed".
//
// Backends (Backends.h): host (the runtime's host backend) or cuda (rank r on
// GPU r % count, one process). --bench N runs each reshard N times and
// reports the median; the destinations are checked after the last run.
//
//===----------------------------------------------------------------------===//

#include "m2n/Artifact/Artifact.h"
#include "m2n/Compiler/Compile.h"
#include "m2n/Base/ElementType.h"
#include "m2n/Sim/RankData.h"
#include "m2n/runtime.h"

#include "Backends.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"

#include "../ToolSupport.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstring>

namespace cl = llvm::cl;

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input .mlir file>"),
                                          cl::init("-"),
    cl::cat(::m2n::tools::category()));
static cl::opt<std::string> pipelineOptions(
    "pipeline", cl::desc("Options of --m2n-pipeline (e.g. 'strategy=flat')"),
    cl::init(""),
    cl::cat(::m2n::tools::category()));
static cl::opt<uint64_t> seedOption(
    "seed", cl::desc("Seed of the source values (default: from the clock)"),
    cl::init(0),
    cl::cat(::m2n::tools::category()));
static cl::opt<std::string> backend("backend",
                                    cl::desc("Where to run: host or cuda"),
                                    cl::init("host"),
    cl::cat(::m2n::tools::category()));
static cl::opt<std::string> saveArtifact(
    "save-artifact", cl::value_desc("FILE"),
    cl::desc("Also write the compiled artifact to FILE"), cl::init(""),
    cl::cat(::m2n::tools::category()));
static cl::opt<int> benchRuns(
    "bench", cl::desc("Run each reshard N times and report the median"),
    cl::init(1),
    cl::cat(::m2n::tools::category()));


int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  mlir::registerMLIRContextCLOptions();
  ::m2n::tools::parseCommandLine(
      argc, argv,
      "m2n compile-and-run driver: compiles FILE.mlir (or loads a prebuilt "
      ".m2n artifact) and runs and checks every reshard\n");
  if (backend != "host" && backend != "cuda") {
    llvm::errs() << "m2n-run: unknown backend '" << backend
                 << "' (host or cuda)\n";
    return 2;
  }
  if (benchRuns < 1) {
    llvm::errs() << "m2n-run: --bench needs a positive count\n";
    return 2;
  }
  uint64_t seed = seedOption ? seedOption.getValue()
                             : static_cast<uint64_t>(
                                   std::chrono::steady_clock::now()
                                       .time_since_epoch()
                                       .count());

  std::unique_ptr<mlir::MLIRContext> context = m2n::createCompilerContext();
  if (::m2n::tools::printOpOnDiagnosticRequested())
    context->printOpOnDiagnostic(true);
  std::string error;
  auto file = mlir::openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << "m2n-run: " << error << "\n";
    return 1;
  }
  // The same pipeline as m2n-opt --m2n-pipeline, or a prebuilt artifact.
  auto compileStart = std::chrono::steady_clock::now();
  m2n::CompileResult compiled;
  if (file->getBuffer().starts_with("M2NA")) {
    if (!pipelineOptions.empty()) {
      llvm::errs() << "m2n-run: --pipeline compiles IR; " << inputFilename
                   << " is an artifact, compiled already\n";
      return 2;
    }
    compiled.ok = true;
    compiled.artifact = file->getBuffer().str();
  } else {
    compiled = m2n::compileToArtifact(*context, file->getBuffer(),
                                      pipelineOptions, "", inputFilename);
  }
  if (!compiled.ok) {
    llvm::errs() << "m2n-run: " << compiled.error;
    return 1;
  }
  const std::string *bytes = &compiled.artifact;
  if (!saveArtifact.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream out(saveArtifact, ec, llvm::sys::fs::OF_None);
    if (ec) {
      llvm::errs() << "m2n-run: cannot write " << saveArtifact << ": "
                   << ec.message() << "\n";
      return 1;
    }
    out << *bytes;
  }
  double compileMs = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - compileStart)
                         .count();

  m2n_artifact artifact = nullptr;
  if (m2n_artifact_load(bytes->data(), bytes->size(), &artifact) !=
      M2N_SUCCESS) {
    llvm::errs() << "m2n-run: " << m2n_last_error() << "\n";
    return 1;
  }
  // The layouts the checker needs come from the same artifact.
  m2n::Artifact parsed;
  (void)m2n::deserializeArtifact(*bytes, parsed);
  llvm::outs() << "m2n-run: compiled in " << llvm::format("%.1f", compileMs)
               << " ms; seed " << seed << "; backend " << backend << "\n";

  int passed = 0, failedCount = 0;
  for (int index = 0; index < m2n_artifact_reshard_count(artifact); ++index) {
    const m2n::CompiledReshard &r = parsed.reshards[index];
    int ranks = 0;
    (void)m2n_artifact_reshard_ranks(artifact, index, &ranks);
    m2n::run::Buffers src(ranks), dst(ranks);
    int64_t movedBytes = 0;
    for (int rank = 0; rank < ranks; ++rank) {
      size_t srcBytes = 0, dstBytes = 0;
      (void)m2n_artifact_buffer_bytes(artifact, index, rank, &srcBytes,
                                      &dstBytes);
      src[rank] = m2n::sourceBytes(r.src, r.shape,
                                   r.program.sourceType.value_or(r.type), rank,
                                   seed);
      dst[rank].assign(dstBytes, m2n::kPoisonByte);
      movedBytes += dstBytes;
    }
    m2n::run::RunResult result =
        backend == "cuda"
            ? m2n::run::runOnCuda(artifact, index, src, dst, benchRuns)
            : m2n::run::runOnHost(artifact, index, src, dst, benchRuns);
    std::string problem = result.problem;
    for (int rank = 0; rank < ranks && problem.empty(); ++rank)
      if (std::optional<std::string> wrong = m2n::checkDestination(
              r.src, r.dst, r.shape, r.type, rank, seed, dst[rank].data(),
              r.program.sourceType, r.program.scale))
        problem = *wrong;
    llvm::outs() << llvm::format("%-32s %s", r.name.c_str(),
                                 problem.empty() ? "PASS" : "FAIL")
                 << "  " << r.strategy << ", " << ranks << " ranks, "
                 << llvm::format("%.3f", result.medianMs) << " ms";
    if (benchRuns > 1)
      llvm::outs() << llvm::format(" (median of %d, %.1f GB/s of destination)",
                                   static_cast<int>(benchRuns),
                                   movedBytes / (result.medianMs * 1e6));
    llvm::outs() << (problem.empty() ? "" : "  " + problem) << "\n";
    (problem.empty() ? passed : failedCount)++;
  }
  m2n_artifact_destroy(artifact);
  llvm::outs() << passed << " passed, " << failedCount << " failed\n";
  return failedCount ? 1 : 0;
}
