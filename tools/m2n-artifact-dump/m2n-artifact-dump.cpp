//===- m2n-artifact-dump.cpp - print an m2n artifact readably ---------------===//
//
//   m2n-artifact-dump FILE [--ptx] [--kernel-tables]
//
// Verifies the artifact as the runtime does (magic, version, size, checksum,
// every field) and prints it; exits 1 with the reason when it is not valid.
// --kernel-tables prints instead what binding each launch uploads for its
// kernels (m2n/Artifact/KernelTable.h) against one item per instance, and
// the host time of each. Plain C++: no MLIR.
//
//===----------------------------------------------------------------------===//

#include "m2n/Artifact/Artifact.h"
#include "m2n/Artifact/KernelTable.h"
#include "m2n/Version.h"

#include <chrono>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

constexpr const char *kUsage = "usage: m2n-artifact-dump FILE [--ptx] [--kernel-tables]\n";

/// Bind-time tables of one launch's program (a group's merged one, or a
/// reshard's), every rank's, with placeholder addresses: the kernel table
/// the runtime uploads against one 128-byte item per instance.
void printKernelTables(const std::string &name,
                       const m2n::TransferProgram &program,
                       const m2n::KernelLaunch &kernel) {
  m2n::ItemAddresses addresses;
  addresses.buffer = [](const m2n::BufferRef &ref) {
    return (uint64_t{1} << 40) + (uint64_t(ref.rank) << 32);
  };
  addresses.counter = [](const m2n::CounterRef &c) {
    return (uint64_t{1} << 48) + 8 * uint64_t(c.index);
  };
  addresses.tensorMap = [](int64_t map) { return 128 * uint64_t(map); };
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::duration d) {
    return std::chrono::duration<double, std::milli>(d).count();
  };
  uint64_t instances = 0, expandedBytes = 0, tableBytes = 0, templates = 0,
           visits = 0, largestExpanded = 0, largestTable = 0;
  int64_t largestRank = -1;
  double expandMs = 0, walkMs = 0;
  for (const auto &[rank, rankProgram] : program.ranks) {
    auto start = Clock::now();
    std::vector<m2n::KernelItem> items;
    for (const m2n::Movement &m : rankProgram.items)
      if (auto wrong = m2n::encodeItems(m, program, addresses, items)) {
        std::printf("%s: rank %lld: %s\n", name.c_str(), (long long)rank,
                    wrong->c_str());
        return;
      }
    const uint64_t expanded = items.size() * sizeof(m2n::KernelItem);
    items = {};
    auto middle = Clock::now();
    m2n::KernelTable table;
    for (const m2n::Movement &m : rankProgram.items)
      if (auto wrong =
              m2n::encodeTemplates(m, program, addresses, table.templates)) {
        std::printf("%s: rank %lld: %s\n", name.c_str(), (long long)rank,
                    wrong->c_str());
        return;
      }
    const m2n::RankLaunch launch = rankProgram.launch.value_or(
        m2n::chooseLaunch(kernel, m2n::LaunchDemand{}));
    m2n::walkRankTable(table, kernel.ctas, launch.walkers);
    auto end = Clock::now();
    expandMs += ms(middle - start);
    walkMs += ms(end - middle);
    instances += table.items;
    expandedBytes += expanded;
    tableBytes += table.bytes();
    templates += table.templates.size();
    visits += table.visits.size();
    if (expanded > largestExpanded) {
      largestExpanded = expanded;
      largestTable = table.bytes();
      largestRank = rank;
    }
  }
  std::printf("%s: %zu ranks, %llu instances in %llu templates, %llu "
              "visits\n  one item per instance: %llu B (%.3f MB), host %.1f ms"
              "\n  kernel tables:         %llu B (%.3f MB), host %.1f ms\n",
              name.c_str(), program.ranks.size(), (unsigned long long)instances,
              (unsigned long long)templates, (unsigned long long)visits,
              (unsigned long long)expandedBytes, expandedBytes / 1e6, expandMs,
              (unsigned long long)tableBytes, tableBytes / 1e6, walkMs);
  if (largestRank >= 0)
    std::printf("  the largest rank (%lld): %llu B of items, a %llu B table\n",
                (long long)largestRank, (unsigned long long)largestExpanded,
                (unsigned long long)largestTable);
}

} // namespace

int main(int argc, char **argv) {
  const char *path = nullptr;
  bool withPtx = false, kernelTables = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf("%s\n"
                  "Verifies an m2n artifact as the runtime does (magic, "
                  "version, size,\nchecksum, every field) and prints it.\n\n"
                  "  --ptx            also print the kernel's PTX\n"
                  "  --kernel-tables  print instead, per launch (each group, "
                  "each reshard\n                   outside a group), the "
                  "kernel tables binding uploads\n                   against "
                  "one item per instance, and their host time\n"
                  "  --version        print m2n's version\n",
                  kUsage);
      return 0;
    }
    if (!std::strcmp(argv[i], "--version")) {
      std::printf("m2n " M2N_VERSION " (commit " M2N_COMMIT ")\n");
      return 0;
    }
    if (!std::strcmp(argv[i], "--ptx"))
      withPtx = true;
    else if (!std::strcmp(argv[i], "--kernel-tables"))
      kernelTables = true;
    else if (!path)
      path = argv[i];
    else
      path = nullptr, argc = 0;
  }
  if (!path) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "m2n-artifact-dump: cannot open '%s'\n", path);
    return 1;
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  m2n::Artifact artifact;
  if (std::optional<std::string> error =
          m2n::deserializeArtifact(bytes.str(), artifact)) {
    std::fprintf(stderr, "m2n-artifact-dump: %s: %s\n", path, error->c_str());
    return 1;
  }
  if (kernelTables) {
    std::vector<bool> grouped(artifact.reshards.size(), false);
    for (const m2n::CompiledGroup &group : artifact.groups) {
      for (uint32_t member : group.members)
        grouped[member] = true;
      printKernelTables("group " + group.name + " (" +
                            std::to_string(group.members.size()) + " members)",
                        *group.program, artifact.kernel);
    }
    for (size_t r = 0; r < artifact.reshards.size(); ++r)
      if (!grouped[r])
        printKernelTables(artifact.reshards[r].name, artifact.reshards[r].program,
                          artifact.kernel);
    return 0;
  }
  std::cout << m2n::describeArtifact(artifact, withPtx);
  return 0;
}
