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
#include "m2n/Sim/QuantizingSimulator.h"
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
#include <functional>

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
static cl::opt<uint64_t> maxBufferBytes(
    "max-buffer-bytes",
    cl::desc("Refuse a reshard whose source and destination buffers of all "
             "ranks together take more host memory than this (default 8 GiB)"),
    cl::init(uint64_t(8) << 30), cl::cat(::m2n::tools::category()));
static cl::opt<int> benchRuns(
    "bench", cl::desc("Run each reshard N times and report the median"),
    cl::init(1),
    cl::cat(::m2n::tools::category()));


int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  m2n::tools::keepFreedMemory();
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

  // A file with nothing to run checks nothing: not a pass.
  if (m2n_artifact_reshard_count(artifact) == 0) {
    llvm::errs() << "m2n-run: " << inputFilename
                 << " holds no reshard to run and check\n";
    m2n_artifact_destroy(artifact);
    return 1;
  }
  int passed = 0, failedCount = 0;
  // Runs reshards `members` as one launch (a group when more than one),
  // checks every member's destination and prints one line.
  auto runAndCheck = [&](const std::string &name,
                         const std::vector<int> &members) {
    int ranks = 0;
    for (int member : members) {
      int needed = 0;
      (void)m2n_artifact_reshard_ranks(artifact, member, &needed);
      ranks = std::max(ranks, needed);
    }
    // Every rank's buffers live in this process: a tensor too large for
    // the machine is a message, not an out-of-memory abort.
    uint64_t bufferBytes = 0;
    for (int member : members)
      for (int rank = 0; rank < ranks; ++rank) {
        size_t srcBytes = 0, dstBytes = 0;
        (void)m2n_artifact_buffer_bytes(artifact, member, rank, &srcBytes,
                                        &dstBytes);
        bufferBytes += uint64_t(srcBytes) + dstBytes;
      }
    if (bufferBytes > maxBufferBytes) {
      llvm::outs() << llvm::format("%-32s %s", name.c_str(), "FAIL") << "  "
                   << "its buffers take " << bufferBytes
                   << " bytes of host memory, more than --max-buffer-bytes="
                   << maxBufferBytes.getValue() << "\n";
      ++failedCount;
      return;
    }
    // The launch's buffers, member by member: a quantizing member's from
    // simulateQuantizingBuffers (varied values, zeros, NaNs; poisoned
    // destinations and scales; checked bit for bit against quantizeTensor
    // once the launch returns), any other's seeded and checked here.
    m2n::run::LaunchBuffers launch(members.size() * ranks);
    std::vector<std::vector<uint8_t>> owned(2 * members.size() * ranks);
    int64_t movedBytes = 0;
    m2n::run::RunResult result;
    std::function<std::string(size_t)> withMember =
        [&](size_t m) -> std::string {
      if (m == members.size()) {
        result = backend == "cuda"
                     ? m2n::run::runOnCuda(artifact, members, launch,
                                           benchRuns)
                     : m2n::run::runOnHost(artifact, members, launch,
                                           benchRuns);
        return result.problem;
      }
      const m2n::CompiledReshard &r = parsed.reshards[members[m]];
      const std::string prefix =
          members.size() > 1 ? r.name + ": " : std::string();
      if (const std::optional<m2n::Scaling> &scaling = r.program.scaling) {
        std::string inner;
        m2n::SimulationReport report = m2n::simulateQuantizingBuffers(
            *scaling, r.src, r.dst, r.shape, *r.program.sourceType, r.type,
            r.program.scratches, seed + m,
            [&](const m2n::QuantizedBufferResolver &resolve)
                -> std::optional<std::string> {
              for (int rank = 0; rank < ranks; ++rank) {
                const size_t at = m * ranks + rank;
                auto place = [&](m2n::BufferKind kind, auto &pointer,
                                 size_t &bytes) {
                  if (auto buffer = resolve({kind, rank, -1, 0})) {
                    pointer = buffer->first;
                    bytes = static_cast<size_t>(buffer->second);
                  }
                };
                place(m2n::BufferKind::Source, launch.src[at],
                      launch.srcBytes[at]);
                place(m2n::BufferKind::Destination, launch.dst[at],
                      launch.dstBytes[at]);
                place(m2n::BufferKind::Scales, launch.scales[at],
                      launch.scaleBytes[at]);
                movedBytes += launch.dstBytes[at];
              }
              inner = withMember(m + 1);
              if (!inner.empty())
                return inner;
              return std::nullopt;
            });
        if (!inner.empty())
          return inner;
        return report.passed ? std::string() : prefix + report.message;
      }
      for (int rank = 0; rank < ranks; ++rank) {
        size_t srcBytes = 0, dstBytes = 0;
        (void)m2n_artifact_buffer_bytes(artifact, members[m], rank, &srcBytes,
                                        &dstBytes);
        const size_t at = m * ranks + rank;
        // Each member its own data: a group that mixed members up fails.
        std::vector<uint8_t> &src = owned[2 * at], &dst = owned[2 * at + 1];
        src = m2n::sourceBytes(r.src, r.shape,
                               r.program.sourceType.value_or(r.type), rank,
                               seed + m);
        dst.assign(dstBytes, m2n::kPoisonByte);
        launch.src[at] = src.empty() ? nullptr : src.data();
        launch.srcBytes[at] = src.size();
        launch.dst[at] = dst.empty() ? nullptr : dst.data();
        launch.dstBytes[at] = dst.size();
        movedBytes += dstBytes;
      }
      if (std::string problem = withMember(m + 1); !problem.empty())
        return problem;
      for (int rank = 0; rank < ranks; ++rank)
        if (std::optional<std::string> wrong = m2n::checkDestination(
                r.src, r.dst, r.shape, r.type, rank, seed + m,
                owned[2 * (m * ranks + rank) + 1].data(),
                r.program.sourceType, r.program.scale))
          return prefix + *wrong;
      return std::string();
    };
    std::string problem = withMember(0);
    const std::string &strategy = parsed.reshards[members.front()].strategy;
    llvm::outs() << llvm::format("%-32s %s", name.c_str(),
                                 problem.empty() ? "PASS" : "FAIL")
                 << "  "
                 << (members.size() > 1
                         ? std::to_string(members.size()) + " members"
                         : strategy)
                 << ", " << ranks << " ranks, "
                 << llvm::format("%.3f", result.medianMs) << " ms";
    if (benchRuns > 1)
      llvm::outs() << llvm::format(" (median of %d, %.1f GB/s of destination)",
                                   static_cast<int>(benchRuns),
                                   movedBytes / (result.medianMs * 1e6));
    llvm::outs() << (problem.empty() ? "" : "  " + problem) << "\n";
    (problem.empty() ? passed : failedCount)++;
  };
  for (int index = 0; index < m2n_artifact_reshard_count(artifact); ++index)
    runAndCheck(parsed.reshards[index].name, {index});
  // Then every compiled group, as one launch.
  for (const m2n::CompiledGroup &group : parsed.groups)
    runAndCheck("group " + group.name,
                std::vector<int>(group.members.begin(), group.members.end()));
  m2n_artifact_destroy(artifact);
  llvm::outs() << passed << " passed, " << failedCount << " failed\n";
  return failedCount ? 1 : 0;
}
