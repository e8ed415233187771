//===- m2n-artifact-dump.cpp - print an m2n artifact readably ---------------===//
//
//   m2n-artifact-dump FILE [--ptx]
//
// Verifies the artifact as the runtime does (magic, version, size, checksum,
// every field) and prints it; exits 1 with the reason when it is not valid.
// Plain C++: no MLIR.
//
//===----------------------------------------------------------------------===//

#include "m2n/Artifact/Artifact.h"
#include "m2n/Version.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

int main(int argc, char **argv) {
  const char *path = nullptr;
  bool withPtx = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::printf("usage: m2n-artifact-dump FILE [--ptx]\n\n"
                  "Verifies an m2n artifact as the runtime does (magic, "
                  "version, size,\nchecksum, every field) and prints it.\n\n"
                  "  --ptx      also print the kernel's PTX\n"
                  "  --version  print m2n's version\n");
      return 0;
    }
    if (!std::strcmp(argv[i], "--version")) {
      std::printf("m2n " M2N_VERSION " (commit " M2N_COMMIT ")\n");
      return 0;
    }
    if (!std::strcmp(argv[i], "--ptx"))
      withPtx = true;
    else if (!path)
      path = argv[i];
    else
      path = nullptr, argc = 0;
  }
  if (!path) {
    std::fprintf(stderr, "usage: m2n-artifact-dump FILE [--ptx]\n");
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
  std::cout << m2n::describeArtifact(artifact, withPtx);
  return 0;
}
