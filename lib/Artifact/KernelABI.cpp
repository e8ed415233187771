//===- KernelABI.cpp - op codes of the transfer kernel's items --------------===//

#include "m2n/Artifact/KernelABI.h"

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

uint32_t kernelOp(const Movement &movement, const TransferProgram &program) {
  // Zero-byte items (joins, reads-done) move nothing: whatever their
  // buffers, they take their mechanism's copy code.
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
  return ops;
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
