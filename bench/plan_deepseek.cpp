//===- plan_deepseek.cpp - planning benchmark at DeepSeek-V3 scale ----------===//
//
// Plans the RL weight hand-off of a DeepSeek-V3-sized model (61 layers, MLA
// attention, 58 MoE layers with 256 stacked experts) from a 128-GPU trainer
// (PP8 x DP2 x TP8 per stage, experts EP16 within a stage) to a 128-GPU
// generator (DP16 x TP8, experts TP8 on the intermediate dimension) on a
// 256-rank communicator, and reports how long layout-derived planning takes.
//
//   m2n-plan-bench [--verify] [--emit-mlir FILE] [--repeat N]
//
// --emit-mlir writes the same reshards as layout-level IR, so that the
// m2n-plan-intersections pass can be timed with `m2n-opt -mlir-timing`.
//
//===----------------------------------------------------------------------===//

#include "m2n/Plan/Planner.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

using namespace m2n;

namespace {

constexpr int64_t kHidden = 7168, kLayers = 61, kDenseLayers = 3;
constexpr int64_t kDenseIntermediate = 18432, kExperts = 256, kMoeIntermediate = 2048;
constexpr int64_t kVocab = 129280, kHeads = 128;
constexpr int64_t kQLora = 1536, kKvLora = 512, kRope = 64, kNope = 128, kV = 128;
constexpr int64_t kStages = 8, kStageRanks = 16, kTrainerRanks = 128;
constexpr int64_t kCommSize = 256;

enum class Kind { Column, Row, Replicated, Experts, ExpertsDown };

struct Tensor {
  std::string name;
  std::vector<int64_t> shape;
  Kind kind;
  int64_t stage;
};

std::vector<Tensor> deepseekTensors() {
  std::vector<Tensor> tensors;
  auto add = [&](std::string name, std::vector<int64_t> shape, Kind kind,
                 int64_t stage) {
    tensors.push_back({std::move(name), std::move(shape), kind, stage});
  };
  add("embed_tokens", {kVocab, kHidden}, Kind::Column, 0);
  for (int64_t layer = 0; layer < kLayers; ++layer) {
    int64_t stage = layer * kStages / kLayers;
    std::string p = "layers." + std::to_string(layer) + ".";
    add(p + "input_layernorm", {kHidden}, Kind::Replicated, stage);
    add(p + "q_a_proj", {kQLora, kHidden}, Kind::Column, stage);
    add(p + "q_a_layernorm", {kQLora}, Kind::Replicated, stage);
    add(p + "q_b_proj", {kHeads * (kNope + kRope), kQLora}, Kind::Column, stage);
    add(p + "kv_a_proj_with_mqa", {kKvLora + kRope, kHidden}, Kind::Column, stage);
    add(p + "kv_a_layernorm", {kKvLora}, Kind::Replicated, stage);
    add(p + "kv_b_proj", {kHeads * (kNope + kV), kKvLora}, Kind::Column, stage);
    add(p + "o_proj", {kHidden, kHeads * kV}, Kind::Row, stage);
    add(p + "post_attention_layernorm", {kHidden}, Kind::Replicated, stage);
    if (layer < kDenseLayers) {
      add(p + "mlp.gate_proj", {kDenseIntermediate, kHidden}, Kind::Column, stage);
      add(p + "mlp.up_proj", {kDenseIntermediate, kHidden}, Kind::Column, stage);
      add(p + "mlp.down_proj", {kHidden, kDenseIntermediate}, Kind::Row, stage);
      continue;
    }
    add(p + "mlp.gate", {kExperts, kHidden}, Kind::Replicated, stage);
    add(p + "mlp.gate.e_score_correction_bias", {kExperts}, Kind::Replicated, stage);
    add(p + "mlp.experts.gate_proj", {kExperts, kMoeIntermediate, kHidden}, Kind::Experts, stage);
    add(p + "mlp.experts.up_proj", {kExperts, kMoeIntermediate, kHidden}, Kind::Experts, stage);
    add(p + "mlp.experts.down_proj", {kExperts, kHidden, kMoeIntermediate}, Kind::ExpertsDown, stage);
    add(p + "mlp.shared_experts.gate_proj", {kMoeIntermediate, kHidden}, Kind::Column, stage);
    add(p + "mlp.shared_experts.up_proj", {kMoeIntermediate, kHidden}, Kind::Column, stage);
    add(p + "mlp.shared_experts.down_proj", {kHidden, kMoeIntermediate}, Kind::Row, stage);
  }
  add("norm", {kHidden}, Kind::Replicated, kStages - 1);
  add("lm_head", {kVocab, kHidden}, Kind::Column, kStages - 1);
  return tensors;
}

/// Trainer stage s: ranks 16s..16s+15 as DP2 x TP8; experts EP16.
Layout trainerLayout(const Tensor &t) {
  int64_t base = t.stage * kStageRanks;
  switch (t.kind) {
  case Kind::Column:
    return {Mesh::contiguous({2, 8}, base), {Placement::replicate(), Placement::shard(0)}};
  case Kind::Row:
    return {Mesh::contiguous({2, 8}, base), {Placement::replicate(), Placement::shard(1)}};
  case Kind::Replicated:
    return {Mesh::contiguous({2, 8}, base), {Placement::replicate(), Placement::replicate()}};
  case Kind::Experts:
  case Kind::ExpertsDown:
    return {Mesh::contiguous({16}, base), {Placement::shard(0)}};
  }
  return {};
}

/// Generator: ranks 128..255 as DP16 x TP8; experts TP8 on the intermediate
/// dimension.
Layout generatorLayout(const Tensor &t) {
  Mesh mesh = Mesh::contiguous({16, 8}, kTrainerRanks);
  switch (t.kind) {
  case Kind::Column:
    return {mesh, {Placement::replicate(), Placement::shard(0)}};
  case Kind::Row:
    return {mesh, {Placement::replicate(), Placement::shard(1)}};
  case Kind::Replicated:
    return {mesh, {Placement::replicate(), Placement::replicate()}};
  case Kind::Experts:
    return {mesh, {Placement::replicate(), Placement::shard(1)}};
  case Kind::ExpertsDown:
    return {mesh, {Placement::replicate(), Placement::shard(2)}};
  }
  return {};
}

std::string mlirLayout(const Layout &layout) {
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

std::string mlirType(const Tensor &t, const Layout &layout) {
  std::string text = "!m2n.dist<";
  for (int64_t extent : t.shape)
    text += std::to_string(extent) + "x";
  return text + "bf16, " + mlirLayout(layout) + ">";
}

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace

int main(int argc, char **argv) {
  bool verify = false;
  int repeat = 5;
  const char *emitPath = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--verify"))
      verify = true;
    else if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--emit-mlir") && i + 1 < argc)
      emitPath = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--verify] [--repeat N] [--emit-mlir FILE]\n",
                   argv[0]);
      return 2;
    }
  }

  std::vector<Tensor> tensors = deepseekTensors();
  std::vector<Layout> src, dst;
  for (const Tensor &t : tensors) {
    src.push_back(trainerLayout(t));
    dst.push_back(generatorLayout(t));
    if (auto error = validateReshard(src.back(), dst.back(), t.shape, kCommSize)) {
      std::fprintf(stderr, "%s: %s\n", t.name.c_str(), error->c_str());
      return 1;
    }
  }

  if (emitPath) {
    std::ofstream out(emitPath);
    out << "// Generated by m2n-plan-bench: DeepSeek-V3 trainer -> generator.\n"
        << "func.func @refit(%comm: !m2n.comm<" << kCommSize << ">";
    for (size_t i = 0; i < tensors.size(); ++i)
      out << ",\n    %w" << i << ": " << mlirType(tensors[i], src[i]);
    out << ") {\n";
    for (size_t i = 0; i < tensors.size(); ++i)
      out << "  %r" << i << " = m2n.reshard %w" << i << " on %comm : !m2n.comm<"
          << kCommSize << ">, " << mlirType(tensors[i], src[i]) << " -> "
          << mlirType(tensors[i], dst[i]) << "\n";
    out << "  return\n}\n";
  }

  // Best of `repeat` runs: planning is deterministic, the minimum is the
  // least disturbed measurement.
  double best = 1e300;
  int64_t transfers = 0, remoteBytes = 0, totalBytes = 0;
  for (int run = 0; run < repeat; ++run) {
    auto start = std::chrono::steady_clock::now();
    int64_t count = 0, remote = 0;
    for (size_t i = 0; i < tensors.size(); ++i) {
      ReshardPlan plan = IntersectionPlanner(src[i], dst[i], tensors[i].shape).plan();
      count += static_cast<int64_t>(plan.transfers.size());
      remote += plan.remoteElements() * 2;
    }
    best = std::min(best, millisecondsSince(start));
    transfers = count;
    remoteBytes = remote;
  }
  for (const Tensor &t : tensors) {
    int64_t elements = 1;
    for (int64_t extent : t.shape)
      elements *= extent;
    totalBytes += elements * 2;
  }

  double verifyMs = 0;
  if (verify) {
    auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < tensors.size(); ++i) {
      ReshardPlan plan = IntersectionPlanner(src[i], dst[i], tensors[i].shape).plan();
      std::vector<PlanIssue> issues = verifyPlan(src[i], dst[i], tensors[i].shape, plan);
      if (!issues.empty()) {
        std::fprintf(stderr, "%s: %s\n", tensors[i].name.c_str(),
                     issues.front().message.c_str());
        return 1;
      }
    }
    verifyMs = millisecondsSince(start);
  }

  std::printf("| model | tensors | ranks | weights (GB) | transfers | bytes moved (GB) | plan (ms) | per tensor (us) |%s\n",
              verify ? " plan + verify (ms) |" : "");
  std::printf("|---|---|---|---|---|---|---|---|%s\n", verify ? "---|" : "");
  std::printf("| DeepSeek-V3 (bf16) | %zu | %lld | %.1f | %lld | %.1f | %.1f | %.1f |",
              tensors.size(), static_cast<long long>(kCommSize), totalBytes / 1e9,
              static_cast<long long>(transfers), remoteBytes / 1e9, best,
              1000.0 * best / tensors.size());
  if (verify)
    std::printf(" %.1f |", verifyMs);
  std::printf("\n");
  return 0;
}
