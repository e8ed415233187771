//===- Strategy.cpp - the routing strategies by name ------------------------===//

#include "m2n/Base/Strategy.h"

namespace m2n {

const char *toString(Strategy strategy) {
  switch (strategy) {
  case Strategy::Flat:
    return "flat";
  case Strategy::GatherBroadcast:
    return "gather-bcast";
  case Strategy::Hierarchical:
    return "hierarchical";
  }
  return "?";
}

std::optional<Strategy> parseStrategy(const std::string &name) {
  for (Strategy s :
       {Strategy::Flat, Strategy::GatherBroadcast, Strategy::Hierarchical})
    if (name == toString(s))
      return s;
  return std::nullopt;
}

} // namespace m2n
