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

Estimate estimateSchedule(const Schedule &schedule, const Topology &topology,
                          int64_t elementSize) {
  Estimate estimate;
  // Bytes per (rank, direction) for each link class.
  std::map<int64_t, int64_t> netOut, netIn, nvOut, nvIn;
  for (const Step &step : schedule.steps) {
    int64_t bytes = step.fromBox.volume() * elementSize;
    switch (step.link) {
    case LinkClass::Local:
      estimate.localBytes += bytes;
      break;
    case LinkClass::NVLink:
      estimate.nvlinkBytes += bytes;
      nvOut[step.from.rank] += bytes;
      nvIn[step.to.rank] += bytes;
      break;
    case LinkClass::Network:
      estimate.networkBytes += bytes;
      netOut[step.from.rank] += bytes;
      netIn[step.to.rank] += bytes;
      break;
    }
  }
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
  busiest(netOut, netIn, estimate.busiestNetworkRank,
          estimate.busiestNetworkIsEgress, estimate.busiestNetworkBytes);
  busiest(nvOut, nvIn, estimate.busiestNVLinkRank,
          estimate.busiestNVLinkIsEgress, estimate.busiestNVLinkBytes);
  // GB/s = 1e9 bytes/s = 1e6 bytes/ms.
  estimate.networkMs = estimate.busiestNetworkBytes / (topology.networkGBps * 1e6);
  estimate.nvlinkMs = estimate.busiestNVLinkBytes / (topology.nvlinkGBps * 1e6);
  return estimate;
}

} // namespace m2n
