//===- ScaleSteps.cpp - a quantizing schedule's amax exchange ---------------===//

#include "m2n/Route/ScaleSteps.h"

#include <set>

namespace m2n {

Schedule withScaleSteps(Schedule data, const Scaling &scaling,
                        const Layout &src, const Layout &dst,
                        const std::vector<int64_t> &shape,
                        const ScalePlan &scalePlan, const Topology &topology) {
  const DomainMap domains(topology);
  // The exchange, with a quantizer table for every source the route reads.
  std::vector<AmaxTransfer> exchange = scalePlan.exchange;
  std::set<int64_t> tables, missing;
  for (const AmaxTransfer &transfer : exchange)
    if (transfer.table == ScaleTable::Quantizer)
      tables.insert(transfer.transfer.dstRank);
  for (const Step &step : data.steps)
    if (step.from.kind == BufferKind::Source && !step.fromBox.empty() &&
        !tables.count(step.from.rank))
      missing.insert(step.from.rank);
  if (!missing.empty()) {
    ReshardPlan readers;
    for (int64_t rank : missing)
      readers.transfers.push_back({rank, {}, -1, {}, std::nullopt});
    for (const AmaxTransfer &transfer :
         planScales(scaling, src, dst, shape, readers).exchange)
      if (transfer.table == ScaleTable::Quantizer)
        exchange.push_back(transfer);
  }
  Schedule result;
  result.strategy = data.strategy;
  result.scaling = scaling;
  result.scratches = std::move(data.scratches);
  for (const auto &[rank, share] : scalePlan.amaxBoxes) {
    if (share.empty())
      continue;
    Step step;
    step.kind = StepKind::Amax;
    step.from = {BufferKind::Source, rank};
    step.to = {BufferKind::Slots, rank};
    step.fromBox = step.toBox =
        share.relativeTo(scalePlan.slotBoxes.at(rank).offsets);
    result.steps.push_back(std::move(step));
  }
  for (const AmaxTransfer &amax : exchange) {
    const Transfer &t = amax.transfer;
    Step step;
    step.from = {BufferKind::Slots, t.srcRank};
    step.fromBox = t.srcBox;
    step.to = {amax.table == ScaleTable::Quantizer ? BufferKind::Quantizer
                                                   : BufferKind::Holder,
               t.dstRank};
    step.toBox = t.dstBox;
    step.reduction = t.reduction;
    step.link = domains.linkBetween(t.srcRank, t.dstRank);
    result.steps.push_back(std::move(step));
  }
  for (const auto &[rank, blocks] : scalePlan.holderBoxes) {
    if (blocks.empty())
      continue;
    Step step;
    step.kind = StepKind::Scale;
    step.from = {BufferKind::Holder, rank};
    step.to = {BufferKind::Scales, rank};
    step.fromBox = step.toBox = Box{Dims(blocks.rank(), 0), blocks.sizes};
    result.steps.push_back(std::move(step));
  }
  result.steps.insert(result.steps.end(),
                      std::make_move_iterator(data.steps.begin()),
                      std::make_move_iterator(data.steps.end()));
  return result;
}

} // namespace m2n
