//===- Strategy.h - the routing strategies by name ---------------*- C++ -*-===//
//
// Which routing strategy produced a schedule (docs/routing.md): named in the
// IR, in the artifact and in the runtime's listings.
//
//===----------------------------------------------------------------------===//

#ifndef M2N_BASE_STRATEGY_H
#define M2N_BASE_STRATEGY_H

#include <optional>
#include <string>

namespace m2n {

enum class Strategy { Flat, GatherBroadcast, Hierarchical };
/// "flat", "gather-bcast", "hierarchical".
const char *toString(Strategy strategy);
std::optional<Strategy> parseStrategy(const std::string &name);

} // namespace m2n

#endif // M2N_BASE_STRATEGY_H
