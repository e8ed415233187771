//===- Schedule.cpp - per-rank steps with dependencies ----------------------===//

#include "m2n/Route/Schedule.h"

#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

namespace m2n {

bool isScaleStep(const Step &step,
                 const std::vector<ScratchBuffer> &scratches) {
  return step.kind != StepKind::Move || isScaleBuffer(step.from.kind) ||
         isScaleBuffer(step.to.kind) || holdsAmaxes(step.from, scratches) ||
         holdsAmaxes(step.to, scratches);
}

std::optional<std::string>
checkStepKind(const Step &step, const std::vector<ScratchBuffer> &scratches) {
  const bool sameBlocks = step.from.rank == step.to.rank &&
                          step.fromBox == step.toBox && !step.reduction;
  switch (step.kind) {
  case StepKind::Amax:
    if (step.from.kind == BufferKind::Source &&
        step.to.kind == BufferKind::Slots && sameBlocks)
      return std::nullopt;
    return "an amax step reads a source rank's blocks into the same slots of "
           "that rank";
  case StepKind::Scale:
    if (step.from.kind == BufferKind::Holder &&
        step.to.kind == BufferKind::Scales && sameBlocks)
      return std::nullopt;
    return "a scale step turns a rank's holder table into the same blocks of "
           "its scales";
  case StepKind::Move: {
    if (!isScaleStep(step, scratches))
      return std::nullopt;
    const bool staged = holdsAmaxes(step.from, scratches) &&
                        step.from.kind == BufferKind::Scratch;
    const bool staging = holdsAmaxes(step.to, scratches) &&
                         step.to.kind == BufferKind::Scratch;
    const bool fromAmaxes = step.from.kind == BufferKind::Slots || staged;
    const bool intoTable = step.to.kind == BufferKind::Quantizer ||
                           step.to.kind == BufferKind::Holder;
    if (fromAmaxes &&
        ((intoTable && (!step.reduction || *step.reduction == Reduction::Max)) ||
         (staging && !step.reduction)))
      return std::nullopt;
    return "the amax exchange copies or max-reduces slots into quantizer "
           "and holder tables (copied through staging scratches across the "
           "network); nothing else moves blocks";
  }
  }
  return "an unknown step kind";
}

std::string Step::str() const {
  std::ostringstream os;
  os << (kind != StepKind::Move ? toString(kind)
         : reduction            ? toString(*reduction)
                                : "copy")
     << ' ' << from.str() << ' '
     << fromBox.str() << " -> " << to.str() << ' ' << toBox.str() << " via "
     << toString(link);
  if (!deps.empty()) {
    os << " after [";
    for (size_t i = 0; i < deps.size(); ++i)
      os << (i ? ", " : "") << deps[i];
    os << ']';
  }
  return os.str();
}

Step sliceStep(const Step &step, int64_t dim, int64_t begin, int64_t size) {
  Step piece = step;
  piece.fromBox.offsets[dim] += begin;
  piece.toBox.offsets[dim] += begin;
  piece.fromBox.sizes[dim] = size;
  piece.toBox.sizes[dim] = size;
  return piece;
}

Schedule chunkSchedule(Schedule schedule, int64_t elementSize,
                       int64_t chunkBytes, bool keepSourceReads) {
  Schedule result;
  result.strategy = schedule.strategy;
  result.scaling = schedule.scaling;
  result.scratches = std::move(schedule.scratches);
  result.steps.reserve(schedule.steps.size());
  for (Step &step : schedule.steps) {
    step.deps.clear();
    // Blocks are not cut: a step of the amax exchange moves f32 per block.
    int64_t bytes = step.kind == StepKind::Move && !isScaleBuffer(step.to.kind)
                        ? step.fromBox.volume() * elementSize
                        : 0;
    int64_t rank = step.fromBox.rank();
    int64_t dim = 0;
    while (dim < rank && step.fromBox.sizes[dim] <= 1)
      ++dim;
    if (chunkBytes <= 0 || bytes <= chunkBytes || dim == rank ||
        (keepSourceReads && step.from.kind == BufferKind::Source)) {
      result.steps.push_back(std::move(step));
      continue;
    }
    int64_t extent = step.fromBox.sizes[dim];
    int64_t sliceBytes = bytes / extent;
    int64_t perChunk = std::max<int64_t>(1, chunkBytes / sliceBytes);
    perChunk = std::max(perChunk,
                        (extent + kMaxChunksPerStep - 1) / kMaxChunksPerStep);
    for (int64_t begin = 0; begin < extent; begin += perChunk)
      result.steps.push_back(
          sliceStep(step, dim, begin, std::min(perChunk, extent - begin)));
  }
  return result;
}

namespace {

/// Where the moves out of a quantizing schedule's sources read their
/// quantizer tables: the blocks a source box touches, in its rank's table.
class QuantizerBlocks {
public:
  QuantizerBlocks(const Scaling &scaling, const Layout &src,
                  const std::vector<int64_t> &shape)
      : scaling(scaling), src(src), shape(shape),
        dims(shape.begin(), shape.end()), index(src.mesh) {}

  Box of(int64_t rank, const Box &fromBox) {
    auto [it, fresh] = localBoxes.try_emplace(rank);
    if (fresh) {
      std::optional<int64_t> position = index.indexOf(rank);
      it->second = position ? src.localBox(shape, *position) : Box{};
    }
    const Box &local = it->second;
    return local.empty() ? Box{}
                         : tableBlocksTouching(scaling, dims, local, fromBox);
  }

private:
  const Scaling &scaling;
  const Layout &src;
  const std::vector<int64_t> &shape;
  const Dims dims;
  const MeshIndex index;
  std::map<int64_t, Box> localBoxes;
};

void addDependencies(Schedule &schedule, QuantizerBlocks *quantizerBlocks) {
  using Key = std::tuple<int, int64_t, int64_t>;
  auto keyOf = [](const BufferRef &buffer) {
    return Key(static_cast<int>(buffer.kind), buffer.rank, buffer.scratch);
  };
  std::map<Key, std::vector<int64_t>> writers;
  for (size_t i = 0; i < schedule.steps.size(); ++i)
    writers[keyOf(schedule.steps[i].to)].push_back(static_cast<int64_t>(i));

  for (size_t i = 0; i < schedule.steps.size(); ++i) {
    Step &step = schedule.steps[i];
    std::vector<int64_t> deps;
    // Read after write: the data must be complete before it is read.
    if (step.from.kind != BufferKind::Source) {
      auto it = writers.find(keyOf(step.from));
      if (it != writers.end())
        for (int64_t j : it->second)
          if (j != static_cast<int64_t>(i) &&
              !schedule.steps[j].toBox.intersect(step.fromBox).empty())
            deps.push_back(j);
    }
    // A reduction lands on a copy.
    if (step.reduction) {
      for (int64_t j : writers[keyOf(step.to)])
        if (!schedule.steps[j].reduction &&
            !schedule.steps[j].toBox.intersect(step.toBox).empty())
          deps.push_back(j);
    }
    // A quantizing move out of a source divides by the scales of the
    // blocks it touches, in its source rank's quantizer table.
    if (quantizerBlocks && step.kind == StepKind::Move &&
        step.from.kind == BufferKind::Source && !step.fromBox.empty()) {
      const Box blocks = quantizerBlocks->of(step.from.rank, step.fromBox);
      for (int64_t j :
           writers[keyOf({BufferKind::Quantizer, step.from.rank, -1})])
        if (!schedule.steps[j].toBox.intersect(blocks).empty())
          deps.push_back(j);
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    step.deps = std::move(deps);
  }
}

} // namespace

void addDataDependencies(Schedule &schedule) {
  addDependencies(schedule, nullptr);
}

void addDataDependencies(Schedule &schedule, const Layout &src,
                         const std::vector<int64_t> &shape) {
  if (!schedule.scaling)
    return addDependencies(schedule, nullptr);
  QuantizerBlocks blocks(*schedule.scaling, src, shape);
  addDependencies(schedule, &blocks);
}

} // namespace m2n
