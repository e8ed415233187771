//===- TransferProgram.cpp - schedules as work items for the kernel ---------===//

#include "m2n/Codegen/TransferProgram.h"

#include "m2n/Artifact/TensorMap.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <sstream>
#include <tuple>
#include <variant>

namespace m2n {

bool copyEngineIsFaster(int64_t bytes, bool sameRank, int64_t ctas) {
  constexpr double kKernelGBpsPerCta = 50, kKernelLocalGBps = 1150,
                   kEngineLocalGBps = 2000, kEnginePeerGBps = 394,
                   kNvlinkGBps = 370, kEngineOverheadUs = 5;
  // The kernel's CTAs add up to the memory system's bound within a GPU
  // (measured to 32 CTAs; taken as flat beyond), to the link's across
  // NVLink.
  const double kernelGBps =
      std::min(static_cast<double>(std::max<int64_t>(ctas, 1)) *
                   kKernelGBpsPerCta,
               sameRank ? kKernelLocalGBps : kNvlinkGBps);
  const double engineGBps = sameRank ? kEngineLocalGBps : kEnginePeerGBps;
  // GB/s is bytes per nanosecond: microseconds are bytes / GBps / 1000.
  const double kernelUs = static_cast<double>(bytes) / kernelGBps / 1e3,
               engineUs = static_cast<double>(bytes) / engineGBps / 1e3 +
                          kEngineOverheadUs;
  return engineUs < kernelUs;
}


bool fusedReductionIsFaster(int64_t ctas) {
  // Between the budget where both were even (32 CTAs a rank) and the one
  // where fusion won (66: the whole GPU for two virtual ranks).
  return ctas >= 48;
}

namespace {

/// Row-major element strides of a buffer.
Dims stridesOf(const Dims &shape) {
  Dims strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The contiguous runs of a box in both buffers, as one pattern: the first
/// run's element offsets and length, and one repeat level (element
/// strides) per dimension the runs are strided over, outermost first.
struct RunPattern {
  int64_t from = 0, to = 0, elements = 1;
  std::vector<Repeat> levels;

  int64_t runs() const {
    int64_t count = 1;
    for (const Repeat &level : levels)
      count *= level.count;
    return count;
  }
  /// The levels with strides in bytes.
  std::vector<Repeat> byteLevels(int64_t fromBytes, int64_t toBytes) const {
    std::vector<Repeat> bytes = levels;
    for (Repeat &level : bytes) {
      level.srcStride *= fromBytes;
      level.dstStride *= toBytes;
    }
    return bytes;
  }
};

RunPattern runPattern(const Box &fromBox, const Dims &fromShape,
                      const Box &toBox, const Dims &toShape) {
  const int64_t rank = fromBox.rank();
  // Dimensions after `split` are covered entirely in both buffers.
  int64_t split = rank - 1;
  while (split > 0 && fromBox.sizes[split] == fromShape[split] &&
         toBox.sizes[split] == toShape[split])
    --split;
  RunPattern pattern;
  for (int64_t d = std::max<int64_t>(split, 0); d < rank; ++d)
    pattern.elements *= fromBox.sizes[d];
  Dims fromStrides = stridesOf(fromShape), toStrides = stridesOf(toShape);
  for (int64_t d = 0; d < rank; ++d) {
    pattern.from += fromBox.offsets[d] * fromStrides[d];
    pattern.to += toBox.offsets[d] * toStrides[d];
    if (d < split && fromBox.sizes[d] > 1)
      pattern.levels.push_back(
          {fromBox.sizes[d], fromStrides[d], toStrides[d], -1});
  }
  return pattern;
}

/// Calls fn(srcElementOffset, dstElementOffset, elements) for every
/// contiguous run of `box` in both buffers.
template <typename Fn>
void forEachRun(const Box &fromBox, const Dims &fromShape, const Box &toBox,
                const Dims &toShape, Fn fn) {
  RunPattern pattern = runPattern(fromBox, fromShape, toBox, toShape);
  Movement runs;
  runs.srcOffset = pattern.from;
  runs.dstOffset = pattern.to;
  runs.repeats = pattern.levels;
  runs.forEachInstance([&](const Movement &run) {
    fn(run.srcOffset, run.dstOffset, pattern.elements);
  });
}

/// The tile extents of a step, or the reason tensor maps cannot describe
/// it. Tiles have up to 256 elements per dimension, rows of a multiple of 16
/// bytes and at most `maxBytes` bytes.
std::optional<std::string> planTiles(const Box &fromBox, const Dims &fromShape,
                                     const Box &toBox, const Dims &toShape,
                                     int64_t elementBytes, int64_t maxBytes,
                                     Dims &tile) {
  const int64_t rank = fromBox.rank();
  // A 1-D box is one contiguous run: bulk and vector items move it (and a
  // 1-D tile at coordinate 39 of an f32 map raised an illegal instruction on
  // H200, 2026-12-01).
  if (rank < 2 || rank > 5)
    return "tiles have 2 to 5 dimensions, the box has " +
           std::to_string(rank);
  // Box corners whose innermost coordinate is not 16-byte aligned are left
  // to the SM path: not yet run through TMA on a GPU.
  if ((fromBox.offsets[rank - 1] * elementBytes) % 16 ||
      (toBox.offsets[rank - 1] * elementBytes) % 16)
    return std::string("the box's innermost start is not 16-byte aligned");
  for (const Dims *shape : {&fromShape, &toShape}) {
    int64_t pitch = elementBytes;
    for (int64_t d = rank - 1; d > 0; --d) {
      pitch *= (*shape)[d];
      if (pitch % 16)
        return "a buffer's row pitch of " + std::to_string(pitch) +
               " bytes is not a multiple of 16";
    }
  }
  if ((fromBox.sizes[rank - 1] * elementBytes) % 16)
    return "its rows of " +
           std::to_string(fromBox.sizes[rank - 1] * elementBytes) +
           " bytes are not a multiple of 16";
  tile = Dims(rank, 1);
  int64_t unit = 16 / elementBytes;
  tile[rank - 1] = std::min<int64_t>(fromBox.sizes[rank - 1], 256 / unit * unit);
  int64_t bytes = tile[rank - 1] * elementBytes;
  for (int64_t d = rank - 2; d >= 0; --d) {
    tile[d] = std::max<int64_t>(
        1, std::min<int64_t>({fromBox.sizes[d], 256, maxBytes / bytes}));
    bytes *= tile[d];
  }
  return std::nullopt;
}

/// The tiles of `box` cut into `tile` extents as a few grids: per
/// dimension, the whole tiles (one repeat level along it) and the one
/// partial tile at its end. Calls fn(corner, extents, levels) per grid.
template <typename Fn>
void forEachTileGrid(const Box &box, const Dims &tile, Fn fn) {
  const int64_t rank = box.rank();
  // Bit d of `partial`: the grid's tiles are the partial ones of dimension d.
  for (uint32_t partial = 0; partial < (1u << rank); ++partial) {
    Dims corner(rank, 0), extents(rank, 0);
    std::vector<Repeat> levels;
    bool empty = false;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t whole = box.sizes[d] / tile[d];
      const int64_t rest = box.sizes[d] % tile[d];
      if (partial & (1u << d)) {
        empty = empty || rest == 0;
        corner[d] = whole * tile[d];
        extents[d] = rest;
      } else {
        empty = empty || whole == 0;
        extents[d] = tile[d];
        if (whole > 1)
          levels.push_back({whole, tile[d], tile[d], d});
      }
    }
    if (!empty)
      fn(corner, extents, levels);
  }
}

/// Reads-done: every kernel item that reads another rank's buffer increments
/// a counter of that rank once its bytes are read, and each rank whose
/// buffers are read ends its kernel with a zero-byte item waiting for all of
/// those reads. Without it, a rank whose own work finishes first would hand
/// its buffers back to its caller (the next kernel on its stream may
/// overwrite them, the next execution writes its destination) while peers
/// still pull from them.
///
/// Copy-engine copies from a peer's buffer are done when the reader's kernel
/// starts (stream order): a zero-byte item first in the reader's kernel
/// reports them, one per peer.
void addReadsDone(TransferProgram &program) {
  std::map<int64_t, uint64_t> reads;     // Owner -> reads of its buffers.
  std::map<int64_t, BufferRef> readable; // Owner -> a buffer peers read.
  auto count = [&](const BufferRef &buffer, int64_t instances = 1) {
    reads[buffer.rank] += static_cast<uint64_t>(instances);
    readable.emplace(buffer.rank, buffer);
  };
  // Reader -> (owner -> a buffer of its copy-engine copies).
  std::map<int64_t, std::map<int64_t, BufferRef>> enginePeers;
  for (const auto &[rank, rankProgram] : program.ranks) {
    for (const Movement &m : rankProgram.items)
      if (m.bytes > 0 && m.src.rank != rank)
        count(m.src, m.instances());
    for (const Movement &copy : rankProgram.engineCopies)
      if (copy.src.rank != rank &&
          enginePeers[rank].emplace(copy.src.rank, copy.src).second)
        count(copy.src);
  }
  std::map<int64_t, CounterRef> counterOf;
  for (const auto &[owner, count] : reads)
    counterOf[owner] = CounterRef{owner, program.ranks[owner].counters++};
  for (auto &[rank, rankProgram] : program.ranks)
    for (Movement &m : rankProgram.items)
      if (m.bytes > 0 && m.src.rank != rank)
        m.readDone = counterOf.at(m.src.rank);
  for (const auto &[reader, peers] : enginePeers) {
    std::vector<Movement> reports;
    for (const auto &[owner, buffer] : peers) {
      Movement report;
      report.src = buffer;
      report.dst = buffer;
      report.readDone = counterOf.at(owner);
      reports.push_back(report);
    }
    std::vector<Movement> &items = program.ranks[reader].items;
    items.insert(items.begin(), reports.begin(), reports.end());
  }
  for (const auto &[owner, count] : reads) {
    Movement done;
    done.src = readable.at(owner);
    done.dst = readable.at(owner);
    done.waits.push_back({counterOf.at(owner), count});
    program.ranks[owner].items.push_back(std::move(done));
  }
}

} // namespace

/// A step order, or a message naming why there is none.
using FailureOrOrder = std::variant<std::vector<int64_t>, std::string>;
static FailureOrOrder
emissionOrder(const Schedule &schedule,
              std::vector<std::vector<int64_t>> &dependents);

/// `schedule`'s emission order and each step's dependents, computed once
/// for the checks and the lowering.
struct OrderedSteps {
  std::vector<int64_t> order;
  std::vector<std::vector<int64_t>> dependents;
};

/// A rank's copy of its own source into its destination and the first
/// reduction onto exactly those bytes (from a source box at the same
/// offsets of a source of the same shape: a peer's partial) fuse into one
/// vector reduction that reads the copy's source as its accumulator
/// (Movement::accumulator, LoweringOptions::fuseReductions): the bytes are
/// written once instead of copied, read back and written again.
struct FusedReductions {
  /// Per step: the fused reduction's accumulator (the copy's source).
  std::vector<std::optional<BufferRef>> accumulatorOf;
  /// Per step: the reduction a copy became part of (which the copy's other
  /// dependents wait for), or -1.
  std::vector<int64_t> fusedInto;
};

static FusedReductions planReductionFusion(const Schedule &schedule,
                                           const OrderedSteps &ordered,
                                           const BufferShapes &shapeOf,
                                           const TransferProgram &program,
                                           const LoweringOptions &options) {
  const size_t count = schedule.steps.size();
  FusedReductions fused{std::vector<std::optional<BufferRef>>(count),
                        std::vector<int64_t>(count, -1)};
  const bool fuse =
      options.fuseReductions == ReductionFusion::Always ||
      (options.fuseReductions == ReductionFusion::ByCost &&
       fusedReductionIsFaster(options.kernelCtas));
  // (Casts and quantizing reshards read their sources element by element.)
  if (!fuse || program.scaling || program.sourceType)
    return fused;
  const std::vector<int64_t> &steps = ordered.order;
  const std::vector<std::vector<int64_t>> &dependents = ordered.dependents;
  std::vector<int64_t> position(count, 0);
  for (size_t p = 0; p < steps.size(); ++p)
    position[steps[p]] = static_cast<int64_t>(p);
  for (int64_t c : steps) {
    const Step &copy = schedule.steps[c];
    // (A copy that waits orders its write: it stays a move of its own.)
    if (copy.reduction || copy.kind != StepKind::Move ||
        copy.link == LinkClass::Network ||
        copy.from.kind != BufferKind::Source ||
        copy.to.kind != BufferKind::Destination ||
        copy.from.rank != copy.executor() || !copy.deps.empty() ||
        dependents[c].empty())
      continue;
    // Its first dependent in the emission order: the others come after it.
    const int64_t r = *std::min_element(
        dependents[c].begin(), dependents[c].end(),
        [&](int64_t a, int64_t b) { return position[a] < position[b]; });
    const Step &reduce = schedule.steps[r];
    if (!reduce.reduction || reduce.kind != StepKind::Move ||
        reduce.link == LinkClass::Network || fused.accumulatorOf[r] ||
        reduce.from.kind != BufferKind::Source || !(reduce.to == copy.to) ||
        !(reduce.toBox == copy.toBox) || !(reduce.fromBox == copy.fromBox) ||
        shapeOf(reduce.from) != shapeOf(copy.from) ||
        program.typeOf(reduce.from) != program.typeOf(copy.to) ||
        program.typeOf(copy.from) != program.typeOf(copy.to))
      continue;
    fused.accumulatorOf[r] = copy.from;
    fused.fusedInto[c] = r;
  }
  return fused;
}

static std::optional<std::string>
lowerScheduleOnce(const Schedule &schedule, const OrderedSteps &ordered,
                  const Layout &src, const Layout &dst,
                  const std::vector<int64_t> &shape, ElementType type,
                  const LoweringOptions &options,
                  std::optional<ElementCast> cast, TransferProgram &program);

/// lowerScheduleOnce in `schedule`'s emission order, or why it has none.
static std::optional<std::string>
lowerScheduleOnce(const Schedule &schedule, const Layout &src,
                  const Layout &dst, const std::vector<int64_t> &shape,
                  ElementType type, const LoweringOptions &options,
                  std::optional<ElementCast> cast, TransferProgram &program) {
  OrderedSteps ordered;
  FailureOrOrder order = emissionOrder(schedule, ordered.dependents);
  if (std::string *error = std::get_if<std::string>(&order))
    return *error;
  ordered.order = std::move(std::get<std::vector<int64_t>>(order));
  return lowerScheduleOnce(schedule, ordered, src, dst, shape, type, options,
                           cast, program);
}

namespace {

bool overlaps(const Box &a, const Box &b) {
  for (int64_t d = 0; d < a.rank(); ++d)
    if (a.offsets[d] >= b.offsets[d] + b.sizes[d] ||
        b.offsets[d] >= a.offsets[d] + a.sizes[d])
      return false;
  return true;
}

/// TMA reductions are atomic per element, so reductions of several steps
/// onto the same bytes may run at once; a vector reduction loads, combines
/// and stores, so it must not overlap any other reduction of those bytes.
/// The dependencies `schedule` lacks for that: (earlier, later) pairs of
/// reduction steps onto overlapping bytes of one buffer, one of them lowered
/// to vector items in `program`, the later (in the order the executing
/// rank's items list them) that does not wait for the earlier, directly or
/// through other steps.
std::vector<std::pair<int64_t, int64_t>>
missingReductionOrder(const Schedule &schedule,
                      const TransferProgram &program) {
  std::vector<std::pair<int64_t, int64_t>> missing;
  std::set<int64_t> vectorSteps;
  for (const auto &[rank, rankProgram] : program.ranks)
    for (const Movement &m : rankProgram.items)
      if (m.mechanism == Mechanism::Vector && m.reduction && m.step >= 0)
        vectorSteps.insert(m.step);
  if (vectorSteps.empty())
    return missing;
  for (const auto &[rank, rankProgram] : program.ranks) {
    // The reduction steps of this rank in a topological order.
    std::vector<int64_t> steps;
    std::set<int64_t> seen;
    for (const Movement &m : rankProgram.items)
      if (m.step >= 0 && schedule.steps[m.step].reduction &&
          seen.insert(m.step).second)
        steps.push_back(m.step);
    for (size_t j = 0; j < steps.size(); ++j) {
      // What step j waits for, directly or through other steps: computed
      // once it overlaps an earlier reduction (a hand-written schedule may
      // order them through a chain).
      std::vector<char> ancestors;
      auto waitsFor = [&](int64_t step) {
        if (ancestors.empty()) {
          ancestors.assign(schedule.steps.size(), 0);
          std::vector<int64_t> stack(schedule.steps[steps[j]].deps);
          while (!stack.empty()) {
            int64_t dep = stack.back();
            stack.pop_back();
            if (dep < 0 || dep >= static_cast<int64_t>(ancestors.size()) ||
                ancestors[dep])
              continue;
            ancestors[dep] = 1;
            for (int64_t next : schedule.steps[dep].deps)
              stack.push_back(next);
          }
        }
        return ancestors[step] != 0;
      };
      for (size_t i = 0; i < j; ++i) {
        const Step &earlier = schedule.steps[steps[i]];
        const Step &later = schedule.steps[steps[j]];
        if ((vectorSteps.count(steps[i]) || vectorSteps.count(steps[j])) &&
            earlier.to == later.to && overlaps(earlier.toBox, later.toBox) &&
            !waitsFor(steps[i]))
          missing.emplace_back(steps[i], steps[j]);
      }
    }
  }
  return missing;
}

/// Whether two reduction steps of `schedule` write overlapping bytes of one
/// buffer (only then can a vector reduction need ordering).
bool hasOverlappingReductions(const Schedule &schedule) {
  std::map<std::tuple<int, int64_t, int64_t, int64_t>,
           std::vector<const Box *>>
      reduced;
  for (const Step &step : schedule.steps) {
    if (!step.reduction)
      continue;
    std::vector<const Box *> &boxes =
        reduced[{static_cast<int>(step.to.kind), step.to.rank,
                 step.to.scratch, step.to.tensor}];
    for (const Box *box : boxes)
      if (overlaps(*box, step.toBox))
        return true;
    boxes.push_back(&step.toBox);
  }
  return false;
}

} // namespace

/// The emission order of `schedule` when it has network steps (whose step
/// numbers the runtime posts transfers by) and one exists; std::nullopt
/// for the rest, which stay as they are (the lowering orders a schedule
/// without network steps itself and names a missing step or a cycle).
static std::optional<std::vector<int64_t>>
networkEmissionOrder(const Schedule &schedule) {
  if (std::none_of(schedule.steps.begin(), schedule.steps.end(),
                   [](const Step &step) {
                     return step.link == LinkClass::Network;
                   }))
    return std::nullopt;
  std::vector<std::vector<int64_t>> dependents;
  FailureOrOrder order = emissionOrder(schedule, dependents);
  auto *steps = std::get_if<std::vector<int64_t>>(&order);
  if (!steps)
    return std::nullopt;
  return std::move(*steps);
}

bool isInEmissionOrder(const Schedule &schedule) {
  std::optional<std::vector<int64_t>> steps = networkEmissionOrder(schedule);
  if (!steps)
    return true;
  for (size_t at = 0; at < steps->size(); ++at)
    if ((*steps)[at] != static_cast<int64_t>(at))
      return false;
  return true;
}

/// `schedule` with its steps numbered in emission order (emissionOrder),
/// the order in which the runtime posts network steps (by step), so that
/// network streams and CTAs work through one order.
Schedule inEmissionOrder(Schedule schedule) {
  std::optional<std::vector<int64_t>> steps = networkEmissionOrder(schedule);
  if (!steps)
    return schedule;
  std::vector<int64_t> position(steps->size());
  for (size_t at = 0; at < steps->size(); ++at)
    position[(*steps)[at]] = static_cast<int64_t>(at);
  Schedule result;
  result.strategy = schedule.strategy;
  result.scaling = schedule.scaling;
  result.scratches = std::move(schedule.scratches);
  result.steps.reserve(steps->size());
  for (int64_t i : *steps) {
    Step step = std::move(schedule.steps[i]);
    for (int64_t &dep : step.deps)
      dep = position[dep];
    result.steps.push_back(std::move(step));
  }
  return result;
}

/// Whether `box` is one contiguous run of a row-major buffer of `shape`:
/// whole in every dimension after its first of extent > 1.
static bool contiguousIn(const Box &box, const Dims &shape) {
  int64_t d = 0;
  while (d < box.rank() && box.sizes[d] == 1)
    ++d;
  for (int64_t j = d + 1; j < box.rank(); ++j)
    if (box.sizes[j] != shape[j])
      return false;
  return true;
}

/// Network steps as single contiguous NCCL transfers (NCCL moves one
/// contiguous buffer per call; a strided box would be one transfer per
/// run: 131,072 receives of 1 KiB for a 16x2048x2048 reshard across two
/// domains). A network step whose source box is strided in its buffer is
/// packed first: a local step on the sending rank copies the box into a
/// staging scratch of the box's shape, which the network step then sends
/// whole. A step whose target box is strided, or that reduces (NCCL
/// receives only copy), receives whole into a staging scratch on the
/// receiving rank, and a local step unpacks (or reduces) it into the
/// target. Each network step thus moves its bytes in one transfer; with
/// chunk-bytes, a pair of ranks exchanges one transfer per chunk, and the
/// unpacking of a chunk overlaps the next chunk's transfer.
/// With `castsSources`, a network step out of a source buffer is packed
/// whatever its box: the packing converts (NCCL only copies bytes).
/// Whether network `step` (between buffers of shapes `from` and `to`) is
/// packed into staging on the sending side and received into staging on
/// the receiving side.
static std::pair<bool, bool> stagingOf(const Step &step, const Dims &from,
                                       const Dims &to, bool castsSources) {
  return {!contiguousIn(step.fromBox, from) ||
              (castsSources && step.from.kind == BufferKind::Source),
          step.reduction.has_value() || !contiguousIn(step.toBox, to)};
}

Schedule stageNetworkSteps(const Schedule &schedule, const Layout &src,
                           const Layout &dst,
                           const std::vector<int64_t> &shape,
                           bool castsSources) {
  const int64_t count = static_cast<int64_t>(schedule.steps.size());
  const BufferShapes shapeOf(src, dst, shape, schedule.scratches,
                             schedule.scaling);
  // Which sides of each network step are staged: (pack, unpack).
  std::vector<std::pair<bool, bool>> staged(count, {false, false});
  std::vector<int64_t> moved(count); // Old index -> new (its last step).
  for (int64_t i = 0, at = 0; i < count; ++i) {
    const Step &step = schedule.steps[i];
    if (step.link == LinkClass::Network) {
      std::optional<Dims> from = shapeOf(step.from);
      std::optional<Dims> to = shapeOf(step.to);
      // A step naming a missing buffer stays as it is: lowering reports it.
      if (from && to)
        staged[i] = stagingOf(step, *from, *to, castsSources);
    }
    at += 1 + staged[i].first + staged[i].second;
    moved[i] = at - 1;
  }
  auto remapped = [&](std::vector<int64_t> deps) {
    for (int64_t &dep : deps) // A missing step stays missing.
      dep = dep >= 0 && dep < count ? moved[dep] : -1;
    return deps;
  };
  Schedule result;
  result.strategy = schedule.strategy;
  result.scaling = schedule.scaling;
  result.scratches = schedule.scratches;
  result.steps.reserve(count > 0 ? moved[count - 1] + 1 : 0);
  // Staging of a quantizing reshard's amaxes holds f32 blocks.
  auto stagingOn = [&](int64_t rank, const Dims &sizes, bool amaxes) {
    BufferRef staging{BufferKind::Scratch, rank,
                      static_cast<int64_t>(result.scratches.size())};
    result.scratches.push_back({rank, sizes, 0, amaxes});
    return staging;
  };
  for (int64_t i = 0; i < count; ++i) {
    Step step = schedule.steps[i];
    const auto [pack, unpack] = staged[i];
    if (!pack && !unpack) {
      step.deps = remapped(step.deps);
      result.steps.push_back(std::move(step));
      continue;
    }
    const Box whole{Dims(step.fromBox.rank(), 0), step.fromBox.sizes};
    const bool amaxes = holdsAmaxes(step.from, schedule.scratches);
    // The transfer waits only for what writes its source (and, for a move
    // out of a source of a quantizing reshard, its quantizer table: the
    // packing quantizes); what orders writes into the target (a reduction
    // after the copy it reduces into) orders the unpacking.
    const BufferRef quantizer{BufferKind::Quantizer, step.from.rank, -1,
                              step.from.tensor};
    std::vector<int64_t> sourceWriters, targetOrder;
    for (int64_t dep : step.deps) {
      const bool reads =
          dep >= 0 && dep < count &&
          (schedule.steps[dep].to == step.from ||
           (schedule.scaling && step.from.kind == BufferKind::Source &&
            schedule.steps[dep].to == quantizer));
      (reads ? sourceWriters : targetOrder).push_back(dep);
    }
    Step transfer = step;
    transfer.reduction.reset();
    transfer.deps = remapped(sourceWriters);
    if (pack) {
      Step packing = step;
      packing.to = stagingOn(step.from.rank, step.fromBox.sizes, amaxes);
      packing.toBox = whole;
      packing.reduction.reset();
      packing.link = LinkClass::Local;
      packing.deps = transfer.deps;
      transfer.from = packing.to;
      transfer.fromBox = whole;
      transfer.deps = {static_cast<int64_t>(result.steps.size())};
      result.steps.push_back(std::move(packing));
    }
    if (!unpack) {
      std::vector<int64_t> order = remapped(targetOrder);
      transfer.deps.insert(transfer.deps.end(), order.begin(), order.end());
      result.steps.push_back(std::move(transfer));
      continue;
    }
    transfer.to = stagingOn(step.to.rank, step.fromBox.sizes, amaxes);
    transfer.toBox = whole;
    Step unpacking = std::move(step);
    unpacking.from = transfer.to;
    unpacking.fromBox = whole;
    unpacking.link = LinkClass::Local;
    unpacking.deps = remapped(targetOrder);
    unpacking.deps.push_back(static_cast<int64_t>(result.steps.size()));
    result.steps.push_back(std::move(transfer));
    result.steps.push_back(std::move(unpacking));
  }
  return result;
}

std::optional<std::string>
lowerSchedule(const Schedule &routed, const Layout &src, const Layout &dst,
              const std::vector<int64_t> &shape, ElementType type,
              const LoweringOptions &options, TransferProgram &program,
              std::optional<ElementCast> cast) {
  // (lowerPreparedSchedule refuses casts that do not exist.)
  const bool casts = cast && cast->source != type;
  return lowerPreparedSchedule(
      inEmissionOrder(orderReductions(
          stageNetworkSteps(routed, src, dst, shape, casts), src, dst, shape,
          type, options, cast)),
      src, dst, shape, type, options, program, cast);
}

/// Why `schedule` (with `cast`, into `type`) is a quantizing schedule or a
/// kind of step the lowering does not take, or std::nullopt: a quantizing
/// one needs its scaling valid for the cast it makes; a plain one no amax
/// or scale step.
static std::optional<std::string>
checkQuantizingLowering(const Schedule &schedule,
                        const std::vector<int64_t> &shape, ElementType type,
                        const std::optional<ElementCast> &cast) {
  if (!schedule.scaling) {
    for (size_t i = 0; i < schedule.steps.size(); ++i)
      if (schedule.steps[i].kind != StepKind::Move)
        return "step " + std::to_string(i) + " (" + schedule.steps[i].str() +
               ") computes amaxes or scales, but the schedule has no scaling";
    return std::nullopt;
  }
  if (!cast)
    return "a quantizing schedule (scaling " + schedule.scaling->str() +
           ") needs the source's element type (a cast into " +
           toString(type) + ")";
  if (std::optional<std::string> wrong =
          checkScaling(*schedule.scaling, Dims(shape.begin(), shape.end()),
                       cast->source, type))
    return wrong;
  return std::nullopt;
}

std::optional<std::string>
lowerPreparedSchedule(const Schedule &schedule, const Layout &src,
                      const Layout &dst, const std::vector<int64_t> &shape,
                      ElementType type, const LoweringOptions &options,
                      TransferProgram &program,
                      std::optional<ElementCast> cast) {
  if (cast && cast->source == type)
    cast.reset();
  if (std::optional<std::string> wrong =
          checkQuantizingLowering(schedule, shape, type, cast))
    return wrong;
  if (cast && !isCastable(cast->source, type))
    return std::string("no cast from ") + toString(cast->source) + " to " +
           toString(type) + " (casts convert between f32, f16, bf16, "
           "f8E4M3FN and f8E5M2)";
  // What the lowering takes as it is: network steps are whole contiguous
  // transfers (m2n-stage-network-steps made them so).
  const BufferShapes shapeOf(src, dst, shape, schedule.scratches);
  for (size_t i = 0; i < schedule.steps.size(); ++i) {
    const Step &step = schedule.steps[i];
    if (step.link != LinkClass::Network)
      continue;
    std::optional<Dims> from = shapeOf(step.from);
    std::optional<Dims> to = shapeOf(step.to);
    if (!from || !to)
      continue; // lowerScheduleOnce names the missing buffer.
    auto [pack, unpack] = stagingOf(step, *from, *to, cast.has_value());
    if (pack || unpack)
      return "step " + std::to_string(i) + " (" + step.str() +
             ") is not one contiguous copy between whole NCCL buffers: " +
             "stage it first (m2n-stage-network-steps)";
  }
  OrderedSteps ordered;
  FailureOrOrder order = emissionOrder(schedule, ordered.dependents);
  if (std::string *error = std::get_if<std::string>(&order))
    return *error;
  ordered.order = std::move(std::get<std::vector<int64_t>>(order));
  // ... and numbered in emission order (m2n-order-steps), the order the
  // runtime posts network steps in and every rank's items follow: another
  // numbering could make a network stream wait for what waits behind it.
  if (std::any_of(schedule.steps.begin(), schedule.steps.end(),
                  [](const Step &step) {
                    return step.link == LinkClass::Network;
                  }))
    for (size_t i = 0; i < ordered.order.size(); ++i)
      if (ordered.order[i] != static_cast<int64_t>(i))
        return "step " + std::to_string(i) + " (" + schedule.steps[i].str() +
               ") is not where the emission order puts it: number the "
               "steps first (m2n-order-steps)";
  if (std::optional<std::string> error =
          lowerScheduleOnce(schedule, ordered, src, dst, shape, type, options,
                            cast, program))
    return error;
  // ... and its reductions ordered where a vector reduction needs it
  // (m2n-order-reductions).
  std::vector<std::pair<int64_t, int64_t>> missing =
      missingReductionOrder(schedule, program);
  if (!missing.empty()) {
    const auto [earlier, later] = missing.front();
    return "step " + std::to_string(later) + " (" +
           schedule.steps[later].str() + ") and step " +
           std::to_string(earlier) + " (" + schedule.steps[earlier].str() +
           ") reduce onto the same bytes, one on the SM path (load, combine, "
           "store: not atomic), and neither waits for the other: order the "
           "reductions first (m2n-order-reductions)";
  }
  return std::nullopt;
}

Schedule orderReductions(const Schedule &schedule, const Layout &src,
                         const Layout &dst, const std::vector<int64_t> &shape,
                         ElementType type, const LoweringOptions &options,
                         std::optional<ElementCast> cast) {
  if (!hasOverlappingReductions(schedule))
    return schedule;
  if (cast && cast->source == type)
    cast.reset();
  if (cast && !isCastable(cast->source, type))
    return schedule; // lowerPreparedSchedule names it.
  // Which steps are vector reductions is the lowering's choice: lower once
  // and see. (A schedule that cannot be lowered is returned as it is; the
  // lowering names the problem.)
  TransferProgram program;
  if (lowerScheduleOnce(schedule, src, dst, shape, type, options, cast,
                        program))
    return schedule;
  std::vector<std::pair<int64_t, int64_t>> missing =
      missingReductionOrder(schedule, program);
  if (missing.empty())
    return schedule;
  Schedule ordered = schedule;
  for (const auto &[earlier, later] : missing)
    ordered.steps[later].deps.push_back(earlier);
  return ordered;
}

/// The order in which the lowering emits the steps of `schedule`: a
/// topological order. First the steps that wait for fewer
/// hops between ranks (a step's hops: the most of its dependencies', plus
/// one for a dependency executed by another rank), so that a rank does its
/// own work before what waits for its peers'; among those, the link
/// classes interleave in proportion to their bytes (list order within a
/// class): CTAs walk their items in order, so local copies run alongside
/// NVLink pulls instead of in a phase of their own. A quantizing
/// schedule's holder exchange and scale writes (and the staging that only
/// they read) go after everything else: nothing but the scales waits for
/// them, and a destination's CTA that waited there for a late band's
/// amaxes would hold back the data of earlier bands behind it.
/// Every rank's items and the network receives the runtime posts follow
/// this one order (lowerSchedule numbers the steps in it), so no CTA and no
/// network stream can wait for what waits behind it. `dependents` receives
/// each step's dependents.
static FailureOrOrder
emissionOrder(const Schedule &schedule,
              std::vector<std::vector<int64_t>> &dependents) {
  const int64_t count = static_cast<int64_t>(schedule.steps.size());
  std::vector<int64_t> pending(count, 0), order;
  dependents.assign(count, {});
  for (int64_t i = 0; i < count; ++i)
    for (int64_t dep : schedule.steps[i].deps) {
      if (dep < 0 || dep >= count)
        return "step " + std::to_string(i) + " depends on a missing step";
      ++pending[i];
      dependents[dep].push_back(i);
    }
  std::vector<int64_t> hops(count, 0);
  {
    std::vector<int64_t> waiting = pending, queue;
    for (int64_t i = 0; i < count; ++i)
      if (!waiting[i])
        queue.push_back(i);
    for (size_t q = 0; q < queue.size(); ++q)
      for (int64_t after : dependents[queue[q]]) {
        const int64_t i = queue[q];
        hops[after] = std::max(
            hops[after], hops[i] + (schedule.steps[i].executor() !=
                                    schedule.steps[after].executor()));
        if (--waiting[after] == 0)
          queue.push_back(after);
      }
    if (static_cast<int64_t>(queue.size()) != count)
      return std::string("the schedule's dependencies form a cycle");
  }
  // Steps for the scales only, by dependents first (a step's dependents
  // come after it in some topological order: reverse the queue's).
  {
    std::vector<int64_t> waiting = pending, queue;
    for (int64_t i = 0; i < count; ++i)
      if (!waiting[i])
        queue.push_back(i);
    for (size_t q = 0; q < queue.size(); ++q)
      for (int64_t after : dependents[queue[q]])
        if (--waiting[after] == 0)
          queue.push_back(after);
    std::vector<bool> forScales(count, false);
    for (auto it = queue.rbegin(); it != queue.rend(); ++it) {
      const Step &step = schedule.steps[*it];
      const bool staging = step.to.kind == BufferKind::Scratch &&
                           holdsAmaxes(step.to, schedule.scratches) &&
                           !dependents[*it].empty() &&
                           std::all_of(dependents[*it].begin(),
                                       dependents[*it].end(),
                                       [&](int64_t d) { return forScales[d]; });
      forScales[*it] = step.kind == StepKind::Scale ||
                       step.to.kind == BufferKind::Holder || staging;
      if (forScales[*it])
        hops[*it] += count;
    }
  }
  constexpr int kClasses = 3;
  auto classOf = [&](int64_t i) {
    return static_cast<int>(schedule.steps[i].link);
  };
  std::array<std::set<std::pair<int64_t, int64_t>>, kClasses> ready;
  std::array<double, kClasses> total{}, done{};
  for (int64_t i = 0; i < count; ++i) {
    total[classOf(i)] += schedule.steps[i].fromBox.volume();
    if (!pending[i])
      ready[classOf(i)].insert({hops[i], i});
  }
  while (true) {
    int next = -1;
    // Fewer hops, then less progress, then list order.
    auto before = [&](int a, int b) {
      const auto &[hopsA, firstA] = *ready[a].begin();
      const auto &[hopsB, firstB] = *ready[b].begin();
      if (hopsA != hopsB)
        return hopsA < hopsB;
      double pa = done[a] / total[a], pb = done[b] / total[b];
      return pa != pb ? pa < pb : firstA < firstB;
    };
    for (int c = 0; c < kClasses; ++c)
      if (!ready[c].empty() && (next < 0 || before(c, next)))
        next = c;
    if (next < 0)
      break;
    int64_t i = ready[next].begin()->second;
    ready[next].erase(ready[next].begin());
    done[next] += schedule.steps[i].fromBox.volume();
    order.push_back(i);
    for (int64_t after : dependents[i])
      if (--pending[after] == 0)
        ready[classOf(after)].insert({hops[after], after});
  }
  return order;
}


/// The moves a quantizing reshard reads a source with (amax moves into
/// slots, quantizing moves into elements), for the part `fromBox` of rank
/// `srcBox`'s source buffer (local coordinates; `srcBox` places it in the
/// tensor) whose blocks `table` (blocks of the rank's table, in the scale
/// tensor's coordinates) holds: runs along the last dimension, each one
/// row, repeated over the other dimensions in bands that stay inside one
/// block of every dimension whose blocks are taller than one element (so
/// that every row of a band finds its blocks `entryStride` entries after
/// the row before: 0 inside a block, a table row where blocks are one row
/// tall). Each run is cut into pieces of at most `perItem` elements; where
/// a block is narrower than a piece, pieces hold whole blocks so that each
/// starts at the same phase. Calls fn(fromElement, toElement, elements,
/// lookup, levels) with element offsets of the first piece, its levels
/// (strides in elements and entries) outermost first.
template <typename Fn>
static void forEachBlockRun(const Box &fromBox, const Dims &fromShape,
                            const Box &toBox, const Dims &toShape,
                            const Box &srcBox, const Dims &block,
                            const Box &table, int64_t perItem, Fn fn) {
  const int64_t rank = fromBox.rank(), last = rank - 1;
  const Dims fromStrides = stridesOf(fromShape), toStrides = stridesOf(toShape);
  const Dims tableStrides = stridesOf(table.sizes);
  // Bands: per dimension but the last, cut at block boundaries where blocks
  // are taller than one element.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> bands(rank);
  for (int64_t d = 0; d < last; ++d) {
    const int64_t begin = fromBox.offsets[d], end = begin + fromBox.sizes[d];
    if (block[d] == 1) {
      bands[d].push_back({begin, end});
      continue;
    }
    for (int64_t at = begin; at < end;) {
      const int64_t global = at + srcBox.offsets[d];
      const int64_t next =
          std::min(end, (global / block[d] + 1) * block[d] - srcBox.offsets[d]);
      bands[d].push_back({at, next});
      at = next;
    }
  }
  bands[last].push_back(
      {fromBox.offsets[last], fromBox.offsets[last] + fromBox.sizes[last]});
  std::vector<size_t> pick(rank, 0);
  while (true) {
    Dims corner(rank), sizes(rank);
    for (int64_t d = 0; d < rank; ++d) {
      corner[d] = bands[d][pick[d]].first;
      sizes[d] = bands[d][pick[d]].second - corner[d];
    }
    std::vector<Repeat> levels;
    for (int64_t d = 0; d < last; ++d)
      if (sizes[d] > 1) {
        Repeat level{sizes[d], fromStrides[d], toStrides[d], -1};
        level.entryStride = block[d] == 1 ? tableStrides[d] : 0;
        levels.push_back(level);
      }
    int64_t from = 0, to = 0, entry = 0;
    for (int64_t d = 0; d < rank; ++d) {
      from += corner[d] * fromStrides[d];
      to += (corner[d] - fromBox.offsets[d] + toBox.offsets[d]) * toStrides[d];
      entry += ((corner[d] + srcBox.offsets[d]) / block[d] - table.offsets[d]) *
               tableStrides[d];
    }
    const int64_t width = block[last];
    const int64_t phase = (corner[last] + srcBox.offsets[last]) % width;
    const int64_t run = sizes[last];
    if (width <= perItem) {
      // Pieces of whole blocks: each starts at the run's phase.
      const int64_t unit = perItem / width * width;
      const int64_t whole = run / unit, rest = run % unit;
      if (whole > 0) {
        std::vector<Repeat> pieces = levels;
        if (whole > 1) {
          Repeat level{whole, unit, unit, -1};
          level.entryStride = unit / width;
          pieces.push_back(level);
        }
        fn(from, to, unit, BlockLookup{entry, phase, width}, pieces);
      }
      if (rest > 0)
        fn(from + whole * unit, to + whole * unit, rest,
           BlockLookup{entry + whole * unit / width, phase, width}, levels);
    } else {
      // Blocks wider than a piece: the run cut where its blocks end, each
      // segment into pieces inside one block.
      for (int64_t at = 0; at < run;) {
        const int64_t segment = std::min(run - at, width - (phase + at) % width);
        const int64_t segmentEntry = entry + (phase + at) / width;
        const int64_t whole = segment / perItem, rest = segment % perItem;
        if (whole > 0) {
          std::vector<Repeat> pieces = levels;
          if (whole > 1)
            pieces.push_back({whole, perItem, perItem, -1});
          fn(from + at, to + at, perItem,
             BlockLookup{segmentEntry, 0, perItem}, pieces);
        }
        if (rest > 0)
          fn(from + at + whole * perItem, to + at + whole * perItem, rest,
             BlockLookup{segmentEntry, 0, perItem}, levels);
        at += segment;
      }
    }
    int64_t d = last;
    while (d > 0 && ++pick[d - 1] == bands[d - 1].size())
      pick[--d] = 0;
    if (d == 0)
      return;
  }
}

static std::optional<std::string>
lowerScheduleOnce(const Schedule &schedule, const OrderedSteps &ordered,
                  const Layout &src, const Layout &dst,
                  const std::vector<int64_t> &shape, ElementType type,
                  const LoweringOptions &options,
                  std::optional<ElementCast> cast, TransferProgram &program) {
  program = TransferProgram();
  program.type = type;
  if (cast) {
    program.sourceType = cast->source;
    program.scale = cast->scale;
  }
  program.scratches = schedule.scratches;
  program.scaling = schedule.scaling;
  const int64_t count = static_cast<int64_t>(schedule.steps.size());
  if (options.maxItemBytes < 16 || options.maxItemBytes % 16)
    return std::string("the item size must be a positive multiple of 16");
  if (options.bufferAlignment < 1 ||
      (options.bufferAlignment & (options.bufferAlignment - 1)))
    return "the buffer alignment must be a power of two, not " +
           std::to_string(options.bufferAlignment);
  program.bufferAlignment = options.bufferAlignment;

  // Buffer shapes.
  const BufferShapes shapeOf(src, dst, shape, schedule.scratches,
                             schedule.scaling);
  // A quantizing reshard's blocks, and its source ranks' boxes in the
  // tensor (where their elements' blocks are).
  const Dims block =
      schedule.scaling
          ? blockShape(*schedule.scaling, Dims(shape.begin(), shape.end()))
          : Dims();
  const MeshIndex srcIndex(src.mesh);
  std::map<int64_t, Box> sourceBoxes;
  auto sourceBoxOf = [&](int64_t rank) -> const Box & {
    auto [it, fresh] = sourceBoxes.try_emplace(rank);
    if (fresh)
      it->second = src.localBox(shape, *srcIndex.indexOf(rank));
    return it->second;
  };

  const std::vector<std::vector<int64_t>> &dependents = ordered.dependents;
  const std::vector<int64_t> &steps = ordered.order;

  const FusedReductions fused =
      planReductionFusion(schedule, ordered, shapeOf, program, options);
  const std::vector<std::optional<BufferRef>> &accumulatorOf =
      fused.accumulatorOf;
  const std::vector<int64_t> &fusedInto = fused.fusedInto;

  // The copy engine's candidates: a source (this rank's or a peer's over
  // NVLink) into this rank's destination, depending on nothing, contiguous
  // in both (a strided box would be many small copies, which tiles move
  // better), of at least engineMinBytes: the run's pattern, or nothing.
  auto engineCandidate = [&](const Step &step) -> std::optional<RunPattern> {
    std::optional<Dims> fromShape = shapeOf(step.from),
                        toShape = shapeOf(step.to);
    if (options.copyEngine == CopyEngineUse::Never || !fromShape ||
        !toShape || step.link == LinkClass::Network || step.reduction ||
        fusedInto[&step - schedule.steps.data()] >= 0 ||
        !step.deps.empty() || step.from.kind != BufferKind::Source ||
        step.to.kind != BufferKind::Destination ||
        program.typeOf(step.from) != program.typeOf(step.to))
      return std::nullopt;
    const RunPattern pattern =
        runPattern(step.fromBox, *fromShape, step.toBox, *toShape);
    if (pattern.runs() != 1 ||
        pattern.elements * elementSize(program.typeOf(step.to)) <
            options.engineMinBytes)
      return std::nullopt;
    return pattern;
  };
  // copy-engine=auto weighs a copy as the engine would move it: adjacent
  // candidates of one executor (the chunks of a step) become one copy
  // (merged below), so the cost model sees each chain of them whole.
  std::vector<int64_t> engineChainBytes(count, 0);
  if (options.copyEngine == CopyEngineUse::ByCost) {
    struct Chain {
      BufferRef from, to;
      int64_t fromEnd = 0, toEnd = 0, bytes = 0;
      std::vector<int64_t> steps;
    };
    std::map<int64_t, Chain> open; // By executor.
    auto close = [&](const Chain &chain) {
      for (int64_t i : chain.steps)
        engineChainBytes[i] = chain.bytes;
    };
    for (int64_t i : steps) {
      const Step &step = schedule.steps[i];
      std::optional<RunPattern> pattern = engineCandidate(step);
      if (!pattern)
        continue;
      const int64_t bytesPer = elementSize(program.typeOf(step.to));
      const int64_t from = pattern->from * bytesPer,
                    to = pattern->to * bytesPer,
                    bytes = pattern->elements * bytesPer;
      Chain &chain = open[step.executor()];
      if (chain.steps.empty() || !(chain.from == step.from) ||
          !(chain.to == step.to) || chain.fromEnd != from ||
          chain.toEnd != to) {
        close(chain);
        chain = Chain{step.from, step.to, from, to, 0, {}};
      }
      chain.steps.push_back(i);
      chain.fromEnd += bytes;
      chain.toEnd += bytes;
      chain.bytes += bytes;
    }
    for (const auto &[executor, chain] : open)
      close(chain);
  }

  // Each step with dependents signals a counter on its executor once per
  // movement; `signalled[i]` is (counter, number of movements).
  std::vector<std::optional<std::pair<CounterRef, uint64_t>>> signalled(count);
  for (int64_t i : steps) {
    const Step &step = schedule.steps[i];
    if (fusedInto[i] >= 0)
      continue; // Its reduction reads its source (its dependents wait there).
    // Only for messages: printing every step costs more than lowering it.
    auto where = [&] {
      return "step " + std::to_string(i) + " (" + step.str() + "): ";
    };
    std::optional<Dims> fromShape = shapeOf(step.from);
    std::optional<Dims> toShape = shapeOf(step.to);
    if (!fromShape || !toShape)
      return where() + "names a buffer that does not exist";
    // Items read their sources ahead of their dependencies
    // (Movement::waitsOrderOnlyTheStore): sources must stay read-only.
    if (step.to.kind == BufferKind::Source)
      return where() + "writes a source buffer, which a reshard only reads";
    const std::optional<Reduction> reduction = step.reduction;
    RankProgram &executor = program.ranks[step.executor()];
    const bool network = step.link == LinkClass::Network;
    // Bytes per element of the target (of both buffers but for a cast).
    const int64_t elementBytes = elementSize(program.typeOf(step.to));
    const int64_t fromBytes = elementSize(program.typeOf(step.from));
    const bool casting = program.typeOf(step.from) != program.typeOf(step.to);
    if (casting && (reduction || network))
      return where() + (reduction ? "reduces while it casts (a Partial source "
                                  "cannot change its element type yet)"
                                : "casts over the network (it should have "
                                  "been packed)");

    // A source (this rank's or a peer's over NVLink) into this rank's
    // destination, depending on nothing, contiguous in both (a strided box
    // would be many small copies, which tiles move better) and large enough
    // to pay for a copy of its own: the copy engine copies it before the
    // kernel starts (LoweringOptions::copyEngine, engineMinBytes).
    const RunPattern pattern =
        runPattern(step.fromBox, *fromShape, step.toBox, *toShape);
    const int64_t runBytes = pattern.elements * elementBytes;
    if (engineCandidate(step) &&
        (options.copyEngine == CopyEngineUse::Always ||
         copyEngineIsFaster(engineChainBytes[i],
                            step.from.rank == step.to.rank,
                            options.kernelCtas))) {
      Movement copy;
      copy.mechanism = Mechanism::Engine;
      copy.src = step.from;
      copy.srcOffset = pattern.from * elementBytes;
      copy.dst = step.to;
      copy.dstOffset = pattern.to * elementBytes;
      copy.bytes = pattern.elements * elementBytes;
      copy.step = i;
      // Chunks of one copy follow each other: one cudaMemcpyAsync.
      std::vector<Movement> &copies = executor.engineCopies;
      if (!copies.empty() && copies.back().src == copy.src &&
          copies.back().dst == copy.dst &&
          copies.back().srcOffset + copies.back().bytes == copy.srcOffset &&
          copies.back().dstOffset + copies.back().bytes == copy.dstOffset)
        copies.back().bytes += copy.bytes;
      else
        copies.push_back(copy);
      // Kernel items of this rank run after the copy (stream order); other
      // ranks and network steps wait for a zero-byte item that signals as
      // the kernel starts.
      const bool seenElsewhere =
          std::any_of(dependents[i].begin(), dependents[i].end(),
                      [&](int64_t d) {
                        const Step &after = schedule.steps[d];
                        return after.executor() != step.executor() ||
                               after.link == LinkClass::Network;
                      });
      if (seenElsewhere) {
        Movement done;
        done.src = step.from;
        done.dst = step.to;
        done.signal = CounterRef{step.executor(), executor.counters++};
        done.step = i;
        executor.items.push_back(done);
        signalled[i] = std::make_pair(*done.signal, uint64_t{1});
      }
      continue;
    }

    // Waits: at most two per movement; more are combined by join items.
    std::vector<CounterWait> waits;
    for (int64_t dep : step.deps) {
      // A fused copy's other dependents wait for the reduction it became
      // (earlier in the emission order); that reduction waits for nothing
      // of it.
      if (fusedInto[dep] >= 0)
        dep = fusedInto[dep];
      if (dep != i && signalled[dep] &&
          std::find(waits.begin(), waits.end(),
                    CounterWait{signalled[dep]->first,
                                signalled[dep]->second}) == waits.end())
        waits.push_back({signalled[dep]->first, signalled[dep]->second});
    }
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
    // A fused reduction also signals for its copy's other dependents.
    bool waitedFor = !dependents[i].empty();
    for (int64_t dep : step.deps)
      waitedFor = waitedFor ||
                  (fusedInto[dep] == i && dependents[dep].size() > 1);
    std::optional<CounterRef> signal;
    if (waitedFor)
      signal = CounterRef{step.executor(), executor.counters++};

    // Movements stand for many items (Movement::repeats): a dependent
    // waits for every instance.
    uint64_t instances = 0;
    auto emit = [&](Movement movement) {
      movement.kind = step.kind;
      movement.reduction = reduction;
      movement.signal = signal;
      movement.waits = waits;
      movement.step = i;
      movement.accumulator = accumulatorOf[i];
      instances += static_cast<uint64_t>(movement.instances());
      (network ? executor.receives : executor.items)
          .push_back(std::move(movement));
    };
    // `bytes` at byte offsets (from, to), repeated over `levels`, as items
    // of at most `unit` bytes each (a multiple of the element sizes): the
    // whole pieces one movement with an innermost level, the rest another.
    auto pieces = [&](Mechanism mechanism, int64_t from, int64_t to,
                      int64_t bytes, int64_t fromUnit, int64_t unit,
                      const std::vector<Repeat> &levels) {
      const int64_t whole = bytes / unit, rest = bytes % unit;
      Movement movement;
      movement.mechanism = mechanism;
      movement.src = step.from;
      movement.dst = step.to;
      movement.repeats = levels;
      if (whole > 0) {
        movement.srcOffset = from;
        movement.dstOffset = to;
        movement.bytes = unit;
        if (whole > 1)
          movement.repeats.push_back({whole, fromUnit, unit, -1});
        emit(movement);
        movement.repeats = levels;
      }
      if (rest > 0) {
        movement.srcOffset = from + whole * fromUnit;
        movement.dstOffset = to + whole * unit;
        movement.bytes = rest;
        emit(std::move(movement));
      }
    };
    // A quantizing reshard's source reads: amax moves and quantizing moves
    // on the SM path, one row of blocks per run (forEachBlockRun).
    if (program.scaling && step.from.kind == BufferKind::Source &&
        step.kind != StepKind::Scale) {
      const bool amax = step.kind == StepKind::Amax;
      const Box &srcBox = sourceBoxOf(step.from.rank);
      const BufferRef tableRef{amax ? BufferKind::Slots : BufferKind::Quantizer,
                               step.from.rank, -1, step.from.tensor};
      const Box table = *shapeOf.blocksOf(tableRef);
      Box fromBox = step.fromBox, toBox = step.toBox;
      if (amax) {
        // The rank's elements of the step's blocks, in its buffer.
        const Box slots = *shapeOf.blocksOf(step.to);
        for (int64_t d = 0; d < fromBox.rank(); ++d) {
          const int64_t first = (step.fromBox.offsets[d] + slots.offsets[d]) *
                                block[d];
          const int64_t begin = std::max(first, srcBox.offsets[d]);
          const int64_t end =
              std::min(first + step.fromBox.sizes[d] * block[d],
                       srcBox.offsets[d] + srcBox.sizes[d]);
          fromBox.offsets[d] = begin - srcBox.offsets[d];
          fromBox.sizes[d] = std::max<int64_t>(end - begin, 0);
        }
        toBox = fromBox;
        if (fromBox.volume() == 0)
          return where() + "computes the amaxes of blocks rank " +
                 std::to_string(step.from.rank) + "'s source does not touch";
      }
      const int64_t perItem =
          std::max<int64_t>(1, options.maxItemBytes /
                                   std::max(fromBytes, elementBytes));
      const int64_t toUnit = amax ? 0 : elementBytes;
      forEachBlockRun(
          fromBox, *fromShape, toBox, amax ? *fromShape : *toShape, srcBox,
          block, table, perItem,
          [&](int64_t from, int64_t to, int64_t elements, BlockLookup lookup,
              std::vector<Repeat> levels) {
            Movement movement;
            movement.kind = step.kind;
            movement.mechanism = Mechanism::Vector;
            movement.src = step.from;
            movement.dst = step.to;
            movement.srcOffset = from * fromBytes;
            movement.dstOffset = to * toUnit;
            movement.bytes = elements * (amax ? fromBytes : elementBytes);
            movement.lookup = lookup;
            for (Repeat &level : levels) {
              level.srcStride *= fromBytes;
              level.dstStride *= toUnit;
            }
            movement.repeats = levels;
            emit(std::move(movement));
          });
      if (signal)
        signalled[i] = std::make_pair(*signal, instances);
      continue;
    }

    const std::vector<Repeat> levels =
        pattern.byteLevels(fromBytes, elementBytes);

    // Network transfers go through NCCL: one per contiguous run.
    if (network) {
      Movement movement;
      movement.mechanism = Mechanism::Network;
      movement.src = step.from;
      movement.srcOffset = pattern.from * elementBytes;
      movement.dst = step.to;
      movement.dstOffset = pattern.to * elementBytes;
      movement.bytes = runBytes;
      movement.repeats = levels;
      emit(std::move(movement));
      if (signal)
        signalled[i] = std::make_pair(*signal, instances);
      continue;
    }

    // A cast converts element by element on the SM path: runs cut into
    // vector items of at most a stage of either side; so does a scale move
    // (amaxes into scales).
    if (casting || step.kind == StepKind::Scale) {
      const int64_t perItem =
          std::max<int64_t>(1, options.maxItemBytes /
                                   std::max(fromBytes, elementBytes));
      pieces(Mechanism::Vector, pattern.from * fromBytes,
             pattern.to * elementBytes, runBytes, perItem * fromBytes,
             perItem * elementBytes, levels);
      if (signal)
        signalled[i] = std::make_pair(*signal, instances);
      continue;
    }

    // A fused reduction reads two operands and combines them on the SM
    // path, whatever the alignment: vector items of at most an item's
    // bytes, the accumulator at the source's offsets.
    if (accumulatorOf[i]) {
      pieces(Mechanism::Vector, pattern.from * elementBytes,
             pattern.to * elementBytes, runBytes, options.maxItemBytes,
             options.maxItemBytes, levels);
      if (signal)
        signalled[i] = std::make_pair(*signal, instances);
      continue;
    }

    // TMA needs 16-byte aligned addresses, which only buffers promised to
    // be 16-byte aligned give (LoweringOptions::bufferAlignment).
    const bool tmaReady = program.tmaAddressable(step.from) &&
                          program.tmaAddressable(step.to);

    // Are all runs 16-byte aligned? Their offsets advance by the levels'
    // strides: the first run and every stride must be.
    bool stridesAligned = true;
    for (const Repeat &level : levels)
      stridesAligned = stridesAligned && level.srcStride % 16 == 0 &&
                       level.dstStride % 16 == 0;
    const int64_t runs = pattern.runs();
    const bool aligned = stridesAligned &&
                         (pattern.from * elementBytes) % 16 == 0 &&
                         (pattern.to * elementBytes) % 16 == 0 &&
                         runBytes % 16 == 0;

    // Tiles where the runs are short or unaligned and tensor maps can
    // describe the box; otherwise runs, each cut into bulk and vector items.
    Dims tile;
    // (No tensor maps over a quantizing reshard's small tables.)
    const bool wantTiles =
        !holdsAmaxes(step.from, program.scratches) &&
        !isScaleBuffer(step.to.kind) &&
        (options.preferTiles || !aligned ||
         (runs > 1 && runBytes < options.tileBelowRunBytes));
    // ... and only where the TMA unit takes both buffers' maps (extents
    // below 2^32, strides below 2^40: m2n/Artifact/TensorMap.h).
    auto mappable = [&](const BufferRef &buffer, const Dims &extents) {
      TensorMapGeometry geometry;
      return !tensorMapGeometry(TensorMapSpec{buffer, extents, tile},
                                elementBytes, geometry);
    };
    const bool tiled =
        tmaReady && wantTiles &&
        (!reduction || tmaTileReduces(*reduction, program.typeOf(step.to))) &&
        !planTiles(step.fromBox, *fromShape, step.toBox, *toShape,
                   elementBytes, options.maxItemBytes, tile) &&
        mappable(step.from, *fromShape) && mappable(step.to, *toShape);
    if (tiled) {
      auto mapOf = [&](const BufferRef &buffer, const Dims &extents,
                       const Dims &box) {
        TensorMapSpec spec{buffer, extents, box};
        auto it = std::find(program.maps.begin(), program.maps.end(), spec);
        if (it != program.maps.end())
          return static_cast<int64_t>(it - program.maps.begin());
        program.maps.push_back(spec);
        return static_cast<int64_t>(program.maps.size()) - 1;
      };
      forEachTileGrid(
          step.fromBox, tile,
          [&](const Dims &corner, const Dims &extents,
              const std::vector<Repeat> &gridLevels) {
            Movement movement;
            movement.mechanism = Mechanism::Tile;
            movement.src = step.from;
            movement.dst = step.to;
            movement.srcMap = mapOf(step.from, *fromShape, extents);
            movement.dstMap = mapOf(step.to, *toShape, extents);
            movement.srcCoords = corner;
            movement.dstCoords = corner;
            for (size_t d = 0; d < corner.size(); ++d) {
              movement.srcCoords[d] += step.fromBox.offsets[d];
              movement.dstCoords[d] += step.toBox.offsets[d];
            }
            movement.bytes = Box{corner, extents}.volume() * elementBytes;
            movement.repeats = gridLevels;
            emit(std::move(movement));
          });
    } else {
      const bool bulkReduces =
          !reduction || tmaBulkReduces(*reduction, program.typeOf(step.to));
      const int64_t unit = options.maxItemBytes;
      // One run, repeated over `runLevels`: TMA bulk needs both addresses
      // 16-byte aligned, so only a run whose addresses agree modulo 16 has
      // an aligned middle; its head and tail take the SM path.
      auto lowerRun = [&](int64_t from, int64_t to,
                          const std::vector<Repeat> &runLevels) {
        const int64_t head = (16 - from % 16) % 16;
        const int64_t body =
            runBytes > head ? (runBytes - head) / 16 * 16 : 0;
        if (!tmaReady || !bulkReduces || from % 16 != to % 16 ||
            body < std::max<int64_t>(options.vectorBelowBytes, 16)) {
          pieces(Mechanism::Vector, from, to, runBytes, unit, unit, runLevels);
          return;
        }
        if (head)
          pieces(Mechanism::Vector, from, to, head, unit, unit, runLevels);
        pieces(Mechanism::Bulk, from + head, to + head, body, unit, unit,
               runLevels);
        if (const int64_t tail = runBytes - head - body)
          pieces(Mechanism::Vector, from + head + body, to + head + body,
                 tail, unit, unit, runLevels);
      };
      // Strides that keep every run's offsets the same modulo 16 cut every
      // run alike: one pattern. Otherwise run by run.
      if (stridesAligned)
        lowerRun(pattern.from * elementBytes, pattern.to * elementBytes,
                 levels);
      else
        forEachRun(step.fromBox, *fromShape, step.toBox, *toShape,
                   [&](int64_t fromElement, int64_t toElement, int64_t) {
                     lowerRun(fromElement * elementBytes,
                              toElement * elementBytes, {});
                   });
    }
    if (signal)
      signalled[i] = std::make_pair(*signal, instances);
  }
  addReadsDone(program);
  return std::nullopt;
}

} // namespace m2n
