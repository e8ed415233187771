//===- KernelABI.cpp - op codes of the transfer kernel's items --------------===//

#include "m2n/Artifact/KernelABI.h"
#include "m2n/Artifact/KernelTable.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstdint>
#include <cstring>

namespace m2n {

std::optional<BulkOp> bulkOp(std::optional<Reduction> reduction,
                             ElementType type) {
  if (!reduction)
    return BulkOp::Copy;
  if (!tmaBulkReduces(*reduction, type))
    return std::nullopt;
  const Reduction r = *reduction;
  auto pick = [r](BulkOp add, BulkOp min, BulkOp max) {
    return r == Reduction::Sum ? add : r == Reduction::Min ? min : max;
  };
  switch (type) {
  case ElementType::F32:
    return BulkOp::AddF32;
  case ElementType::F64:
    return BulkOp::AddF64;
  case ElementType::F16:
    return pick(BulkOp::AddF16, BulkOp::MinF16, BulkOp::MaxF16);
  case ElementType::BF16:
    return pick(BulkOp::AddBF16, BulkOp::MinBF16, BulkOp::MaxBF16);
  case ElementType::I32:
    return pick(BulkOp::AddS32, BulkOp::MinS32, BulkOp::MaxS32);
  case ElementType::I64:
    return pick(BulkOp::AddU64, BulkOp::MinS64, BulkOp::MaxS64);
  default:
    return std::nullopt;
  }
}

uint32_t tileOp(std::optional<Reduction> reduction) {
  if (!reduction)
    return 0;
  switch (*reduction) {
  case Reduction::Sum:
    return 1;
  case Reduction::Min:
    return 2;
  case Reduction::Max:
    return 3;
  }
  return 0;
}

uint32_t vectorOp(std::optional<Reduction> reduction, ElementType type) {
  if (!reduction)
    return 0;
  return 1 + static_cast<uint32_t>(*reduction) +
         3 * static_cast<uint32_t>(reducibleTypeIndex(type));
}

std::pair<Reduction, ElementType> vectorOpMeaning(uint32_t op) {
  return {static_cast<Reduction>((op - 1) % 3),
          reducibleTypeAt(static_cast<int>((op - 1) / 3))};
}

int castTypeIndex(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return 0;
  case ElementType::F16:
    return 1;
  case ElementType::BF16:
    return 2;
  case ElementType::F8E4M3FN:
    return 3;
  case ElementType::F8E5M2:
    return 4;
  default:
    return -1;
  }
}

ElementType castTypeAt(int index) {
  const ElementType types[] = {ElementType::F32, ElementType::F16,
                               ElementType::BF16, ElementType::F8E4M3FN,
                               ElementType::F8E5M2};
  return types[index];
}

uint32_t castOp(ElementType from, ElementType to) {
  return kVectorOpCount + kCastTypeCount * castTypeIndex(from) +
         castTypeIndex(to);
}

std::optional<std::pair<ElementType, ElementType>> castOpMeaning(uint32_t op) {
  if (op < kVectorOpCount || op >= kVectorOpCount + kCastOpCount)
    return std::nullopt;
  const uint32_t index = op - kVectorOpCount;
  return std::make_pair(castTypeAt(index / kCastTypeCount),
                        castTypeAt(index % kCastTypeCount));
}

/// f32, f16, bf16: the types a quantizing reshard reads; -1 otherwise.
static int quantizingSourceIndex(ElementType type) {
  const int index = castTypeIndex(type);
  return index >= 0 && index < 3 ? index : -1;
}

uint32_t amaxOp(ElementType from) {
  return kAmaxOpBase + static_cast<uint32_t>(quantizingSourceIndex(from));
}

uint32_t scaleOp(ElementType to, bool exponentScales) {
  return kScaleOpBase + 2 * exponentScales + (to == ElementType::F8E5M2);
}

uint32_t quantizeOp(ElementType from, ElementType to, bool exponentScales) {
  return kQuantizeOpBase +
         4 * static_cast<uint32_t>(quantizingSourceIndex(from)) +
         2 * exponentScales + (to == ElementType::F8E5M2);
}

std::optional<QuantizingOp> quantizingOpMeaning(uint32_t op) {
  auto fp8 = [](uint32_t bit) {
    return bit ? ElementType::F8E5M2 : ElementType::F8E4M3FN;
  };
  if (op >= kAmaxOpBase && op < kScaleOpBase)
    return QuantizingOp{StepKind::Amax, castTypeAt(op - kAmaxOpBase),
                        ElementType::F32, false};
  if (op >= kScaleOpBase && op < kQuantizeOpBase)
    return QuantizingOp{StepKind::Scale, ElementType::F32,
                        fp8((op - kScaleOpBase) % 2),
                        (op - kScaleOpBase) / 2 == 1};
  if (op >= kQuantizeOpBase && op < kQuantizingOpEnd) {
    const uint32_t index = op - kQuantizeOpBase;
    return QuantizingOp{StepKind::Move, castTypeAt(index / 4), fp8(index % 2),
                        (index / 2) % 2 == 1};
  }
  return std::nullopt;
}

void setLookup(KernelItem &item, const ItemLookup &lookup) {
  std::memcpy(reinterpret_cast<char *>(&item) + kItemLookupOffset, &lookup,
              sizeof(lookup));
}

ItemLookup lookupOf(const KernelItem &item) {
  ItemLookup lookup;
  std::memcpy(&lookup, reinterpret_cast<const char *>(&item) + kItemLookupOffset,
              sizeof(lookup));
  return lookup;
}

/// The fp8 type tensor `tensor` of `program` quantizes into.
static ElementType quantizedType(const TransferProgram &program,
                                 int64_t tensor) {
  return program.typeOf({BufferKind::Destination, 0, -1, tensor});
}

uint32_t kernelOp(const Movement &movement, const TransferProgram &program) {
  // Zero-byte items (joins, reads-done) move nothing: whatever their
  // buffers, they take their mechanism's copy code.
  if (movement.bytes > 0 && movement.mechanism == Mechanism::Vector) {
    const std::optional<Scaling> &scaling =
        program.scalingOf(movement.dst.tensor);
    const bool exponent = scaling && hasExponentScales(*scaling);
    if (movement.kind == StepKind::Amax)
      return amaxOp(program.typeOf(movement.src));
    if (movement.kind == StepKind::Scale)
      return scaleOp(quantizedType(program, movement.dst.tensor), exponent);
    if (program.quantizes(movement))
      return quantizeOp(program.typeOf(movement.src),
                        program.typeOf(movement.dst), exponent);
  }
  if (movement.bytes > 0 && program.casts(movement))
    return castOp(program.typeOf(movement.src), program.typeOf(movement.dst));
  return kernelOp(movement, program.typeOf(movement.dst));
}

uint32_t kernelOp(const Movement &movement, ElementType type) {
  switch (movement.mechanism) {
  case Mechanism::Bulk:
    return static_cast<uint32_t>(
        bulkOp(movement.reduction, type).value_or(BulkOp::Copy));
  case Mechanism::Tile:
    return tileOp(movement.reduction);
  case Mechanism::Vector:
    return vectorOp(movement.reduction, type);
  case Mechanism::Engine:
  case Mechanism::Network:
    break; // Not kernel items: no op code.
  }
  return 0;
}

KernelOps KernelOps::all() {
  KernelOps ops;
  for (uint32_t op = 0; op < kBulkOpCount; ++op)
    ops.bulk.insert(op);
  for (uint32_t op = 0; op < 4; ++op)
    for (uint32_t rank = 1; rank <= 5; ++rank)
      ops.tile.insert({op, rank});
  for (uint32_t op = 0; op < kVectorOpCount + kCastOpCount; ++op)
    if (op < kVectorOpCount || castOpMeaning(op)->first != castOpMeaning(op)->second)
      ops.vector.insert(op);
  for (uint32_t op = kAmaxOpBase; op < kQuantizingOpEnd; ++op)
    ops.vector.insert(op);
  return ops;
}

KernelItem encodeItem(const Movement &m, const TransferProgram &program,
                      const ItemAddresses &addresses) {
  KernelItem item{};
  item.kind = static_cast<uint32_t>(m.mechanism);
  item.op = kernelOp(m, program);
  if (program.casts(m) && !program.quantizes(m))
    item.scale = program.scaleOf(m);
  if (m.isTile()) {
    item.rank = static_cast<uint32_t>(m.srcCoords.size());
    item.src = addresses.tensorMap(m.srcMap);
    item.dst = addresses.tensorMap(m.dstMap);
    // Innermost first.
    for (uint32_t d = 0; d < item.rank; ++d) {
      item.srcCoords[d] = static_cast<int32_t>(m.srcCoords[item.rank - 1 - d]);
      item.dstCoords[d] = static_cast<int32_t>(m.dstCoords[item.rank - 1 - d]);
    }
  } else {
    item.src = addresses.buffer(m.src) + static_cast<uint64_t>(m.srcOffset);
    item.dst = addresses.buffer(m.dst) + static_cast<uint64_t>(m.dstOffset);
  }
  if (m.lookup) {
    // An amax move's table is its slots; a quantizing move's the quantizer
    // table of the rank it reads from.
    const BufferRef table =
        m.kind == StepKind::Amax
            ? m.dst
            : BufferRef{BufferKind::Quantizer, m.src.rank, -1, m.src.tensor};
    // Phase and width fit 32 bits (encodeItems checks; a run inside one
    // block has any width past it: the smallest such is taken).
    int64_t phase = m.lookup->phase, width = m.lookup->width;
    const int64_t elements =
        m.bytes / elementSize(m.kind == StepKind::Amax
                                  ? program.typeOf(m.src)
                                  : program.typeOf(m.dst));
    if (width > INT32_MAX && phase + elements <= width) {
      phase = 0;
      width = std::max<int64_t>(elements, 1);
    }
    ItemLookup lookup{};
    lookup.table = addresses.buffer(table);
    lookup.entry = m.lookup->entry;
    lookup.phase = static_cast<uint32_t>(phase);
    lookup.width = static_cast<uint32_t>(width);
    lookup.rows = 1;
    setLookup(item, lookup);
  }
  item.bytes = static_cast<uint32_t>(m.bytes);
  if (m.waitsOrderOnlyTheStore())
    item.flags |= kStoreWaits;
  if (m.signal)
    item.signal = addresses.counter(*m.signal);
  if (m.waits.size() > 0) {
    item.wait0 = addresses.counter(m.waits[0].counter);
    item.value0 = m.waits[0].value;
  }
  if (m.waits.size() > 1) {
    item.wait1 = addresses.counter(m.waits[1].counter);
    item.value1 = m.waits[1].value;
  }
  if (m.readDone)
    item.readDone = addresses.counter(*m.readDone);
  if (m.accumulator) {
    item.flags |= kAccumulates;
    const uint64_t acc = addresses.buffer(*m.accumulator) +
                         static_cast<uint64_t>(m.srcOffset);
    setAccumulatorDelta(item, static_cast<int64_t>(acc - item.src));
  }
  return item;
}

void setAccumulatorDelta(KernelItem &item, int64_t delta) {
  std::memcpy(reinterpret_cast<char *>(&item) + kItemAccumulatorOffset, &delta,
              sizeof(delta));
}

int64_t accumulatorDeltaOf(const KernelItem &item) {
  int64_t delta;
  std::memcpy(&delta, reinterpret_cast<const char *>(&item) + kItemAccumulatorOffset,
              sizeof(delta));
  return delta;
}

/// Why `movement`'s block lookup does not fit a kernel item, or
/// std::nullopt.
static std::optional<std::string> lookupProblem(const Movement &movement,
                                                const TransferProgram &program) {
  if (!movement.lookup)
    return std::nullopt;
  const int64_t elements =
      movement.bytes / elementSize(movement.kind == StepKind::Amax
                                       ? program.typeOf(movement.src)
                                       : program.typeOf(movement.dst));
  const BlockLookup &lookup = *movement.lookup;
  if (lookup.phase > INT32_MAX ||
      (lookup.width > INT32_MAX && lookup.phase + elements > lookup.width))
    return "movement " + movement.str(program.typeOf(movement.dst)) +
           ": its block lookup's phase or width exceeds 32 bits";
  return std::nullopt;
}

bool foldsInnermostLevel(const Movement &movement) {
  return movement.lookup && !movement.repeats.empty() &&
         movement.repeats.back().count <= UINT32_MAX &&
         movement.repeats.back().srcStride <= UINT32_MAX &&
         movement.repeats.back().dstStride <= UINT32_MAX &&
         movement.repeats.back().entryStride <= UINT32_MAX;
}

/// The item of `instance` (no repeats) of `movement`, walking `inner`
/// itself where the movement folds its innermost level.
static KernelItem encodeFolded(const Movement &instance, const Repeat *inner,
                               const TransferProgram &program,
                               const ItemAddresses &addresses) {
  KernelItem item = encodeItem(instance, program, addresses);
  if (inner) {
    ItemLookup lookup = lookupOf(item);
    lookup.rows = static_cast<uint32_t>(inner->count);
    lookup.srcStride = static_cast<uint32_t>(inner->srcStride);
    lookup.dstStride = static_cast<uint32_t>(inner->dstStride);
    lookup.entryStride = static_cast<uint32_t>(inner->entryStride);
    setLookup(item, lookup);
  }
  return item;
}

std::optional<std::string> encodeItems(const Movement &movement,
                                       const TransferProgram &program,
                                       const ItemAddresses &addresses,
                                       std::vector<KernelItem> &items) {
  if (std::optional<std::string> problem = lookupProblem(movement, program))
    return problem;
  // The outer levels' instances, each walking the innermost level where it
  // folds.
  Movement outer = movement;
  std::optional<Repeat> inner;
  if (foldsInnermostLevel(movement)) {
    inner = outer.repeats.back();
    outer.repeats.pop_back();
  }
  outer.forEachInstance([&](const Movement &instance) {
    items.push_back(
        encodeFolded(instance, inner ? &*inner : nullptr, program, addresses));
  });
  return std::nullopt;
}

std::optional<std::string>
encodeTemplates(const Movement &movement, const TransferProgram &program,
                const ItemAddresses &addresses,
                std::vector<KernelTemplate> &templates) {
  if (std::optional<std::string> problem = lookupProblem(movement, program))
    return problem;
  Movement walked = movement;
  std::optional<Repeat> folded;
  if (foldsInnermostLevel(movement)) {
    folded = walked.repeats.back();
    walked.repeats.pop_back();
  }
  // The two innermost levels left are the template's; any outer ones are
  // expanded into one template per instance.
  std::vector<Repeat> levels(walked.repeats.begin(), walked.repeats.end());
  const size_t kept = std::min<size_t>(levels.size(), 2);
  std::vector<Repeat> own(levels.end() - kept, levels.end());
  walked.repeats.clear();
  for (size_t l = 0; l + kept < levels.size(); ++l)
    walked.repeats.push_back(levels[l]);
  const int64_t tileRank = static_cast<int64_t>(movement.srcCoords.size());
  std::optional<std::string> problem;
  auto level = [&](const Repeat &r) {
    KernelLevel k;
    if (r.count < 0 || r.count > UINT32_MAX) {
      problem = "movement " + movement.str(program.typeOf(movement.dst)) +
                ": a repeat level of " + std::to_string(r.count) +
                " instances (the kernel walks at most 2^32 - 1 a level)";
      return k;
    }
    k.count = static_cast<uint32_t>(r.count);
    k.srcStride = r.srcStride;
    k.dstStride = r.dstStride;
    k.entryStride = r.entryStride;
    if (movement.isTile()) {
      // Innermost first, like the item's corners.
      // (A level without a dimension moves nothing a tile reads.)
      k.coord = r.dim >= 0 ? static_cast<int32_t>(tileRank - 1 - r.dim) : 0;
      if (r.dim < 0)
        k.srcStride = k.dstStride = 0;
      const int64_t span = (r.count - 1) * std::max(std::abs(r.srcStride),
                                                    std::abs(r.dstStride));
      if (span > INT32_MAX)
        problem = "movement " + movement.str(program.typeOf(movement.dst)) +
                  ": its tiles' coordinates exceed 32 bits";
    }
    return k;
  };
  KernelLevel outer, inner;
  if (own.size() == 2) {
    outer = level(own[0]);
    inner = level(own[1]);
  } else if (own.size() == 1) {
    outer = level(own[0]);
  }
  if (problem)
    return problem;
  walked.forEachInstance([&](const Movement &instance) {
    KernelTemplate t;
    t.item = encodeFolded(instance, folded ? &*folded : nullptr, program,
                          addresses);
    t.outer = outer;
    t.inner = inner;
    templates.push_back(t);
  });
  return std::nullopt;
}

void KernelOps::add(const TransferProgram &program) {
  for (const auto &[rank, rankProgram] : program.ranks)
    for (const Movement &m : rankProgram.items)
      add(m, program);
}

void KernelOps::add(const Movement &m, const TransferProgram &program) {
  const uint32_t op = kernelOp(m, program);
  switch (m.mechanism) {
  case Mechanism::Bulk:
    bulk.insert(op);
    break;
  case Mechanism::Tile:
    tile.insert({op, static_cast<uint32_t>(m.srcCoords.size())});
    break;
  case Mechanism::Vector:
    vector.insert(op);
    break;
  case Mechanism::Engine:
  case Mechanism::Network:
    break; // Not kernel items.
  }
}

std::optional<std::string>
KernelOps::missing(const TransferProgram &program) const {
  for (const auto &[rank, rankProgram] : program.ranks)
    for (const Movement &m : rankProgram.items) {
      const uint32_t op = kernelOp(m, program);
      const bool has =
          m.mechanism == Mechanism::Bulk ? bulk.count(op) > 0
          : m.mechanism == Mechanism::Tile
              ? tile.count({op, static_cast<uint32_t>(m.srcCoords.size())}) > 0
              : vector.count(op) > 0;
      if (!has)
        return "rank " + std::to_string(rank) + ": " + m.str(program.typeOf(m.dst));
    }
  return std::nullopt;
}

} // namespace m2n
