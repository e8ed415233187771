//===- ScaleSteps.cpp - a quantizing schedule's amax exchange ---------------===//

#include "m2n/Route/ScaleSteps.h"

#include <algorithm>
#include <cstdint>
#include <set>

namespace m2n {

namespace {

/// Bands of block rows: `rows` blocks of dimension `dim` of the scale
/// tensor each, numbered from block 0 (dim -1: one band).
struct Bands {
  int64_t dim = -1;
  int64_t rows = 1;

  Bands(const Dims &scaleShape, int64_t count) {
    for (int64_t d = 0; d < static_cast<int64_t>(scaleShape.size()); ++d)
      if (scaleShape[d] > 1) {
        dim = d;
        break;
      }
    if (dim < 0 || count <= 1) {
      dim = -1;
      return;
    }
    const int64_t extent = scaleShape[dim];
    count = std::min(count, extent);
    rows = (extent + count - 1) / count;
  }

  /// The number of bands of a scale dimension of `extent` blocks.
  int64_t count(int64_t extent) const {
    return dim < 0 ? 1 : (extent + rows - 1) / rows;
  }

  /// `step` cut at band boundaries along `dim`, its from box at `origin`
  /// (per dimension) of the tensor, `unit` coordinates a block row; each
  /// piece with its band.
  std::vector<std::pair<int64_t, Step>> cutStep(const Step &step,
                                                const Dims &origin,
                                                int64_t unit) const {
    std::vector<std::pair<int64_t, Step>> pieces;
    if (dim < 0 || step.fromBox.empty()) {
      pieces.push_back({0, step});
      return pieces;
    }
    const int64_t first = step.fromBox.offsets[dim] + origin[dim];
    const int64_t end = first + step.fromBox.sizes[dim];
    const int64_t span = rows * unit;
    for (int64_t at = first; at < end;) {
      const int64_t next = std::min(end, (at / span + 1) * span);
      pieces.push_back(
          {at / span, sliceStep(step, dim, at - first, next - at)});
      at = next;
    }
    return pieces;
  }
};

} // namespace

int64_t scaleBandCount(const std::vector<int64_t> &shape, int64_t elementBytes,
                       int64_t chunkBytes) {
  // (A chunk larger than any tensor: one band.)
  if (chunkBytes <= 0 || chunkBytes > INT64_MAX / kMaxScaleBands)
    return 1;
  // Bytes of the tensor, saturating (the band count is capped anyway).
  int64_t bytes = elementBytes;
  for (int64_t extent : shape) {
    if (extent == 0)
      return 1;
    bytes = bytes > kMaxScaleBands * chunkBytes / extent
                ? kMaxScaleBands * chunkBytes
                : bytes * extent;
  }
  return std::clamp<int64_t>((bytes + chunkBytes - 1) / chunkBytes, 1,
                             kMaxScaleBands);
}

Schedule withScaleSteps(Schedule data, const Scaling &scaling,
                        const Layout &src, const Layout &dst,
                        const std::vector<int64_t> &shape,
                        const ScalePlan &scalePlan, const Topology &topology,
                        int64_t bandCount) {
  const DomainMap domains(topology);
  const Dims dims(shape.begin(), shape.end());
  const Bands bands(scalePlan.scaleShape, bandCount);
  const Dims block = blockShape(scaling, dims);
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

  // Per band: the shares' steps and the exchange into quantizer tables;
  // the exchange into holder tables, band by band.
  const int64_t bandTotal =
      bands.count(bands.dim < 0 ? 1 : scalePlan.scaleShape[bands.dim]);
  std::vector<std::vector<Step>> quantizerPhase(bandTotal), holderPhase(bandTotal);
  for (const auto &[rank, share] : scalePlan.amaxBoxes) {
    if (share.empty())
      continue;
    Step step;
    step.kind = StepKind::Amax;
    step.from = {BufferKind::Source, rank};
    step.to = {BufferKind::Slots, rank};
    step.fromBox = step.toBox =
        share.relativeTo(scalePlan.slotBoxes.at(rank).offsets);
    for (auto &[band, piece] :
         bands.cutStep(step, scalePlan.slotBoxes.at(rank).offsets, 1))
      quantizerPhase[band].push_back(std::move(piece));
  }
  for (const AmaxTransfer &amax : exchange) {
    const Transfer &t = amax.transfer;
    const bool quantizer = amax.table == ScaleTable::Quantizer;
    Step step;
    step.from = {BufferKind::Slots, t.srcRank};
    step.fromBox = t.srcBox;
    step.to = {quantizer ? BufferKind::Quantizer : BufferKind::Holder,
               t.dstRank};
    step.toBox = t.dstBox;
    step.reduction = t.reduction;
    step.link = domains.linkBetween(t.srcRank, t.dstRank);
    for (auto &[band, piece] :
         bands.cutStep(step, scalePlan.slotBoxes.at(t.srcRank).offsets, 1))
      (quantizer ? quantizerPhase : holderPhase)[band].push_back(
          std::move(piece));
  }

  Schedule result;
  result.strategy = data.strategy;
  result.scaling = scaling;
  result.scratches = std::move(data.scratches);
  for (std::vector<Step> &phase : quantizerPhase)
    result.steps.insert(result.steps.end(),
                        std::make_move_iterator(phase.begin()),
                        std::make_move_iterator(phase.end()));
  // The data: moves out of a source cut at band boundaries (in elements).
  const MeshIndex srcIndex(src.mesh);
  std::map<int64_t, Dims> origins;
  for (Step &step : data.steps) {
    if (step.from.kind != BufferKind::Source || bands.dim < 0) {
      result.steps.push_back(std::move(step));
      continue;
    }
    auto [origin, fresh] = origins.try_emplace(step.from.rank);
    if (fresh)
      origin->second =
          src.localBox(shape, *srcIndex.indexOf(step.from.rank)).offsets;
    for (auto &[band, piece] :
         bands.cutStep(step, origin->second, block[bands.dim]))
      result.steps.push_back(std::move(piece));
  }
  for (std::vector<Step> &phase : holderPhase)
    result.steps.insert(result.steps.end(),
                        std::make_move_iterator(phase.begin()),
                        std::make_move_iterator(phase.end()));
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
  return result;
}

Schedule quantizingSchedule(Schedule routed, const Scaling &scaling,
                            const Layout &src, const Layout &dst,
                            const std::vector<int64_t> &shape,
                            const ScalePlan &scalePlan,
                            const Topology &topology, int64_t elementBytes,
                            int64_t chunkBytes, int64_t maxBands) {
  // Where there are bands, they cut the moves out of a source; elsewhere
  // (one band, or one block: a tensor scale) chunks do, as in any reshard.
  const int64_t bands = std::clamp<int64_t>(
      scaleBandCount(shape, elementBytes, chunkBytes), 1,
      std::max<int64_t>(maxBands, 1));
  const bool cutInBands = Bands(scalePlan.scaleShape, bands).dim >= 0;
  Schedule schedule = withScaleSteps(
      chunkSchedule(std::move(routed), elementBytes, chunkBytes,
                    /*keepSourceReads=*/cutInBands),
      scaling, src, dst, shape, scalePlan, topology, bands);
  addDataDependencies(schedule, src, shape);
  return schedule;
}

} // namespace m2n
