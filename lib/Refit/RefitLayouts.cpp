//===- RefitLayouts.cpp - the layouts of a refit's tensors -----------------===//

#include "m2n/Refit/Refit.h"

namespace m2n {

std::optional<std::string> refitLayout(const TensorSpec &tensor,
                                       const ModelSpec &model,
                                       const ParallelConfig &config,
                                       Layout &layout) {
  // Stage s holds layers [floor(s * L / pp), floor((s + 1) * L / pp));
  // what comes before the layers is on the first stage, after on the last.
  const int64_t stage =
      tensor.layer < 0                ? 0
      : tensor.layer >= model.layers ? config.pp - 1
                                      : ((tensor.layer + 1) * config.pp - 1) /
                                            model.layers;
  const int64_t base = config.base + stage * config.stageRanks();
  const int64_t replicas = config.dp * config.cp;
  const int64_t rank = static_cast<int64_t>(tensor.shape.size());
  auto needs = [&](int64_t dims) -> std::optional<std::string> {
    if (rank < dims)
      return tensor.name + ": a " + toString(tensor.role) + " tensor has at least " +
             std::to_string(dims) + " dimensions, this one " +
             std::to_string(rank);
    return std::nullopt;
  };
  const Placement R = Placement::replicate();
  switch (tensor.role) {
  case TensorRole::Column:
  case TensorRole::Row: {
    const int64_t dim = tensor.role == TensorRole::Column ? 0 : 1;
    if (auto error = needs(dim + 1))
      return error;
    layout = {Mesh::contiguous({replicas, config.tp}, base),
              {R, Placement::shard(dim)}};
    if (tensor.vocabulary && config.vocabPad > 0) {
      // The padded vocabulary split evenly; each rank holds its real rows.
      const int64_t vocab = tensor.shape[0];
      if (vocab > INT64_MAX - config.vocabPad)
        return tensor.name + ": vocab_pad=" + std::to_string(config.vocabPad) +
               " overflows its vocabulary of " + std::to_string(vocab);
      const int64_t padded =
          (vocab + config.vocabPad - 1) / config.vocabPad * config.vocabPad;
      if (padded % config.tp)
        return tensor.name + ": its vocabulary of " + std::to_string(vocab) +
               " padded to a multiple of " + std::to_string(config.vocabPad) +
               " (" + std::to_string(padded) +
               ") does not split evenly over tp=" + std::to_string(config.tp);
      std::vector<int64_t> boundaries;
      for (int64_t i = 0; i <= config.tp; ++i)
        boundaries.push_back(std::min(i * (padded / config.tp), vocab));
      layout.placements[1] = Placement::shard(0, std::move(boundaries));
      layout = canonicalLayout(std::move(layout), tensor.shape);
    }
    return std::nullopt;
  }
  case TensorRole::Replicated:
    layout = {Mesh::contiguous({replicas, config.tp}, base), {R, R}};
    return std::nullopt;
  case TensorRole::Experts:
  case TensorRole::ExpertsRow:
    if (auto error = needs(3))
      return error;
    if (config.ep > 1) {
      if (config.stageRanks() % config.ep)
        return tensor.name + ": ep=" + std::to_string(config.ep) +
               " does not divide the " + std::to_string(config.stageRanks()) +
               " ranks of a stage (dp * cp * tp)";
      layout = {Mesh::contiguous({config.stageRanks() / config.ep, config.ep},
                                 base),
                {R, Placement::shard(0)}};
      return std::nullopt;
    }
    layout = {Mesh::contiguous({replicas, config.tp}, base),
              {R, Placement::shard(tensor.role == TensorRole::Experts ? 1 : 2)}};
    return std::nullopt;
  }
  return std::string("unknown role");
}

std::optional<std::string> planRefit(const ModelSpec &model,
                                     const ParallelConfig &trainer,
                                     const ParallelConfig &generator,
                                     RefitPlan &plan) {
  plan = RefitPlan();
  for (const auto &[side, config] :
       {std::pair<const char *, const ParallelConfig *>{"trainer", &trainer},
        {"generator", &generator}})
    if (config->pp > model.layers)
      return std::string(side) + ": pp=" + std::to_string(config->pp) +
             " stages for a model of " + std::to_string(model.layers) +
             " layers (a stage holds at least one layer)";
  plan.commSize = std::max(trainer.base + trainer.ranks(),
                           generator.base + generator.ranks());
  for (const TensorSpec &tensor : model.tensors) {
    Layout src, dst;
    if (auto error = refitLayout(tensor, model, trainer, src))
      return "trainer: " + *error;
    if (auto error = refitLayout(tensor, model, generator, dst))
      return "generator: " + *error;
    if (auto error = validateReshard(src, dst, tensor.shape, plan.commSize))
      return tensor.name + ": " + *error;
    plan.trainer.push_back(std::move(src));
    plan.generator.push_back(std::move(dst));
  }
  return std::nullopt;
}

} // namespace m2n
