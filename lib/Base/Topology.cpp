//===- Topology.cpp - NVLink domains and link bandwidths --------------------===//

#include "m2n/Base/Topology.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <vector>

namespace m2n {

const char *toString(LinkClass link) {
  switch (link) {
  case LinkClass::Local:
    return "local";
  case LinkClass::NVLink:
    return "nvlink";
  case LinkClass::Network:
    return "network";
  }
  return "?";
}

Topology Topology::singleDomain(int64_t commSize) {
  return uniformDomains(std::max<int64_t>(commSize, 1));
}

Topology Topology::uniformDomains(int64_t domainSize) {
  Topology topology;
  topology.domainSize = domainSize;
  return topology;
}

int64_t Topology::domainOf(int64_t rank) const {
  if (isUniform())
    return rank >= 0 ? rank / domainSize : rank;
  // Domains of equal size over contiguous ranks (a cluster of nodes): the
  // guessed domain holds the rank at its offset, in O(1). Ranks are
  // distinct across domains (validate), so a hit is the answer.
  if (!domains.empty() && !domains.front().empty() && rank >= 0) {
    const int64_t width = static_cast<int64_t>(domains.front().size());
    const int64_t first = domains.front().front();
    if (rank >= first) {
      const int64_t d = (rank - first) / width, at = (rank - first) % width;
      if (d < static_cast<int64_t>(domains.size()) &&
          at < static_cast<int64_t>(domains[d].size()) &&
          domains[d][at] == rank)
        return d;
    }
  }
  for (size_t d = 0; d < domains.size(); ++d)
    for (int64_t member : domains[d])
      if (member == rank)
        return static_cast<int64_t>(d);
  return static_cast<int64_t>(domains.size()) + rank;
}

int64_t Topology::domainCount(int64_t commSize) const {
  if (isUniform())
    return (commSize + domainSize - 1) / domainSize;
  int64_t listed = 0;
  for (const std::vector<int64_t> &domain : domains)
    listed += static_cast<int64_t>(domain.size());
  return static_cast<int64_t>(domains.size()) + (commSize - listed);
}

LinkClass Topology::linkBetween(int64_t from, int64_t to) const {
  if (from == to)
    return LinkClass::Local;
  return domainOf(from) == domainOf(to) ? LinkClass::NVLink
                                        : LinkClass::Network;
}

std::optional<std::string> Topology::validate(int64_t commSize) const {
  if (domainSize < 0)
    return "domain_size must be positive, got " + std::to_string(domainSize);
  if (isUniform() && !domains.empty())
    return std::string("a topology lists its domains or gives domain_size, "
                       "not both");
  // Ranks inside the communicator first, then one bit per rank up to the
  // largest named (a std::set of 2^24 ranks took seconds; a bitmap of the
  // whole communicator costs 256 MB at 2^31 ranks).
  int64_t largest = -1;
  for (size_t d = 0; d < domains.size(); ++d) {
    if (domains[d].empty())
      return "NVLink domain " + std::to_string(d) + " is empty";
    for (int64_t rank : domains[d]) {
      if (rank < 0 || rank >= commSize)
        return "NVLink domain " + std::to_string(d) + " names rank " +
               std::to_string(rank) + ", outside the communicator of " +
               std::to_string(commSize) + " ranks";
      largest = std::max(largest, rank);
    }
  }
  std::vector<bool> seen(static_cast<size_t>(largest + 1));
  for (size_t d = 0; d < domains.size(); ++d) {
    for (int64_t rank : domains[d]) {
      if (seen[rank])
        return "rank " + std::to_string(rank) +
               " appears in more than one NVLink domain";
      seen[rank] = true;
    }
  }
  if (!(nvlinkGBps > 0) || !std::isfinite(nvlinkGBps))
    return "nvlink_gbps must be a positive finite bandwidth";
  if (!(networkGBps > 0) || !std::isfinite(networkGBps))
    return "network_gbps must be a positive finite bandwidth";
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// A small JSON reader: enough for the topology format, with errors that say
// where the text went wrong.
//===----------------------------------------------------------------------===//

namespace {
struct JsonValue {
  enum class Kind { Null, Bool, Number, String, Array, Object } kind =
      Kind::Null;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<std::pair<std::string, JsonValue>> object;
};

class JsonReader {
public:
  explicit JsonReader(const std::string &text) : text(text) {}

  std::optional<std::string> read(JsonValue &value) {
    if (auto error = parseValue(value, 0))
      return error;
    skipSpace();
    if (pos != text.size())
      return errorAt("unexpected text after the JSON value");
    return std::nullopt;
  }

private:
  std::string errorAt(const std::string &message) const {
    return message + " at offset " + std::to_string(pos);
  }
  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  std::optional<std::string> parseString(std::string &out) {
    if (!consume('"'))
      return errorAt("expected a string");
    while (pos < text.size() && text[pos] != '"') {
      if (text[pos] == '\\')
        return errorAt("escapes are not supported in topology files");
      out.push_back(text[pos++]);
    }
    if (pos == text.size())
      return errorAt("unterminated string");
    ++pos;
    return std::nullopt;
  }
  std::optional<std::string> parseValue(JsonValue &value, int depth) {
    if (depth > 16)
      return errorAt("nesting too deep");
    skipSpace();
    if (pos == text.size())
      return errorAt("unexpected end of input");
    char c = text[pos];
    if (c == '{') {
      ++pos;
      value.kind = JsonValue::Kind::Object;
      if (consume('}'))
        return std::nullopt;
      do {
        std::pair<std::string, JsonValue> entry;
        if (auto error = parseString(entry.first))
          return error;
        if (!consume(':'))
          return errorAt("expected ':'");
        if (auto error = parseValue(entry.second, depth + 1))
          return error;
        value.object.push_back(std::move(entry));
      } while (consume(','));
      if (!consume('}'))
        return errorAt("expected ',' or '}'");
      return std::nullopt;
    }
    if (c == '[') {
      ++pos;
      value.kind = JsonValue::Kind::Array;
      if (consume(']'))
        return std::nullopt;
      do {
        value.array.emplace_back();
        if (auto error = parseValue(value.array.back(), depth + 1))
          return error;
      } while (consume(','));
      if (!consume(']'))
        return errorAt("expected ',' or ']'");
      return std::nullopt;
    }
    if (c == '"') {
      value.kind = JsonValue::Kind::String;
      return parseString(value.string);
    }
    for (const char *word : {"true", "false", "null"}) {
      std::string w(word);
      if (text.compare(pos, w.size(), w) == 0) {
        pos += w.size();
        value.kind = w == "null" ? JsonValue::Kind::Null : JsonValue::Kind::Bool;
        return std::nullopt;
      }
    }
    const char *begin = text.c_str() + pos;
    char *end = nullptr;
    value.number = std::strtod(begin, &end);
    if (end == begin)
      return errorAt("expected a JSON value");
    pos += end - begin;
    value.kind = JsonValue::Kind::Number;
    return std::nullopt;
  }

  const std::string &text;
  size_t pos = 0;
};
} // namespace

std::optional<std::string> Topology::parseJson(const std::string &text,
                                               Topology &result) {
  JsonValue root;
  if (auto error = JsonReader(text).read(root))
    return "invalid JSON: " + *error;
  if (root.kind != JsonValue::Kind::Object)
    return "a topology must be a JSON object";
  Topology topology;
  bool hasDomains = false, hasDomainSize = false, hasNvlink = false,
       hasNetwork = false;
  for (const auto &[key, value] : root.object) {
    if (key == "domains") {
      hasDomains = true;
      if (value.kind != JsonValue::Kind::Array)
        return "'domains' must be an array of arrays of ranks";
      for (const JsonValue &domain : value.array) {
        if (domain.kind != JsonValue::Kind::Array)
          return "'domains' must be an array of arrays of ranks";
        topology.domains.emplace_back();
        for (const JsonValue &rank : domain.array) {
          if (rank.kind != JsonValue::Kind::Number ||
              rank.number != std::floor(rank.number) ||
              !(std::fabs(rank.number) < 9.2e18))
            return "ranks in 'domains' must be integers";
          topology.domains.back().push_back(static_cast<int64_t>(rank.number));
        }
      }
    } else if (key == "domain_size") {
      hasDomainSize = true;
      if (value.kind != JsonValue::Kind::Number ||
          value.number != std::floor(value.number) || !(value.number >= 1) ||
          !(value.number < 9.2e18))
        return "'domain_size' must be a positive integer (ranks per domain)";
      topology.domainSize = static_cast<int64_t>(value.number);
    } else if (key == "nvlink_gbps" || key == "network_gbps") {
      if (value.kind != JsonValue::Kind::Number)
        return "'" + key + "' must be a number (GB/s)";
      (key == "nvlink_gbps" ? topology.nvlinkGBps : topology.networkGBps) =
          value.number;
      (key == "nvlink_gbps" ? hasNvlink : hasNetwork) = true;
    } else if (key != "name" && key != "comment") {
      return "unknown topology key '" + key +
             "'; expected 'domains', 'domain_size', 'nvlink_gbps', "
             "'network_gbps', 'name' or 'comment'";
    }
  }
  if (hasDomains && hasDomainSize)
    return std::string("a topology gives 'domains' or 'domain_size', not "
                       "both");
  if (!(hasDomains || hasDomainSize) || !hasNvlink || !hasNetwork)
    return std::string("a topology needs 'domains' (or 'domain_size'), "
                       "'nvlink_gbps' and 'network_gbps'");
  result = std::move(topology);
  return std::nullopt;
}

DomainMap::DomainMap(const Topology &topology)
    : domainCount(static_cast<int64_t>(topology.domains.size())),
      domainSize(topology.domainSize) {
  if (topology.isUniform())
    return;
  int64_t ranks = 0;
  for (const std::vector<int64_t> &members : topology.domains)
    for (int64_t rank : members)
      ranks = std::max(ranks, rank + 1);
  domain.resize(ranks);
  for (int64_t rank = 0; rank < ranks; ++rank)
    domain[rank] = domainCount + rank; // In no domain: one of its own.
  // The first domain naming a rank wins, as in Topology::domainOf.
  for (int64_t d = domainCount - 1; d >= 0; --d)
    for (int64_t rank : topology.domains[d])
      if (rank >= 0)
        domain[rank] = d;
}

} // namespace m2n
