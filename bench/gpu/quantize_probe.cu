// What a quantizing reshard can cost on one GPU, before m2n's kernel has it
// (issue 32, docs/fp8-scaling.md "How it is planned"): issue 32's case, a
// 7168 x 18432 bf16 weight TP8 -> TP4 x DP2 on 8 + 8 virtual ranks, into
// f8E4M3FN with block(128, 128) scales, as plain CUDA kernels doing the
// plan's three phases:
//   1. amax: every source rank computes its blocks' amaxes into its slots
//      (TP8 has no replicas: each block of a shard is read once);
//   2. exchange: every destination rank copies the amaxes of the blocks its
//      box touches from the source ranks' slots into its holder table and
//      writes its scale tensor (amax / 448, 1 for zero or non-finite);
//   3. quantizing pull: every destination rank reads its two source boxes
//      and writes to_fp8(x / scale) (one f32 division, cvt.rn.satfinite).
// against the same reshard without a cast (bf16 pull, 16-byte vectors) at
// the same CTA count and block size, and the plain copy of the same bytes.
// Each phase is a grid-stride kernel over 128 x 128 blocks of 256 threads,
// each thread with its 8 vector loads in flight; phase 3 divides by the
// scale (div.rn.f32) or multiplies by its reciprocal with one FMA
// correction (both checked bit for bit). A fourth variant fuses the amax
// into the pull: a destination whose box holds whole blocks computes each
// block's amax from the block it loaded (no amax pass, no exchange: one
// read of every element, as the uncast reshard), and writes its scales;
// the staged fusions keep 2, 4 or 6 blocks a CTA in flight in shared memory
// (bulk copies on an mbarrier) so that loads overlap the amax and the
// quantizing, where the plain fused pull waits for each block it holds.
// Checked first (fresh random values with zero blocks, an infinity and a
// NaN; the destination poisoned; every element and scale compared with a
// host quantizer written from the format definition), then timed with CUDA
// events around back-to-back iterations (median of 7 repetitions).
//
//   nvcc -O3 -std=c++17 -arch=sm_90 bench/gpu/quantize_probe.cu -o /tmp/quantize_probe
//   /tmp/quantize_probe [--ctas 16,32,66,132]
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorString(err_));                                  \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

namespace {

constexpr int kRows = 7168, kCols = 18432, kBlock = 128;
constexpr int kSrcRanks = 8, kSrcCols = kCols / kSrcRanks;   // 2304
constexpr int kDstRanks = 8, kDstCols = kCols / 4;           // 4608 (TP4 x DP2)
constexpr int kBlockRows = kRows / kBlock;                   // 56
constexpr int kSrcBlockCols = kSrcCols / kBlock;             // 18
constexpr int kDstBlockCols = kDstCols / kBlock;             // 36
constexpr int kThreads = 256;

struct Buffers {
  __nv_bfloat16 *src[kSrcRanks];
  float *slots[kSrcRanks];      // kBlockRows x kSrcBlockCols amaxes.
  __nv_bfloat16 *dstCopy[kDstRanks];
  __nv_fp8_e4m3 *dstFp8[kDstRanks];
  float *holder[kDstRanks];     // kBlockRows x kDstBlockCols amaxes.
  float *scales[kDstRanks];     // The scale tensor's local part.
};

// The destination rank d = (dp, tp) of mesh [2, 4] holds columns
// [tp * 4608, +4608): source ranks 2 tp and 2 tp + 1.
__device__ __host__ inline int dstTp(int d) { return d % 4; }

__device__ inline float amaxOf(uint4 v, float m) {
  const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&v);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 f = __bfloat1622float2(h[i]);
    m = fmaxf(m, fmaxf(fabsf(f.x), fabsf(f.y))); // fmax ignores NaN.
  }
  return m;
}

__device__ inline float blockMax(float m) {
  __shared__ float warps[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1)
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0)
    warps[threadIdx.x / 32] = m;
  __syncthreads();
  // Every warp reduces the 8 warp maxima, so every thread returns the
  // block's (the fused pull scales with it).
  m = warps[threadIdx.x % (kThreads / 32)];
  for (int o = 4; o > 0; o >>= 1)
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  __syncthreads();
  return m;
}

// Phase 1: one 128 x 128 block of one source rank per iteration.
__global__ void amaxKernel(Buffers b) {
  const int blocksPerRank = kBlockRows * kSrcBlockCols;
  for (int unit = blockIdx.x; unit < kSrcRanks * blocksPerRank; unit += gridDim.x) {
    int rank = unit / blocksPerRank, blk = unit % blocksPerRank;
    int br = blk / kSrcBlockCols, bc = blk % kSrcBlockCols;
    const __nv_bfloat16 *base = b.src[rank] + (size_t)br * kBlock * kSrcCols + bc * kBlock;
    float m = 0.0f;
    // 128 rows x 16 vectors of 8 elements: 8 vectors a thread, all loaded
    // before any is reduced.
    uint4 x[kBlock * 16 / kThreads];
#pragma unroll
    for (int i = 0; i < kBlock * 16 / kThreads; ++i) {
      int v = threadIdx.x + i * kThreads;
      x[i] = *reinterpret_cast<const uint4 *>(base + (size_t)(v / 16) * kSrcCols + (v % 16) * 8);
    }
#pragma unroll
    for (int i = 0; i < kBlock * 16 / kThreads; ++i)
      m = amaxOf(x[i], m);
    m = blockMax(m);
    if (threadIdx.x == 0)
      b.slots[rank][blk] = m;
  }
}

__device__ __host__ inline float scaleFromAmax(float amax) {
  if (!(amax > 0.0f) || !std::isfinite(amax))
    return 1.0f;
  float s = amax / 448.0f;
  return s > 0.0f ? s : 1.0f;
}

// Phase 2: every destination's holder table (copies from the slots of the
// two source ranks under it) and its scales.
__global__ void exchangeKernel(Buffers b) {
  const int entries = kBlockRows * kDstBlockCols;
  for (int i = blockIdx.x * kThreads + threadIdx.x; i < kDstRanks * entries;
       i += gridDim.x * kThreads) {
    int d = i / entries, e = i % entries, br = e / kDstBlockCols, bc = e % kDstBlockCols;
    int s = 2 * dstTp(d) + bc / kSrcBlockCols;
    float amax = b.slots[s][br * kSrcBlockCols + bc % kSrcBlockCols];
    b.holder[d][e] = amax;
    b.scales[d][e] = scaleFromAmax(amax);
  }
}

// How phase 3 divides: one IEEE division per element (div.rn.f32), or the
// correctly rounded reciprocal and one FMA correction (Markstein), exact
// for these quotients (the scale is 1 for infinities and zero blocks, where
// the quotient is x itself; tiny scales, whose reciprocal overflows, divide).
// QuantizeFused: the destination computes its block's amax itself from the
// block it loaded (all 128 x 128 elements are in the CTA's registers), so
// neither the amax pass nor the exchange runs: one read of each element,
// as the uncast reshard has. Every replica computes the same bits.
enum class Pull { Copy, QuantizeDivide, QuantizeReciprocal, QuantizeFused };

// As quotientByReciprocal (include/m2n/Base/Scaling.h): zeros keep their
// sign, tiny x divides (the remainder would be inexact).
__device__ inline float quotient(float x, float scale, float reciprocal) {
  if (x == 0.0f)
    return x;
  if (fabsf(x) < 0x1p-102f)
    return __fdiv_rn(x, scale);
  float q0 = __fmul_rn(x, reciprocal);
  float rem = __fmaf_rn(-q0, scale, x);
  return __fmaf_rn(rem, reciprocal, q0);
}

// Eight bf16 elements divided by `scale` (or by its reciprocal with one
// correction; unchanged where `plain`) and rounded to e4m3, saturating.
__device__ inline uint2 quantizeVector(uint4 x, float scale, bool plain, bool divide,
                                       float reciprocal) {
  const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&x);
  uint32_t out[2];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float2 f = __bfloat1622float2(h[j]);
    float2 q = plain ? f
               : divide ? make_float2(__fdiv_rn(f.x, scale), __fdiv_rn(f.y, scale))
                        : make_float2(quotient(f.x, scale, reciprocal), quotient(f.y, scale, reciprocal));
    reinterpret_cast<uint16_t *>(out)[j] = __nv_cvt_float2_to_fp8x2(q, __NV_SATFINITE, __NV_E4M3);
  }
  return make_uint2(out[0], out[1]);
}

// Phase 3 (and the uncast reshard): one 128 x 128 block of one destination
// per iteration, pulled from its source rank; every thread loads its 8
// vectors before it converts and stores any (8 loads in flight).
template <Pull Mode> __global__ void pullKernel(Buffers b) {
  constexpr bool Quantize = Mode != Pull::Copy;
  const int blocksPerRank = kBlockRows * kDstBlockCols;
  constexpr int kPerThread = kBlock * 16 / kThreads; // 8
  for (int unit = blockIdx.x; unit < kDstRanks * blocksPerRank; unit += gridDim.x) {
    int d = unit / blocksPerRank, blk = unit % blocksPerRank;
    int br = blk / kDstBlockCols, bc = blk % kDstBlockCols;
    int s = 2 * dstTp(d) + bc / kSrcBlockCols;
    const __nv_bfloat16 *from = b.src[s] + (size_t)br * kBlock * kSrcCols + (bc % kSrcBlockCols) * kBlock;
    size_t to = (size_t)br * kBlock * kDstCols + bc * kBlock;
    uint4 x[kPerThread];
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int v = threadIdx.x + i * kThreads;
      x[i] = *reinterpret_cast<const uint4 *>(from + (size_t)(v / 16) * kSrcCols + (v % 16) * 8);
    }
    float scale = 1.0f;
    if (Mode == Pull::QuantizeFused) {
      float m = 0.0f;
#pragma unroll
      for (int i = 0; i < kPerThread; ++i)
        m = amaxOf(x[i], m);
      scale = scaleFromAmax(blockMax(m));
      if (threadIdx.x == 0)
        b.scales[d][blk] = scale;
    } else if (Quantize) {
      scale = scaleFromAmax(b.holder[d][blk]);
    }
    bool plain = scale == 1.0f,
         divide = Mode != Pull::QuantizeReciprocal || scale < 0x1p-125f;
    float reciprocal = __frcp_rn(scale);
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int v = threadIdx.x + i * kThreads;
      size_t row = v / 16, col = (v % 16) * 8;
      if (!Quantize) {
        *reinterpret_cast<uint4 *>(b.dstCopy[d] + to + row * kDstCols + col) = x[i];
        continue;
      }
      *reinterpret_cast<uint2 *>(b.dstFp8[d] + to + row * kDstCols + col) =
          quantizeVector(x[i], scale, plain, divide, reciprocal);
    }
  }
}

// The fused pull, staged: each CTA keeps Stages blocks in flight in shared
// memory (one 256-byte bulk copy a row, cp.async.bulk completing on the
// stage's mbarrier), so the loads of the next blocks overlap the amax,
// the block reduction and the quantizing of this one; the pull above holds
// one block in registers and waits for it. This is the shape m2n's kernel
// would take for blocks that lie whole in a destination's box.
__device__ inline uint32_t sharedAddress(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ inline void barrierInit(uint64_t *bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sharedAddress(bar)) : "memory");
}

__device__ inline void barrierExpect(uint64_t *bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sharedAddress(bar)),
               "r"(bytes)
               : "memory");
}

__device__ inline void bulkLoad(void *to, const void *from, uint32_t bytes, uint64_t *bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   sharedAddress(to)),
               "l"(from), "r"(bytes), "r"(sharedAddress(bar))
               : "memory");
}

__device__ inline void barrierWait(uint64_t *bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done)
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(sharedAddress(bar)), "r"(parity)
                 : "memory");
}

constexpr int kBlockBytes = kBlock * kBlock * 2; // 32 KiB of bf16.

template <int Stages, bool Reciprocal> __global__ void __launch_bounds__(kThreads) fusedStagedKernel(Buffers b) {
  extern __shared__ __align__(128) unsigned char stages[];
  __shared__ __align__(8) uint64_t bars[Stages];
  const int blocksPerRank = kBlockRows * kDstBlockCols, units = kDstRanks * blocksPerRank;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Warp 0 issues a block's 128 row copies into a stage.
  auto issue = [&](int unit, int stage) {
    int d = unit / blocksPerRank, blk = unit % blocksPerRank;
    int br = blk / kDstBlockCols, bc = blk % kDstBlockCols;
    int s = 2 * dstTp(d) + bc / kSrcBlockCols;
    const __nv_bfloat16 *from = b.src[s] + (size_t)br * kBlock * kSrcCols + (bc % kSrcBlockCols) * kBlock;
    if (lane == 0)
      barrierExpect(&bars[stage], kBlockBytes);
    __syncwarp();
    for (int row = lane; row < kBlock; row += 32)
      bulkLoad(stages + stage * kBlockBytes + row * kBlock * 2, from + (size_t)row * kSrcCols, kBlock * 2,
               &bars[stage]);
  };
  if (threadIdx.x < Stages)
    barrierInit(&bars[threadIdx.x]);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  __syncthreads();
  if (warp == 0)
    for (int s = 0; s < Stages; ++s)
      if (blockIdx.x + s * gridDim.x < units)
        issue(blockIdx.x + s * gridDim.x, s);
  constexpr int kPerThread = kBlock * 16 / kThreads; // 8 vectors of 8 elements.
  int k = 0;
  for (int unit = blockIdx.x; unit < units; unit += gridDim.x, ++k) {
    const int stage = k % Stages;
    barrierWait(&bars[stage], (k / Stages) & 1);
    const uint4 *staged = reinterpret_cast<const uint4 *>(stages + stage * kBlockBytes);
    uint4 x[kPerThread];
    float m = 0.0f;
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      x[i] = staged[threadIdx.x + i * kThreads]; // A row is 16 vectors: vector v is row v / 16.
      m = amaxOf(x[i], m);
    }
    const float scale = scaleFromAmax(blockMax(m)); // Its barriers end every read of the stage.
    int next = unit + Stages * gridDim.x;
    if (warp == 0 && next < units)
      issue(next, stage);
    int d = unit / blocksPerRank, blk = unit % blocksPerRank;
    int br = blk / kDstBlockCols, bc = blk % kDstBlockCols;
    if (threadIdx.x == 0)
      b.scales[d][blk] = scale;
    size_t to = (size_t)br * kBlock * kDstCols + bc * kBlock;
    bool plain = scale == 1.0f, divide = !Reciprocal || scale < 0x1p-125f;
    float reciprocal = __frcp_rn(scale);
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) {
      int v = threadIdx.x + i * kThreads;
      size_t row = v / 16, col = (v % 16) * 8;
      *reinterpret_cast<uint2 *>(b.dstFp8[d] + to + row * kDstCols + col) =
          quantizeVector(x[i], scale, plain, divide, reciprocal);
    }
  }
}

template <int Stages, bool Reciprocal> void launchFusedStaged(int ctas, const Buffers &b) {
  static bool configured = false;
  if (!configured) {
    CHECK(cudaFuncSetAttribute(fusedStagedKernel<Stages, Reciprocal>,
                               cudaFuncAttributeMaxDynamicSharedMemorySize, Stages * kBlockBytes));
    configured = true;
  }
  fusedStagedKernel<Stages, Reciprocal><<<ctas, kThreads, Stages * kBlockBytes>>>(b);
}

// The plain copy of the same bytes, 8 vectors in flight a thread.
__global__ void copyKernel(const uint4 *from, uint4 *to, size_t vectors) {
  const size_t stride = (size_t)gridDim.x * kThreads;
  for (size_t i = blockIdx.x * (size_t)kThreads + threadIdx.x; i < vectors; i += 8 * stride) {
    uint4 x[8];
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (i + j * stride < vectors)
        x[j] = from[i + j * stride];
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (i + j * stride < vectors)
        to[i + j * stride] = x[j];
  }
}

uint8_t hostQuantize(float x, float scale) {
  return __nv_cvt_float_to_fp8(x / scale, __NV_SATFINITE, __NV_E4M3);
}

float bf16Bits(uint16_t bits) {
  uint32_t w = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &w, 4);
  return f;
}

template <typename Fn> float timeIt(Fn launch, int iterations) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  std::vector<float> reps;
  launch(); // Warm up.
  CHECK(cudaDeviceSynchronize());
  for (int r = 0; r < 7; ++r) {
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < iterations; ++i)
      launch();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    reps.push_back(ms * 1000.0f / iterations);
  }
  std::sort(reps.begin(), reps.end());
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  return reps[3];
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> ctaCounts = {16, 32, 66, 132};
  for (int i = 1; i + 1 < argc; i += 2)
    if (!std::strcmp(argv[i], "--ctas")) {
      ctaCounts.clear();
      std::stringstream list(argv[i + 1]);
      for (std::string item; std::getline(list, item, ',');)
        ctaCounts.push_back(std::atoi(item.c_str()));
    }
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s\n", prop.name);

  const size_t srcElems = (size_t)kRows * kSrcCols, dstElems = (size_t)kRows * kDstCols;
  Buffers b;
  std::vector<std::vector<uint16_t>> host(kSrcRanks, std::vector<uint16_t>(srcElems));
  std::mt19937 gen(20261205);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  for (int r = 0; r < kSrcRanks; ++r) {
    for (size_t i = 0; i < srcElems; ++i) {
      float f = normal(gen) * (1 + (i / kSrcCols / kBlock) % 7); // Scales differ by block row.
      uint32_t w;
      std::memcpy(&w, &f, 4);
      host[r][i] = uint16_t((w + 0x7FFF + ((w >> 16) & 1)) >> 16);
    }
    CHECK(cudaMalloc(&b.src[r], srcElems * 2));
    CHECK(cudaMalloc(&b.slots[r], kBlockRows * kSrcBlockCols * 4));
  }
  // An all-zero block, an infinity and a NaN (source rank 3).
  for (int row = 0; row < kBlock; ++row)
    std::fill_n(&host[3][(size_t)row * kSrcCols], kBlock, 0);
  host[3][(size_t)200 * kSrcCols + 300] = 0x7F80; // +inf
  host[3][(size_t)400 * kSrcCols + 700] = 0x7FC0; // NaN
  // Negative zeros and values too tiny for the reciprocal's correction.
  for (int i = 0; i < 64; ++i) {
    host[5][(size_t)(300 + i) * kSrcCols + 7 * i] = 0x8000;           // -0
    host[5][(size_t)(900 + i) * kSrcCols + 5 * i] = uint16_t(0x0001 + 3 * i); // subnormal
    host[6][(size_t)(100 + i) * kSrcCols + 9 * i] = uint16_t(0x8C00 + i);     // -2^-103..
  }
  for (int r = 0; r < kSrcRanks; ++r)
    CHECK(cudaMemcpy(b.src[r], host[r].data(), srcElems * 2, cudaMemcpyHostToDevice));
  for (int d = 0; d < kDstRanks; ++d) {
    CHECK(cudaMalloc(&b.dstCopy[d], dstElems * 2));
    CHECK(cudaMalloc(&b.dstFp8[d], dstElems));
    CHECK(cudaMalloc(&b.holder[d], kBlockRows * kDstBlockCols * 4));
    CHECK(cudaMalloc(&b.scales[d], kBlockRows * kDstBlockCols * 4));
    CHECK(cudaMemset(b.dstFp8[d], 0x7F, dstElems)); // Poison (NaN in e4m3).
    CHECK(cudaMemset(b.scales[d], 0xFF, kBlockRows * kDstBlockCols * 4));
  }
  // mode 0: the three phases, dividing; 1: with the reciprocal; 2: fused;
  // 3-6: fused and staged (2, 4 or 6 stages dividing, 4 with the reciprocal).
  const char *modeNames[] = {"division", "reciprocal + FMA", "fused amax",
                             "fused staged, 2 stages", "fused staged, 4 stages",
                             "fused staged, 6 stages", "fused staged, 4 stages, reciprocal"};
  auto quantizing = [&](int ctas, int mode) {
    switch (mode) {
    case 2: pullKernel<Pull::QuantizeFused><<<ctas, kThreads>>>(b); return;
    case 3: launchFusedStaged<2, false>(ctas, b); return;
    case 4: launchFusedStaged<4, false>(ctas, b); return;
    case 5: launchFusedStaged<6, false>(ctas, b); return;
    case 6: launchFusedStaged<4, true>(ctas, b); return;
    default: break;
    }
    amaxKernel<<<ctas, kThreads>>>(b);
    exchangeKernel<<<ctas, kThreads>>>(b);
    if (mode == 1)
      pullKernel<Pull::QuantizeReciprocal><<<ctas, kThreads>>>(b);
    else
      pullKernel<Pull::QuantizeDivide><<<ctas, kThreads>>>(b);
  };
  size_t wrong = 0;
  for (int mode = 0; mode < 7; ++mode) {
  for (int d = 0; d < kDstRanks; ++d) {
    CHECK(cudaMemset(b.dstFp8[d], 0x7F, dstElems));
    CHECK(cudaMemset(b.scales[d], 0xFF, kBlockRows * kDstBlockCols * 4));
  }
  quantizing(132, mode);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());

  // Check every destination element and scale with the host quantizer.
  size_t wrongBefore = wrong;
  std::vector<uint8_t> q(dstElems);
  std::vector<float> scales(kBlockRows * kDstBlockCols);
  for (int d = 0; d < kDstRanks; ++d) {
    CHECK(cudaMemcpy(q.data(), b.dstFp8[d], dstElems, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(scales.data(), b.scales[d], scales.size() * 4, cudaMemcpyDeviceToHost));
    for (int br = 0; br < kBlockRows; ++br)
      for (int bc = 0; bc < kDstBlockCols; ++bc) {
        int s = 2 * dstTp(d) + bc / kSrcBlockCols, sc = (bc % kSrcBlockCols) * kBlock;
        float amax = 0;
        for (int row = br * kBlock; row < (br + 1) * kBlock; ++row)
          for (int col = sc; col < sc + kBlock; ++col) {
            float x = bf16Bits(host[s][(size_t)row * kSrcCols + col]);
            if (!std::isnan(x))
              amax = std::max(amax, std::fabs(x));
          }
        float scale = scaleFromAmax(amax);
        if (std::memcmp(&scale, &scales[br * kDstBlockCols + bc], 4))
          ++wrong;
        for (int row = br * kBlock; row < (br + 1) * kBlock; ++row)
          for (int col = 0; col < kBlock; ++col) {
            float x = bf16Bits(host[s][(size_t)row * kSrcCols + sc + col]);
            uint8_t want = hostQuantize(x, scale), got = q[(size_t)row * kDstCols + bc * kBlock + col];
            bool nan = std::isnan(x) && (got & 0x7F) == 0x7F;
            if (got != want && !nan && wrong++ < 5)
              std::printf("  dst %d (%d, %d): %.6g / %.6g -> %#x, want %#x\n", d, row,
                          bc * kBlock + col, x, scale, got, want);
          }
      }
  }
  std::printf("check (%s): %s (%zu of %zu elements and %zu scales differ)\n",
              modeNames[mode],
              wrong != wrongBefore ? "FAIL" : "PASS", wrong - wrongBefore,
              kDstRanks * dstElems, kDstRanks * scales.size());
  }

  // Bytes: the uncast reshard reads and writes 2 B an element of the 8
  // destinations; the quantizing one reads each source element for its
  // amax, 2 B an element to pull and writes 1.
  const double copyBytes = 2.0 * kDstRanks * dstElems * 2;
  uint4 *plainFrom, *plainTo;
  CHECK(cudaMalloc(&plainFrom, kDstRanks * dstElems * 2));
  CHECK(cudaMalloc(&plainTo, kDstRanks * dstElems * 2));
  std::printf("\n| CTAs | uncast reshard us | quantizing, division: us (amax + exchange + pull) | uncast/quantizing | quantizing, reciprocal + FMA: us (amax + exchange + pull) | uncast/quantizing | quantizing, fused amax us | uncast/fused | plain copy of the uncast bytes us | uncast GB/s (read+write) |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (int ctas : ctaCounts) {
    float uncast = timeIt([&] { pullKernel<Pull::Copy><<<ctas, kThreads>>>(b); }, 20);
    float amax = timeIt([&] { amaxKernel<<<ctas, kThreads>>>(b); }, 20);
    float exchange = timeIt([&] { exchangeKernel<<<ctas, kThreads>>>(b); }, 20);
    float pullDiv = timeIt([&] { pullKernel<Pull::QuantizeDivide><<<ctas, kThreads>>>(b); }, 20);
    float pullRcp = timeIt([&] { pullKernel<Pull::QuantizeReciprocal><<<ctas, kThreads>>>(b); }, 20);
    float totalDiv = timeIt([&] { quantizing(ctas, 0); }, 20);
    float totalRcp = timeIt([&] { quantizing(ctas, 1); }, 20);
    float fused = timeIt([&] { quantizing(ctas, 2); }, 20);
    float plain = timeIt([&] { copyKernel<<<ctas, kThreads>>>(plainFrom, plainTo, kDstRanks * dstElems * 2 / 16); }, 20);
    CHECK(cudaGetLastError());
    std::printf("| %d | %.1f | %.1f (%.1f + %.1f + %.1f) | %.2f | %.1f (%.1f + %.1f + %.1f) | %.2f | %.1f | %.2f | %.1f | %.0f |\n",
                ctas, uncast, totalDiv, amax, exchange, pullDiv, uncast / totalDiv, totalRcp, amax,
                exchange, pullRcp, uncast / totalRcp, fused, uncast / fused, plain,
                copyBytes / uncast / 1e3);
  }
  std::printf("\n| CTAs | uncast us | fused staged 2 us | ratio | 4 | ratio | 6 | ratio | 4, reciprocal | ratio |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (int ctas : ctaCounts) {
    float uncast = timeIt([&] { pullKernel<Pull::Copy><<<ctas, kThreads>>>(b); }, 20);
    std::printf("| %d | %.1f |", ctas, uncast);
    for (int mode = 3; mode < 7; ++mode) {
      float t = timeIt([&] { quantizing(ctas, mode); }, 20);
      std::printf(" %.1f | %.2f |", t, uncast / t);
    }
    std::printf("\n");
    CHECK(cudaGetLastError());
  }
  return wrong ? 1 : 0;
}
