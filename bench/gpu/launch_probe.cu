// The floor under a small reshard on virtual ranks (issue 35, item 5): what
// launching costs, with kernels that do nothing, timed as the artifact runner
// times m2n (CUDA events around back-to-back iterations, and the same
// iterations captured in one graph). The shapes:
//   one       one kernel of 1 CTA a launch;
//   fork2     two kernels a launch, as the runtime launches two ranks given
//             one stream: the second on a helper stream forked from the
//             caller's by an event and joined back by another;
//   merged2   one kernel of 2 CTAs (two ranks' CTAs in one launch);
//   handshake one kernel of 2 CTAs that signal each other through global
//             memory and wait for the other's signal (the arrival handshake
//             of two ranks, without any copy), with a system-scope fence;
//   handshake-gpu  the same with a device-scope fence (virtual ranks of one
//             GPU need no more);
//   copy-handshake  2 CTAs, each moving two 4 KiB pieces by TMA (its own and
//             the other CTA's source into its destination, as an 8 KiB
//             all_gather of 2 ranks does) and then reporting its reads and
//             waiting for the other's report (m2n's reads-done), system scope.
// The graph column replays one graph of 100 launches, as artifact_runner
// captures its batch of launches, so both are times per launch within a
// batch (the probe's first version replayed graphs of one launch, which
// also pay each graph's start: not comparable with artifact_runner's).
// Build: nvcc -O2 -arch=sm_90a -o /tmp/launch_probe bench/gpu/launch_probe.cu
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>

#define CHECK(x)                                                               \
  do {                                                                         \
    cudaError_t e = (x);                                                       \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e));             \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

__global__ void nothing() {}

// CTA `me` raises its flag to the launch's epoch after a fence of the
// given scope and waits until the other CTA's reaches it (flags only grow,
// so nothing is reset between launches); then CTA 0 advances the epoch.
template <bool SystemScope>
__device__ void signalAndWait(unsigned long long *flags,
                              unsigned long long *epoch,
                              unsigned long long target, int me) {
  if (SystemScope)
    __threadfence_system();
  else
    __threadfence();
  atomicAdd(&flags[me], 1ull);
  volatile unsigned long long *other = &flags[1 - me];
  while (*other < target) {
  }
  if (me == 0)
    atomicAdd(epoch, 1ull); // After both raised: the next launch's target.
}

// The bare handshake of two CTAs, with a fence of system or device scope.
template <bool SystemScope>
__global__ void handshake(unsigned long long *flags, unsigned long long *epoch) {
  if (threadIdx.x != 0)
    return;
  signalAndWait<SystemScope>(flags, epoch, *epoch + 1, blockIdx.x);
}

// TMA: `bytes` from global `src` into shared `stage` on `bar`, waited for,
// then stored to global `dst` and waited for until written.
__device__ void bulkCopy(void *dst, const void *src, void *stage,
                         unsigned long long *bar, unsigned bytes,
                         unsigned &phase) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(stage));
  const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b),
               "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::"
               "bytes [%0], [%1], %2, [%3];" ::"r"(s),
               "l"(src), "r"(bytes), "r"(b)
               : "memory");
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, "
                 "[%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(b), "r"(phase)
                 : "memory");
  phase ^= 1;
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst),
               "r"(s), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

// Each CTA: its own 4 KiB and the other CTA's into its destination by TMA,
// then its report of reads and the wait for the other's (reads-done).
__global__ void copyHandshake(const char *src, char *dst,
                              unsigned long long *flags,
                              unsigned long long *epoch) {
  __shared__ alignas(128) char stage[4096];
  __shared__ alignas(8) unsigned long long bar;
  if (threadIdx.x != 0)
    return;
  const unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const unsigned long long target = *epoch + 1;
  unsigned phase = 0;
  const int me = blockIdx.x, peer = 1 - me;
  bulkCopy(dst + me * 8192 + me * 4096, src + me * 4096, stage, &bar, 4096, phase);
  bulkCopy(dst + me * 8192 + peer * 4096, src + peer * 4096, stage, &bar, 4096,
           phase);
  signalAndWait<true>(flags, epoch, target, me);
}

int main(int argc, char **argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 2000;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaStream_t stream, helper;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&helper, cudaStreamNonBlocking));
  cudaEvent_t fork, join, start, stop;
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  unsigned long long *words;
  CHECK(cudaMalloc(&words, 9 * sizeof(unsigned long long)));
  CHECK(cudaMemset(words, 0, 9 * sizeof(unsigned long long)));
  char *bytes = nullptr; // 8 KiB of sources, 16 KiB of destinations.
  CHECK(cudaMalloc(&bytes, 3 * 8192));
  CHECK(cudaMemset(bytes, 1, 3 * 8192));

  struct Shape {
    const char *name;
    std::function<void()> launch;
  } shapes[] = {
      {"one", [&] { nothing<<<1, 32, 0, stream>>>(); }},
      {"fork2",
       [&] {
         CHECK(cudaEventRecord(fork, stream));
         CHECK(cudaStreamWaitEvent(helper, fork));
         nothing<<<1, 32, 0, stream>>>();
         nothing<<<1, 32, 0, helper>>>();
         CHECK(cudaEventRecord(join, helper));
         CHECK(cudaStreamWaitEvent(stream, join));
       }},
      {"merged2", [&] { nothing<<<2, 32, 0, stream>>>(); }},
      {"handshake", [&] { handshake<true><<<2, 32, 0, stream>>>(words, words + 2); }},
      {"handshake-gpu",
       [&] { handshake<false><<<2, 32, 0, stream>>>(words + 3, words + 5); }},
      {"copy-handshake",
       [&] {
         copyHandshake<<<2, 32, 0, stream>>>(bytes, bytes + 8192, words + 6,
                                              words + 8);
       }},
  };
  const int perGraph = 100; // Launches captured in one graph.
  std::printf("%s; %d iterations back to back\n", prop.name, iterations);
  std::printf("%-14s %10s %10s\n", "shape", "direct us", "graph us");
  for (Shape &shape : shapes) {
    for (int i = 0; i < 100; ++i)
      shape.launch();
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < iterations; ++i)
      shape.launch();
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float direct = 0;
    CHECK(cudaEventElapsedTime(&direct, start, stop));
    // A batch of launches captured, the graph replayed back to back.
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < perGraph; ++i)
      shape.launch();
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    const int replays = std::max(1, iterations / perGraph);
    CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < replays; ++i)
      CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float graphed = 0;
    CHECK(cudaEventElapsedTime(&graphed, start, stop));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    std::printf("%-14s %10.2f %10.2f\n", shape.name, 1000 * direct / iterations,
                1000 * graphed / (replays * perGraph));
  }
  CHECK(cudaGetLastError());
  return 0;
}
