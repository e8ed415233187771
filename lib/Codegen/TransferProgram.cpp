//===- TransferProgram.cpp - schedules as work items for the kernel ---------===//

#include "m2n/Codegen/TransferProgram.h"

#include <algorithm>
#include <array>
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

std::optional<uint32_t> tileOp(ItemOp op) {
  switch (op) {
  case ItemOp::Copy:
    return 0;
  case ItemOp::AddF32:
  case ItemOp::AddF16:
  case ItemOp::AddBF16:
  case ItemOp::AddS32:
  case ItemOp::AddU64:
    return 1;
  case ItemOp::MinF16:
  case ItemOp::MinBF16:
  case ItemOp::MinS32:
    return 2;
  case ItemOp::MaxF16:
  case ItemOp::MaxBF16:
  case ItemOp::MaxS32:
    return 3;
  default:
    return std::nullopt;
  }
}

static std::string coordsStr(const Dims &coords) {
  std::string text = "(";
  for (size_t d = 0; d < coords.size(); ++d)
    text += (d ? "," : "") + std::to_string(coords[d]);
  return text + ")";
}

std::string Movement::str() const {
  std::ostringstream os;
  if (tile)
    os << toString(op) << " tile " << src.str() << " map" << srcMap
       << coordsStr(srcCoords) << " -> " << dst.str() << " map" << dstMap
       << coordsStr(dstCoords) << ' ' << bytes << "B";
  else
    os << toString(op) << ' ' << src.str() << '+' << srcOffset << " -> "
       << dst.str() << '+' << dstOffset << ' ' << bytes << "B";
  if (signal)
    os << " signal " << signal->rank << ':' << signal->index;
  for (const CounterWait &wait : waits)
    os << " wait " << wait.counter.rank << ':' << wait.counter.index
       << ">=" << wait.value;
  if (readDone)
    os << " read-done " << readDone->rank << ':' << readDone->index;
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

/// The tiles of a step, or the reason tensor maps cannot describe it. Tiles
/// have up to 256 elements per dimension, rows of a multiple of 16 bytes and
/// at most `maxBytes` bytes.
std::optional<std::string> planTiles(const Box &fromBox, const Dims &fromShape,
                                     const Box &toBox, const Dims &toShape,
                                     int64_t elementBytes, int64_t maxBytes,
                                     std::vector<Box> &tiles) {
  const int64_t rank = fromBox.rank();
  if (rank < 1 || rank > 5)
    return "tensor maps have 1 to 5 dimensions, the box has " +
           std::to_string(rank);
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
  Dims tile(rank, 1);
  int64_t unit = 16 / elementBytes;
  tile[rank - 1] = std::min<int64_t>(fromBox.sizes[rank - 1], 256 / unit * unit);
  int64_t bytes = tile[rank - 1] * elementBytes;
  for (int64_t d = rank - 2; d >= 0; --d) {
    tile[d] = std::max<int64_t>(
        1, std::min<int64_t>({fromBox.sizes[d], 256, maxBytes / bytes}));
    bytes *= tile[d];
  }
  Dims start(rank, 0);
  while (true) {
    Box piece{start, Dims(rank, 0)};
    for (int64_t d = 0; d < rank; ++d)
      piece.sizes[d] = std::min(tile[d], fromBox.sizes[d] - start[d]);
    tiles.push_back(piece);
    int64_t d = rank - 1;
    while (d >= 0 && (start[d] += tile[d]) >= fromBox.sizes[d]) {
      start[d] = 0;
      --d;
    }
    if (d < 0)
      return std::nullopt;
  }
}

/// Reads-done: every kernel item that reads another rank's buffer increments
/// a counter of that rank once its bytes are read, and each rank whose
/// buffers are read ends its kernel with a zero-byte item waiting for all of
/// those reads. Without it, a rank whose own work finishes first would hand
/// its buffers back to its caller (the next kernel on its stream may
/// overwrite them, the next execution writes its destination) while peers
/// still pull from them.
void addReadsDone(TransferProgram &program) {
  std::map<int64_t, uint64_t> reads;     // Owner -> reads of its buffers.
  std::map<int64_t, BufferRef> readable; // Owner -> a buffer peers read.
  for (const auto &[rank, rankProgram] : program.ranks)
    for (const Movement &m : rankProgram.items)
      if (m.bytes > 0 && m.src.rank != rank) {
        ++reads[m.src.rank];
        readable.emplace(m.src.rank, m.src);
      }
  std::map<int64_t, CounterRef> counterOf;
  for (const auto &[owner, count] : reads)
    counterOf[owner] = CounterRef{owner, program.ranks[owner].counters++};
  for (auto &[rank, rankProgram] : program.ranks)
    for (Movement &m : rankProgram.items)
      if (m.bytes > 0 && m.src.rank != rank)
        m.readDone = counterOf.at(m.src.rank);
  for (const auto &[owner, count] : reads) {
    Movement done;
    done.src = readable.at(owner);
    done.dst = readable.at(owner);
    done.waits.push_back({counterOf.at(owner), count});
    program.ranks[owner].items.push_back(std::move(done));
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

  // A topological order of the steps. First the steps that wait for fewer
  // hops between ranks (a step's hops: the most of its dependencies', plus
  // one for a dependency executed by another rank), so that a rank does its
  // own work before what waits for its peers'; among those, the link
  // classes interleave in proportion to their bytes (list order within a
  // class): CTAs walk their items in order, so local copies run alongside
  // NVLink pulls instead of in a phase of their own.
  std::vector<int64_t> pending(count, 0), order;
  std::vector<std::vector<int64_t>> dependents(count);
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
    // Items read their sources ahead of their dependencies
    // (Movement::waitsOrderOnlyTheStore): sources must stay read-only.
    if (step.to.kind == BufferKind::Source)
      return where + "writes a source buffer, which a reshard only reads";
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

    // A rank's own source into its destination, depending on nothing and
    // contiguous in both (a strided box would be many small copies, which
    // tiles move better): the copy engine copies it before the kernel
    // starts (LoweringOptions::copyEngine).
    int64_t ownRuns = 0;
    Movement copy; // The first run.
    if (options.copyEngine && !network && op == ItemOp::Copy &&
        step.deps.empty() && step.from.kind == BufferKind::Source &&
        step.to.kind == BufferKind::Destination &&
        step.from.rank == step.to.rank)
      forEachRun(step.fromBox, *fromShape, step.toBox, *toShape,
                 [&](int64_t from, int64_t to, int64_t elements) {
                   if (ownRuns++)
                     return;
                   copy.src = step.from;
                   copy.srcOffset = from * elementBytes;
                   copy.dst = step.to;
                   copy.dstOffset = to * elementBytes;
                   copy.bytes = elements * elementBytes;
                   copy.step = i;
                 });
    if (ownRuns == 1) {
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
    auto emit = [&](Movement movement) {
      movement.op = op;
      movement.signal = signal;
      movement.waits = waits;
      movement.step = i;
      (network ? executor.receives : executor.items).push_back(std::move(movement));
      ++movements;
    };

    // Contiguous runs: are they all 16-byte aligned, and how long?
    std::optional<std::string> unaligned;
    int64_t runs = 0, runBytes = 0;
    forEachRun(step.fromBox, *fromShape, step.toBox, *toShape,
               [&](int64_t from, int64_t to, int64_t elements) {
                 ++runs;
                 runBytes = elements * elementBytes;
                 if (!unaligned && ((from * elementBytes) % 16 ||
                                    (to * elementBytes) % 16 || runBytes % 16))
                   unaligned = "a run of " + std::to_string(runBytes) +
                               " bytes at element offsets " +
                               std::to_string(from) + " -> " +
                               std::to_string(to) + " is not 16-byte aligned";
               });
    // Network transfers go through NCCL, which needs no alignment.
    if (network)
      unaligned.reset();

    std::vector<Box> tiles;
    std::optional<std::string> noTiles;
    bool wantTiles = !network && (options.preferTiles || unaligned ||
                                  (runs > 1 && runBytes < options.tileBelowRunBytes));
    if (wantTiles) {
      noTiles = planTiles(step.fromBox, *fromShape, step.toBox, *toShape,
                          elementBytes, options.maxItemBytes, tiles);
      if (!noTiles && !tileOp(op))
        noTiles = std::string("TMA tensor reductions do not cover ") +
                  toString(op);
    }
    if (wantTiles && !noTiles) {
      auto mapOf = [&](const BufferRef &buffer, const Dims &extents,
                       const Dims &box) {
        TensorMapSpec spec{buffer, extents, box};
        auto it = std::find(program.maps.begin(), program.maps.end(), spec);
        if (it != program.maps.end())
          return static_cast<int64_t>(it - program.maps.begin());
        program.maps.push_back(spec);
        return static_cast<int64_t>(program.maps.size()) - 1;
      };
      for (const Box &piece : tiles) {
        Movement movement;
        movement.tile = true;
        movement.src = step.from;
        movement.dst = step.to;
        movement.srcMap = mapOf(step.from, *fromShape, piece.sizes);
        movement.dstMap = mapOf(step.to, *toShape, piece.sizes);
        movement.srcCoords = piece.offsets;
        movement.dstCoords = piece.offsets;
        for (int64_t d = 0; d < piece.rank(); ++d) {
          movement.srcCoords[d] += step.fromBox.offsets[d];
          movement.dstCoords[d] += step.toBox.offsets[d];
        }
        movement.bytes = piece.volume() * elementBytes;
        emit(std::move(movement));
      }
    } else if (unaligned) {
      return where + *unaligned +
             (noTiles ? " and it cannot move as tiles either: " + *noTiles
                      : std::string());
    } else {
      forEachRun(step.fromBox, *fromShape, step.toBox, *toShape,
                 [&](int64_t from, int64_t to, int64_t elements) {
                   int64_t bytes = elements * elementBytes;
                   int64_t piece = network ? bytes : options.maxItemBytes;
                   for (int64_t at = 0; at < bytes; at += piece) {
                     Movement movement;
                     movement.src = step.from;
                     movement.srcOffset = from * elementBytes + at;
                     movement.dst = step.to;
                     movement.dstOffset = to * elementBytes + at;
                     movement.bytes = std::min(piece, bytes - at);
                     emit(std::move(movement));
                   }
                 });
    }
    if (signal)
      signalled[i] = std::make_pair(*signal, movements);
  }
  addReadsDone(program);
  return std::nullopt;
}

} // namespace m2n
