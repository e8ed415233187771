//===- Program.cpp - per-rank work-item programs
//----------------------------===//

#include "m2n/Artifact/Program.h"
#include "m2n/Artifact/KernelABI.h"
#include "m2n/Artifact/TensorMap.h"

#include "m2n/Base/CheckedMath.h"

#include <algorithm>
#include <limits>
#include <array>
#include <set>
#include <sstream>
#include <tuple>

namespace m2n {

const char *toString(Mechanism mechanism) {
  switch (mechanism) {
  case Mechanism::Bulk:
    return "bulk";
  case Mechanism::Tile:
    return "tile";
  case Mechanism::Vector:
    return "vector";
  case Mechanism::Engine:
    return "engine";
  case Mechanism::Network:
    return "network";
  }
  return "?";
}

std::optional<Mechanism> parseMechanism(std::string_view name) {
  for (uint8_t value = 0; value < kMechanismCount; ++value)
    if (name == toString(static_cast<Mechanism>(value)))
      return static_cast<Mechanism>(value);
  return std::nullopt;
}

bool tmaBulkReduces(Reduction reduction, ElementType type) {
  switch (type) {
  case ElementType::F32:
  case ElementType::F64:
    return reduction == Reduction::Sum;
  case ElementType::F16:
  case ElementType::BF16:
  case ElementType::I32:
  case ElementType::I64:
    return true;
  case ElementType::I8:
  case ElementType::I16:
  case ElementType::U8:
  case ElementType::F8E4M3FN:
  case ElementType::F8E5M2:
  case ElementType::F8E8M0FNU:
    return false;
  }
  return false;
}

bool tmaTileReduces(Reduction reduction, ElementType type) {
  switch (type) {
  case ElementType::F32:
  case ElementType::I64:
    return reduction == Reduction::Sum;
  case ElementType::F16:
  case ElementType::BF16:
  case ElementType::I32:
    return true;
  default:
    return false;
  }
}

std::string opName(std::optional<Reduction> reduction, ElementType type) {
  if (!reduction)
    return "copy";
  const char *op = *reduction == Reduction::Sum   ? "add"
                   : *reduction == Reduction::Min ? "min"
                                                  : "max";
  // PTX's spelling of the reduced type: signed integers, u64 for i64 sums
  // (two's complement addition is the same).
  std::string name;
  switch (type) {
  case ElementType::I8:
    name = "s8";
    break;
  case ElementType::U8:
    name = "u8";
    break;
  case ElementType::I16:
    name = "s16";
    break;
  case ElementType::I32:
    name = "s32";
    break;
  case ElementType::I64:
    name = *reduction == Reduction::Sum ? "u64" : "s64";
    break;
  default:
    name = toString(type);
  }
  return std::string(op) + "." + name;
}

static std::string coordsStr(const Dims &coords) {
  std::string text = "(";
  for (size_t d = 0; d < coords.size(); ++d)
    text += (d ? "," : "") + std::to_string(coords[d]);
  return text + ")";
}

std::string Movement::str(ElementType type) const {
  std::ostringstream os;
  if (kind == StepKind::Move)
    os << opName(reduction, type);
  else
    os << toString(kind);
  // Kernel items name the mechanism but bulk; receives and copy-engine
  // copies are named by the list that holds them.
  if (mechanism == Mechanism::Tile || mechanism == Mechanism::Vector)
    os << ' ' << toString(mechanism);
  if (isTile())
    os << ' ' << src.str() << " map" << srcMap << coordsStr(srcCoords) << " -> "
       << dst.str() << " map" << dstMap << coordsStr(dstCoords) << ' ' << bytes
       << "B";
  else
    os << ' ' << src.str() << '+' << srcOffset << " -> " << dst.str() << '+'
       << dstOffset << ' ' << bytes << "B";
  if (accumulator)
    os << " acc " << accumulator->str();
  for (const Repeat &level : repeats) {
    os << " times " << level.count;
    if (level.dim >= 0)
      os << " along " << level.dim;
    os << " by (+" << level.srcStride << ",+" << level.dstStride;
    if (level.entryStride)
      os << ",+" << level.entryStride;
    os << ')';
  }
  if (lookup)
    os << " blocks " << lookup->entry << '+' << lookup->phase << '/'
       << lookup->width;
  if (signal)
    os << " signal " << signal->rank << ':' << signal->index;
  for (const CounterWait &wait : waits)
    os << " wait " << wait.counter.rank << ':' << wait.counter.index
       << ">=" << wait.value;
  if (readDone)
    os << " read-done " << readDone->rank << ':' << readDone->index;
  return os.str();
}

bool TransferProgram::tmaAddressable(const BufferRef &buffer) const {
  // Scratch, slots and tables are the runtime's; scales are the caller's.
  const bool runtimeOwned = buffer.kind == BufferKind::Scratch ||
                            (isScaleBuffer(buffer.kind) &&
                             buffer.kind != BufferKind::Scales);
  return runtimeOwned || bufferAlignment >= 16;
}

int64_t Movement::instances() const {
  int64_t count = 1;
  for (const Repeat &level : repeats)
    count *= level.count;
  return count;
}

Movement Movement::instance(const std::vector<int64_t> &index) const {
  Movement one = *this;
  one.repeats.clear();
  for (size_t level = 0; level < repeats.size(); ++level) {
    const Repeat &r = repeats[level];
    if (r.dim >= 0) {
      one.srcCoords[r.dim] += index[level] * r.srcStride;
      one.dstCoords[r.dim] += index[level] * r.dstStride;
    } else {
      one.srcOffset += index[level] * r.srcStride;
      one.dstOffset += index[level] * r.dstStride;
    }
    if (one.lookup)
      one.lookup->entry += index[level] * r.entryStride;
  }
  return one;
}

void expandRepeats(TransferProgram &program) {
  auto expand = [](std::vector<Movement> &movements) {
    if (std::none_of(movements.begin(), movements.end(),
                     [](const Movement &m) { return !m.repeats.empty(); }))
      return;
    std::vector<Movement> expanded;
    for (const Movement &m : movements)
      m.forEachInstance(
          [&](Movement one) { expanded.push_back(std::move(one)); });
    movements = std::move(expanded);
  };
  for (auto &[rank, rankProgram] : program.ranks) {
    expand(rankProgram.items);
    expand(rankProgram.receives);
  }
}

/// Whether the repeats of `m` are well-formed: positive counts, strides
/// that do not go backwards (so the first and last instances bound the
/// others), tile strides along one of the tile's dimensions, and the last
/// instance's offsets and the instance count within int64.
static std::optional<std::string> checkRepeats(const Movement &m) {
  int64_t instances = 1;
  int64_t srcEnd = m.srcOffset, dstEnd = m.dstOffset;
  int64_t entryEnd = m.lookup ? m.lookup->entry : 0;
  Dims srcCoords = m.srcCoords, dstCoords = m.dstCoords;
  for (const Repeat &r : m.repeats) {
    if (r.count < 1 || r.srcStride < 0 || r.dstStride < 0 ||
        r.entryStride < 0)
      return std::string("repeats with a count below 1 or a negative stride");
    if (r.entryStride && !m.lookup)
      return std::string("advances a block lookup it does not have");
    std::optional<int64_t> entrySpan = checkedMul(r.count - 1, r.entryStride);
    std::optional<int64_t> entryLast =
        entrySpan ? checkedAdd(entryEnd, *entrySpan) : std::nullopt;
    if (!entryLast)
      return std::string("repeats beyond 64-bit block entries");
    entryEnd = *entryLast;
    if (m.isTile()
            ? r.dim < 0 || r.dim >= static_cast<int64_t>(std::min(
                                        m.srcCoords.size(), m.dstCoords.size()))
            : r.dim != -1)
      return std::string(m.isTile() ? "repeats a tile along a dimension it "
                                      "does not have"
                                    : "repeats along a dimension, but only "
                                      "tiles have dimensions");
    std::optional<int64_t> total = checkedMul(instances, r.count);
    std::optional<int64_t> srcSpan = checkedMul(r.count - 1, r.srcStride);
    std::optional<int64_t> dstSpan = checkedMul(r.count - 1, r.dstStride);
    if (!total || *total > kMaxInstances || !srcSpan || !dstSpan)
      return "repeats more than " + std::to_string(kMaxInstances) +
             " instances or beyond 64-bit offsets";
    instances = *total;
    int64_t &srcAt = r.dim >= 0 ? srcCoords[r.dim] : srcEnd;
    int64_t &dstAt = r.dim >= 0 ? dstCoords[r.dim] : dstEnd;
    std::optional<int64_t> srcLast = checkedAdd(srcAt, *srcSpan);
    std::optional<int64_t> dstLast = checkedAdd(dstAt, *dstSpan);
    if (!srcLast || !dstLast)
      return std::string("repeats beyond 64-bit offsets");
    srcAt = *srcLast;
    dstAt = *dstLast;
  }
  return std::nullopt;
}

/// The instances of `m` that bound all others (Movement::repeats): the
/// first, the last, and one step along each level, whose alignment is the
/// strides'. `m` passed checkRepeats. Into `probes`, which the callers
/// reuse from one movement to the next (a refit's program has ~50k).
static const std::vector<Movement> &
boundingInstances(const Movement &m, std::vector<Movement> &probes) {
  probes.clear();
  if (m.repeats.empty()) {
    probes.push_back(m);
    return probes;
  }
  std::vector<int64_t> index(m.repeats.size(), 0);
  probes.push_back(m.instance(index));
  for (size_t level = 0; level < m.repeats.size(); ++level)
    if (m.repeats[level].count > 1) {
      index.assign(m.repeats.size(), 0);
      index[level] = 1;
      probes.push_back(m.instance(index));
    }
  for (size_t level = 0; level < m.repeats.size(); ++level)
    index[level] = m.repeats[level].count - 1;
  probes.push_back(m.instance(index));
  return probes;
}

/// Where a movement's bytes lie: inside buffers that exist, tiles through
/// tensor maps of their own buffers and inside them.
using List = ProgramIssue::List;

/// A problem of the whole program.
static ProgramIssue programIssue(std::string message) {
  ProgramIssue issue;
  issue.message = std::move(message);
  return issue;
}

/// A problem of movement `index` of `list` of `rank`: "rank R: <movement>"
/// and `separator` before `detail` in the message.
static ProgramIssue movementIssue(const TransferProgram &program, int64_t rank,
                                  List list, size_t index,
                                  const Movement &movement,
                                  const std::string &detail,
                                  const char *separator = " ") {
  ProgramIssue issue;
  issue.rank = rank;
  issue.list = list;
  issue.index = index;
  issue.detail = detail;
  issue.message = "rank " + std::to_string(rank) + ": " +
                  (list == List::EngineCopies ? "copy-engine copy " : "") +
                  movement.str(program.type) + separator + detail;
  return issue;
}

/// The three movement lists of a rank, with their List.
static std::array<std::pair<List, const std::vector<Movement> *>, 3>
listsOf(const RankProgram &rank) {
  return {{{List::Items, &rank.items},
           {List::Receives, &rank.receives},
           {List::EngineCopies, &rank.engineCopies}}};
}


/// What checkBounds needs to check a quantizing reshard's moves: its
/// blocks and each source rank's box in the tensor.
struct ScaleContext {
  const TransferProgram &program;
  const BufferShapes &shapeOf;
  const Layout &src;
  const std::vector<int64_t> &shape;
  Dims block;
  MeshIndex srcIndex;
  ScaleContext(const TransferProgram &program, const BufferShapes &shapeOf,
               const Layout &src, const std::vector<int64_t> &shape)
      : program(program), shapeOf(shapeOf), src(src), shape(shape),
        block(program.scaling ? blockShape(*program.scaling,
                                           Dims(shape.begin(), shape.end()))
                              : Dims()),
        srcIndex(src.mesh) {}
};

/// Why the lookup of `m` (one instance of an amax or quantizing move) does
/// not give each element it reads its block's entry of `table` (the
/// blocks of the table it names), or std::nullopt. Its run lies in one row
/// of its source; the formula's block boundaries inside the run are the
/// tensor's.
static std::optional<std::string> checkLookup(const ScaleContext &context,
                                              const Movement &m,
                                              const Box &table) {
  const TransferProgram &program = context.program;
  const ElementType source = program.typeOf(m.src);
  const int64_t fromSize = elementSize(source);
  const int64_t elements =
      m.kind == StepKind::Amax ? m.bytes / fromSize
                               : m.bytes / elementSize(program.typeOf(m.dst));
  const BlockLookup &lookup = *m.lookup;
  if (lookup.width < 1 || lookup.phase < 0 || lookup.phase >= lookup.width)
    return std::string("has a block lookup whose phase is not inside its "
                       "width");
  if (m.srcOffset % fromSize ||
      m.bytes % (m.kind == StepKind::Amax
                     ? fromSize
                     : elementSize(program.typeOf(m.dst))))
    return std::string("reads or writes a partial element");
  std::optional<int64_t> position = context.srcIndex.indexOf(m.src.rank);
  if (!position)
    return std::string("names a buffer that does not exist");
  const Box srcBox = context.src.localBox(context.shape, *position);
  const int64_t rank = srcBox.rank(), last = rank - 1;
  if (rank == 0 || elements < 1)
    return std::string("reads no elements of a tensor with blocks");
  Dims at(rank, 0);
  int64_t linear = m.srcOffset / fromSize;
  for (int64_t d = last; d >= 0; --d) {
    at[d] = srcBox.sizes[d] ? linear % srcBox.sizes[d] : 0;
    linear = srcBox.sizes[d] ? linear / srcBox.sizes[d] : 0;
  }
  if (linear != 0 || at[last] + elements > srcBox.sizes[last])
    return std::string("reads past a row of its source, but finds blocks "
                       "along one row");
  int64_t entry = 0, stride = 1;
  for (int64_t d = last; d >= 0; --d) {
    const int64_t blockAt =
        (at[d] + srcBox.offsets[d]) / context.block[d] - table.offsets[d];
    if (blockAt < 0 || blockAt >= table.sizes[d])
      return std::string("reads elements whose blocks its table does not "
                         "hold");
    entry += blockAt * stride;
    stride *= table.sizes[d];
  }
  if (entry != lookup.entry)
    return "finds its first element's block at entry " +
           std::to_string(lookup.entry) + ", which is entry " +
           std::to_string(entry);
  // The executors compute phase + i for every element i: it must not
  // overflow (a corrupted phase may be near 2^63).
  if (lookup.phase > std::numeric_limits<int64_t>::max() - elements)
    return std::string("has a block lookup whose phase overflows over its "
                       "elements");
  // Where the entry changes inside the run: the formula's boundaries
  // against the tensor's. A run that crosses a block boundary uses the
  // blocks' width (the lowering's rule); one inside a block any width past
  // it.
  const int64_t width = context.block[last];
  const int64_t tensorFirst = width - (at[last] + srcBox.offsets[last]) % width;
  const int64_t lookupFirst = lookup.width - lookup.phase;
  // (Differences, not sums: a corrupted width may be near 2^63.)
  if (std::min(tensorFirst, lookupFirst) < elements &&
      (tensorFirst != lookupFirst || lookup.width != width))
    return "crosses its blocks elsewhere than the tensor's blocks of " +
           std::to_string(width) + " elements end";
  return std::nullopt;
}

/// Why `m` (one instance) breaks the rules of a quantizing reshard's
/// moves, or std::nullopt: amax moves read a source into the same rank's
/// slots, scale moves turn a holder table into the same rank's scales,
/// blocks move only from slots into quantizer and holder tables, every
/// move out of a source quantizes and only those do, all on the SM path
/// (exchange copies of aligned runs may take TMA bulk), and lookups find
/// the elements' blocks. `handled` says the bounds were checked here.
static std::optional<std::string> checkScaleMove(const ScaleContext &context,
                                                 const Movement &m,
                                                 bool kernelItem,
                                                 bool &handled) {
  const TransferProgram &program = context.program;
  handled = false;
  const bool blocks = isScaleBuffer(m.src.kind) || isScaleBuffer(m.dst.kind) ||
                      holdsAmaxes(m.src, program.scratches) ||
                      holdsAmaxes(m.dst, program.scratches);
  const bool fromSource = m.src.kind == BufferKind::Source && m.bytes > 0;
  if (m.kind == StepKind::Move && !m.lookup && !blocks &&
      !(program.scaling && fromSource))
    return std::nullopt;
  if (!program.scaling)
    return std::string("computes amaxes or scales, or moves blocks, in a "
                       "reshard without scaling");
  if (m.isTile())
    return std::string("moves amaxes, scales or quantized elements as a "
                       "tile; only vector items (and bulk copies of "
                       "amaxes) do");
  if (m.bytes <= 0) // A join or reads-done item may name any buffer.
    return m.kind != StepKind::Move || m.lookup
               ? std::optional<std::string>("computes amaxes, scales or "
                                            "quantized elements of no bytes")
               : std::nullopt;
  // Only staged amaxes and quantized elements cross the network, and the
  // copy engine takes none of them.
  if (!kernelItem && (m.kind != StepKind::Move || m.lookup ||
                      m.mechanism != Mechanism::Network || m.reduction))
    return std::string("computes amaxes, scales or quantized elements "
                       "outside the kernel, or reduces amaxes over the "
                       "network");
  if ((m.kind != StepKind::Move || m.lookup) &&
      (m.mechanism != Mechanism::Vector || m.reduction))
    return std::string("computes amaxes, scales or quantized elements, "
                       "which only a vector item that copies does");
  switch (m.kind) {
  case StepKind::Amax:
    if (m.src.kind != BufferKind::Source ||
        !(m.dst == BufferRef{BufferKind::Slots, m.src.rank, -1, m.src.tensor}))
      return std::string("computes amaxes, but not of a source into its "
                         "rank's slots");
    if (!m.lookup)
      return std::string("computes amaxes without a block lookup");
    break;
  case StepKind::Scale:
    if (m.src.kind != BufferKind::Holder ||
        !(m.dst == BufferRef{BufferKind::Scales, m.src.rank, -1, m.src.tensor}))
      return std::string("writes scales, but not from a holder table into "
                         "its rank's scales");
    if (m.lookup)
      return std::string("writes scales with a block lookup");
    {
      // Holder and scales hold the same blocks: entry k into scale k.
      const int64_t scaleSize = elementSize(program.typeOf(m.dst));
      if (m.srcOffset % 4 || m.dstOffset % scaleSize || m.bytes % scaleSize ||
          m.srcOffset / 4 != m.dstOffset / scaleSize)
        return std::string("writes the scale of a block from another "
                           "block's amax, or a partial one");
    }
    return std::nullopt;
  case StepKind::Move:
    if (fromSource != m.lookup.has_value())
      return std::string(fromSource ? "moves out of a source without "
                                      "quantizing (no block lookup)"
                                    : "has a block lookup but does not read "
                                      "a source");
    if (blocks) {
      const bool fromAmaxes =
          m.src.kind == BufferKind::Slots ||
          (m.src.kind == BufferKind::Scratch &&
           holdsAmaxes(m.src, program.scratches));
      const bool intoTable = m.dst.kind == BufferKind::Quantizer ||
                             m.dst.kind == BufferKind::Holder;
      const bool intoStaging = m.dst.kind == BufferKind::Scratch &&
                               holdsAmaxes(m.dst, program.scratches);
      if (!fromAmaxes || !(intoTable || (intoStaging && !m.reduction)) ||
          (m.reduction && *m.reduction != Reduction::Max))
        return std::string("moves blocks, but not from slots into a "
                           "quantizer or holder table (by copy or max, "
                           "through staging by copy)");
      if (m.srcOffset % 4 || m.dstOffset % 4 || m.bytes % 4)
        return std::string("moves a partial amax");
      return std::nullopt;
    }
    break;
  }
  // Amax and quantizing moves: their table's entries, then their ranges.
  const BufferRef tableRef =
      m.kind == StepKind::Amax
          ? m.dst
          : BufferRef{BufferKind::Quantizer, m.src.rank, -1, m.src.tensor};
  std::optional<Box> table = context.shapeOf.blocksOf(tableRef);
  std::optional<Dims> from = context.shapeOf(m.src);
  std::optional<Dims> to = context.shapeOf(m.dst);
  if (!table || !from || !to)
    return std::string("names a buffer that does not exist");
  handled = true;
  if (m.lookup->entry < 0)
    return std::string("has a block lookup before its table's first entry");
  const int64_t fromBytes =
      checkedProduct(*from, elementSize(program.typeOf(m.src))).value_or(-1);
  const int64_t toBytes =
      checkedProduct(*to, elementSize(program.typeOf(m.dst))).value_or(-1);
  // The destination range first: it bounds `bytes`, so sourceBytes cannot
  // overflow.
  if ((m.kind != StepKind::Amax && !rangeWithin(m.dstOffset, m.bytes, toBytes)) ||
      !rangeWithin(m.srcOffset, program.sourceBytes(m), fromBytes))
    return std::string("reaches outside its buffers");
  return checkLookup(context, m, *table);
}

static std::optional<ProgramIssue>
checkBounds(const TransferProgram &program, const Layout &src,
            const Layout &dst, const std::vector<int64_t> &shape) {
  const BufferShapes shapeOf(src, dst, shape, program.scratches,
                             program.scaling);
  const ScaleContext scaleContext(program, shapeOf, src, shape);
  std::vector<Movement> probes;
  // Buffer bytes, or -1 when they do not fit in int64 (a corrupted artifact).
  auto bufferBytes = [&](const Dims &extents,
                         const BufferRef &buffer) -> int64_t {
    return checkedProduct(extents, elementSize(program.typeOf(buffer)))
        .value_or(-1);
  };
  for (size_t s = 0; s < program.scratches.size(); ++s) {
    const ScratchBuffer &scratch = program.scratches[s];
    const BufferRef ref{BufferKind::Scratch, scratch.rank,
                        static_cast<int64_t>(s), scratch.tensor};
    const int64_t bytes = bufferBytes(scratch.shape, ref);
    if (bytes < 0 || bytes > kMaxScratchBytes)
      return programIssue("scratch buffer " + std::to_string(s) +
                          " on rank " + std::to_string(scratch.rank) +
                          " is larger than " +
                          std::to_string(kMaxScratchBytes) + " bytes");
  }
  for (size_t m = 0; m < program.maps.size(); ++m) {
    const TensorMapSpec &map = program.maps[m];
    std::optional<Dims> extents = shapeOf(map.buffer);
    if (!extents || *extents != map.extents ||
        map.box.size() != map.extents.size())
      return programIssue("tensor map " + std::to_string(m) +
                          " does not describe " + map.buffer.str() +
                          " as it is");
    TensorMapGeometry geometry;
    if (std::optional<std::string> wrong = tensorMapGeometry(
            map, elementSize(program.typeOf(map.buffer)), geometry))
      return programIssue("tensor map " + std::to_string(m) + " of " +
                          map.buffer.str() + " " + *wrong);
  }
  int64_t lookupInstances = 0;
  for (const auto &[rank, rankProgram] : program.ranks) {
    // What a rank's runtime expands (a kernel item or NCCL transfer per
    // instance) is bounded, not only each movement.
    int64_t instances = 0;
    for (const auto *movements : {&rankProgram.items, &rankProgram.receives})
      for (const Movement &m : *movements) {
        if (checkRepeats(m))
          continue; // Named below.
        instances += m.instances();
        if (instances > kMaxRankItems)
          return programIssue("rank " + std::to_string(rank) +
                              " has more than " +
                              std::to_string(kMaxRankItems) +
                              " kernel items and network transfers");
      }
    for (auto [list, movements] : listsOf(rankProgram))
      for (size_t index = 0; index < movements->size(); ++index) {
        const Movement &repeated = (*movements)[index];
        auto wrong = [&, list = list](const std::string &detail) {
          return movementIssue(program, rank, list, index, repeated, detail);
        };
        if (std::optional<std::string> bad = checkRepeats(repeated))
          return wrong(*bad);
        if (list == List::EngineCopies && !repeated.repeats.empty())
          return wrong("repeats");
        // A lookup's entries are not linear in the instance (a block ends
        // every few rows): every instance is checked, not only the
        // bounding ones (as many as the order check expands).
        if (repeated.lookup && !repeated.repeats.empty()) {
          lookupInstances += repeated.instances();
          if (lookupInstances > kMaxOrderedInstances)
            return programIssue("the program has more than " +
                                std::to_string(kMaxOrderedInstances) +
                                " instances of moves with block lookups");
          std::optional<std::string> bad;
          repeated.forEachInstance([&](const Movement &one) {
            bool handled = false;
            if (!bad)
              bad = checkScaleMove(scaleContext, one, list == List::Items,
                                   handled);
          });
          if (bad)
            return wrong(*bad);
        }
        for (const Movement &m : boundingInstances(repeated, probes)) {
          std::optional<Dims> from = shapeOf(m.src), to = shapeOf(m.dst);
          if (!from || !to)
            return wrong("names a buffer that does not exist");
          bool handled = false;
          if (std::optional<std::string> bad = checkScaleMove(
                  scaleContext, m, list == List::Items, handled))
            return wrong(*bad);
          if (handled)
            continue;
          if (m.isTile()) {
            for (auto [mapIndex, buffer, coords] :
                 {std::make_tuple(m.srcMap, m.src, &m.srcCoords),
                  std::make_tuple(m.dstMap, m.dst, &m.dstCoords)}) {
              if (mapIndex < 0 ||
                  mapIndex >= static_cast<int64_t>(program.maps.size()) ||
                  !(program.maps[mapIndex].buffer == buffer))
                return wrong("names a tensor map of another buffer");
              const TensorMapSpec &map = program.maps[mapIndex];
              if (coords->size() != map.extents.size())
                return wrong("has tile coordinates of the wrong rank");
              for (size_t d = 0; d < coords->size(); ++d)
                if (!rangeWithin((*coords)[d], map.box[d], map.extents[d]))
                  return wrong("has a tile outside its buffer");
            }
            continue;
          }
          // A cast reads a source and converts whole, aligned elements (the
          // kernel loads and stores them naturally aligned).
          if (program.casts(m) && m.bytes > 0) {
            const int64_t fromSize = elementSize(program.typeOf(m.src));
            const int64_t toSize = elementSize(program.typeOf(m.dst));
            if (m.src.kind != BufferKind::Source)
              return wrong("casts, but does not read a source buffer");
            if (m.bytes % toSize || m.srcOffset % fromSize ||
                m.dstOffset % toSize)
              return wrong("casts a partial or misaligned element");
          }
          // The destination range first: it bounds `bytes`, so sourceBytes
          // cannot overflow.
          if (!rangeWithin(m.dstOffset, m.bytes, bufferBytes(*to, m.dst)) ||
              !rangeWithin(m.srcOffset, program.sourceBytes(m),
                           bufferBytes(*from, m.src)))
            return wrong("reaches outside its buffers");
          if (m.accumulator) {
            std::optional<Dims> acc = shapeOf(*m.accumulator);
            if (!acc || !rangeWithin(m.srcOffset, m.bytes,
                                     bufferBytes(*acc, *m.accumulator)))
              return wrong("reads its accumulator outside its buffer");
          }
        }
      }
  }
  return std::nullopt;
}

/// What the runtime would trust blindly: every byte inside its buffers,
/// every counter an item signals, waits for or reports reads to exists (the
/// kernel writes through these addresses), every reduction is one the
/// item's mechanism has and covers whole elements, and copy-engine copies
/// are plain copies.
std::optional<std::string>
verifyTransferProgram(const TransferProgram &program, const Layout &src,
                      const Layout &dst, const std::vector<int64_t> &shape) {
  if (std::optional<ProgramIssue> issue =
          checkTransferProgram(program, src, dst, shape))
    return issue->message;
  return std::nullopt;
}

/// The caller's source may be read-only memory, shared with other reshards:
/// nothing writes it (a join, which moves no bytes, may name it).
static bool writesSource(const Movement &m) {
  return m.dst.kind == BufferKind::Source && m.bytes > 0;
}
static constexpr const char *kWritesSource =
    "writes into a source buffer, which a reshard only reads";

std::optional<std::string> checkBufferAlignment(int64_t alignment) {
  if (alignment < 1 || (alignment & (alignment - 1)) ||
      alignment > kMaxBufferAlignment)
    return "the buffer alignment " + std::to_string(alignment) +
           " is not a power of two of at most " +
           std::to_string(kMaxBufferAlignment) + " bytes";
  return std::nullopt;
}

std::optional<ProgramIssue>
checkTransferProgram(const TransferProgram &program, const Layout &src,
                     const Layout &dst, const std::vector<int64_t> &shape) {
  if (std::optional<std::string> wrong =
          checkBufferAlignment(program.bufferAlignment))
    return programIssue(*wrong);
  for (const auto &[rank, rankProgram] : program.ranks)
    if (rankProgram.counters < 0 || rankProgram.counters > kMaxRankItems)
      return programIssue("rank " + std::to_string(rank) + " has " +
                          std::to_string(rankProgram.counters) +
                          " counters (at most " +
                          std::to_string(kMaxRankItems) + ")");
  // A quantizing program's blocks and types are the format's (a file's
  // block sizes are divided by before anything else reads them).
  if (program.scaling)
    if (std::optional<std::string> wrong = checkScaling(
            *program.scaling, Dims(shape),
            program.sourceType.value_or(program.type), program.type))
      return programIssue("its scaling " + program.scaling->str() + ": " +
                          *wrong);
  if (program.sourceType && !isCastable(*program.sourceType, program.type))
    return programIssue(std::string("no cast from ") +
                        toString(*program.sourceType) + " to " +
                        toString(program.type));
  // A movement's list is its mechanism's: the kernel walks bulk, tile and
  // vector items, NCCL carries network receives, the copy engine copies.
  for (const auto &[rank, rankProgram] : program.ranks)
    for (auto [list, movements] : listsOf(rankProgram))
      for (size_t index = 0; index < movements->size(); ++index) {
        const Mechanism mechanism = (*movements)[index].mechanism;
        const bool fits = list == List::Items ? isKernelMechanism(mechanism)
                          : list == List::Receives
                              ? mechanism == Mechanism::Network
                              : mechanism == Mechanism::Engine;
        if (!fits)
          return movementIssue(
              program, rank, list, index, (*movements)[index],
              list == List::Items ? "is not a kernel item (bulk, tile or "
                                    "vector) but sits among them"
              : list == List::Receives
                  ? "is not a network receive but sits among them"
                  : "is not a copy-engine copy but sits among them");
      }
  if (std::optional<ProgramIssue> issue = checkBounds(program, src, dst, shape))
    return issue;
  std::vector<Movement> probes;
  auto exists = [&](const CounterRef &counter) {
    auto it = program.ranks.find(counter.rank);
    return it != program.ranks.end() && counter.index >= 0 &&
           counter.index < it->second.counters;
  };
  for (const auto &[rank, rankProgram] : program.ranks) {
    for (auto [list, movements] : listsOf(rankProgram)) {
      if (list == List::EngineCopies)
        continue; // Checked below.
      for (size_t index = 0; index < movements->size(); ++index) {
        const Movement &repeated = (*movements)[index];
        auto wrong = [&, list = list](const std::string &detail,
                                      const char *separator = " ") {
          return movementIssue(program, rank, list, index, repeated, detail,
                               separator);
        };
        for (const Movement &m : boundingInstances(repeated, probes)) {
          bool ok = !m.signal || exists(*m.signal);
          for (const CounterWait &wait : m.waits)
            ok = ok && exists(wait.counter);
          ok = ok && (!m.readDone || exists(*m.readDone));
          if (!ok)
            return wrong("names a counter that does not exist");
          // Network receives go through NCCL, which only copies.
          const bool kernelItem = list == List::Items;
          if (!kernelItem && m.reduction)
            return wrong("a network receive reduces, but NCCL receives only "
                         "copy (receive into staging, then reduce)",
                         ": ");
          const ElementType reduced = program.typeOf(m.dst);
          if (m.reduction &&
              ((m.mechanism == Mechanism::Bulk &&
                !tmaBulkReduces(*m.reduction, reduced)) ||
               (m.isTile() && !tmaTileReduces(*m.reduction, reduced))))
            return wrong(std::string("TMA has no such ") +
                             toString(m.mechanism) + " reduction",
                         ": ");
          if (kernelItem && (m.mechanism == Mechanism::Bulk || m.isTile()) &&
              m.bytes > 0 &&
              (!program.tmaAddressable(m.src) ||
               !program.tmaAddressable(m.dst)))
            return wrong(std::string("a TMA ") + toString(m.mechanism) +
                             " item on a caller buffer aligned to only " +
                             std::to_string(program.bufferAlignment) +
                             " bytes",
                         ": ");
          if (kernelItem && m.mechanism == Mechanism::Bulk && m.bytes > 0 &&
              (m.srcOffset % 16 || m.dstOffset % 16 || m.bytes % 16))
            return wrong("TMA bulk needs 16-byte aligned offsets and sizes",
                         ": ");
          if (m.reduction && m.bytes % elementSize(reduced))
            return wrong("reduces a partial element");
          // An accumulator: a vector reduction's other operand, the
          // executing rank's own source of the same tensor.
          if (m.accumulator &&
              (!m.reduction || m.mechanism != Mechanism::Vector ||
               m.kind != StepKind::Move || program.casts(m)))
            return wrong("has an accumulator but is not a vector reduction",
                         ": ");
          if (m.accumulator &&
              (m.accumulator->kind != BufferKind::Source ||
               m.accumulator->rank != rank ||
               m.accumulator->tensor != m.src.tensor))
            return wrong("accumulates " + m.accumulator->str() +
                             ", not its rank's own source of the tensor",
                         ": ");
          // Casts convert element by element on the SM path: no TMA, no
          // NCCL, no reduction (routing packs a cast network step first).
          if (program.casts(m) && m.bytes > 0 &&
              (!kernelItem || m.mechanism != Mechanism::Vector || m.reduction))
            return wrong("a cast must be a vector item that copies", ": ");
        }
        if (writesSource(repeated))
          return wrong(kWritesSource);
        // The kernel's work item holds two waits.
        if (repeated.waits.size() > 2)
          return wrong("waits for " + std::to_string(repeated.waits.size()) +
                       " counters; a move waits for at most two");
      }
    }
  }
  // Counters are never reset: execution n waits for n times a value, so a
  // value must be exactly what one execution adds, or later executions
  // would pass their waits early.
  std::map<std::pair<int64_t, int64_t>, uint64_t> added;
  for (const auto &[rank, rankProgram] : program.ranks)
    for (const auto *movements : {&rankProgram.items, &rankProgram.receives})
      for (const Movement &m : *movements) {
        const auto instances = static_cast<uint64_t>(m.instances());
        if (m.signal)
          added[{m.signal->rank, m.signal->index}] += instances;
        if (m.readDone)
          added[{m.readDone->rank, m.readDone->index}] += instances;
      }
  for (const auto &[rank, rankProgram] : program.ranks) {
    for (auto [list, movements] : listsOf(rankProgram)) {
      if (list == List::EngineCopies)
        continue;
      for (size_t index = 0; index < movements->size(); ++index) {
        const Movement &m = (*movements)[index];
        for (const CounterWait &wait : m.waits) {
          const uint64_t adds = added[{wait.counter.rank, wait.counter.index}];
          if (adds != wait.value)
            return movementIssue(
                program, rank, list, index, m,
                "waits for " + std::to_string(wait.value) +
                    " but one execution adds " + std::to_string(adds) +
                    " to counter " + std::to_string(wait.counter.rank) + ":" +
                    std::to_string(wait.counter.index));
        }
      }
    }
    for (size_t index = 0; index < rankProgram.engineCopies.size(); ++index) {
      const Movement &copy = rankProgram.engineCopies[index];
      if (copy.reduction || copy.signal ||
          !copy.waits.empty() || copy.readDone || program.casts(copy))
        return movementIssue(program, rank, List::EngineCopies, index, copy,
                             "is not a plain copy");
      if (writesSource(copy))
        return movementIssue(program, rank, List::EngineCopies, index, copy,
                             kWritesSource);
    }
  }
  return checkProgramOrder(program, src, dst, shape);
}

std::vector<std::pair<int64_t, const Movement *>>
networkOrder(const TransferProgram &program) {
  struct Pending {
    int64_t step, rank;
    size_t index;
    const Movement *movement;
  };
  std::vector<Pending> movements;
  for (const auto &[rank, rankProgram] : program.ranks)
    for (size_t i = 0; i < rankProgram.receives.size(); ++i)
      movements.push_back(
          {rankProgram.receives[i].step, rank, i, &rankProgram.receives[i]});
  std::sort(movements.begin(), movements.end(),
            [](const Pending &a, const Pending &b) {
              return std::tie(a.step, a.rank, a.index) <
                     std::tie(b.step, b.rank, b.index);
            });
  std::vector<std::pair<int64_t, const Movement *>> order;
  for (const Pending &pending : movements)
    order.emplace_back(pending.rank, pending.movement);
  return order;
}

int64_t TransferProgram::sourceBytes(const Movement &movement) const {
  if (movement.kind == StepKind::Amax ||
      typeOf(movement.src) == typeOf(movement.dst))
    return movement.bytes;
  return movement.bytes / elementSize(typeOf(movement.dst)) *
         elementSize(typeOf(movement.src));
}

int64_t TransferProgram::scratchBytes(size_t index) const {
  const ScratchBuffer &buffer = scratches.at(index);
  BufferRef ref{BufferKind::Scratch, buffer.rank, static_cast<int64_t>(index),
                buffer.tensor};
  return Box{Dims(buffer.shape.size(), 0), buffer.shape}.volume() *
         elementSize(typeOf(ref));
}

std::map<int64_t, GroupRank>
groupLayout(const std::vector<const RankCounters *> &memberCounters) {
  std::map<int64_t, GroupRank> layout;
  for (size_t t = 0; t < memberCounters.size(); ++t)
    for (const auto &[rank, counters] : *memberCounters[t]) {
      GroupRank &into = layout[rank];
      into.members.emplace_back(static_cast<int64_t>(t), into.counters);
      into.counters += counters;
    }
  return layout;
}

std::string RankLaunch::str() const {
  return std::to_string(walkers) + (walkers > 1 ? " walkers x " : " walker x ") +
         std::to_string(threads) + " threads, stages of " +
         std::to_string(stageBytes) + " B";
}

LaunchDemand RankProgram::demand() const {
  LaunchDemand demand;
  for (const Movement &m : items)
    demand.add(m.mechanism, m.bytes);
  return demand;
}

std::optional<std::string> checkLaunch(const RankLaunch &launch,
                                       const LaunchDemand &demand) {
  if (!isBlockThreads(launch.threads) || launch.walkers < 1 ||
      launch.walkers > kMaxWalkers || launch.stageBytes < 128 ||
      launch.stageBytes % 128)
    return "launch " + launch.str() +
           ": threads must be 32, 128 or 256, walkers 1-" +
           std::to_string(kMaxWalkers) +
           " and stages a positive multiple of 128 bytes";
  if (launch.threads != 32 && launch.walkers != 1)
    return "launch " + launch.str() + ": a block of " +
           std::to_string(launch.threads) +
           " threads (the SM path's) runs one walker";
  if (demand.vector && launch.threads == 32)
    return "launch " + launch.str() +
           " cannot run vector items: they take one walker of the SM "
           "path's 128 or 256 threads";
  if (static_cast<uint64_t>(demand.largestItem) > launch.stageBytes)
    return "launch " + launch.str() + " cannot run an item of " +
           std::to_string(demand.largestItem) +
           " bytes: an item goes through one stage";
  return std::nullopt;
}

RankLaunch combineLaunches(const RankLaunch &a, const RankLaunch &b) {
  return {std::max(a.threads, b.threads), std::min(a.walkers, b.walkers),
          std::max(a.stageBytes, b.stageBytes)};
}

TransferProgram
mergePrograms(const std::vector<const TransferProgram *> &members) {
  TransferProgram merged;
  if (members.empty())
    return merged;
  std::vector<RankCounters> memberCounters(members.size());
  std::vector<const RankCounters *> counterLists;
  for (size_t t = 0; t < members.size(); ++t) {
    for (const auto &[rank, program] : members[t]->ranks)
      memberCounters[t].emplace_back(rank, program.counters);
    counterLists.push_back(&memberCounters[t]);
  }
  const std::map<int64_t, GroupRank> layout = groupLayout(counterLists);
  // Each member's counter base on every rank (a movement names counters of
  // other ranks too: reads-done, a network step's sender).
  std::vector<std::map<int64_t, int64_t>> counterBases(members.size());
  for (const auto &[rank, groupRank] : layout)
    for (const auto &[member, base] : groupRank.members)
      counterBases[member][rank] = base;
  merged.type = members.front()->type;
  merged.bufferAlignment = members.front()->bufferAlignment;
  int64_t stepBase = 0;
  for (size_t t = 0; t < members.size(); ++t) {
    const TransferProgram &member = *members[t];
    const int64_t tensor = static_cast<int64_t>(t);
    merged.tensorTypes.push_back(member.type);
    merged.tensorSourceTypes.push_back(member.sourceType.value_or(member.type));
    merged.tensorScales.push_back(member.scale);
    merged.tensorScalings.push_back(member.scaling);
    merged.bufferAlignment =
        std::min(merged.bufferAlignment, member.bufferAlignment);
    const int64_t scratchBase = static_cast<int64_t>(merged.scratches.size());
    const int64_t mapBase = static_cast<int64_t>(merged.maps.size());
    const std::map<int64_t, int64_t> &counterBase = counterBases[t];
    auto retag = [&](BufferRef ref) {
      ref.tensor = tensor;
      if (ref.kind == BufferKind::Scratch)
        ref.scratch += scratchBase;
      return ref;
    };
    auto counter = [&](CounterRef ref) {
      ref.index += counterBase.at(ref.rank);
      return ref;
    };
    int64_t lastStep = -1;
    auto renumber = [&](Movement m) {
      m.src = retag(m.src);
      m.dst = retag(m.dst);
      if (m.accumulator)
        m.accumulator = retag(*m.accumulator);
      if (m.srcMap >= 0)
        m.srcMap += mapBase;
      if (m.dstMap >= 0)
        m.dstMap += mapBase;
      if (m.signal)
        m.signal = counter(*m.signal);
      if (m.readDone)
        m.readDone = counter(*m.readDone);
      for (CounterWait &wait : m.waits)
        wait.counter = counter(wait.counter);
      if (m.step >= 0) {
        lastStep = std::max(lastStep, m.step);
        m.step += stepBase;
      }
      return m;
    };
    for (ScratchBuffer buffer : member.scratches) {
      buffer.tensor = tensor;
      merged.scratches.push_back(buffer);
    }
    for (TensorMapSpec map : member.maps) {
      map.buffer = retag(map.buffer);
      merged.maps.push_back(map);
    }
    for (const auto &[rank, program] : member.ranks) {
      auto [at, first] = merged.ranks.try_emplace(rank);
      RankProgram &into = at->second;
      // The members' launches combined (a member without one leaves the
      // merged rank without one).
      if (first)
        into.launch = program.launch;
      else if (into.launch && program.launch)
        into.launch = combineLaunches(*into.launch, *program.launch);
      else
        into.launch.reset();
      for (const Movement &m : program.items)
        into.items.push_back(renumber(m));
      for (const Movement &m : program.receives)
        into.receives.push_back(renumber(m));
      for (const Movement &m : program.engineCopies)
        into.engineCopies.push_back(renumber(m));
      into.counters += program.counters;
    }
    stepBase += lastStep + 1;
  }
  return merged;
}

int64_t TransferProgram::itemCount() const {
  int64_t count = 0;
  for (const auto &[rank, program] : ranks)
    for (const Movement &m : program.items)
      count += m.instances();
  return count;
}

} // namespace m2n
