//===- m2n-refit.cpp - plan a whole-model refit ------------------------------===//
//
// Reads a model description and the trainer's and generator's parallel
// configurations, lays out every tensor on both sides (m2n/Refit/Refit.h),
// plans and routes each reshard under each strategy and prints what the
// refit moves: bytes per link class, the aggregate SOL time of all tensors
// moving together (the busiest rank and direction of each link class over
// the whole model), and how long planning and routing took. --emit-mlir
// writes the refit as layout-level m2n IR (one function, one m2n.reshard
// per tensor, the topology as the module's attribute) for m2n-opt and
// m2n-run; --compile compiles that module through --m2n-pipeline into one
// artifact; --shrink divides every extent, to run a model's structure on
// the host backend.
//
//===----------------------------------------------------------------------===//

#include "../ToolSupport.h"

#include "m2n/Compiler/Compile.h"
#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Dialect/M2N/IR/M2NDialect.h"
#include "m2n/Plan/Planner.h"
#include "m2n/Plan/ScalePlan.h"
#include "m2n/Refit/Refit.h"
#include "m2n/Route/CostModel.h"
#include "m2n/Route/Router.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace m2n;

namespace {

namespace cl = llvm::cl;

cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                               cl::desc("<model .json>"),
                               cl::cat(tools::category()));
cl::opt<std::string> trainerText(
    "trainer", cl::Required, cl::value_desc("tp=N,pp=N,dp=N,cp=N,ep=N,base=N,vocab_pad=N"),
    cl::desc("The trainer's parallel configuration"),
    cl::cat(tools::category()));
cl::opt<std::string> generatorText(
    "generator", cl::Required, cl::value_desc("tp=N,pp=N,dp=N,cp=N,ep=N,base=N,vocab_pad=N"),
    cl::desc("The generator's (default base: right after the trainer's ranks)"),
    cl::cat(tools::category()));
cl::opt<std::string> topologyPath(
    "topology", cl::value_desc("FILE"),
    cl::desc("JSON topology (docs/routing.md); default: NVLink domains of "
             "--domain-size consecutive ranks"),
    cl::cat(tools::category()));
cl::opt<int64_t> domainSize("domain-size", cl::init(8),
                            cl::desc("Ranks per NVLink domain without "
                                     "--topology (default 8: H200 nodes)"),
                            cl::cat(tools::category()));
cl::list<std::string> strategies(
    "strategy", cl::CommaSeparated, cl::value_desc("flat,gather-bcast,hierarchical"),
    cl::desc("Routing strategies to report (default: all three)"),
    cl::cat(tools::category()));
cl::opt<std::string> emitPath(
    "emit-mlir", cl::value_desc("FILE"),
    cl::desc("Write the refit as layout-level m2n IR"),
    cl::cat(tools::category()));
cl::opt<std::string> callsPath(
    "emit-calls", cl::value_desc("FILE"),
    cl::desc("Write every tensor's reshard as JSON (name, shape, dtype, both "
             "layouts) for m2n.reshard_many (bench/refit_group.py)"),
    cl::cat(tools::category()));
cl::opt<int64_t> shrink("shrink", cl::init(1), cl::value_desc("N"),
                        cl::desc("Divide every extent by N (rounding up)"),
                        cl::cat(tools::category()));
cl::opt<bool> verify("verify",
                     cl::desc("Check every plan (bounds, exact coverage: "
                              "verifyPlan) and time it"),
                     cl::cat(tools::category()));
cl::opt<std::string> compilePath(
    "compile", cl::value_desc("FILE"),
    cl::desc("Compile the whole refit into one artifact through "
             "--m2n-pipeline (the --emit-mlir module, as the compiler API "
             "compiles it), write it to FILE and report the time"),
    cl::cat(tools::category()));
cl::opt<std::string> pipelineOptions(
    "pipeline", cl::init(""), cl::value_desc("OPTIONS"),
    cl::desc("--m2n-pipeline options for --compile; strategy defaults to "
             "the first --strategy, chunk-bytes to 0 (a refit's tensors "
             "pipeline against each other in its group; 4 MiB chunks of "
             "every step made DeepSeek-V3's artifact 904 MB)"),
    cl::cat(tools::category()));
cl::opt<bool> compileTiming(
    "compile-timing",
    cl::desc("With --compile: print the time of every pass (-mlir-timing)"),
    cl::cat(tools::category()));
cl::opt<std::string> dstDtypeText(
    "dst-dtype", cl::value_desc("float8_e4m3fn|float8_e5m2"),
    cl::desc("The FP8 type the generator holds its quantized tensors in (the "
             "model description's \"quantized\": true); needs --scaling"),
    cl::cat(tools::category()));
cl::opt<std::string> scalingText(
    "scaling", cl::value_desc("tensor|block(R,C)|mx"),
    cl::desc("Quantize those tensors with scales computed from the data at "
             "every launch (docs/fp8-scaling.md): plan each one's amax "
             "exchange and route its FP8 bytes"),
    cl::cat(tools::category()));
cl::opt<int> repeat("repeat", cl::init(3),
                    cl::desc("Time planning and routing as the best of N runs"),
                    cl::cat(tools::category()));

int fail(const llvm::Twine &message) {
  llvm::errs() << "m2n-refit: " << message << "\n";
  return 1;
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// "544 B", "1.23 MB", "7.52 GB", "21.5 TB" (powers of 1000).
std::string humanBytes(int64_t bytes) {
  const char *units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000 && unit < 5) {
    value /= 1000;
    ++unit;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  if (unit == 0)
    os << bytes << " B";
  else
    os << llvm::format(value < 10 ? "%.2f" : value < 100 ? "%.1f" : "%.0f",
                       value)
       << ' ' << units[unit];
  return text;
}

std::string layoutIR(const Layout &layout) {
  std::string text = "#m2n.layout<#m2n.mesh<[";
  for (size_t i = 0; i < layout.mesh.shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(layout.mesh.shape[i]);
  text += "]";
  if (layout.mesh.ranks.front() != 0)
    text += ", base = " + std::to_string(layout.mesh.ranks.front());
  text += ">, [";
  for (size_t i = 0; i < layout.placements.size(); ++i)
    text += (i ? ", " : "") + layout.placements[i].str();
  return text + "]>";
}

std::string distIR(const std::vector<int64_t> &shape, ElementType type,
                   const Layout &layout) {
  std::string text = "!m2n.dist<";
  for (int64_t extent : shape)
    text += std::to_string(extent) + "x";
  return text + toString(type) + ", " + layoutIR(layout) + ">";
}

std::string distIR(const TensorSpec &tensor, const Layout &layout) {
  return distIR(tensor.shape, tensor.type, layout);
}

/// A quantizing refit (--dst-dtype, --scaling): the FP8 type and the mode.
struct Quantization {
  ElementType type = ElementType::F8E4M3FN;
  Scaling scaling;
};

/// The refit as layout-level IR: one function, one m2n.reshard per tensor,
/// all of them one m2n.group "refit" (one launch per rank), the topology it
/// is routed on as the module's attribute.
std::string refitIR(mlir::MLIRContext &context, const ModelSpec &model,
                    const RefitPlan &plan, const Topology &topology,
                    const std::optional<Quantization> &quantization) {
  std::string text;
  llvm::raw_string_ostream out(text);
  const std::string comm = "!m2n.comm<" + std::to_string(plan.commSize) + ">";
  out << "// m2n-refit: " << model.name << ", " << model.tensors.size()
      << " tensors, trainer " << trainerText << " -> generator "
      << generatorText << "\n";
  out << "module attributes {m2n.topology = ";
  mlir::Attribute(mlir::m2n::toTopologyAttr(&context, topology)).print(out);
  out << "} {\n";
  out << "func.func @refit(%comm: " << comm;
  for (size_t i = 0; i < model.tensors.size(); ++i)
    out << ",\n    %w" << i << ": " << distIR(model.tensors[i], plan.trainer[i]);
  out << ") {\n";
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    const TensorSpec &tensor = model.tensors[i];
    out << "  // " << tensor.name << "\n";
    if (quantization && tensor.quantized) {
      Dims shape(tensor.shape.begin(), tensor.shape.end());
      Dims scales = scaleShape(quantization->scaling, shape);
      out << "  %r" << i << ", %s" << i << " = m2n.reshard %w" << i
          << " on %comm {scaling = #m2n.scaling<"
          << quantization->scaling.str() << ">} : " << comm << ", "
          << distIR(tensor, plan.trainer[i]) << " -> "
          << distIR(tensor.shape, quantization->type, plan.generator[i])
          << ", "
          << distIR(scales.vec(),
                    hasExponentScales(quantization->scaling)
                        ? ElementType::F8E8M0FNU
                        : ElementType::F32,
                    withoutBoundaries(plan.generator[i]))
          << "\n";
      continue;
    }
    out << "  %r" << i << " = m2n.reshard %w" << i << " on %comm : " << comm
        << ", " << distIR(tensor, plan.trainer[i]) << " -> "
        << distIR(tensor, plan.generator[i]) << "\n";
  }
  if (!model.tensors.empty()) {
    out << "  m2n.group \"refit\"(";
    for (size_t i = 0; i < model.tensors.size(); ++i)
      out << (i ? ", " : "") << "%r" << i;
    out << ") :";
    // A quantized tensor's member is its FP8 result (its scales ride along).
    for (size_t i = 0; i < model.tensors.size(); ++i) {
      const TensorSpec &tensor = model.tensors[i];
      out << (i ? ",\n      " : "\n      ")
          << (quantization && tensor.quantized
                  ? distIR(tensor.shape, quantization->type, plan.generator[i])
                  : distIR(tensor, plan.generator[i]));
    }
    out << "\n";
  }
  out << "  return\n}\n}\n";
  return text;
}

std::optional<std::string> emitIR(const std::string &path,
                                  const std::string &text) {
  std::error_code error;
  llvm::raw_fd_ostream out(path, error, llvm::sys::fs::OF_Text);
  if (error)
    return "cannot write " + path + ": " + error.message();
  out << text;
  return std::nullopt;
}

llvm::json::Object layoutJson(const Layout &layout) {
  llvm::json::Array placements;
  for (const Placement &p : layout.placements)
    placements.push_back(p.str());
  return llvm::json::Object{
      {"mesh", llvm::json::Array(layout.mesh.shape)},
      {"ranks", llvm::json::Array(layout.mesh.ranks)},
      {"placements", std::move(placements)}};
}

/// The refit as data: what a Python driver needs to build the calls.
std::optional<std::string> emitCalls(const std::string &path,
                                     const ModelSpec &model,
                                     const RefitPlan &plan) {
  std::error_code error;
  llvm::raw_fd_ostream out(path, error, llvm::sys::fs::OF_Text);
  if (error)
    return "cannot write " + path + ": " + error.message();
  llvm::json::Array tensors;
  for (size_t i = 0; i < model.tensors.size(); ++i) {
    const TensorSpec &tensor = model.tensors[i];
    tensors.push_back(llvm::json::Object{
        {"name", tensor.name},
        {"shape", llvm::json::Array(tensor.shape)},
        {"dtype", toString(tensor.type)},
        {"src", layoutJson(plan.trainer[i])},
        {"dst", layoutJson(plan.generator[i])}});
  }
  out << llvm::formatv("{0}", llvm::json::Value(llvm::json::Object{
                                    {"model", model.name},
                                    {"ranks", plan.commSize},
                                    {"trainer", trainerText},
                                    {"generator", generatorText},
                                    {"tensors", std::move(tensors)}}))
      << "\n";
  return std::nullopt;
}

/// --compile: the refit's IR through --m2n-pipeline into one artifact (the
/// compiler API's path), timed as the best of --repeat runs after a first
/// one that builds the kernel; with --compile-timing, each pass's time.
std::optional<std::string> compileRefit(mlir::MLIRContext &context,
                                        const std::string &ir,
                                        size_t tensors, Strategy strategy) {
  std::string options = pipelineOptions;
  auto setDefault = [&](llvm::StringRef name, const std::string &value) {
    if (!llvm::StringRef(options).contains((name + "=").str()))
      options += (options.empty() ? "" : " ") + (name + "=").str() + value;
  };
  setDefault("strategy", toString(strategy));
  setDefault("chunk-bytes", "0");
  double bestMs = 1e300, firstMs = 0;
  std::string artifact, report;
  for (int run = 0; run < std::max(1, repeat.getValue()) + 1; ++run) {
    std::string timing;
    llvm::raw_string_ostream timingStream(timing);
    auto start = std::chrono::steady_clock::now();
    CompileResult result;
    {
      result = compileToArtifact(context, ir, options, "", "<m2n-refit>",
                                 compileTiming ? &timingStream : nullptr);
    }
    double ms = millisecondsSince(start);
    if (!result.ok)
      return "--compile: " + llvm::StringRef(result.error).rtrim().str();
    if (run == 0) {
      firstMs = ms;
      artifact = std::move(result.artifact);
    } else if (ms < bestMs) {
      bestMs = ms;
      report = std::move(timing);
    }
  }
  std::error_code ec;
  llvm::raw_fd_ostream out(compilePath, ec, llvm::sys::fs::OF_None);
  if (ec)
    return "cannot write " + compilePath + ": " + ec.message();
  out << artifact;
  llvm::outs() << "compiled " << tensors << " reshards into "
               << humanBytes(artifact.size()) << " (" << compilePath
               << ") with '" << options
               << "' through --m2n-pipeline: " << llvm::format("%.0f", bestMs)
               << " ms (best of " << std::max(1, repeat.getValue())
               << "); the first run, which built the kernel: "
               << llvm::format("%.0f", firstMs) << " ms\n"
               << report;
  return std::nullopt;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tools::keepFreedMemory();
  tools::parseCommandLine(argc, argv,
                          "m2n-refit: plan a whole-model refit from a model "
                          "description and two parallel configurations\n");
  auto file = llvm::MemoryBuffer::getFile(modelPath);
  if (!file)
    return fail("cannot read " + modelPath + ": " + file.getError().message());
  ModelSpec model;
  if (auto error = parseModelSpec((*file)->getBuffer().str(), model))
    return fail(modelPath + ": " + *error);
  if (shrink < 1)
    return fail("--shrink must be at least 1");
  for (TensorSpec &tensor : model.tensors)
    for (int64_t &extent : tensor.shape)
      extent = (extent + shrink - 1) / shrink;

  ParallelConfig trainer, generator;
  if (auto error = parseParallelConfig(trainerText, trainer))
    return fail("--trainer: " + *error);
  if (auto error = parseParallelConfig(generatorText, generator))
    return fail("--generator: " + *error);
  if (llvm::StringRef(generatorText).find("base=") == llvm::StringRef::npos)
    generator.base = trainer.base + trainer.ranks();
  RefitPlan plan;
  if (auto error = planRefit(model, trainer, generator, plan))
    return fail(*error);
  std::optional<Quantization> quantization;
  if (dstDtypeText.empty() != scalingText.empty())
    return fail("--dst-dtype and --scaling go together: the FP8 type and "
                "how its scales are computed");
  if (!scalingText.empty()) {
    Quantization q;
    if (dstDtypeText == "float8_e4m3fn" || dstDtypeText == "f8E4M3FN")
      q.type = ElementType::F8E4M3FN;
    else if (dstDtypeText == "float8_e5m2" || dstDtypeText == "f8E5M2")
      q.type = ElementType::F8E5M2;
    else
      return fail("--dst-dtype: '" + dstDtypeText +
                  "' is not float8_e4m3fn or float8_e5m2");
    std::optional<Scaling> scaling = parseScaling(scalingText);
    if (!scaling)
      return fail("--scaling: '" + scalingText +
                  "' is not tensor, block(R,C) or mx");
    q.scaling = *scaling;
    for (const TensorSpec &tensor : model.tensors)
      if (tensor.quantized)
        if (auto error = checkScaling(
                q.scaling, Dims(tensor.shape.begin(), tensor.shape.end()),
                tensor.type, q.type))
          return fail(tensor.name + ": " + *error);
    quantization = q;
  }

  Topology topology;
  std::string topologyName;
  if (!topologyPath.empty()) {
    auto text = llvm::MemoryBuffer::getFile(topologyPath);
    if (!text)
      return fail("cannot read " + topologyPath + ": " +
                  text.getError().message());
    if (auto error = Topology::parseJson((*text)->getBuffer().str(), topology))
      return fail(topologyPath + ": " + *error);
    topologyName = topologyPath;
    // A machine larger than the refit: its other ranks stay idle.
    for (const std::vector<int64_t> &domain : topology.domains)
      for (int64_t rank : domain)
        plan.commSize = std::max(plan.commSize, rank + 1);
  } else {
    if (domainSize < 1)
      return fail("--domain-size must be at least 1");
    topology = Topology::uniformDomains(domainSize);
    topologyName = "NVLink domains of " + std::to_string(domainSize) + " ranks";
  }
  if (auto error = topology.validate(plan.commSize))
    return fail("topology: " + *error);

  std::vector<Strategy> chosen;
  for (const std::string &name : strategies) {
    std::optional<Strategy> strategy = parseStrategy(name);
    if (!strategy)
      return fail("--strategy: '" + name +
                  "' is not one of flat, gather-bcast, hierarchical");
    chosen.push_back(*strategy);
  }
  if (chosen.empty())
    chosen = {Strategy::Flat, Strategy::GatherBroadcast, Strategy::Hierarchical};

  if (!callsPath.empty())
    if (auto error = emitCalls(callsPath, model, plan))
      return fail(*error);
  if (!emitPath.empty() || !compilePath.empty()) {
    std::unique_ptr<mlir::MLIRContext> context = createCompilerContext();
    context->getOrLoadDialect<mlir::m2n::M2NDialect>();
    std::string ir = refitIR(*context, model, plan, topology, quantization);
    if (!emitPath.empty())
      if (auto error = emitIR(emitPath, ir))
        return fail(*error);
    if (!compilePath.empty())
      if (auto error = compileRefit(*context, ir, model.tensors.size(),
                                    chosen.front()))
        return fail(*error);
  }

  const size_t count = model.tensors.size();
  std::vector<ReshardPlan> plans(count);
  double planMs = 1e300;
  for (int run = 0; run < std::max(1, repeat.getValue()); ++run) {
    auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < count; ++i)
      plans[i] = IntersectionPlanner(plan.trainer[i], plan.generator[i],
                                     model.tensors[i].shape)
                     .plan();
    planMs = std::min(planMs, millisecondsSince(start));
  }
  int64_t transfers = 0;
  for (const ReshardPlan &p : plans)
    transfers += static_cast<int64_t>(p.transfers.size());
  double verifyMs = 0;
  if (verify) {
    auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < count; ++i) {
      std::vector<PlanIssue> issues =
          verifyPlan(plan.trainer[i], plan.generator[i], model.tensors[i].shape,
                     plans[i]);
      if (!issues.empty())
        return fail(model.tensors[i].name + ": the plan is wrong: " +
                    issues.front().message);
    }
    verifyMs = millisecondsSince(start);
  }

  // The quantized tensors' scale plans: the amax shares and exchange.
  struct ScaleTotals {
    int64_t tensors = 0, elements = 0, scales = 0, scaleBytes = 0;
    int64_t shares = 0, exchange = 0, reductions = 0;
  } scaleTotals;
  double scalePlanMs = 1e300, scaleVerifyMs = 0;
  if (quantization) {
    const int64_t scaleSize =
        hasExponentScales(quantization->scaling) ? 1 : 4;
    for (int run = 0; run < std::max(1, repeat.getValue()); ++run) {
      ScaleTotals totals;
      double verifyTook = 0;
      auto start = std::chrono::steady_clock::now();
      for (size_t i = 0; i < count; ++i) {
        const TensorSpec &tensor = model.tensors[i];
        if (!tensor.quantized)
          continue;
        ScalePlan scales = planScales(quantization->scaling, plan.trainer[i],
                                      plan.generator[i], tensor.shape, plans[i]);
        ++totals.tensors;
        totals.elements += tensor.elements();
        for (const auto &[rank, box] : scales.holderBoxes) {
          totals.scales += box.volume();
          totals.scaleBytes += box.volume() * scaleSize;
        }
        for (const auto &[rank, box] : scales.amaxBoxes)
          totals.shares += !box.empty();
        totals.exchange += static_cast<int64_t>(scales.exchange.size());
        for (const AmaxTransfer &t : scales.exchange)
          totals.reductions += t.transfer.reduction.has_value();
        if (verify && run == 0) {
          auto verifyStart = std::chrono::steady_clock::now();
          std::vector<PlanIssue> issues =
              verifyScalePlan(quantization->scaling, plan.trainer[i],
                              plan.generator[i], tensor.shape, plans[i], scales);
          if (!issues.empty())
            return fail(tensor.name + ": the scale plan is wrong: " +
                        issues.front().message);
          verifyTook += millisecondsSince(verifyStart);
        }
      }
      double took = millisecondsSince(start) - verifyTook;
      scalePlanMs = std::min(scalePlanMs, took);
      if (run == 0)
        scaleVerifyMs = verifyTook;
      scaleTotals = totals;
    }
  }

  llvm::outs() << "m2n-refit: " << model.name << ", " << count << " tensors, "
               << llvm::format("%.3g", model.parameterCount() / 1e9)
               << " B parameters, " << humanBytes(model.bytes()) << "\n"
               << "trainer " << trainer.str() << " (" << trainer.ranks()
               << " ranks) -> generator " << generator.str() << " ("
               << generator.ranks() << " ranks), " << plan.commSize
               << " ranks in all; " << topologyName << ", NVLink "
               << llvm::format("%g", topology.nvlinkGBps) << " GB/s, network "
               << llvm::format("%g", topology.networkGBps) << " GB/s per rank\n"
               << "planned " << transfers << " transfers in "
               << llvm::format("%.1f", planMs) << " ms ("
               << llvm::format("%.1f", 1000.0 * planMs / count)
               << " us per tensor)";
  if (verify)
    llvm::outs() << "; every plan verified in "
                 << llvm::format("%.1f", verifyMs) << " ms";
  llvm::outs() << "\n";
  if (quantization) {
    llvm::outs() << "quantized " << scaleTotals.tensors << " tensors ("
                 << llvm::format("%.3g", scaleTotals.elements / 1e9)
                 << " B elements) into " << toString(quantization->type)
                 << " with scaling " << quantization->scaling.str() << ": "
                 << scaleTotals.scales << " scales ("
                 << humanBytes(scaleTotals.scaleBytes)
                 << ") held by the generator, " << scaleTotals.shares
                 << " amax shares, " << scaleTotals.exchange
                 << " exchange transfers (" << scaleTotals.reductions
                 << " max-reductions of blocks straddling trainer shards); "
                 << "scale plans in " << llvm::format("%.1f", scalePlanMs)
                 << " ms";
    if (verify)
      llvm::outs() << ", verified in " << llvm::format("%.1f", scaleVerifyMs)
                   << " ms";
    llvm::outs() << "\n";
  }
  llvm::outs() << "\n";
  llvm::outs() << "| strategy | steps | local | NVLink | network "
                  "| T_network (ms) | T_NVLink (ms) | T_SOL (ms) | bound by "
                  "| route (ms) |\n|---|---|---|---|---|---|---|---|---|---|\n";
  for (Strategy strategy : chosen) {
    double routeMs = 1e300;
    LinkLoads loads;
    int64_t steps = 0;
    for (int run = 0; run < std::max(1, repeat.getValue()); ++run) {
      LinkLoads sum;
      int64_t stepCount = 0;
      auto start = std::chrono::steady_clock::now();
      for (size_t i = 0; i < count; ++i) {
        Schedule schedule = TopologyRouter(plan.trainer[i], plan.generator[i],
                                           model.tensors[i].shape, topology)
                                .setReduceShare(ReduceShare::Auto)
                                .setQuantizeOnce(quantization &&
                                                 model.tensors[i].quantized)
                                .route(plans[i], strategy);
        stepCount += static_cast<int64_t>(schedule.steps.size());
        // A quantized tensor travels as FP8: it is quantized where its
        // bytes leave the trainer.
        sum.add(schedule, quantization && model.tensors[i].quantized
                              ? elementSize(quantization->type)
                              : elementSize(model.tensors[i].type));
      }
      routeMs = std::min(routeMs, millisecondsSince(start));
      loads = std::move(sum);
      steps = stepCount;
    }
    Estimate estimate = estimateLoads(loads, topology);
    llvm::outs() << "| " << toString(strategy) << " | " << steps << " | "
                 << humanBytes(loads.localBytes) << " | "
                 << humanBytes(loads.nvlinkBytes) << " | "
                 << humanBytes(loads.networkBytes) << " | "
                 << llvm::format("%.3f", estimate.networkMs) << " | "
                 << llvm::format("%.3f", estimate.nvlinkMs) << " | "
                 << llvm::format("%.3f", estimate.solMs()) << " | "
                 << estimate.busiestLink() << " | "
                 << llvm::format("%.1f", routeMs) << " |\n";
  }
  return 0;
}
