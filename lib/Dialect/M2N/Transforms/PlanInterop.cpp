//===- PlanInterop.cpp - plan and schedule ops <-> planner structs ----------===//

#include "m2n/Dialect/M2N/Transforms/PlanInterop.h"

namespace mlir::m2n {

::m2n::ReshardPlan toReshardPlan(PlanOp plan) {
  ::m2n::ReshardPlan result;
  for (auto transfer : plan.getBody().front().getOps<TransferOp>()) {
    ::m2n::Transfer t;
    t.srcRank = transfer.getSrcRank();
    t.dstRank = transfer.getDstRank();
    std::vector<int64_t> sizes(transfer.getSizes().begin(),
                               transfer.getSizes().end());
    t.srcBox = {std::vector<int64_t>(transfer.getSrcOffsets().begin(),
                                     transfer.getSrcOffsets().end()),
                sizes};
    t.dstBox = {std::vector<int64_t>(transfer.getDstOffsets().begin(),
                                     transfer.getDstOffsets().end()),
                sizes};
    if (std::optional<ReductionKind> reduction = transfer.getReduction())
      t.reduction = toReduction(*reduction);
    result.transfers.push_back(std::move(t));
  }
  return result;
}

void buildTransfers(OpBuilder &builder, Location loc,
                    const ::m2n::ReshardPlan &plan) {
  for (const ::m2n::Transfer &t : plan.transfers) {
    std::optional<ReductionKind> reduction;
    if (t.reduction)
      reduction = toReductionKind(*t.reduction);
    TransferOp::create(builder, loc, t.srcRank, t.srcBox.offsets, t.dstRank,
                       t.dstBox.offsets, t.srcBox.sizes, reduction);
  }
}

::m2n::ScalePlan toScalePlan(PlanOp plan) {
  ::m2n::ScalePlan result;
  DistType src = plan.getInput().getType();
  std::vector<int64_t> shape(src.getShape().begin(), src.getShape().end());
  ::m2n::deriveScaleBoxes(plan.getScalingAttr().getValue(),
                          toLayout(src.getLayout()),
                          toLayout(plan.getResult().getType().getLayout()),
                          shape, result);
  // Ranks without an m2n.amax compute nothing.
  for (const auto &[rank, slots] : result.slotBoxes)
    result.amaxBoxes[rank] =
        ::m2n::Box{slots.offsets, ::m2n::Dims(slots.sizes.size(), 0)};
  for (Operation &op : plan.getBody().front()) {
    if (auto amax = dyn_cast<AmaxOp>(op)) {
      result.amaxBoxes[amax.getRank()] = {
          ::m2n::Dims(amax.getOffsets().begin(), amax.getOffsets().end()),
          ::m2n::Dims(amax.getSizes().begin(), amax.getSizes().end())};
      continue;
    }
    auto exchange = dyn_cast<ExchangeOp>(op);
    if (!exchange)
      continue;
    ::m2n::AmaxTransfer t;
    ::m2n::Dims sizes(exchange.getSizes().begin(), exchange.getSizes().end());
    t.transfer.srcRank = exchange.getSrcRank();
    t.transfer.srcBox = {::m2n::Dims(exchange.getSrcOffsets().begin(),
                                     exchange.getSrcOffsets().end()),
                         sizes};
    t.transfer.dstRank = exchange.getDstRank();
    t.transfer.dstBox = {::m2n::Dims(exchange.getDstOffsets().begin(),
                                     exchange.getDstOffsets().end()),
                         sizes};
    if (exchange.getReduces())
      t.transfer.reduction = ::m2n::Reduction::Max;
    t.table = exchange.getHolder() ? ::m2n::ScaleTable::Holder
                                   : ::m2n::ScaleTable::Quantizer;
    result.exchange.push_back(std::move(t));
  }
  return result;
}

void buildScaleOps(OpBuilder &builder, Location loc,
                   const ::m2n::ScalePlan &scales) {
  for (const auto &[rank, blocks] : scales.amaxBoxes)
    if (!blocks.empty())
      AmaxOp::create(builder, loc, rank, blocks.offsets, blocks.sizes);
  for (const ::m2n::AmaxTransfer &t : scales.exchange)
    ExchangeOp::create(builder, loc, t.transfer.srcRank,
                       t.transfer.srcBox.offsets, t.transfer.dstRank,
                       t.transfer.dstBox.offsets, t.transfer.srcBox.sizes,
                       t.table == ::m2n::ScaleTable::Holder,
                       t.transfer.reduction.has_value());
}

::m2n::Schedule toSchedule(ScheduleOp schedule) {
  ::m2n::Schedule result;
  result.strategy = *::m2n::parseStrategy(schedule.getStrategy().str());
  if (ScalingAttr scaling = schedule.getScalingAttr())
    result.scaling = scaling.getValue();
  // A refit's schedules hold ~465k steps of ~400 bytes: grown by doubling,
  // the copies and fresh pages cost more than the conversion.
  result.steps.reserve(schedule.getBody().front().getOperations().size());
  for (Operation &op : schedule.getBody().front()) {
    if (auto scratch = dyn_cast<ScratchOp>(op)) {
      result.scratches.push_back(
          {scratch.getRank(),
           ::m2n::Dims(scratch.getShape().begin(), scratch.getShape().end()),
           0, scratch.getAmaxes()});
      continue;
    }
    auto step = dyn_cast<StepOp>(op);
    if (!step)
      continue;
    ::m2n::Step s;
    ::m2n::Dims sizes(step.getSizes().begin(), step.getSizes().end());
    s.from = toBufferRef(step.getFromKind(), step.getFromRank(),
                         step.getFromScratch());
    s.fromBox = {::m2n::Dims(step.getFromOffsets().begin(),
                             step.getFromOffsets().end()),
                 sizes};
    s.to = toBufferRef(step.getToKind(), step.getToRank(), step.getToScratch());
    s.toBox = {::m2n::Dims(step.getToOffsets().begin(),
                           step.getToOffsets().end()),
               sizes};
    if (std::optional<ReductionKind> reduction = step.getReduction())
      s.reduction = toReduction(*reduction);
    s.link = static_cast<::m2n::LinkClass>(static_cast<int>(step.getLink()));
    s.deps.assign(step.getDeps().begin(), step.getDeps().end());
    if (std::optional<StepKind> kind = step.getKind())
      s.kind = *kind == StepKind::Amax ? ::m2n::StepKind::Amax
                                       : ::m2n::StepKind::Scale;
    result.steps.push_back(std::move(s));
  }
  return result;
}

void buildSchedule(OpBuilder &builder, Location loc,
                   const ::m2n::Schedule &schedule) {
  for (auto [id, scratch] : llvm::enumerate(schedule.scratches))
    ScratchOp::create(builder, loc, static_cast<int64_t>(id), scratch.rank,
                      scratch.shape.vec(), scratch.amaxes);
  for (auto [id, step] : llvm::enumerate(schedule.steps)) {
    std::optional<ReductionKind> reduction;
    if (step.reduction)
      reduction = toReductionKind(*step.reduction);
    StepOp::create(
        builder, loc, static_cast<int64_t>(id),
        toBufferKind(step.from.kind), step.from.rank, step.from.scratch,
        step.fromBox.offsets, toBufferKind(step.to.kind), step.to.rank,
        step.to.scratch, step.toBox.offsets, step.fromBox.sizes,
        reduction, static_cast<LinkClass>(static_cast<int>(step.link)),
        step.deps,
        step.kind == ::m2n::StepKind::Move
            ? std::nullopt
            : std::optional(step.kind == ::m2n::StepKind::Amax
                                ? StepKind::Amax
                                : StepKind::Scale));
  }
}

void replaceScheduleBody(ScheduleOp op, const ::m2n::Schedule &schedule) {
  Block &body = op.getBody().front();
  while (!body.empty())
    body.back().erase();
  OpBuilder builder = OpBuilder::atBlockEnd(&body);
  buildSchedule(builder, op.getLoc(), schedule);
}

} // namespace mlir::m2n
