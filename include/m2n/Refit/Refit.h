//===- Refit.h - whole-model refits from a model and two layouts --*- C++ -*-===//
//
// The RL refit: after a training step every weight of a model moves from the
// trainer's layout to the generator's. A model description names the
// tensors (shapes, element type, the parallel role of each) and two parallel
// configurations say how the trainer and the generator lay them out; from
// these, one reshard per tensor (docs/refit.md).
//
// Layout rules, for a configuration of tp, pp, dp, cp and ep over the ranks
// [base, base + pp * dp * cp * tp):
//  * pipeline stage s holds the layers [floor(s * layers / pp), floor((s +
//    1) * layers / pp)) (what precedes the layers on the first stage, what
//    follows on the last) on the ranks of its stage, base + s * dp * cp * tp onwards, as a
//    [dp * cp, tp] mesh (context-parallel ranks hold the weights as data-
//    parallel ones do);
//  * "column" weights (output dimension first: q/k/v, gate/up, embeddings,
//    lm_head) are [replicate, shard<0>]; "row" weights (o_proj, down_proj)
//    [replicate, shard<1>]; "replicated" ones (norms, routers, biases)
//    [replicate, replicate];
//  * stacked experts ("experts": [experts, out, in]; "experts_row":
//    [experts, in, out]) with ep > 1 are split over ep ranks of the stage,
//    as a [dp * cp * tp / ep, ep] mesh [replicate, shard<0>]; with ep = 1
//    tensor parallelism splits the intermediate dimension instead
//    (experts: shard<1>, experts_row: shard<2>);
//  * a "vocabulary" column weight (embeddings, lm_head) on a side with
//    vocab_pad=N is padded per rank as Megatron and vLLM pad it: the
//    vocabulary V rounded up to a multiple of N, split evenly over tp, rank
//    i holding the real rows [min(i * P / tp, V), min((i + 1) * P / tp, V))
//    of it (shard<0, [...]>: the last ranks hold fewer, or none).
//
//===----------------------------------------------------------------------===//

#ifndef M2N_REFIT_REFIT_H
#define M2N_REFIT_REFIT_H

#include "m2n/Base/ElementType.h"
#include "m2n/Base/Layout.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace m2n {

/// How tensor and expert parallelism split a weight (see the file comment).
enum class TensorRole { Column, Row, Replicated, Experts, ExpertsRow };
const char *toString(TensorRole role);
std::optional<TensorRole> parseTensorRole(const std::string &name);

/// One weight of the model, after expanding per-layer templates.
struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  ElementType type = ElementType::BF16;
  TensorRole role = TensorRole::Replicated;
  /// The layer the tensor belongs to (-1: before the first, `layers`: after
  /// the last), which picks its pipeline stage.
  int64_t layer = 0;
  /// Whether an FP8 generator holds it quantized (the released FP8
  /// checkpoint's linear weights; norms, embeddings and router gates stay in
  /// their type): what m2n-refit --scaling quantizes.
  bool quantized = false;
  /// Whether dimension 0 is the vocabulary (embeddings, lm_head): what a
  /// side's vocab_pad pads.
  bool vocabulary = false;

  int64_t elements() const;
};

struct ModelSpec {
  std::string name;
  int64_t layers = 1;
  std::vector<TensorSpec> tensors;

  int64_t parameterCount() const;
  int64_t bytes() const;
};

/// Parses a model description (JSON, docs/refit.md):
///   {"name": "...", "dtype": "bf16", "layers": 64,
///    "tensors": [{"name": "layers.{layer}.mlp.up_proj", "shape": [...],
///                 "role": "column", "layers": [0, 64],
///                 "quantized": true, "vocabulary": false}, ...]}
/// A tensor whose name contains "{layer}" is repeated for every layer of
/// its "layers" range (default: all); others name their place with
/// "stage": "first" or "last". The tensors come out layer by layer (a
/// checkpoint's order). Returns a message naming the problem.
std::optional<std::string> parseModelSpec(const std::string &text,
                                          ModelSpec &model);

/// One side's parallel configuration.
struct ParallelConfig {
  int64_t tp = 1, pp = 1, dp = 1, cp = 1, ep = 1;
  /// The first communicator rank of this side.
  int64_t base = 0;
  /// The multiple the vocabulary is padded to before tp splits it evenly
  /// (Megatron: make-vocab-size-divisible-by x tp; vLLM: 64); 0: not padded
  /// (torch.chunk's rule).
  int64_t vocabPad = 0;

  int64_t stageRanks() const { return dp * cp * tp; }
  int64_t ranks() const { return pp * stageRanks(); }
  /// "tp=8,pp=2,dp=4,ep=8,base=0".
  std::string str() const;
};

/// Parses "tp=8,pp=2,dp=4" (keys tp, pp, dp, cp, ep, base, vocab_pad; each
/// at most once, each >= 1, base and vocab_pad >= 0). Returns a message
/// naming the problem.
std::optional<std::string> parseParallelConfig(const std::string &text,
                                               ParallelConfig &config);

/// The layout of `tensor` under `config` (the rules of the file comment),
/// or a message naming why there is none (ep not dividing a stage's ranks,
/// a dimension the role splits that the tensor lacks, ...).
std::optional<std::string> refitLayout(const TensorSpec &tensor,
                                       const ModelSpec &model,
                                       const ParallelConfig &config,
                                       Layout &layout);

/// A whole refit: per tensor, the trainer's and the generator's layout.
struct RefitPlan {
  std::vector<Layout> trainer, generator;
  int64_t commSize = 0;
};

/// Lays every tensor out on both sides and checks each reshard
/// (validateReshard). The communicator spans both sides.
std::optional<std::string> planRefit(const ModelSpec &model,
                                     const ParallelConfig &trainer,
                                     const ParallelConfig &generator,
                                     RefitPlan &plan);

} // namespace m2n

#endif // M2N_REFIT_REFIT_H
