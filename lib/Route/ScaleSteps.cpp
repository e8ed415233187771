//===- ScaleSteps.cpp - a quantizing schedule's amax exchange ---------------===//

#include "m2n/Route/ScaleSteps.h"

namespace m2n {

std::variant<Schedule, std::string>
withScaleSteps(Schedule data, const Scaling &scaling,
               const ScalePlan &scalePlan, const Topology &topology) {
  for (const Step &step : data.steps) {
    if (step.from.kind != BufferKind::Source)
      continue;
    if (step.link == LinkClass::Network)
      return "a move out of " + step.from.str() +
             " crosses the network; quantizing before a network hop (the "
             "sender's quantizer table) is not routed yet "
             "(docs/fp8-scaling.md, status)";
    if (step.to.kind != BufferKind::Destination)
      return "a move out of " + step.from.str() + " lands in " +
             step.to.str() +
             ", not in a destination buffer whose holder table has the "
             "scales to quantize it (route flat or hierarchical)";
  }
  const DomainMap domains(topology);
  Schedule result;
  result.strategy = data.strategy;
  result.scaling = scaling;
  result.scratches = std::move(data.scratches);
  for (const auto &[rank, share] : scalePlan.amaxBoxes) {
    if (share.empty())
      continue;
    Box box = share.relativeTo(scalePlan.slotBoxes.at(rank).offsets);
    Step step;
    step.kind = StepKind::Amax;
    step.from = {BufferKind::Source, rank};
    step.to = {BufferKind::Slots, rank};
    step.fromBox = step.toBox = box;
    result.steps.push_back(std::move(step));
  }
  for (const AmaxTransfer &exchange : scalePlan.exchange) {
    if (exchange.table != ScaleTable::Holder)
      continue;
    const Transfer &t = exchange.transfer;
    Step step;
    step.from = {BufferKind::Slots, t.srcRank};
    step.fromBox = t.srcBox;
    step.to = {BufferKind::Holder, t.dstRank};
    step.toBox = t.dstBox;
    step.reduction = t.reduction;
    step.link = domains.linkBetween(t.srcRank, t.dstRank);
    if (step.link == LinkClass::Network)
      return "the amax of blocks " + t.srcBox.str() + " of " +
             step.from.str() + " crosses the network to " + step.to.str() +
             "; exchanging amaxes over the network is not routed yet "
             "(docs/fp8-scaling.md, status)";
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
