//===- TransferProgram.cpp - schedules as work items for the kernel ---------===//

#include "m2n/Codegen/TransferProgram.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace m2n {

const char *toString(ItemOp op) {
  static const char *names[] = {
      "copy",     "add.f32",  "add.f16", "add.bf16", "min.f16",
      "max.f16",  "min.bf16", "max.bf16", "add.s32", "min.s32",
      "max.s32",  "add.u64",  "min.s64", "max.s64",  "add.f64"};
  uint32_t index = static_cast<uint32_t>(op);
  return index < sizeof(names) / sizeof(names[0]) ? names[index] : "?";
}

std::optional<ItemOp> bulkReduction(Reduction reduction, ElementType type) {
  switch (type) {
  case ElementType::F32:
    if (reduction == Reduction::Sum)
      return ItemOp::AddF32;
    return std::nullopt;
  case ElementType::F64:
    if (reduction == Reduction::Sum)
      return ItemOp::AddF64;
    return std::nullopt;
  case ElementType::F16:
    return reduction == Reduction::Sum   ? ItemOp::AddF16
           : reduction == Reduction::Min ? ItemOp::MinF16
                                         : ItemOp::MaxF16;
  case ElementType::BF16:
    return reduction == Reduction::Sum   ? ItemOp::AddBF16
           : reduction == Reduction::Min ? ItemOp::MinBF16
                                         : ItemOp::MaxBF16;
  case ElementType::I32:
    return reduction == Reduction::Sum   ? ItemOp::AddS32
           : reduction == Reduction::Min ? ItemOp::MinS32
                                         : ItemOp::MaxS32;
  case ElementType::I64:
    // Two's complement addition is the same for u64 and s64.
    return reduction == Reduction::Sum   ? ItemOp::AddU64
           : reduction == Reduction::Min ? ItemOp::MinS64
                                         : ItemOp::MaxS64;
  case ElementType::I8:
  case ElementType::I16:
    return std::nullopt;
  }
  return std::nullopt;
}

std::string Movement::str() const {
  std::ostringstream os;
  os << toString(op) << ' ' << src.str() << '+' << srcOffset << " -> "
     << dst.str() << '+' << dstOffset << ' ' << bytes << "B";
  if (signal)
    os << " signal " << signal->rank << ':' << signal->index;
  for (const CounterWait &wait : waits)
    os << " wait " << wait.counter.rank << ':' << wait.counter.index
       << ">=" << wait.value;
  return os.str();
}

int64_t TransferProgram::itemCount() const {
  int64_t count = 0;
  for (const auto &[rank, program] : ranks)
    count += static_cast<int64_t>(program.items.size());
  return count;
}

namespace {

/// Row-major element strides of a buffer.
Dims stridesOf(const Dims &shape) {
  Dims strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Calls fn(srcElementOffset, dstElementOffset, elements) for every
/// contiguous run of `box` in both buffers.
template <typename Fn>
void forEachRun(const Box &fromBox, const Dims &fromShape, const Box &toBox,
                const Dims &toShape, Fn fn) {
  const int64_t rank = fromBox.rank();
  // Dimensions after `split` are covered entirely in both buffers.
  int64_t split = rank - 1;
  while (split > 0 && fromBox.sizes[split] == fromShape[split] &&
         toBox.sizes[split] == toShape[split])
    --split;
  int64_t runElements = 1;
  for (int64_t d = std::max<int64_t>(split, 0); d < rank; ++d)
    runElements *= fromBox.sizes[d];
  Dims fromStrides = stridesOf(fromShape), toStrides = stridesOf(toShape);
  Dims index(std::max<int64_t>(split, 0), 0);
  while (true) {
    int64_t from = 0, to = 0;
    for (int64_t d = 0; d < rank; ++d) {
      int64_t i = d < split ? index[d] : 0;
      from += (fromBox.offsets[d] + i) * fromStrides[d];
      to += (toBox.offsets[d] + i) * toStrides[d];
    }
    fn(from, to, runElements);
    int64_t d = split - 1;
    while (d >= 0 && ++index[d] == fromBox.sizes[d]) {
      index[d] = 0;
      --d;
    }
    if (d < 0)
      return;
  }
}

} // namespace

std::optional<std::string>
lowerSchedule(const Schedule &schedule, const Layout &src, const Layout &dst,
              const std::vector<int64_t> &shape, ElementType type,
              const LoweringOptions &options, TransferProgram &program) {
  program = TransferProgram();
  program.type = type;
  program.scratches = schedule.scratches;
  const int64_t elementBytes = elementSize(type);
  const int64_t count = static_cast<int64_t>(schedule.steps.size());
  if (options.maxItemBytes < 16 || options.maxItemBytes % 16)
    return std::string("the item size must be a positive multiple of 16");

  // Buffer shapes.
  auto shapeOf = [&](const BufferRef &buffer) -> std::optional<Dims> {
    const Layout *layout = nullptr;
    if (buffer.kind == BufferKind::Scratch) {
      if (buffer.scratch < 0 ||
          buffer.scratch >= static_cast<int64_t>(schedule.scratches.size()))
        return std::nullopt;
      return schedule.scratches[buffer.scratch].shape;
    }
    layout = buffer.kind == BufferKind::Source ? &src : &dst;
    std::optional<int64_t> index = layout->mesh.indexOf(buffer.rank);
    if (!index)
      return std::nullopt;
    return layout->localBox(shape, *index).sizes;
  };

  // A topological order of the steps (list order among the ready ones).
  std::vector<int64_t> pending(count, 0), order;
  std::vector<std::vector<int64_t>> dependents(count);
  for (int64_t i = 0; i < count; ++i)
    for (int64_t dep : schedule.steps[i].deps) {
      if (dep < 0 || dep >= count)
        return "step " + std::to_string(i) + " depends on a missing step";
      ++pending[i];
      dependents[dep].push_back(i);
    }
  std::set<int64_t> ready;
  for (int64_t i = 0; i < count; ++i)
    if (!pending[i])
      ready.insert(i);
  while (!ready.empty()) {
    int64_t i = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(i);
    for (int64_t next : dependents[i])
      if (--pending[next] == 0)
        ready.insert(next);
  }
  if (static_cast<int64_t>(order.size()) != count)
    return std::string("the schedule's dependencies form a cycle");

  // Each step with dependents signals a counter on its executor once per
  // movement; `signalled[i]` is (counter, number of movements).
  std::vector<std::optional<std::pair<CounterRef, uint64_t>>> signalled(count);
  for (int64_t i : order) {
    const Step &step = schedule.steps[i];
    std::string where = "step " + std::to_string(i) + " (" + step.str() + "): ";
    std::optional<Dims> fromShape = shapeOf(step.from);
    std::optional<Dims> toShape = shapeOf(step.to);
    if (!fromShape || !toShape)
      return where + "names a buffer that does not exist";
    ItemOp op = ItemOp::Copy;
    if (step.reduction) {
      std::optional<ItemOp> reduce = bulkReduction(*step.reduction, type);
      if (!reduce)
        return where + "TMA has no bulk reduction " +
               toString(*step.reduction) + " for " + toString(type);
      op = *reduce;
    }
    RankProgram &executor = program.ranks[step.executor()];
    const bool network = step.link == LinkClass::Network;

    // Waits: at most two per movement; more are combined by join items.
    std::vector<CounterWait> waits;
    for (int64_t dep : step.deps)
      if (signalled[dep])
        waits.push_back({signalled[dep]->first, signalled[dep]->second});
    while (waits.size() > 2) {
      Movement join;
      join.src = step.to;
      join.dst = step.to;
      join.waits.assign(waits.begin(), waits.begin() + 2);
      join.signal = CounterRef{step.executor(), executor.counters++};
      executor.items.push_back(join);
      waits.erase(waits.begin(), waits.begin() + 2);
      waits.push_back({*join.signal, 1});
    }
    std::optional<CounterRef> signal;
    if (!dependents[i].empty())
      signal = CounterRef{step.executor(), executor.counters++};

    uint64_t movements = 0;
    std::optional<std::string> error;
    forEachRun(step.fromBox, *fromShape, step.toBox, *toShape,
               [&](int64_t from, int64_t to, int64_t elements) {
                 int64_t bytes = elements * elementBytes;
                 if (error)
                   return;
                 if ((from * elementBytes) % 16 || (to * elementBytes) % 16 ||
                     bytes % 16) {
                   error = where + "a run of " + std::to_string(bytes) +
                           " bytes at element offsets " + std::to_string(from) +
                           " -> " + std::to_string(to) +
                           " is not 16-byte aligned (TMA bulk copies need "
                           "that; tensor maps are not implemented yet)";
                   return;
                 }
                 int64_t piece = network ? bytes : options.maxItemBytes;
                 for (int64_t at = 0; at < bytes; at += piece) {
                   Movement movement;
                   movement.src = step.from;
                   movement.srcOffset = from * elementBytes + at;
                   movement.dst = step.to;
                   movement.dstOffset = to * elementBytes + at;
                   movement.bytes = std::min(piece, bytes - at);
                   movement.op = op;
                   movement.signal = signal;
                   movement.waits = waits;
                   movement.step = i;
                   (network ? executor.receives : executor.items)
                       .push_back(std::move(movement));
                   ++movements;
                 }
               });
    if (error)
      return error;
    if (signal)
      signalled[i] = std::make_pair(*signal, movements);
  }
  return std::nullopt;
}

} // namespace m2n
