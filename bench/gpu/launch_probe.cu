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
//             of two ranks, without any copy).
// Build: nvcc -O2 -arch=sm_90a -o /tmp/launch_probe bench/gpu/launch_probe.cu
#include <cuda_runtime.h>

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

// Each CTA raises its own flag to the launch's epoch and waits until the
// other's reaches it (flags only grow, so no reset between launches).
__global__ void handshake(unsigned long long *flags, unsigned long long *epoch) {
  if (threadIdx.x != 0)
    return;
  const unsigned long long target = *epoch + 1;
  __threadfence_system();
  atomicAdd(&flags[blockIdx.x], 1ull);
  volatile unsigned long long *other = &flags[1 - blockIdx.x];
  while (*other < target) {
  }
  __syncthreads();
  if (blockIdx.x == 0)
    atomicAdd(epoch, 1ull); // After both raised: the next launch's target.
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
  CHECK(cudaMalloc(&words, 3 * sizeof(unsigned long long)));
  CHECK(cudaMemset(words, 0, 3 * sizeof(unsigned long long)));

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
      {"handshake", [&] { handshake<<<2, 32, 0, stream>>>(words, words + 2); }},
  };
  std::printf("%s; %d iterations back to back\n", prop.name, iterations);
  std::printf("%-10s %10s %10s\n", "shape", "direct us", "graph us");
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
    // One launch captured, the graph replayed back to back.
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    shape.launch();
    CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    for (int i = 0; i < 100; ++i)
      CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < iterations; ++i)
      CHECK(cudaGraphLaunch(exec, stream));
    CHECK(cudaEventRecord(stop, stream));
    CHECK(cudaEventSynchronize(stop));
    float graphed = 0;
    CHECK(cudaEventElapsedTime(&graphed, start, stop));
    CHECK(cudaGraphExecDestroy(exec));
    CHECK(cudaGraphDestroy(graph));
    std::printf("%-10s %10.2f %10.2f\n", shape.name, 1000 * direct / iterations,
                1000 * graphed / iterations);
  }
  CHECK(cudaGetLastError());
  return 0;
}
