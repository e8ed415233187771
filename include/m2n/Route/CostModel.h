//===- CostModel.h - aggregate data-movement (SOL) model ---------*- C++ -*-===//
//
// The NCCL M2N paper's aggregate model: every rank injects into and receives
// from the network at `networkGBps`, and into and from NVLink at
// `nvlinkGBps`, concurrently; network and NVLink stages overlap. So
//
//   T_network = max over ranks and directions of network bytes / networkGBps
//   T_NVLink  = max over ranks and directions of NVLink bytes / nvlinkGBps
//   T_SOL     = max(T_network, T_NVLink)
//
// It is a speed-of-light bound: it ignores latency, chunking, protocol and
// startup costs, contention inside the network fabric and the cost of local
// (same-rank) copies, which run at HBM speed.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_ROUTE_COSTMODEL_H
#define M2N_ROUTE_COSTMODEL_H

#include "m2n/Route/Schedule.h"
#include "m2n/Base/Topology.h"

#include <cstdint>
#include <map>
#include <string>

namespace m2n {

struct Estimate {
  int64_t localBytes = 0, nvlinkBytes = 0, networkBytes = 0;
  /// The busiest rank and direction of each class ("rank 16 egress").
  int64_t busiestNetworkRank = -1, busiestNVLinkRank = -1;
  bool busiestNetworkIsEgress = true, busiestNVLinkIsEgress = true;
  int64_t busiestNetworkBytes = 0, busiestNVLinkBytes = 0;
  double networkMs = 0, nvlinkMs = 0;

  double solMs() const { return networkMs > nvlinkMs ? networkMs : nvlinkMs; }
  /// "network: rank 3 egress" or "nvlink: rank 5 ingress" (the class that
  /// bounds T_SOL), or "none" when nothing crosses a link.
  std::string busiestLink() const;
};

/// Bytes per link class, and per (rank, direction) on NVLink and the
/// network, summed over any number of schedules: the load of reshards that
/// run together (a refit's tensors).
struct LinkLoads {
  int64_t localBytes = 0, nvlinkBytes = 0, networkBytes = 0;
  std::map<int64_t, int64_t> networkOut, networkIn, nvlinkOut, nvlinkIn;

  /// The schedule's steps of `elementSize`-byte elements (a quantizing
  /// schedule's: the fp8 type's; its amax exchange moves 4-byte amaxes and
  /// its amax steps move nothing).
  void add(const Schedule &schedule, int64_t elementSize);
};

Estimate estimateLoads(const LinkLoads &loads, const Topology &topology);
Estimate estimateSchedule(const Schedule &schedule, const Topology &topology,
                          int64_t elementSize);

} // namespace m2n

#endif // M2N_ROUTE_COSTMODEL_H
