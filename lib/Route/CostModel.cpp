//===- CostModel.cpp - aggregate data-movement (SOL) model ------------------===//

#include "m2n/Route/CostModel.h"

#include <map>

namespace m2n {

std::string Estimate::busiestLink() const {
  if (networkBytes == 0 && nvlinkBytes == 0)
    return "none";
  bool network = networkMs >= nvlinkMs;
  int64_t rank = network ? busiestNetworkRank : busiestNVLinkRank;
  bool egress = network ? busiestNetworkIsEgress : busiestNVLinkIsEgress;
  return std::string(network ? "network" : "nvlink") + ": rank " +
         std::to_string(rank) + (egress ? " egress" : " ingress");
}

void LinkLoads::add(const Schedule &schedule, int64_t elementSize) {
  for (const Step &step : schedule.steps) {
    // A quantizing schedule's amax steps read what they compute on; its
    // exchange moves f32 amaxes (its scale steps too, locally).
    const bool scaleStep = isScaleStep(step, schedule.scratches);
    if (step.kind == StepKind::Amax)
      continue;
    int64_t bytes = step.fromBox.volume() * (scaleStep ? 4 : elementSize);
    switch (step.link) {
    case LinkClass::Local:
      localBytes += bytes;
      break;
    case LinkClass::NVLink:
      nvlinkBytes += bytes;
      nvlinkOut[step.from.rank] += bytes;
      nvlinkIn[step.to.rank] += bytes;
      break;
    case LinkClass::Network:
      networkBytes += bytes;
      networkOut[step.from.rank] += bytes;
      networkIn[step.to.rank] += bytes;
      break;
    }
  }
}

Estimate estimateLoads(const LinkLoads &loads, const Topology &topology) {
  Estimate estimate;
  estimate.localBytes = loads.localBytes;
  estimate.nvlinkBytes = loads.nvlinkBytes;
  estimate.networkBytes = loads.networkBytes;
  auto busiest = [](const std::map<int64_t, int64_t> &out,
                    const std::map<int64_t, int64_t> &in, int64_t &rank,
                    bool &egress, int64_t &bytes) {
    for (const auto &[r, b] : out)
      if (b > bytes) {
        bytes = b;
        rank = r;
        egress = true;
      }
    for (const auto &[r, b] : in)
      if (b > bytes) {
        bytes = b;
        rank = r;
        egress = false;
      }
  };
  busiest(loads.networkOut, loads.networkIn, estimate.busiestNetworkRank,
          estimate.busiestNetworkIsEgress, estimate.busiestNetworkBytes);
  busiest(loads.nvlinkOut, loads.nvlinkIn, estimate.busiestNVLinkRank,
          estimate.busiestNVLinkIsEgress, estimate.busiestNVLinkBytes);
  // GB/s = 1e9 bytes/s = 1e6 bytes/ms.
  estimate.networkMs = estimate.busiestNetworkBytes / (topology.networkGBps * 1e6);
  estimate.nvlinkMs = estimate.busiestNVLinkBytes / (topology.nvlinkGBps * 1e6);
  return estimate;
}

Estimate estimateSchedule(const Schedule &schedule, const Topology &topology,
                          int64_t elementSize) {
  LinkLoads loads;
  loads.add(schedule, elementSize);
  return estimateLoads(loads, topology);
}

} // namespace m2n
