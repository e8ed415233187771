//===- MakeSeeds.cpp - one small artifact per reshard, for the fuzzers
//-----===//
//
//   m2n-fuzz-seeds OUT_DIR ARTIFACT...
// Writes OUT_DIR/<artifact>-<n>.m2n for every reshard of every artifact:
// that reshard alone, with the kernel's PTX left out (the host backend does
// not read it), so that mutants land in the fields the loader validates.
//
//===----------------------------------------------------------------------===//

#include "m2n/Artifact/Artifact.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: m2n-fuzz-seeds OUT_DIR ARTIFACT...\n");
    return 2;
  }
  for (int a = 2; a < argc; ++a) {
    std::ifstream in(argv[a], std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    m2n::Artifact artifact;
    if (!in || m2n::deserializeArtifact(bytes.str(), artifact)) {
      std::fprintf(stderr, "m2n-fuzz-seeds: cannot load '%s'\n", argv[a]);
      return 1;
    }
    std::string stem = argv[a];
    stem = stem.substr(stem.find_last_of('/') + 1);
    stem = stem.substr(0, stem.find('.'));
    for (size_t r = 0; r < artifact.reshards.size(); ++r) {
      m2n::Artifact one;
      one.chip = artifact.chip;
      one.kernel = artifact.kernel;
      one.reshards.push_back(artifact.reshards[r]);
      const std::string path =
          std::string(argv[1]) + "/" + stem + "-" + std::to_string(r) + ".m2n";
      std::ofstream out(path, std::ios::binary);
      out << m2n::serializeArtifact(one);
      if (!out) {
        std::fprintf(stderr, "m2n-fuzz-seeds: cannot write '%s'\n",
                     path.c_str());
        return 1;
      }
    }
  }
  return 0;
}
