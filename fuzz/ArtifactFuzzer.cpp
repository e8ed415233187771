//===- ArtifactFuzzer.cpp - the runtime's artifact loader and host executor
//-===//
//
// Input: an artifact file. Its header's size and checksum are rewritten to
// match the (mutated) payload, so that mutations reach the field checks as
// a writer bug or a hostile file would. The loader must accept or refuse
// with a status and a message; every query of the C API must answer within
// its contract. With M2N_FUZZ_HOST_EXECUTE, each loaded reshard whose
// buffers total at most kMaxBufferBytes runs on the host backend with
// exactly the buffer sizes it asks for (ASan sees any byte outside them),
// alone and grouped with reshard 0.
//
//===----------------------------------------------------------------------===//

#include "m2n/Artifact/Artifact.h"
#include "m2n/runtime.h"
#ifdef M2N_FUZZ_HOST_EXECUTE
#include "HostRun.h"
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kMaxReshards = 16;
constexpr int kMaxRanks = 64;
constexpr size_t kMaxBufferBytes = size_t(4) << 20;

[[noreturn]] void contractBroken(const char *what) {
  std::fprintf(stderr, "m2n-fuzz-artifact: %s (last error: %s)\n", what,
               m2n_last_error());
  std::abort();
}

/// A failing call must say why.
void expectMessage(const char *call, m2n_status status) {
  if (status != M2N_SUCCESS && !*m2n_last_error()) {
    std::fprintf(stderr, "%s: %s\n", call, m2n_status_name(status));
    contractBroken("a failing call left no message");
  }
  if (status == M2N_INTERNAL_ERROR)
    contractBroken("an internal error: a C++ exception reached the API");
}

struct Buffers {
  std::vector<std::unique_ptr<uint8_t[]>> storage;
  std::vector<const void *> src;
  std::vector<void *> dst;
  std::vector<size_t> srcBytes, dstBytes;
};

/// Buffers of exactly the sizes `reshard` asks for, or false when a query
/// fails or they exceed the fuzzer's budget.
bool allocate(m2n_artifact artifact, int reshard, int ranks, Buffers &out,
              size_t &total) {
  for (int rank = 0; rank < ranks; ++rank) {
    size_t src = 0, dst = 0;
    m2n_status status =
        m2n_artifact_buffer_bytes(artifact, reshard, rank, &src, &dst);
    expectMessage("m2n_artifact_buffer_bytes", status);
    if (status != M2N_SUCCESS)
      return false;
    if (src > kMaxBufferBytes || dst > kMaxBufferBytes ||
        (total += src + dst) > kMaxBufferBytes)
      return false;
    int present = 0, dims = 0;
    int64_t shape[8];
    for (int source : {0, 1})
      expectMessage("m2n_artifact_local_shape",
                    m2n_artifact_local_shape(artifact, reshard, rank, source,
                                             &present, &dims, shape));
    // Distinct allocations of the exact sizes (new[] of 0 bytes is unique).
    out.storage.emplace_back(new uint8_t[src]);
    std::memset(out.storage.back().get(), 0x5a, src);
    out.src.push_back(src ? out.storage.back().get() : nullptr);
    out.storage.emplace_back(new uint8_t[dst]);
    out.dst.push_back(dst ? out.storage.back().get() : nullptr);
    out.srcBytes.push_back(src);
    out.dstBytes.push_back(dst);
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  if (bytes.compare(0, 4, "M2NA") == 0)
    m2n::resealArtifact(bytes);
  m2n_artifact artifact = nullptr;
  m2n_status status = m2n_artifact_load(bytes.data(), bytes.size(), &artifact);
  expectMessage("m2n_artifact_load", status);
  if (status != M2N_SUCCESS) {
    if (artifact)
      contractBroken("a refused artifact returned a handle");
    return 0;
  }
  const int reshards = m2n_artifact_reshard_count(artifact);
  for (int reshard = 0; reshard < reshards && reshard < kMaxReshards;
       ++reshard) {
    if (!m2n_artifact_reshard_name(artifact, reshard))
      contractBroken("a loaded reshard has no name");
    int ranks = 0;
    status = m2n_artifact_reshard_ranks(artifact, reshard, &ranks);
    expectMessage("m2n_artifact_reshard_ranks", status);
    if (status != M2N_SUCCESS)
      continue;
    if (ranks < 1)
      contractBroken("a loaded reshard needs no ranks");
    if (ranks > kMaxRanks)
      continue;
    Buffers buffers;
    size_t total = 0;
    if (!allocate(artifact, reshard, ranks, buffers, total))
      continue;
#ifdef M2N_FUZZ_HOST_EXECUTE
    expectMessage("m2n_group_execute",
                  hostRun(artifact, {reshard}, ranks, buffers.src.data(),
                          buffers.srcBytes.data(), buffers.dst.data(),
                          buffers.dstBytes.data()));
    if (reshard == 0)
      continue;
    // Grouped with reshard 0 (the refit's path): member-major buffers.
    int ranks0 = 0;
    if (m2n_artifact_reshard_ranks(artifact, 0, &ranks0) != M2N_SUCCESS)
      continue;
    const int both = std::max(ranks, ranks0);
    if (both > kMaxRanks)
      continue;
    Buffers first, second;
    size_t groupTotal = 0;
    if (!allocate(artifact, 0, both, first, groupTotal) ||
        !allocate(artifact, reshard, both, second, groupTotal))
      continue;
    first.src.insert(first.src.end(), second.src.begin(), second.src.end());
    first.dst.insert(first.dst.end(), second.dst.begin(), second.dst.end());
    first.srcBytes.insert(first.srcBytes.end(), second.srcBytes.begin(),
                          second.srcBytes.end());
    first.dstBytes.insert(first.dstBytes.end(), second.dstBytes.begin(),
                          second.dstBytes.end());
    const int members[2] = {0, reshard};
    expectMessage("m2n_group_execute (a group of two)",
                  hostRun(artifact, {members[0], members[1]}, both,
                          first.src.data(), first.srcBytes.data(),
                          first.dst.data(), first.dstBytes.data()));
#endif
  }
  m2n_artifact_destroy(artifact);
  return 0;
}
