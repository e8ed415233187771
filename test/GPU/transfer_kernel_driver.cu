// Runs the generated m2n transfer kernel (PTX from m2n's pipeline) on real
// GPUs with hand-built item tables, and checks the results: a local strided
// copy, large local and cross-GPU copies (timed against the copy engine),
// cross-GPU bulk reductions (f32, bf16), a cross-CTA dependency through a
// flag, vector items (the SM path: unaligned copies, f32 max, bf16 and i8
// sums, 1 to 1e6 bytes at odd offsets) and the timeout of a wait that is
// never satisfied. The PTX is the kernel with every op (kernel-ops=all).
//
//   transfer_kernel_driver PTX_FILE [all|timeout]
//
// This is the issue-5 driver: the runtime (runtime/) will replace the
// hand-built tables with the compiler's, resolved over user buffers.
#include "CudaCheck.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>



enum Op : uint32_t { Copy = 0, AddF32 = 1, AddBF16 = 3 };

struct Kernel {
  CUmodule module;
  CUfunction function;
};

static Kernel loadKernel(const std::string &ptx) {
  Kernel k;
  CU_CHECK(cuModuleLoadData(&k.module, ptx.c_str()));
  CU_CHECK(cuModuleGetFunction(&k.function, k.module, "m2n_transfer"));
  CU_CHECK(cuFuncSetAttribute(k.function,
                              CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                              200 * 1024));
  return k;
}

static uint64_t *errorRecord; // Host-mapped u64[4].

/// A launch's table on the device (m2n/Artifact/KernelTable.h), kept
/// between launches of one case.
struct DeviceTable {
  char *device = nullptr;
  size_t capacity = 0;
};

/// Launches hand-built `items` (one template each, no repeats) on `ctas`
/// walkers of 128 threads.
static void launch(const Kernel &k, const std::vector<Item> &items, int ctas,
                   uint64_t stageBytes, uint64_t stages, cudaStream_t stream,
                   DeviceTable *table, uint64_t timeout = 2000000000ull) {
  m2n::KernelTable host = m2n::plainTable(items, ctas);
  if (table->capacity < host.bytes()) {
    if (table->device)
      CUDA_CHECK(cudaFree(table->device));
    CUDA_CHECK(cudaMalloc(&table->device, host.bytes()));
    table->capacity = host.bytes();
  }
  // Fresh counters every launch here: the epoch words start at zero.
  static uint64_t *epochWords = nullptr;
  if (!epochWords)
    CUDA_CHECK(cudaMalloc(&epochWords, 2 * sizeof(uint64_t)));
  m2n::placeWalkers(host, reinterpret_cast<uint64_t>(table->device),
                    reinterpret_cast<uint64_t>(epochWords));
  char *templates = table->device;
  char *walkers = templates + host.templates.size() * sizeof(m2n::KernelTemplate);
  char *visits = walkers + host.walkers.size() * sizeof(m2n::KernelWalker);
  CUDA_CHECK(cudaMemcpyAsync(templates, host.templates.data(),
                             host.templates.size() * sizeof(m2n::KernelTemplate),
                             cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(walkers, host.walkers.data(),
                             host.walkers.size() * sizeof(m2n::KernelWalker),
                             cudaMemcpyHostToDevice, stream));
  CUDA_CHECK(cudaMemcpyAsync(visits, host.visits.data(),
                             host.visits.size() * sizeof(m2n::KernelVisit),
                             cudaMemcpyHostToDevice, stream));
  void *errorDevice = nullptr;
  CUDA_CHECK(cudaHostGetDevicePointer(&errorDevice, errorRecord, 0));
  CUDA_CHECK(cudaMemsetAsync(epochWords, 0, 2 * sizeof(uint64_t), stream));
  void *args[] = {&walkers, &errorDevice, &timeout, &stageBytes, &stages};
  CU_CHECK(cuLaunchKernel(k.function, ctas, 1, 1, 128, 1, 1,
                          (unsigned)(stageBytes * stages), stream, args,
                          nullptr));
}

static std::vector<Item> contiguousItems(const char *src, char *dst,
                                         size_t bytes, uint32_t chunk,
                                         uint32_t op = Copy) {
  std::vector<Item> items;
  for (size_t off = 0; off < bytes; off += chunk) {
    Item it{};
    it.src = (uint64_t)(src + off);
    it.dst = (uint64_t)(dst + off);
    it.bytes = (uint32_t)std::min<size_t>(chunk, bytes - off);
    it.op = op;
    items.push_back(it);
  }
  return items;
}

static float timeMs(cudaStream_t stream, const std::function<void()> &fn) {
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  fn();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<float> times;
  for (int r = 0; r < 7; ++r) {
    CUDA_CHECK(cudaEventRecord(a, stream));
    fn();
    CUDA_CHECK(cudaEventRecord(b, stream));
    CUDA_CHECK(cudaEventSynchronize(b));
    float ms;
    CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return times[3];
}

static int failures = 0, passes = 0;
static void verdict(const char *name, bool ok, const std::string &detail) {
  std::printf("%-44s %s  %s\n", name, ok ? "PASS" : "FAIL", detail.c_str());
  failures += !ok;
  passes += ok;
}

static uint16_t toBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
static float fromBf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::printf("usage: %s PTX_FILE [all|timeout]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream text;
  text << in.rdbuf();
  std::string mode = argc > 2 ? argv[2] : "all";

  int devices = 0;
  CUDA_CHECK(cudaGetDeviceCount(&devices));
  CUDA_CHECK(cudaSetDevice(0));
  CUDA_CHECK(cudaFree(nullptr)); // Create the primary context.
  CUDA_CHECK(cudaSetDeviceFlags(cudaDeviceMapHost));
  CUDA_CHECK(cudaHostAlloc((void **)&errorRecord, 4 * sizeof(uint64_t),
                           cudaHostAllocMapped));
  std::memset(errorRecord, 0, 4 * sizeof(uint64_t));
  Kernel kernel = loadKernel(text.str());
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device 0: %s, %d SMs; %d device(s)\n", prop.name,
              prop.multiProcessorCount, devices);

  if (mode == "timeout") {
    // One item waits for a counter nobody increments: the kernel must stop
    // with the error record filled in, not hang.
    uint64_t *counter;
    CUDA_CHECK(cudaMalloc(&counter, 8));
    CUDA_CHECK(cudaMemset(counter, 0, 8));
    char *a, *b;
    CUDA_CHECK(cudaMalloc(&a, 4096));
    CUDA_CHECK(cudaMalloc(&b, 4096));
    std::vector<Item> items = contiguousItems(a, b, 4096, 4096);
    items[0].wait0 = (uint64_t)counter;
    items[0].value0 = 1;
    DeviceTable dev;
    launch(kernel, items, 1, 4096, 2, stream, &dev, /*timeout=*/200000000ull);
    cudaError_t e = cudaStreamSynchronize(stream);
    bool ok = e != cudaSuccess && errorRecord[0] == 1 && errorRecord[1] == 0 &&
              errorRecord[2] == (uint64_t)counter && errorRecord[3] == 0;
    verdict("timeout: unsatisfied wait stops the kernel", ok,
            std::string(cudaGetErrorName(e)) + ", record {" +
                std::to_string(errorRecord[0]) + ", item " +
                std::to_string(errorRecord[1]) + ", seen " +
                std::to_string(errorRecord[3]) + "}");
    std::printf("%d passed, %d failed\n", passes, failures);
    return failures ? 1 : 0;
  }

  // 1. Local strided copy: rows [8, 40) x columns [256, 768) of a 64 x 1024
  //    f32 tensor into a dense 32 x 512 buffer, one item per row.
  {
    const int rows = 64, cols = 1024;
    std::vector<float> host(rows * cols);
    for (int i = 0; i < rows * cols; ++i)
      host[i] = (float)(i * 3 + 1);
    float *src, *dst;
    CUDA_CHECK(cudaMalloc(&src, host.size() * 4));
    CUDA_CHECK(cudaMalloc(&dst, 32 * 512 * 4));
    CUDA_CHECK(cudaMemcpy(src, host.data(), host.size() * 4,
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dst, 0xFF, 32 * 512 * 4)); // Poison (NaN).
    std::vector<Item> items;
    for (int r = 0; r < 32; ++r) {
      Item it{};
      it.src = (uint64_t)(src + (8 + r) * cols + 256);
      it.dst = (uint64_t)(dst + r * 512);
      it.bytes = 512 * 4;
      items.push_back(it);
    }
    DeviceTable dev;
    launch(kernel, items, 4, 2048, 4, stream, &dev);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<float> out(32 * 512);
    CUDA_CHECK(cudaMemcpy(out.data(), dst, out.size() * 4,
                          cudaMemcpyDeviceToHost));
    int bad = 0;
    for (int r = 0; r < 32; ++r)
      for (int c = 0; c < 512; ++c)
        bad += out[r * 512 + c] != host[(8 + r) * cols + 256 + c];
    verdict("local strided copy 32x512 box of 64x1024 f32", bad == 0,
            std::to_string(bad) + " mismatches");
  }

  // 1b. Vector items (kind 2): every thread of the CTA moves the bytes, with
  //     the widest vectors both addresses allow. Odd sizes and offsets that
  //     agree modulo 16, 8, 4 or only 1; copies and reductions TMA lacks.
  {
    const size_t bytes = 4 << 20;
    std::vector<uint8_t> a(bytes), b(bytes);
    uint32_t x = 12345;
    auto next = [&] { x = x * 1664525u + 1013904223u; return x; };
    for (size_t i = 0; i < bytes; ++i) {
      a[i] = (uint8_t)(next() >> 24);
      b[i] = (uint8_t)(next() >> 24);
    }
    // Finite floats: clear the exponent's top bit of every f32 and bf16.
    for (size_t i = 3; i < bytes; i += 4) {
      a[i] &= 0xBF;
      b[i] &= 0xBF;
    }
    for (size_t i = 1; i < bytes; i += 2) {
      a[i] &= 0xBF;
      b[i] &= 0xBF;
    }
    char *src, *dst;
    CUDA_CHECK(cudaMalloc(&src, bytes));
    CUDA_CHECK(cudaMalloc(&dst, bytes));
    struct Case { const char *name; uint32_t op; int esz; size_t srcOff, dstOff, n; };
    // Vector op codes: 0 copy, 1 + reduction (0 sum, 1 max, 2 min) + 3 * type
    // (i8 0, i16 1, i32 2, i64 3, f16 4, bf16 5, f32 6, f64 7).
    const Case cases[] = {
        {"vector copy 1 byte", 0, 1, 3, 5, 1},
        {"vector copy 17 bytes, offsets 1 / 2", 0, 1, 1, 2, 17},
        {"vector copy 1000003 bytes, offsets 5 / 5", 0, 1, 5, 5, 1000003},
        {"vector copy 65536 bytes, offsets 4 / 12", 0, 1, 4, 12, 65536},
        {"vector max.f32 1000 elements, offsets 4 / 8", 1 + 1 + 3 * 6, 4, 4, 8, 4000},
        {"vector min.f32 262144 elements, aligned", 1 + 2 + 3 * 6, 4, 0, 0, 1 << 20},
        {"vector add.bf16 3 elements", 1 + 0 + 3 * 5, 2, 2, 6, 6},
        {"vector add.bf16 500001 elements, offsets 2 / 2", 1 + 0 + 3 * 5, 2, 2, 2, 1000002},
        {"vector add.s8 777 bytes, offsets 1 / 3", 1 + 0 + 3 * 0, 1, 1, 3, 777},
        {"vector max.s16 4097 elements", 1 + 1 + 3 * 1, 2, 2, 4, 8194},
    };
    auto bf16ToFloat = [](uint16_t h) { return fromBf16(h); };
    for (const Case &c : cases) {
      CUDA_CHECK(cudaMemcpy(src, a.data(), bytes, cudaMemcpyHostToDevice));
      CUDA_CHECK(cudaMemcpy(dst, b.data(), bytes, cudaMemcpyHostToDevice));
      // Split into items of at most 64 KiB over 4 CTAs, offsets kept.
      std::vector<Item> items;
      for (size_t at = 0; at < c.n; at += 65536) {
        Item it{};
        it.kind = 2;
        it.op = c.op;
        it.src = (uint64_t)(src + c.srcOff + at);
        it.dst = (uint64_t)(dst + c.dstOff + at);
        it.bytes = (uint32_t)std::min<size_t>(65536, c.n - at);
        items.push_back(it);
      }
      DeviceTable dev;
      launch(kernel, items, 4, 65536, 3, stream, &dev);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      std::vector<uint8_t> out(bytes);
      CUDA_CHECK(cudaMemcpy(out.data(), dst, bytes, cudaMemcpyDeviceToHost));
      std::vector<uint8_t> want = b;
      for (size_t i = 0; i < c.n; i += c.esz) {
        const uint8_t *in = &a[c.srcOff + i];
        uint8_t *acc = &want[c.dstOff + i];
        if (c.op == 0) {
          *acc = *in;
        } else if (c.op == 1 + 1 + 3 * 6 || c.op == 1 + 2 + 3 * 6) {
          float p, q;
          std::memcpy(&p, acc, 4);
          std::memcpy(&q, in, 4);
          float r = c.op == 1 + 1 + 3 * 6 ? (p < q ? q : p) : (q < p ? q : p);
          std::memcpy(acc, &r, 4);
        } else if (c.op == 1 + 3 * 5) {
          uint16_t p, q;
          std::memcpy(&p, acc, 2);
          std::memcpy(&q, in, 2);
          uint16_t r = toBf16(bf16ToFloat(p) + bf16ToFloat(q));
          std::memcpy(acc, &r, 2);
        } else if (c.op == 1) {
          *acc = (uint8_t)(*acc + *in);
        } else {
          int16_t p, q;
          std::memcpy(&p, acc, 2);
          std::memcpy(&q, in, 2);
          int16_t r = p < q ? q : p;
          std::memcpy(acc, &r, 2);
        }
      }
      size_t bad = 0;
      for (size_t i = 0; i < bytes; ++i)
        bad += out[i] != want[i];
      verdict(c.name, bad == 0, std::to_string(bad) + " bytes differ (incl. outside the run)");
      CUDA_CHECK(cudaFree(dev.device));
    }
    CUDA_CHECK(cudaFree(src));
    CUDA_CHECK(cudaFree(dst));
  }

  // 2. Large local copy, then (with 2 GPUs) peer pull and push, timed against
  //    the copy engine.
  const size_t big = (size_t)1 << 30;
  const uint32_t chunk = 32768;
  const int ctas = 16;
  char *a0, *b0;
  CUDA_CHECK(cudaMalloc(&a0, big));
  CUDA_CHECK(cudaMalloc(&b0, big));
  {
    std::vector<uint32_t> pattern(big / 4 / 1024);
    for (size_t i = 0; i < pattern.size(); ++i)
      pattern[i] = (uint32_t)(i * 2654435761u);
    for (size_t off = 0; off < big; off += pattern.size() * 4)
      CUDA_CHECK(cudaMemcpy(a0 + off, pattern.data(), pattern.size() * 4,
                            cudaMemcpyHostToDevice));
  }
  // Compares three windows (start, middle, end) of two device buffers.
  auto checkEqual = [&](const char *x, const char *y, size_t bytes) {
    size_t window = std::min<size_t>(bytes, 1 << 20);
    std::vector<char> hx(window), hy(window);
    for (size_t off : {(size_t)0, (bytes - window) / 2, bytes - window}) {
      CUDA_CHECK(cudaMemcpy(hx.data(), x + off, window, cudaMemcpyDefault));
      CUDA_CHECK(cudaMemcpy(hy.data(), y + off, window, cudaMemcpyDefault));
      if (std::memcmp(hx.data(), hy.data(), window))
        return false;
    }
    return true;
  };
  {
    CUDA_CHECK(cudaMemset(b0, 0, big));
    std::vector<Item> items = contiguousItems(a0, b0, big, chunk);
    DeviceTable dev;
    float ms = timeMs(stream, [&] { launch(kernel, items, ctas, chunk, 4, stream, &dev); });
    float ce = timeMs(stream, [&] {
      CUDA_CHECK(cudaMemcpyAsync(b0, a0, big, cudaMemcpyDeviceToDevice, stream));
    });
    CUDA_CHECK(cudaMemset(b0, 0, big));
    launch(kernel, items, ctas, chunk, 4, stream, &dev);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    char detail[160];
    std::snprintf(detail, sizeof detail,
                  "1 GiB, %d CTAs: %.1f GB/s (copy engine %.1f GB/s)", ctas,
                  big / (ms * 1e-3) / 1e9, big / (ce * 1e-3) / 1e9);
    verdict("local contiguous copy", checkEqual(a0, b0, big), detail);
  }

  // 3. A dependency across CTAs: item 1 (CTA 1) copies what item 0 (CTA 0)
  //    wrote, after waiting for item 0's signal.
  {
    uint64_t *counter;
    CUDA_CHECK(cudaMalloc(&counter, 8));
    CUDA_CHECK(cudaMemset(counter, 0, 8));
    char *mid, *out;
    CUDA_CHECK(cudaMalloc(&mid, 1 << 20));
    CUDA_CHECK(cudaMalloc(&out, 1 << 20));
    CUDA_CHECK(cudaMemset(mid, 0, 1 << 20));
    CUDA_CHECK(cudaMemset(out, 0, 1 << 20));
    Item first{}, second{};
    first.src = (uint64_t)a0;
    first.dst = (uint64_t)mid;
    first.bytes = 1 << 15;
    first.signal = (uint64_t)counter;
    second.src = (uint64_t)mid;
    second.dst = (uint64_t)out;
    second.bytes = 1 << 15;
    second.wait0 = (uint64_t)counter;
    second.value0 = 1;
    DeviceTable dev;
    launch(kernel, {first, second}, 2, 1 << 15, 2, stream, &dev);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    uint64_t count = 0;
    CUDA_CHECK(cudaMemcpy(&count, counter, 8, cudaMemcpyDeviceToHost));
    verdict("cross-CTA dependency through a flag",
            checkEqual(a0, out, 1 << 15) && count == 1,
            "counter " + std::to_string(count));
  }

  // 3b. A dependency inside one CTA: the dependent item must not be loaded
  //     ahead of the item it waits for (it would wait forever).
  {
    uint64_t *counter;
    CUDA_CHECK(cudaMalloc(&counter, 8));
    CUDA_CHECK(cudaMemset(counter, 0, 8));
    char *mid, *out;
    CUDA_CHECK(cudaMalloc(&mid, 1 << 16));
    CUDA_CHECK(cudaMalloc(&out, 1 << 16));
    CUDA_CHECK(cudaMemset(out, 0, 1 << 16));
    std::vector<Item> items = contiguousItems(a0, mid, 1 << 16, 1 << 14);
    items.back().signal = (uint64_t)counter;
    Item dependent{};
    dependent.src = (uint64_t)mid;
    dependent.dst = (uint64_t)out;
    dependent.bytes = 1 << 14;
    dependent.wait0 = (uint64_t)counter;
    dependent.value0 = 1;
    // With 4 stages, item 4 would be loaded while item 1 is stored, before
    // item 3 (which it waits for) is: it has to be deferred.
    items.push_back(dependent);
    DeviceTable dev;
    launch(kernel, items, 1, 1 << 14, 4, stream, &dev, 2000000000ull);
    cudaError_t e = cudaStreamSynchronize(stream);
    verdict("dependency inside one CTA (no deadlock)",
            e == cudaSuccess && checkEqual(a0, out, 1 << 14),
            cudaGetErrorName(e));
  }

  // 3c. A zero-byte item (a gate that only signals) between loads: it takes
  //     a stage slot like any item, so the stage's barrier parity must still
  //     advance, or the later items on that stage store before their bytes
  //     arrive (the previous item's bytes instead).
  {
    uint64_t *counter;
    CUDA_CHECK(cudaMalloc(&counter, 8));
    CUDA_CHECK(cudaMemset(counter, 0, 8));
    char *out;
    const size_t bytes = 32 << 14;
    CUDA_CHECK(cudaMalloc(&out, bytes));
    CUDA_CHECK(cudaMemset(out, 0, bytes));
    uint64_t *readsDone;
    CUDA_CHECK(cudaMalloc(&readsDone, 8));
    CUDA_CHECK(cudaMemset(readsDone, 0, 8));
    std::vector<Item> copies = contiguousItems(a0, out, bytes, 1 << 14);
    for (Item &copy : copies) // As if a0 were a peer's: count the reads.
      copy.readDone = (uint64_t)readsDone;
    Item gate{};
    gate.signal = (uint64_t)counter;
    std::vector<Item> items = {copies[0], gate};
    items.insert(items.end(), copies.begin() + 1, copies.end());
    DeviceTable dev;
    launch(kernel, items, 1, 1 << 14, 2, stream, &dev);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    uint64_t count = 0, reads = 0;
    CUDA_CHECK(cudaMemcpy(&count, counter, 8, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&reads, readsDone, 8, cudaMemcpyDeviceToHost));
    verdict("zero-byte gate between loads, read-done",
            checkEqual(a0, out, bytes) && count == 1 && reads == copies.size(),
            "counter " + std::to_string(count) + ", reads done " + std::to_string(reads));
  }

  if (devices >= 2) {
    int can = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
    char *a1;
    CUDA_CHECK(cudaSetDevice(1));
    CUDA_CHECK(cudaMalloc(&a1, big));
    CUDA_CHECK(cudaDeviceEnablePeerAccess(0, 0));
    CUDA_CHECK(cudaMemcpy(a1, a0, big, cudaMemcpyDefault));
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaDeviceEnablePeerAccess(1, 0));
    for (bool pull : {true, false}) {
      char *from = pull ? a1 : a0, *to = pull ? b0 : a1;
      char *check = pull ? a1 : a0;
      CUDA_CHECK(cudaMemset(to, 0, big));
      std::vector<Item> items = contiguousItems(from, to, big, chunk);
      DeviceTable dev;
      float ms = timeMs(stream, [&] { launch(kernel, items, ctas, chunk, 4, stream, &dev); });
      float ce = timeMs(stream, [&] {
        CUDA_CHECK(cudaMemcpyPeerAsync(to, pull ? 0 : 1, from, pull ? 1 : 0,
                                       big, stream));
      });
      CUDA_CHECK(cudaMemset(to, 0, big));
      launch(kernel, items, ctas, chunk, 4, stream, &dev);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      char detail[160];
      std::snprintf(detail, sizeof detail,
                    "1 GiB, %d CTAs: %.1f GB/s (cudaMemcpyPeer %.1f GB/s)",
                    ctas, big / (ms * 1e-3) / 1e9, big / (ce * 1e-3) / 1e9);
      verdict(pull ? "peer pull GPU1 -> GPU0" : "peer push GPU0 -> GPU1",
              checkEqual(check, to, big), detail);
    }
    // Launch configurations for the peer pull (bandwidth only).
    std::printf("peer pull sweep (GB/s): ctas x (stages, stage KiB)\n");
    for (int sweepCtas : {8, 16, 32}) {
      std::printf("  %2d CTAs:", sweepCtas);
      for (std::pair<int, int> config : {std::pair<int, int>{4, 32}, {6, 32}, {8, 16}, {3, 64}}) {
        int stages = config.first, kib = config.second;
        std::vector<Item> items =
            contiguousItems(a1, b0, big, (uint32_t)kib * 1024);
        DeviceTable dev;
        float ms = timeMs(stream, [&] {
          launch(kernel, items, sweepCtas, (uint64_t)kib * 1024, stages, stream, &dev);
        });
        std::printf("  (%d, %3d) %6.1f", stages, kib, big / (ms * 1e-3) / 1e9);
        CUDA_CHECK(cudaFree(dev.device));
      }
      std::printf("\n");
    }
    // 4. Cross-GPU bulk reductions: dst (GPU0) += src (GPU1).
    {
      const size_t n = 1 << 22;
      std::vector<float> x(n), y(n);
      std::vector<uint16_t> xb(n), yb(n);
      for (size_t i = 0; i < n; ++i) {
        x[i] = (float)(i % 1000) * 0.5f;
        y[i] = (float)(i % 77) - 30.0f;
        xb[i] = toBf16((float)(i % 64));
        yb[i] = toBf16((float)(i % 13) - 6.0f);
      }
      float *dx, *py;
      uint16_t *dxb, *pyb;
      CUDA_CHECK(cudaMalloc(&dx, n * 4));
      CUDA_CHECK(cudaMalloc(&dxb, n * 2));
      CUDA_CHECK(cudaSetDevice(1));
      CUDA_CHECK(cudaMalloc(&py, n * 4));
      CUDA_CHECK(cudaMalloc(&pyb, n * 2));
      CUDA_CHECK(cudaSetDevice(0));
      CUDA_CHECK(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyDefault));
      CUDA_CHECK(cudaMemcpy(py, y.data(), n * 4, cudaMemcpyDefault));
      CUDA_CHECK(cudaMemcpy(dxb, xb.data(), n * 2, cudaMemcpyDefault));
      CUDA_CHECK(cudaMemcpy(pyb, yb.data(), n * 2, cudaMemcpyDefault));
      DeviceTable dev, devb;
      launch(kernel, contiguousItems((char *)py, (char *)dx, n * 4, chunk, AddF32),
             8, chunk, 4, stream, &dev);
      launch(kernel, contiguousItems((char *)pyb, (char *)dxb, n * 2, chunk, AddBF16),
             8, chunk, 4, stream, &devb);
      CUDA_CHECK(cudaStreamSynchronize(stream));
      std::vector<float> got(n);
      std::vector<uint16_t> gotb(n);
      CUDA_CHECK(cudaMemcpy(got.data(), dx, n * 4, cudaMemcpyDefault));
      CUDA_CHECK(cudaMemcpy(gotb.data(), dxb, n * 2, cudaMemcpyDefault));
      size_t bad = 0, badb = 0;
      for (size_t i = 0; i < n; ++i) {
        bad += got[i] != x[i] + y[i];
        badb += gotb[i] != toBf16(fromBf16(xb[i]) + fromBf16(yb[i]));
      }
      verdict("peer reduce-add f32 (4M elements)", bad == 0,
              std::to_string(bad) + " mismatches");
      verdict("peer reduce-add bf16 (4M elements)", badb == 0,
              std::to_string(badb) + " mismatches");
    }
  } else {
    std::printf("only one GPU: peer copy and reduction cases skipped\n");
  }
  std::printf("%d passed, %d failed\n", passes, failures);
  return failures ? 1 : 0;
}
