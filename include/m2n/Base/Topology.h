//===- Topology.h - NVLink domains and link bandwidths -----------*- C++ -*-===//
//
// The machine as data: which ranks share an NVLink domain (peer access to
// each other's memory) and how fast NVLink and the network are. Plain C++,
// shared by the router, the cost model and the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_BASE_TOPOLOGY_H
#define M2N_BASE_TOPOLOGY_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace m2n {

/// How a byte travels between two ranks.
enum class LinkClass { Local, NVLink, Network };
const char *toString(LinkClass link);

struct Topology {
  /// Disjoint sets of ranks with NVLink peer access. A rank in no domain is
  /// a domain of its own.
  std::vector<std::vector<int64_t>> domains;
  /// Instead of listing them (`domains` empty): domains of `domainSize`
  /// consecutive ranks from rank 0, rank r in domain r / domainSize (nodes
  /// of domainSize GPUs in rank order). Constant size whatever the
  /// communicator's, so a comm<2^24> costs nothing to describe.
  int64_t domainSize = 0;
  /// NVLink bandwidth per direction of one GPU, GB/s (1e9 bytes/s).
  double nvlinkGBps = 450.0;
  /// Network injection (and reception) bandwidth of one rank, GB/s.
  double networkGBps = 50.0;

  /// One NVLink domain holding ranks 0..commSize-1, with the bandwidths of an
  /// H200 box (NVLink 4: 450 GB/s per direction; one 400 Gb/s NIC per GPU).
  static Topology singleDomain(int64_t commSize);
  /// Domains of `domainSize` consecutive ranks (the last one may be short).
  static Topology uniformDomains(int64_t domainSize);
  bool isUniform() const { return domainSize > 0; }

  /// Domain id of a rank: its index in `domains`, or a unique id past them
  /// for a rank in no domain.
  int64_t domainOf(int64_t rank) const;
  LinkClass linkBetween(int64_t from, int64_t to) const;
  /// How many domains ranks 0..commSize-1 form (a rank in no listed domain
  /// counts as one), for a topology that validate(commSize) accepts.
  int64_t domainCount(int64_t commSize) const;
  /// A message naming the problem, or std::nullopt: domains disjoint and
  /// non-empty, ranks inside the communicator, bandwidths positive.
  std::optional<std::string> validate(int64_t commSize) const;
  /// Parses the JSON topology format (docs/routing.md):
  ///   {"domains": [[0, 1], [2, 3]], "nvlink_gbps": 450, "network_gbps": 50}
  /// or, for domains of consecutive ranks, {"domain_size": 8, ...}.
  /// Returns an error message on failure.
  static std::optional<std::string> parseJson(const std::string &text,
                                              Topology &result);
};

/// Topology::domainOf and linkBetween in constant time, for code that asks
/// millions of times (routing a whole model): Topology scans its domains.
class DomainMap {
public:
  explicit DomainMap(const Topology &topology);
  int64_t domainOf(int64_t rank) const {
    if (domainSize > 0)
      return rank >= 0 ? rank / domainSize : rank;
    return rank >= 0 && rank < static_cast<int64_t>(domain.size())
               ? domain[rank]
               : domainCount + rank;
  }
  LinkClass linkBetween(int64_t from, int64_t to) const {
    if (from == to)
      return LinkClass::Local;
    return domainOf(from) == domainOf(to) ? LinkClass::NVLink
                                          : LinkClass::Network;
  }

private:
  std::vector<int64_t> domain; // Rank -> Topology::domainOf(rank).
  int64_t domainCount = 0;
  int64_t domainSize = 0; // Uniform domains: nothing to tabulate.
};

} // namespace m2n

#endif // M2N_BASE_TOPOLOGY_H
