//===- LayoutInterop.cpp - m2n attributes <-> plain layout structs ----------===//

#include "m2n/Dialect/M2N/IR/LayoutInterop.h"
#include "m2n/Base/Strategy.h"

#include "mlir/IR/BuiltinTypes.h"

namespace mlir::m2n {

::m2n::Reduction toReduction(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return ::m2n::Reduction::Sum;
  case ReductionKind::Max:
    return ::m2n::Reduction::Max;
  case ReductionKind::Min:
    return ::m2n::Reduction::Min;
  }
  llvm_unreachable("unknown reduction kind");
}

ReductionKind toReductionKind(::m2n::Reduction reduction) {
  switch (reduction) {
  case ::m2n::Reduction::Sum:
    return ReductionKind::Sum;
  case ::m2n::Reduction::Max:
    return ReductionKind::Max;
  case ::m2n::Reduction::Min:
    return ReductionKind::Min;
  }
  llvm_unreachable("unknown reduction");
}

::m2n::Mesh toMesh(MeshAttr mesh) {
  std::vector<int64_t> shape(mesh.getShape().begin(), mesh.getShape().end());
  if (mesh.getRanks().empty())
    return ::m2n::Mesh::contiguous(std::move(shape), mesh.getBase());
  return ::m2n::Mesh::explicitRanks(
      std::move(shape),
      std::vector<int64_t>(mesh.getRanks().begin(), mesh.getRanks().end()));
}

::m2n::Layout toLayout(LayoutAttr layout) {
  return toLayout(layout.getMesh(), layout.getPlacements());
}

::m2n::Layout toLayout(MeshAttr mesh,
                       ArrayRef<PlacementAttrInterface> placements) {
  ::m2n::Layout result{toMesh(mesh), {}};
  for (PlacementAttrInterface placement : placements) {
    if (auto shard = dyn_cast<ShardAttr>(placement))
      result.placements.push_back(::m2n::Placement::shard(
          shard.getDim(), std::vector<int64_t>(shard.getBoundaries().begin(),
                                               shard.getBoundaries().end())));
    else if (auto partial = dyn_cast<PartialAttr>(placement))
      result.placements.push_back(
          ::m2n::Placement::partial(toReduction(partial.getReduction())));
    else
      result.placements.push_back(::m2n::Placement::replicate());
  }
  return result;
}

LayoutAttr canonicalLayout(LayoutAttr layout, ArrayRef<int64_t> shape) {
  if (!layout)
    return layout;
  ::m2n::Layout plain = toLayout(layout);
  std::vector<int64_t> extents(shape.begin(), shape.end());
  if (!plain.hasBoundaries() ||
      ::m2n::validateLayout(plain, extents, ::m2n::kMaxCommunicatorRanks))
    return layout;
  ::m2n::Layout canonical = ::m2n::canonicalLayout(plain, extents);
  SmallVector<PlacementAttrInterface> placements(layout.getPlacements());
  for (auto [placement, plainPlacement] :
       llvm::zip_equal(placements, canonical.placements))
    if (auto shard = dyn_cast<ShardAttr>(placement);
        shard && plainPlacement.boundaries.empty())
      placement = ShardAttr::get(layout.getContext(), shard.getDim());
  return layout.withPlacements(placements);
}

LayoutAttr withoutBoundaries(LayoutAttr layout) {
  SmallVector<PlacementAttrInterface> placements(layout.getPlacements());
  bool changed = false;
  for (PlacementAttrInterface &placement : placements)
    if (auto shard = dyn_cast<ShardAttr>(placement);
        shard && !shard.getBoundaries().empty()) {
      placement = ShardAttr::get(layout.getContext(), shard.getDim());
      changed = true;
    }
  return changed ? layout.withPlacements(placements) : layout;
}

std::optional<::m2n::ElementType> toElementType(Type type) {
  if (type.isBF16())
    return ::m2n::ElementType::BF16;
  if (type.isF16())
    return ::m2n::ElementType::F16;
  if (type.isF32())
    return ::m2n::ElementType::F32;
  if (type.isF64())
    return ::m2n::ElementType::F64;
  if (isa<Float8E4M3FNType>(type))
    return ::m2n::ElementType::F8E4M3FN;
  if (isa<Float8E5M2Type>(type))
    return ::m2n::ElementType::F8E5M2;
  if (isa<Float8E8M0FNUType>(type))
    return ::m2n::ElementType::F8E8M0FNU;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    // Unsigned bytes reduce unsigned; wider unsigned integers are not
    // moved (their max/min would silently compare signed).
    if (integer.isUnsigned())
      return integer.getWidth() == 8 ? std::optional(::m2n::ElementType::U8)
                                     : std::nullopt;
    switch (integer.getWidth()) {
    case 8:
      return ::m2n::ElementType::I8;
    case 16:
      return ::m2n::ElementType::I16;
    case 32:
      return ::m2n::ElementType::I32;
    case 64:
      return ::m2n::ElementType::I64;
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

} // namespace mlir::m2n

namespace mlir::m2n {

::m2n::Topology toTopology(TopologyAttr topology) {
  ::m2n::Topology result;
  result.domains.clear();
  for (int64_t d = 0; d < topology.getNumDomains(); ++d)
    result.domains.emplace_back(topology.getDomain(d).begin(),
                                topology.getDomain(d).end());
  result.domainSize = topology.getDomainSize();
  result.nvlinkGBps = topology.getNvlinkGBps().convertToDouble();
  result.networkGBps = topology.getNetworkGBps().convertToDouble();
  return result;
}

TopologyAttr toTopologyAttr(MLIRContext *ctx, const ::m2n::Topology &topology) {
  SmallVector<Attribute> domains;
  for (const std::vector<int64_t> &domain : topology.domains)
    domains.push_back(DenseI64ArrayAttr::get(ctx, domain));
  return TopologyAttr::get(ctx, ArrayAttr::get(ctx, domains),
                           llvm::APFloat(topology.nvlinkGBps),
                           llvm::APFloat(topology.networkGBps),
                           topology.domainSize);
}

::m2n::BufferRef toBufferRef(BufferKind kind, int64_t rank,
                                    int64_t scratch) {
  // The two enums number their kinds alike (one ABI with the artifact).
  return {static_cast<::m2n::BufferKind>(static_cast<int>(kind)), rank,
          scratch};
}

BufferKind toBufferKind(::m2n::BufferKind kind) {
  switch (kind) {
  case ::m2n::BufferKind::Source:
    return BufferKind::Source;
  case ::m2n::BufferKind::Destination:
    return BufferKind::Destination;
  case ::m2n::BufferKind::Scratch:
    return BufferKind::Scratch;
  case ::m2n::BufferKind::Slots:
    return BufferKind::Slots;
  case ::m2n::BufferKind::Holder:
    return BufferKind::Holder;
  case ::m2n::BufferKind::Scales:
    return BufferKind::Scales;
  case ::m2n::BufferKind::Quantizer:
    return BufferKind::Quantizer;
  }
  llvm_unreachable("unknown buffer kind");
}

//===----------------------------------------------------------------------===//
// Program level
//===----------------------------------------------------------------------===//

::m2n::Movement toMovement(MoveOp move) {
  ::m2n::Movement m;
  m.mechanism = move.getMechanism();
  if (std::optional<ReductionKind> kind = move.getReduction())
    m.reduction = toReduction(*kind);
  m.src = toBufferRef(move.getSrcKind(), move.getSrcRank(),
                      move.getSrcScratch());
  m.srcOffset = move.getSrcOffset();
  m.dst = toBufferRef(move.getDstKind(), move.getDstRank(),
                      move.getDstScratch());
  m.dstOffset = move.getDstOffset();
  m.bytes = move.getBytes();
  m.srcMap = move.getSrcMap();
  m.dstMap = move.getDstMap();
  m.srcCoords = ::m2n::Dims(move.getSrcCoords().begin(),
                            move.getSrcCoords().end());
  m.dstCoords = ::m2n::Dims(move.getDstCoords().begin(),
                            move.getDstCoords().end());
  m.signal = move.getSignal();
  m.waits.assign(move.getWaits().begin(), move.getWaits().end());
  m.readDone = move.getReadDone();
  if (std::optional<BufferKind> accKind = move.getAccKind())
    m.accumulator =
        toBufferRef(*accKind, move.getAccRank(), move.getAccScratch());
  m.step = move.getStep();
  m.repeats.assign(move.getRepeats().begin(), move.getRepeats().end());
  if (std::optional<StepKind> kind = move.getKind())
    m.kind = *kind == StepKind::Amax ? ::m2n::StepKind::Amax
                                     : ::m2n::StepKind::Scale;
  m.lookup = move.getLookup();
  return m;
}

::m2n::CompiledReshard toCompiledReshard(ProgramOp program) {
  ::m2n::CompiledReshard reshard;
  DistType src = program.getInput().getType();
  DistType dst = program.getResult().getType();
  reshard.type = toElementType(dst.getElementType())
                     .value_or(::m2n::ElementType::F32);
  reshard.program.type = reshard.type;
  if (src.getElementType() != dst.getElementType()) {
    reshard.program.sourceType = toElementType(src.getElementType());
    if (FloatAttr scale = program.getScaleAttr())
      reshard.program.scale = static_cast<float>(scale.getValueAsDouble());
  }
  reshard.program.bufferAlignment = program.getBufferAlignment();
  if (ScalingAttr scaling = program.getScalingAttr())
    reshard.program.scaling = scaling.getValue();
  reshard.shape.assign(src.getShape().begin(), src.getShape().end());
  reshard.src = toLayout(src.getLayout());
  reshard.dst = toLayout(program.getResult().getType().getLayout());
  reshard.strategy = program.getStrategy().str();
  for (Operation &op : program.getBody().front()) {
    if (auto scratch = dyn_cast<ScratchOp>(op)) {
      reshard.program.scratches.push_back(
          {scratch.getRank(),
           ::m2n::Dims(scratch.getShape().begin(), scratch.getShape().end()),
           0, scratch.getAmaxes()});
    } else if (auto map = dyn_cast<TensorMapOp>(op)) {
      reshard.program.maps.push_back(
          {toBufferRef(map.getKind(), map.getRank(), map.getScratch()),
           ::m2n::Dims(map.getExtents().begin(), map.getExtents().end()),
           ::m2n::Dims(map.getBox().begin(), map.getBox().end())});
    } else if (auto rank = dyn_cast<RankOp>(op)) {
      ::m2n::RankProgram &rankProgram = reshard.program.ranks[rank.getRank()];
      rankProgram.counters = rank.getCounters();
      if (LaunchAttr launch = rank.getLaunchAttr())
        rankProgram.launch = launch.getRankLaunch();
      // Most moves are kernel items.
      rankProgram.items.reserve(rank.getBody().front().getOperations().size());
      for (MoveOp move : rank.getBody().front().getOps<MoveOp>()) {
        ::m2n::Movement m = toMovement(move);
        switch (m.mechanism) {
        case ::m2n::Mechanism::Engine:
          rankProgram.engineCopies.push_back(std::move(m));
          break;
        case ::m2n::Mechanism::Network:
          rankProgram.receives.push_back(std::move(m));
          break;
        default:
          rankProgram.items.push_back(std::move(m));
        }
      }
    }
  }
  return reshard;
}

static void buildMove(OpBuilder &builder, Location loc,
                      const ::m2n::Movement &m) {
  std::optional<ReductionKind> reduction;
  if (m.reduction)
    reduction = toReductionKind(*m.reduction);
  MoveOp::create(builder, loc, m.mechanism, reduction,
                 toBufferKind(m.src.kind), m.src.rank, m.src.scratch,
                 m.srcOffset, toBufferKind(m.dst.kind), m.dst.rank,
                 m.dst.scratch, m.dstOffset, m.bytes, m.srcMap, m.srcCoords,
                 m.dstMap, m.dstCoords, m.signal,
                 ArrayRef<::m2n::CounterWait>(m.waits.begin(), m.waits.end()),
                 m.readDone, m.step,
                 ArrayRef<::m2n::Repeat>(m.repeats.begin(), m.repeats.end()),
                 m.kind == ::m2n::StepKind::Move
                     ? std::nullopt
                     : std::optional(m.kind == ::m2n::StepKind::Amax
                                         ? StepKind::Amax
                                         : StepKind::Scale),
                 m.lookup,
                 m.accumulator ? std::optional(toBufferKind(m.accumulator->kind))
                               : std::nullopt,
                 m.accumulator ? m.accumulator->rank : 0,
                 m.accumulator ? m.accumulator->scratch : -1);
}

void buildProgram(OpBuilder &builder, Location loc,
                  const ::m2n::TransferProgram &program) {
  for (auto [id, scratch] : llvm::enumerate(program.scratches))
    ScratchOp::create(builder, loc, static_cast<int64_t>(id), scratch.rank,
                      scratch.shape.vec(), scratch.amaxes);
  for (auto [id, map] : llvm::enumerate(program.maps))
    TensorMapOp::create(builder, loc, static_cast<int64_t>(id),
                        toBufferKind(map.buffer.kind), map.buffer.rank,
                        map.buffer.scratch, map.extents.vec(), map.box.vec());
  for (const auto &[rank, rankProgram] : program.ranks) {
    auto rankOp = RankOp::create(
        builder, loc, rank, rankProgram.counters,
        rankProgram.launch
            ? LaunchAttr::get(builder.getContext(), *rankProgram.launch)
            : LaunchAttr());
    rankOp.getBody().push_back(new Block());
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(&rankOp.getBody().front());
    // Each list holds its own mechanism (checkTransferProgram).
    for (const auto *list :
         {&rankProgram.engineCopies, &rankProgram.receives, &rankProgram.items})
      for (const ::m2n::Movement &m : *list)
        buildMove(builder, loc, m);
  }
}

} // namespace mlir::m2n
