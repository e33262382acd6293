// Machine probe for the benchmark harness: fp32 fused multiply-add throughput
// of this CPU right now, on 1..N threads at once. Independent FMA chains on
// registers (no memory traffic), so the result is the compute roof that the
// matmul-bound workloads are compared against, and a 2-thread result far below
// twice the 1-thread result means the two vCPUs did not get two cores' worth
// of FMA units during the measurement (e.g. SMT siblings on the host).
// Built by machine.py with `cc -O2 -march=native -pthread -shared`.
#include <pthread.h>
#include <stdint.h>
#include <time.h>

typedef float vfloat __attribute__((vector_size(64)));  // one zmm, or two ymm
enum { CHAINS = 12 };  // > FMA latency x units: keeps every unit busy

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

struct job { int64_t iters; float sink; };

static void *spin_fma(void *arg) {
  struct job *job = arg;
  vfloat mul, add, a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11;
  for (int i = 0; i < 16; ++i) { mul[i] = 1.0000001f; add[i] = 1e-7f; }
  // Different starting values: identical chains would be merged by the compiler.
  a0 = add * 1; a1 = add * 2; a2 = add * 3; a3 = add * 4; a4 = add * 5; a5 = add * 6;
  a6 = add * 7; a7 = add * 8; a8 = add * 9; a9 = add * 10; a10 = add * 11; a11 = add * 12;
  // Twelve named accumulators (not an array) so that they live in registers.
#define STEP(a) a = a * mul + add  /* contracted to one FMA */
  for (int64_t k = 0; k < job->iters; ++k) {
    STEP(a0); STEP(a1); STEP(a2); STEP(a3); STEP(a4); STEP(a5);
    STEP(a6); STEP(a7); STEP(a8); STEP(a9); STEP(a10); STEP(a11);
  }
#undef STEP
  vfloat sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  job->sink = sum[0];  // keeps the loop alive
  return 0;
}

// GFLOP/s of `threads` threads each doing `iters` x CHAINS x 16 FMAs at once.
double cuvil_bench_fma_gflops(int threads, int64_t iters) {
  pthread_t tid[64];
  struct job jobs[64];
  if (threads < 1 || threads > 64) return -1;
  double t = now_s();
  for (int i = 0; i < threads; ++i) {
    jobs[i].iters = iters;
    if (pthread_create(&tid[i], 0, spin_fma, &jobs[i])) return -1;
  }
  for (int i = 0; i < threads; ++i) pthread_join(tid[i], 0);
  t = now_s() - t;
  return (double)threads * iters * CHAINS * 16 * 2 / t * 1e-9;
}
