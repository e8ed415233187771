// The transfer kernel's engine on one GPU: items/s and bytes/s of copies and
// reductions as functions of CTAs, walkers (issuing warps per CTA), stages
// and item size, for one or more builds of the kernel in the same run (the
// "before" and "after" of a kernel change).
//
//   engine_bench --kernel NAME=PTX[:walkers][:vector] [--kernel ...] [--csv FILE]
//                [--sweep all|quick] [--bytes MIB]
//
// Every case moves --bytes (default 256 MiB) of device memory on GPU 0 as
// hand-built items (contiguous, item-sized, no dependencies: one repeated
// template, as the compiler's movements are) and is checked
// once with fresh values against a reference computed on the GPU (copies
// bit for bit; reductions as the kernel rounds: f32 adds, bf16 through f32
// rounded once). It is then timed with CUDA events around N back-to-back
// launches (N sized for ~3 ms), 7 repetitions: median, min and max per
// launch. The same method times the references: the copy engine
// (cudaMemcpyAsync) and, at each CTA count of the 64 KiB rows, a plain SM
// kernel for the same bytes (int4 loads and stores, 1024 threads, 4 loads
// in flight per thread: copy, f32 add, bf16 add through f32), checked the
// same way (kernel "plain" in the CSV).
//
// A case is a kernel, an op (bulk copy, bulk add.f32, bulk add.bf16, vector
// copy, vector add.f32, vector add.bf16), an item size, CTAs, walkers and
// stages. Walkers W > 1 launch blocks of (32, W): W warps, each walking its
// own share with its own stages (a kernel built before walkers existed
// ignores the second dimension, so those cases are run on newer kernels
// only: --kernel NAME=PTX:walkers marks a kernel that has them). A build
// with vector ops (:vector, kernel-ops=all) runs the SM-path cases: vector
// items on 128 threads against the bulk ops for the same bytes.
#include "CudaCheck.h"
#include "m2n/Artifact/KernelTable.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct KernelBuild {
  std::string name;
  bool walkers = false; // Blocks of (32, W) are W walkers.
  bool vector = false;  // Has the SM path; runs the SM-path cases only.
  int maxDynamicShared = 0;
  CUmodule module;
  CUfunction function;
};

enum class Op { BulkCopy, BulkAddF32, BulkAddBF16, VectorCopy, VectorAddF32, VectorAddBF16 };

const char *opName(Op op) {
  switch (op) {
  case Op::BulkCopy: return "bulk copy";
  case Op::BulkAddF32: return "bulk add.f32";
  case Op::BulkAddBF16: return "bulk add.bf16";
  case Op::VectorCopy: return "vector copy";
  case Op::VectorAddF32: return "vector add.f32";
  case Op::VectorAddBF16: return "vector add.bf16";
  }
  return "?";
}
bool isVector(Op op) { return op >= Op::VectorCopy; }
bool isBF16(Op op) { return op == Op::BulkAddBF16 || op == Op::VectorAddBF16; }
bool isReduction(Op op) { return op != Op::BulkCopy && op != Op::VectorCopy; }

uint32_t kernelOpCode(Op op) {
  switch (op) {
  case Op::BulkCopy: return static_cast<uint32_t>(m2n::BulkOp::Copy);
  case Op::BulkAddF32: return static_cast<uint32_t>(m2n::BulkOp::AddF32);
  case Op::BulkAddBF16: return static_cast<uint32_t>(m2n::BulkOp::AddBF16);
  case Op::VectorCopy: return m2n::vectorOp(std::nullopt, m2n::ElementType::I8);
  case Op::VectorAddF32: return m2n::vectorOp(m2n::Reduction::Sum, m2n::ElementType::F32);
  case Op::VectorAddBF16: return m2n::vectorOp(m2n::Reduction::Sum, m2n::ElementType::BF16);
  }
  return 0;
}

// The plain SM kernels: what a CTA moves without TMA, the limit issue 35
// holds the engine to. Each thread keeps 4 16-byte loads in flight.
constexpr int kPlainThreads = 1024, kPlainUnroll = 4;

__device__ uint4 addWords(uint4 acc, uint4 x, bool bf16) {
  uint32_t *a = reinterpret_cast<uint32_t *>(&acc);
  const uint32_t *b = reinterpret_cast<const uint32_t *>(&x);
  for (int w = 0; w < 4; ++w) {
    if (!bf16) {
      a[w] = __float_as_uint(__fadd_rn(__uint_as_float(a[w]), __uint_as_float(b[w])));
    } else {
      __nv_bfloat162 p = *reinterpret_cast<__nv_bfloat162 *>(&a[w]);
      __nv_bfloat162 q = *reinterpret_cast<const __nv_bfloat162 *>(&b[w]);
      __nv_bfloat162 sum = __floats2bfloat162_rn(
          __bfloat162float(p.x) + __bfloat162float(q.x),
          __bfloat162float(p.y) + __bfloat162float(q.y));
      a[w] = *reinterpret_cast<uint32_t *>(&sum);
    }
  }
  return acc;
}

/// mode 0: dst = src; 1: dst += src (f32); 2: dst += src (bf16 pairs).
__global__ void __launch_bounds__(kPlainThreads)
    plainKernel(uint4 *dst, const uint4 *src, size_t count, int mode) {
  const size_t stride = (size_t)gridDim.x * blockDim.x;
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  for (; i + (kPlainUnroll - 1) * stride < count; i += kPlainUnroll * stride) {
    uint4 x[kPlainUnroll], d[kPlainUnroll];
#pragma unroll
    for (int u = 0; u < kPlainUnroll; ++u) {
      x[u] = src[i + u * stride];
      if (mode)
        d[u] = dst[i + u * stride];
    }
#pragma unroll
    for (int u = 0; u < kPlainUnroll; ++u)
      dst[i + u * stride] = mode ? addWords(d[u], x[u], mode == 2) : x[u];
  }
  for (; i < count; i += stride)
    dst[i] = mode ? addWords(dst[i], src[i], mode == 2) : src[i];
}

struct Case {
  int kernel; // Index into the builds.
  Op op;
  uint32_t itemBytes;
  int ctas, walkers, stages;
};

// Fresh values: small floats (sums stay exact enough and never overflow).
__global__ void fill(uint32_t *words, size_t count, uint32_t seed, bool bf16) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t h = (uint32_t)i * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    float a = (float)(h & 1023) / 64.0f - 8.0f;
    if (!bf16) {
      words[i] = __float_as_uint(a);
    } else {
      float b = (float)((h >> 10) & 1023) / 64.0f - 8.0f;
      __nv_bfloat162 pair = __floats2bfloat162_rn(a, b);
      words[i] = *reinterpret_cast<uint32_t *>(&pair);
    }
  }
}

// Counts the words of `got` that differ from the reference: `src` (copies),
// `before + src` (reductions; f32, or bf16 pairs through f32 rounded once).
__global__ void check(const uint32_t *got, const uint32_t *src,
                      const uint32_t *before, size_t count, int mode,
                      unsigned long long *wrong) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count;
       i += (size_t)gridDim.x * blockDim.x) {
    uint32_t expected = src[i];
    if (mode == 1) {
      expected = __float_as_uint(__fadd_rn(__uint_as_float(before[i]),
                                           __uint_as_float(src[i])));
    } else if (mode == 2) {
      __nv_bfloat162 x = *reinterpret_cast<const __nv_bfloat162 *>(&before[i]);
      __nv_bfloat162 y = *reinterpret_cast<const __nv_bfloat162 *>(&src[i]);
      __nv_bfloat162 sum = __floats2bfloat162_rn(
          __bfloat162float(x.x) + __bfloat162float(y.x),
          __bfloat162float(x.y) + __bfloat162float(y.y));
      expected = *reinterpret_cast<uint32_t *>(&sum);
    }
    if (got[i] != expected)
      atomicAdd(wrong, 1ull);
  }
}

uint64_t *errorRecord; // Host-mapped u64[4].

struct Buffers {
  char *src = nullptr, *dst = nullptr, *before = nullptr;
  size_t bytes = 0;
  char *table = nullptr; // Templates, walkers, visits (KernelTable.h).
  size_t tableCapacity = 0;
  uint64_t walkersAt = 0, visitsAt = 0;
  uint64_t *epochWords = nullptr;
  unsigned long long *wrong = nullptr;
};

struct Timing {
  double medianUs, minUs, maxUs;
  int launches;
};

/// One checked launch: fresh sources and destinations, `launch`, then the
/// reference (copies bit for bit, reductions as the kernels round); the
/// number of words that differ.
template <typename Launch>
unsigned long long checkedLaunch(Buffers &buffers, Op op, size_t bytes, cudaStream_t stream,
                                 Launch launch) {
  static uint32_t seed = 12345;
  const size_t words = bytes / 4;
  fill<<<264, 512, 0, stream>>>(reinterpret_cast<uint32_t *>(buffers.src), words, ++seed, isBF16(op));
  fill<<<264, 512, 0, stream>>>(reinterpret_cast<uint32_t *>(buffers.dst), words, ++seed, isBF16(op));
  CUDA_CHECK(cudaMemcpyAsync(buffers.before, buffers.dst, bytes, cudaMemcpyDeviceToDevice, stream));
  CUDA_CHECK(cudaMemsetAsync(buffers.wrong, 0, sizeof(unsigned long long), stream));
  launch();
  const int mode = !isReduction(op) ? 0 : isBF16(op) ? 2 : 1;
  check<<<264, 512, 0, stream>>>(reinterpret_cast<uint32_t *>(buffers.dst),
                                reinterpret_cast<uint32_t *>(buffers.src),
                                reinterpret_cast<uint32_t *>(buffers.before), words, mode,
                                buffers.wrong);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  unsigned long long wrong = 0;
  CUDA_CHECK(cudaMemcpy(&wrong, buffers.wrong, sizeof(wrong), cudaMemcpyDeviceToHost));
  return wrong;
}

template <typename Launch>
Timing timeBackToBack(cudaStream_t stream, Launch launch) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  // Warm-up, then the launch count for ~3 ms of back-to-back launches.
  launch();
  CUDA_CHECK(cudaEventRecord(start, stream));
  launch();
  CUDA_CHECK(cudaEventRecord(stop, stream));
  CUDA_CHECK(cudaEventSynchronize(stop));
  float one = 0;
  CUDA_CHECK(cudaEventElapsedTime(&one, start, stop));
  int n = std::clamp(static_cast<int>(3.0 / std::max(one, 1e-3f)), 3, 500);
  std::vector<double> perLaunch;
  for (int rep = 0; rep < 7; ++rep) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < n; ++i)
      launch();
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    perLaunch.push_back(ms * 1e3 / n);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(perLaunch.begin(), perLaunch.end());
  return {perLaunch[perLaunch.size() / 2], perLaunch.front(), perLaunch.back(), n};
}

void launchKernel(const KernelBuild &k, const Case &c, Buffers &buffers,
                  cudaStream_t stream) {
  void *errorDevice = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(&errorDevice, errorRecord, 0));
  uint64_t timeout = 2000000000ull;
  uint64_t stageBytes = (c.itemBytes + 127) / 128 * 128, stages = c.stages;
  char *walkers = buffers.table + buffers.walkersAt;
  void *args[] = {&walkers, &errorDevice, &timeout, &stageBytes, &stages};
  unsigned threads = isVector(c.op) ? 128 : 32;
  CU_CHECK(cuLaunchKernel(k.function, c.ctas, 1, 1, threads, c.walkers, 1,
                          static_cast<unsigned>(stageBytes * stages * c.walkers),
                          stream, args, nullptr));
}

/// Whether the case can run: its stages fit shared memory and the build's
/// barriers (8 before walkers existed), vector items run with one walker.
bool fits(const Case &c, const KernelBuild &k) {
  uint64_t stageBytes = (c.itemBytes + 127) / 128 * 128;
  int barriers = k.walkers ? static_cast<int>(m2n::kMaxKernelBarriers) : 8;
  return c.walkers * c.stages <= barriers && (k.walkers || c.walkers == 1) &&
         stageBytes * c.stages * c.walkers <= static_cast<uint64_t>(k.maxDynamicShared) &&
         (c.walkers == 1 || !isVector(c.op));
}

} // namespace

int main(int argc, char **argv) {
  std::vector<KernelBuild> builds;
  std::string csvPath, sweep = "all";
  size_t totalBytes = 256ull << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--kernel") {
      KernelBuild k;
      size_t eq = value.find('=');
      if (eq == std::string::npos) {
        std::printf("engine_bench: --kernel takes NAME=PTX[:walkers]\n");
        return 2;
      }
      k.name = value.substr(0, eq);
      std::string path = value.substr(eq + 1);
      // Marks after the path: ":walkers" (the build has walkers), ":vector"
      // (a build with the SM path: only the SM-path cases run on it).
      for (const char *mark : {":vector", ":walkers", ":vector"}) {
        size_t n = std::strlen(mark);
        if (path.size() > n && path.compare(path.size() - n, n, mark) == 0) {
          (std::strcmp(mark, ":walkers") ? k.vector : k.walkers) = true;
          path.resize(path.size() - n);
        }
      }
      std::ifstream in(path);
      std::stringstream text;
      text << in.rdbuf();
      if (text.str().empty()) {
        std::printf("engine_bench: cannot read %s\n", path.c_str());
        return 2;
      }
      if (builds.empty()) {
        CUDA_CHECK(cudaSetDevice(0));
        CUDA_CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
        CUDA_CHECK(cudaFree(nullptr));
      }
      CU_CHECK(cuModuleLoadData(&k.module, text.str().c_str()));
      CU_CHECK(cuModuleGetFunction(&k.function, k.module, "m2n_transfer"));
      // Dynamic shared memory: the device's opt-in maximum less the
      // kernel's static part (its barriers).
      int optin = 0, fixed = 0;
      CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
      CU_CHECK(cuFuncGetAttribute(&fixed, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, k.function));
      k.maxDynamicShared = optin - fixed;
      CU_CHECK(cuFuncSetAttribute(k.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                  k.maxDynamicShared));
      builds.push_back(k);
    } else if (flag == "--csv") {
      csvPath = value;
    } else if (flag == "--sweep") {
      sweep = value;
    } else if (flag == "--bytes") {
      totalBytes = std::stoull(value) << 20;
    } else {
      std::printf("engine_bench: unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  if (builds.empty()) {
    std::printf("usage: %s --kernel NAME=PTX[:walkers] ... [--csv FILE] [--sweep all|quick] [--bytes MIB]\n", argv[0]);
    return 2;
  }
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device 0: %s, %d SMs; %zu MiB per case; CUDA events around back-to-back launches, 7 repetitions\n",
              prop.name, prop.multiProcessorCount, totalBytes >> 20);
  CUDA_CHECK(cudaHostAlloc((void **)&errorRecord, 4 * sizeof(uint64_t), cudaHostAllocMapped));
  std::memset(errorRecord, 0, 4 * sizeof(uint64_t));

  Buffers buffers;
  buffers.bytes = totalBytes;
  CUDA_CHECK(cudaMalloc(&buffers.src, totalBytes));
  CUDA_CHECK(cudaMalloc(&buffers.dst, totalBytes));
  CUDA_CHECK(cudaMalloc(&buffers.before, totalBytes));
  CUDA_CHECK(cudaMalloc(&buffers.epochWords, 2 * sizeof(uint64_t)));
  CUDA_CHECK(cudaMalloc(&buffers.wrong, sizeof(unsigned long long)));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  // The cases.
  std::vector<Case> cases;
  const bool quick = sweep == "quick";
  const std::vector<int> ctaCounts = quick ? std::vector<int>{1, 16} : std::vector<int>{1, 2, 4, 8, 16, 32, 64};
  for (int k = 0; k < (int)builds.size(); ++k) {
    const bool walkers = builds[k].walkers;
    if (builds[k].vector) {
      // The SM path (all 128 threads) against TMA for the same bytes.
      for (Op op : {Op::VectorCopy, Op::VectorAddF32, Op::VectorAddBF16, Op::BulkCopy,
                    Op::BulkAddF32, Op::BulkAddBF16})
        for (uint32_t item : {512u, 4096u, 65536u})
          for (int ctas : {4, 16, 32})
            cases.push_back({k, op, item, ctas, 1, 3});
      continue;
    }
    // CTAs, at the compiler's default items (64 KiB, 3 stages, one walker).
    for (Op op : {Op::BulkCopy, Op::BulkAddF32, Op::BulkAddBF16})
      for (int ctas : ctaCounts)
        cases.push_back({k, op, 65536, ctas, 1, 3});
    // Item size and stages (issue rate: small items), one walker.
    for (uint32_t item : {128u, 512u, 2048u, 8192u, 16384u, 32768u, 65536u})
      for (int ctas : {1, 16})
        for (int stages : {2, 3, 4, 8, 16, 32})
          cases.push_back({k, Op::BulkCopy, item, ctas, 1, stages});
    // Walkers per CTA.
    if (walkers)
      for (Op op : {Op::BulkCopy, Op::BulkAddF32, Op::BulkAddBF16})
        for (uint32_t item : {2048u, 8192u, 16384u, 32768u})
          for (int ctas : op == Op::BulkCopy ? std::vector<int>{1, 4, 16, 32} : std::vector<int>{4, 16})
            for (int w : {1, 2, 4, 8})
              for (int stages : {2, 3, 4, 8}) {
                Case c{k, op, item, ctas, w, stages};
                if (fits(c, builds[k]))
                  cases.push_back(c);
              }
  }

  FILE *csv = csvPath.empty() ? nullptr : std::fopen(csvPath.c_str(), "w");
  if (csv)
    std::fprintf(csv, "kernel,op,item_bytes,items,ctas,walkers,stages,bytes,launches,us_median,us_min,us_max,mitems_per_s,gb_per_s,check\n");
  std::printf("%-8s %-16s %8s %9s %5s %3s %3s %10s %10s %10s %9s  %s\n", "kernel", "op",
              "item B", "items", "CTAs", "W", "S", "us", "Mitems/s", "GB/s", "spread", "check");
  int failures = 0;
  for (const Case &c : cases) {
    const KernelBuild &k = builds[c.kernel];
    if (!fits(c, k))
      continue;
    // Items: contiguous runs of itemBytes; at most 8192 per walker, so that
    // a launch of tiny items on one CTA stays in milliseconds.
    uint64_t count = std::min<uint64_t>(
        {totalBytes / c.itemBytes, 8192ull * c.ctas * c.walkers, 1ull << 20});
    uint64_t bytes = count * c.itemBytes;
    m2n::KernelTable table;
    table.templates.resize(1);
    Item &it = table.templates[0].item;
    it.src = reinterpret_cast<uint64_t>(buffers.src);
    it.dst = reinterpret_cast<uint64_t>(buffers.dst);
    it.bytes = c.itemBytes;
    it.op = kernelOpCode(c.op);
    it.kind = static_cast<uint32_t>(isVector(c.op) ? m2n::Mechanism::Vector
                                                   : m2n::Mechanism::Bulk);
    m2n::KernelLevel &level = table.templates[0].outer;
    level.count = static_cast<uint32_t>(count);
    level.srcStride = level.dstStride = c.itemBytes;
    m2n::walkTemplates(table, static_cast<uint64_t>(c.ctas) * c.walkers);
    if (table.bytes() > buffers.tableCapacity) {
      if (buffers.table)
        CUDA_CHECK(cudaFree(buffers.table));
      CUDA_CHECK(cudaMalloc(&buffers.table, table.bytes()));
      buffers.tableCapacity = table.bytes();
    }
    m2n::placeWalkers(table, reinterpret_cast<uint64_t>(buffers.table),
                      reinterpret_cast<uint64_t>(buffers.epochWords));
    buffers.walkersAt = sizeof(m2n::KernelTemplate);
    buffers.visitsAt = buffers.walkersAt + table.walkers.size() * sizeof(m2n::KernelWalker);
    CUDA_CHECK(cudaMemcpy(buffers.table, table.templates.data(), sizeof(m2n::KernelTemplate),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(buffers.table + buffers.walkersAt, table.walkers.data(),
                          table.walkers.size() * sizeof(m2n::KernelWalker), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(buffers.table + buffers.visitsAt, table.visits.data(),
                          table.visits.size() * sizeof(m2n::KernelVisit), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(buffers.epochWords, 0, 2 * sizeof(uint64_t)));

    // Check: fresh sources and destinations, one launch, the reference.
    const unsigned long long wrong =
        checkedLaunch(buffers, c.op, bytes, stream, [&] { launchKernel(k, c, buffers, stream); });
    bool ok = wrong == 0 && errorRecord[0] == 0;
    failures += !ok;

    // Reductions keep adding the (small) sources: values stay finite.
    Timing t = timeBackToBack(stream, [&] { launchKernel(k, c, buffers, stream); });
    double mitems = count / t.medianUs;
    double gbps = bytes / (t.medianUs * 1e3);
    char check[64];
    std::snprintf(check, sizeof(check), ok ? "PASS" : "FAIL (%llu words)", wrong);
    std::printf("%-8s %-16s %8u %9llu %5d %3d %3d %10.1f %10.2f %10.1f %8.1f%%  %s\n", k.name.c_str(),
                opName(c.op), c.itemBytes, (unsigned long long)count, c.ctas, c.walkers, c.stages,
                t.medianUs, mitems, gbps, 100.0 * (t.maxUs - t.minUs) / t.medianUs, check);
    if (csv)
      std::fprintf(csv, "%s,%s,%u,%llu,%d,%d,%d,%llu,%d,%.3f,%.3f,%.3f,%.4f,%.2f,%s\n", k.name.c_str(),
                   opName(c.op), c.itemBytes, (unsigned long long)count, c.ctas, c.walkers, c.stages,
                   (unsigned long long)bytes, t.launches, t.medianUs, t.minUs, t.maxUs, mitems, gbps,
                   ok ? "PASS" : "FAIL");
  }
  // The plain SM kernels at the CTA counts of the 64 KiB rows, checked and
  // timed as the cases are.
  std::vector<int> plainCtas;
  for (const Case &c : cases)
    if (c.itemBytes == 65536 && c.walkers == 1 && c.stages == 3 && !isVector(c.op) &&
        std::find(plainCtas.begin(), plainCtas.end(), c.ctas) == plainCtas.end())
      plainCtas.push_back(c.ctas);
  for (Op op : {Op::BulkCopy, Op::BulkAddF32, Op::BulkAddBF16})
    for (int ctas : plainCtas) {
      const size_t bytes = totalBytes;
      const int mode = !isReduction(op) ? 0 : isBF16(op) ? 2 : 1;
      auto run = [&] {
        plainKernel<<<ctas, kPlainThreads, 0, stream>>>(reinterpret_cast<uint4 *>(buffers.dst),
                                                        reinterpret_cast<const uint4 *>(buffers.src),
                                                        bytes / 16, mode);
      };
      const unsigned long long wrong = checkedLaunch(buffers, op, bytes, stream, run);
      failures += wrong != 0;
      Timing t = timeBackToBack(stream, run);
      const double gbps = bytes / (t.medianUs * 1e3);
      std::printf("%-8s %-16s %8s %9s %5d %3s %3s %10.1f %10s %10.1f %8.1f%%  %s\n", "plain", opName(op), "-",
                  "-", ctas, "-", "-", t.medianUs, "-", gbps, 100.0 * (t.maxUs - t.minUs) / t.medianUs,
                  wrong ? "FAIL" : "PASS");
      if (csv)
        std::fprintf(csv, "plain,%s,0,0,%d,0,0,%zu,%d,%.3f,%.3f,%.3f,0,%.2f,%s\n", opName(op), ctas, bytes,
                     t.launches, t.medianUs, t.minUs, t.maxUs, gbps, wrong ? "FAIL" : "PASS");
    }
  // The copy engine, timed the same way, for the copy rows.
  for (size_t bytes : {totalBytes}) {
    Timing t = timeBackToBack(stream, [&] {
      CUDA_CHECK(cudaMemcpyAsync(buffers.dst, buffers.src, bytes, cudaMemcpyDeviceToDevice, stream));
    });
    std::printf("%-8s %-16s %8s %9s %5s %3s %3s %10.1f %10s %10.1f %8.1f%%\n", "ref", "copy engine", "-", "-",
                "-", "-", "-", t.medianUs, "-", bytes / (t.medianUs * 1e3),
                100.0 * (t.maxUs - t.minUs) / t.medianUs);
    if (csv)
      std::fprintf(csv, "ref,copy engine,0,0,0,0,0,%zu,%d,%.3f,%.3f,%.3f,0,%.2f,PASS\n", bytes, t.launches,
                   t.medianUs, t.minUs, t.maxUs, bytes / (t.medianUs * 1e3));
  }
  if (csv)
    std::fclose(csv);
  std::printf("%d case(s) failed their check\n", failures);
  return failures ? 1 : 0;
}
