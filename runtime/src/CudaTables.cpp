//===- CudaTables.cpp - each local rank's table of work items -------------===//
//
// What a bound launch uploads: the tensor maps of the program's tiles
// (their geometry from m2n/Artifact/TensorMap.h), and per local rank its
// kernel table, one template per repeated movement and the walkers' visits
// of them (m2n/Artifact/KernelTable.h, plain C++ like the geometry: both
// tested on the host), its launch shape and its copy-engine copies.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include "m2n/Artifact/KernelTable.h"
#include "m2n/Artifact/TensorMap.h"

#include <algorithm>
#include <map>
#include <new>
#include <utility>
#include <vector>

namespace m2n::runtime {

namespace {

CUtensorMapDataType mapType(m2n::ElementType type) {
  switch (type) {
  case m2n::ElementType::F32:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case m2n::ElementType::F16:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case m2n::ElementType::BF16:
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case m2n::ElementType::F64:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
  case m2n::ElementType::I32:
    return CU_TENSOR_MAP_DATA_TYPE_INT32;
  case m2n::ElementType::I64:
    return CU_TENSOR_MAP_DATA_TYPE_INT64;
  case m2n::ElementType::I16:
    return CU_TENSOR_MAP_DATA_TYPE_UINT16;
  case m2n::ElementType::I8:
  case m2n::ElementType::U8:
  case m2n::ElementType::F8E4M3FN: // Only copied: bytes.
  case m2n::ElementType::F8E5M2:
  case m2n::ElementType::F8E8M0FNU:
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

/// Each local rank's table as binding encoded it: what a merged launch
/// copies (mergeLaunches).
struct EncodedTable {
  std::vector<m2n::KernelWalker> walkers;
  std::vector<m2n::KernelTemplate> templates;
};

/// Groups the local ranks with kernel items by device and launch shape and
/// uploads each group of two or more ranks' walker records end to end
/// (ReshardState::MergedLaunch), each rank's pointing at a copy of its
/// templates without the reads-done waits the launch itself meets
/// (m2n::readsDoneWithin).
m2n_status mergeLaunches(CudaContext *context, ReshardState &state,
                         const std::map<int64_t, EncodedTable> &encoded) {
  // A rebind keeps the arrays of the groups it finds again (a graph
  // captured before it replays with their addresses, as with the ranks'
  // tables, and cudaFree would synchronize the device).
  std::vector<ReshardState::MergedLaunch> previous =
      std::move(state.mergedLaunches);
  state.mergedLaunches.clear();
  struct FreeUnused { // Those not found again, on every way out.
    std::vector<ReshardState::MergedLaunch> &launches;
    ~FreeUnused() {
      for (ReshardState::MergedLaunch &unused : launches)
        if (unused.walkers)
          cudaFree(unused.walkers);
    }
  } freeUnused{previous};
  std::vector<ReshardState::MergedLaunch> groups;
  for (size_t slot = 0; slot < context->localRanks.size(); ++slot) {
    const int64_t rank = context->localRanks[slot];
    auto table = state.tables.find(rank);
    if (table == state.tables.end() || table->second.items == 0)
      continue;
    const int device = context->localDevices[slot];
    const m2n::LaunchShape &shape = state.shapes.at(rank);
    auto group = std::find_if(groups.begin(), groups.end(), [&](auto &g) {
      return g.device == device && g.shape == shape;
    });
    if (group == groups.end())
      group = groups.insert(groups.end(), {device, {}, shape, 0, nullptr, 0});
    group->slots.push_back(slot);
    group->ctas += table->second.ctas;
  }
  for (ReshardState::MergedLaunch &group : groups) {
    if (group.slots.size() < 2)
      continue;
    std::vector<int64_t> ranks;
    for (size_t slot : group.slots)
      ranks.push_back(context->localRanks[slot]);
    // The waits for reads by the launch's own ranks: met by its end.
    std::vector<uint64_t> met;
    for (const m2n::CounterRef &counter :
         m2n::readsDoneWithin(state.program(), ranks))
      met.push_back(reinterpret_cast<uint64_t>(
          state.counters.at(counter.rank) + counter.index));
    // One allocation: the records, then each rank's templates as the
    // merged launch runs them.
    std::vector<m2n::KernelWalker> records;
    std::vector<std::vector<m2n::KernelTemplate>> templates;
    uint64_t recordBytes = 0;
    for (size_t slot : group.slots) {
      const EncodedTable &table = encoded.at(context->localRanks[slot]);
      records.insert(records.end(), table.walkers.begin(),
                     table.walkers.end());
      templates.push_back(m2n::withoutWaitsOn(table.templates, met));
    }
    recordBytes = records.size() * sizeof(m2n::KernelWalker);
    uint64_t bytes = recordBytes;
    for (const auto &rankTemplates : templates)
      bytes += rankTemplates.size() * sizeof(m2n::KernelTemplate);
    M2N_CUDA(cudaSetDevice(group.device));
    auto kept = std::find_if(previous.begin(), previous.end(), [&](auto &p) {
      return p.walkers && p.device == group.device &&
             p.slots == group.slots && p.capacity >= bytes;
    });
    if (kept != previous.end()) {
      group.walkers = std::exchange(kept->walkers, nullptr);
      group.capacity = kept->capacity;
    } else {
      M2N_CUDA(cudaMalloc(&group.walkers, bytes));
      group.capacity = bytes;
    }
    // Each rank's records point at its templates' copy.
    uint64_t at = recordBytes;
    size_t first = 0;
    for (size_t r = 0; r < group.slots.size(); ++r) {
      const size_t count =
          encoded.at(context->localRanks[group.slots[r]]).walkers.size();
      for (size_t w = first; w < first + count; ++w)
        records[w].templates = reinterpret_cast<uint64_t>(group.walkers + at);
      M2N_CUDA(cudaMemcpy(group.walkers + at, templates[r].data(),
                          templates[r].size() * sizeof(m2n::KernelTemplate),
                          cudaMemcpyHostToDevice));
      at += templates[r].size() * sizeof(m2n::KernelTemplate);
      first += count;
    }
    state.mergedLaunches.push_back(group);
    M2N_CUDA(cudaMemcpy(group.walkers, records.data(), recordBytes,
                        cudaMemcpyHostToDevice));
  }
  return M2N_SUCCESS;
}

} // namespace

/// Encodes the tensor maps and uploads each local rank's work items.
m2n_status buildTables(CudaContext *context, ReshardState &state) {
  const m2n::TransferProgram &program = state.program();
  auto addressOf = [&](const m2n::BufferRef &ref) {
    return state.addressOf(ref);
  };
  auto counterOf = [&](const m2n::CounterRef &counter) {
    return reinterpret_cast<uint64_t>(state.counters.at(counter.rank) +
                                      counter.index);
  };

  std::vector<CUtensorMap> maps(program.maps.size());
  for (size_t m = 0; m < program.maps.size(); ++m) {
    const TensorMapSpec &spec = program.maps[m];
    const ElementType type = program.typeOf(spec.buffer);
    TensorMapGeometry g;
    if (std::optional<std::string> wrong =
            tensorMapGeometry(spec, elementSize(type), g))
      return fail(M2N_INVALID_ARGUMENT, "binding " + state.name +
                                            ": tensor map " +
                                            std::to_string(m) + " " + *wrong);
    cuuint64_t dims[TensorMapGeometry::kMaxRank],
        strides[TensorMapGeometry::kMaxRank - 1];
    cuuint32_t box[TensorMapGeometry::kMaxRank],
        elementStrides[TensorMapGeometry::kMaxRank];
    for (int d = 0; d < g.rank; ++d) {
      dims[d] = g.dims[d];
      box[d] = g.box[d];
      elementStrides[d] = 1;
      if (d > 0)
        strides[d - 1] = g.strides[d - 1];
    }
    // Tensor maps need 16-byte aligned addresses: the program has tiles
    // only over scratch (cudaMalloc'd) and buffers checkBuffers found as
    // aligned as it assumes (16 bytes, where it has TMA items).
    M2N_CU(driver.tensorMapEncodeTiled(
        &maps[m], mapType(type), g.rank, addressOf(spec.buffer), dims,
        strides, box, elementStrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
        CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  }
  // Each local rank's walker records and templates as uploaded
  // (mergeLaunches).
  std::map<int64_t, EncodedTable> encoded;
  for (const auto &[rank, rankProgram] : program.ranks) {
    if (!context->isLocal(rank))
      continue;
    const int device = context->localDevices[context->slotOf.at(rank)];
    M2N_CUDA(cudaSetDevice(device));
    if (!maps.empty()) {
      if (!state.maps.count(device)) {
        CUtensorMap *deviceMaps = nullptr;
        M2N_CUDA(cudaMalloc(&deviceMaps, maps.size() * sizeof(CUtensorMap)));
        state.maps[device] = deviceMaps;
      }
      M2N_CUDA(cudaMemcpy(state.maps[device], maps.data(),
                          maps.size() * sizeof(CUtensorMap),
                          cudaMemcpyHostToDevice));
    }
    // The launch the compiler chose (m2n-choose-launch; a group's combined
    // from its members' by mergePrograms), within the loaded kernel's block.
    if (!rankProgram.launch)
      return fail(M2N_INTERNAL_ERROR,
                  "rank " + std::to_string(rank) + "'s program has no launch");
    const m2n::Artifact &artifact = context->artifact->artifact;
    state.shapes[rank] = m2n::launchShape(artifact.kernel, *rankProgram.launch,
                                          context->maxThreads);
    // One template per repeated movement, walked by the kernel: the table
    // grows with the movements, not with the instances.
    m2n::KernelTable table;
    uint32_t launchedCtas = 0;
    m2n::ItemAddresses addresses;
    addresses.buffer = [&](const m2n::BufferRef &ref) {
      return reinterpret_cast<uint64_t>(addressOf(ref));
    };
    addresses.counter = counterOf;
    addresses.tensorMap = [&](int64_t map) {
      return reinterpret_cast<uint64_t>(state.maps[device] + map);
    };
    try {
      for (const m2n::Movement &m : rankProgram.items)
        if (std::optional<std::string> wrong =
                m2n::encodeTemplates(m, program, addresses, table.templates))
          return fail(M2N_UNSUPPORTED, "binding " + state.name + ": rank " +
                                           std::to_string(rank) + ": " +
                                           *wrong);
      launchedCtas = m2n::walkRankTable(table, artifact.kernel.ctas,
                                        state.shapes[rank].walkers);
    } catch (const std::bad_alloc &) {
      return fail(M2N_OUT_OF_MEMORY,
                  "binding " + state.name +
                      ": not enough host memory for the kernel table of rank " +
                      std::to_string(rank));
    }
    ReshardState::DeviceTable &uploaded = state.tables[rank];
    const uint64_t templateBytes =
        table.templates.size() * sizeof(m2n::KernelTemplate);
    const uint64_t walkerBytes =
        table.walkers.size() * sizeof(m2n::KernelWalker);
    const uint64_t bytes = std::max<uint64_t>(table.bytes(), 16);
    if (uploaded.capacity < bytes) {
      if (uploaded.device)
        M2N_CUDA(cudaFree(uploaded.device));
      uploaded.device = nullptr;
      uploaded.capacity = 0;
      M2N_CUDA(cudaMalloc(&uploaded.device, bytes));
      uploaded.capacity = bytes;
    }
    uploaded.walkersAt = templateBytes;
    uploaded.visitsAt = templateBytes + walkerBytes;
    uploaded.items = table.items;
    uploaded.ctas = launchedCtas;
    m2n::placeWalkers(table, reinterpret_cast<uint64_t>(uploaded.device),
                      reinterpret_cast<uint64_t>(
                          state.ownCounters.at(rank) +
                          counterWords(program, rank) - 2));
    encoded[rank] = {table.walkers, table.templates};
    M2N_CUDA(cudaMemcpy(uploaded.device, table.templates.data(), templateBytes,
                        cudaMemcpyHostToDevice));
    M2N_CUDA(cudaMemcpy(uploaded.device + uploaded.walkersAt,
                        table.walkers.data(), walkerBytes,
                        cudaMemcpyHostToDevice));
    M2N_CUDA(cudaMemcpy(uploaded.device + uploaded.visitsAt,
                        table.visits.data(),
                        table.visits.size() * sizeof(m2n::KernelVisit),
                        cudaMemcpyHostToDevice));
    std::vector<std::array<uint64_t, 3>> &copies = state.engineCopies[rank];
    copies.clear();
    for (const m2n::Movement &m : rankProgram.engineCopies)
      copies.push_back(
          {reinterpret_cast<uint64_t>(addressOf(m.dst) + m.dstOffset),
           reinterpret_cast<uint64_t>(addressOf(m.src) + m.srcOffset),
           static_cast<uint64_t>(m.bytes)});
  }
  return mergeLaunches(context, state, encoded);
}

} // namespace m2n::runtime
