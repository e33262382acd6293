// Machine probe for the benchmark harness: fp32 fused multiply-add throughput
// of this CPU right now, on 1..N threads at once. Independent FMA chains on
// registers (no memory traffic), so the result is the compute roof that the
// matmul-bound workloads are compared against, and a 2-thread result far below
// twice the 1-thread result means the two vCPUs did not get two cores' worth
// of FMA units during the measurement (e.g. SMT siblings on the host).
// It also measures the core-to-core handoff latency (two threads passing a
// cache line back and forth): a VM's two vCPUs may sit on one host core
// complex (shared L3, tens of ns) or on two (data crosses the fabric, ~100+
// ns), and a parallel model hands every kernel's output to the other core.
// And it measures read bandwidth from buffers that fit the last-level cache:
// on a shared host, the L3 (and memory) bandwidth a VM gets depends on its
// neighbours, and memory-bound kernels (transposes, elementwise ops) slow down
// with it while FMA throughput does not.
// Built by machine.py with `cc -O2 -march=native -pthread -shared`.
#include <immintrin.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

// One register per accumulator: 12 zmm with AVX-512 (of 32), 12 ymm without
// (of 16); 64-byte vectors would take two ymm each and spill on AVX2.
#ifdef __AVX512F__
enum { LANES = 16 };
#else
enum { LANES = 8 };
#endif
typedef float vfloat __attribute__((vector_size(LANES * 4)));
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
  for (int i = 0; i < LANES; ++i) { mul[i] = 1.0000001f; add[i] = 1e-7f; }
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

// Floating-point operations of one iteration of spin_fma's loop.
int64_t cuvil_bench_fma_flops_per_iter(void) { return CHAINS * LANES * 2; }

// Seconds for `threads` threads each running `spin` for `iters` iterations
// at once; -1 if a thread cannot be started.
static double run_spinners(int threads, int64_t iters, void *(*spin)(void *)) {
  pthread_t tid[64];
  struct job jobs[64];
  if (threads < 1 || threads > 64) return -1;
  double t = now_s();
  for (int i = 0; i < threads; ++i) {
    jobs[i].iters = iters;
    if (pthread_create(&tid[i], 0, spin, &jobs[i])) return -1;
  }
  for (int i = 0; i < threads; ++i) pthread_join(tid[i], 0);
  return now_s() - t;
}

// GFLOP/s of `threads` threads each doing `iters` x CHAINS x 16 FMAs at once.
double cuvil_bench_fma_gflops(int threads, int64_t iters) {
  double t = run_spinners(threads, iters, spin_fma);
  return t < 0 ? -1 : (double)threads * iters * CHAINS * LANES * 2 / t * 1e-9;
}

// The bf16 dot-product roof (vdpbf16ps: 32 bf16 products summed pairwise
// into 16 f32 lanes, 64 FLOP per instruction), what Cuvil's and oneDNN's bf16
// kernels run on hosts with AVX512-BF16 and no AMX; -1 where the compiler
// was not allowed the instruction (-march=native on a host without it).
#ifdef __AVX512BF16__
static void *spin_dpbf16(void *arg) {
  struct job *job = arg;
  __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3380);
  // Different starting values: identical chains would be merged by the
  // compiler (they were: the probe timed one chain and counted twelve).
  __m512 a0 = _mm512_set1_ps(0), a1 = _mm512_set1_ps(1), a2 = _mm512_set1_ps(2), a3 = _mm512_set1_ps(3),
         a4 = _mm512_set1_ps(4), a5 = _mm512_set1_ps(5), a6 = _mm512_set1_ps(6), a7 = _mm512_set1_ps(7),
         a8 = _mm512_set1_ps(8), a9 = _mm512_set1_ps(9), a10 = _mm512_set1_ps(10), a11 = _mm512_set1_ps(11);
#define STEP(a) a = _mm512_dpbf16_ps(a, x, y)
  for (int64_t k = 0; k < job->iters; ++k) {
    STEP(a0); STEP(a1); STEP(a2); STEP(a3); STEP(a4); STEP(a5);
    STEP(a6); STEP(a7); STEP(a8); STEP(a9); STEP(a10); STEP(a11);
  }
#undef STEP
  __m512 sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  job->sink = sum[0];
  return 0;
}
#endif

double cuvil_bench_bf16_gflops(int threads, int64_t iters) {
#ifdef __AVX512BF16__
  double t = run_spinners(threads, iters, spin_dpbf16);
  return t < 0 ? -1 : (double)threads * iters * CHAINS * 64 / t * 1e-9;
#else
  (void)threads; (void)iters;
  return -1;
#endif
}

// The int8 dot-product roof (vpdpbusd: 64 u8 x s8 products summed in fours
// into 16 s32 lanes, 128 integer operations per instruction), what Cuvil's
// int8 kernels run on hosts with AVX512-VNNI and no AMX; -1 where the compiler
// was not allowed the instruction.
#ifdef __AVX512VNNI__
static void *spin_dpbusd(void *arg) {
  struct job *job = arg;
  __m512i x = _mm512_set1_epi8(3), y = _mm512_set1_epi8(-2);
  // Different starting values: identical chains would be merged by the compiler.
  __m512i a0 = _mm512_set1_epi32(0), a1 = _mm512_set1_epi32(1), a2 = _mm512_set1_epi32(2),
          a3 = _mm512_set1_epi32(3), a4 = _mm512_set1_epi32(4), a5 = _mm512_set1_epi32(5),
          a6 = _mm512_set1_epi32(6), a7 = _mm512_set1_epi32(7), a8 = _mm512_set1_epi32(8),
          a9 = _mm512_set1_epi32(9), a10 = _mm512_set1_epi32(10), a11 = _mm512_set1_epi32(11);
#define STEP(a) a = _mm512_dpbusd_epi32(a, x, y)
  for (int64_t k = 0; k < job->iters; ++k) {
    STEP(a0); STEP(a1); STEP(a2); STEP(a3); STEP(a4); STEP(a5);
    STEP(a6); STEP(a7); STEP(a8); STEP(a9); STEP(a10); STEP(a11);
  }
#undef STEP
  __m512i sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11;
  job->sink = (float)_mm512_reduce_add_epi32(sum);
  return 0;
}
#endif

double cuvil_bench_int8_gops(int threads, int64_t iters) {
#ifdef __AVX512VNNI__
  double t = run_spinners(threads, iters, spin_dpbusd);
  return t < 0 ? -1 : (double)threads * iters * CHAINS * 128 / t * 1e-9;
#else
  (void)threads; (void)iters;
  return -1;
#endif
}

// The AMX roofs (tdpbf16ps: a 16x32 by 32x16 bf16 tile product into 16x16
// f32, 16,384 FLOP per instruction; tdpbusd: 16x64 by 64x16 u8 x s8 into
// s32, 32,768 operations), what Cuvil's and oneDNN's bf16 and int8 kernels
// run on hosts with AMX: four accumulator tiles against two A and two B
// tiles loaded once, so the tile unit never waits for memory (measured on an
// Intel Xeon model 167 VM: 3,270 GFLOP/s bf16 and 6,390 GOP/s int8 per core,
// 27x and 7x the vdpbf16ps and vpdpbusd roofs). -1 where the compiler was not
// allowed the instructions (-march=native on a host without AMX) or Linux
// does not grant this process the tile state (arch_prctl, kernels < 5.16).
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AMX_INT8__)
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18 };

struct tile_config { uint8_t palette, start_row, reserved[14]; uint16_t colsb[16]; uint8_t rows[16]; };

// All eight tiles 16 rows of 64 bytes (palette 1); per thread.
static void configure_tiles(void) {
  struct tile_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (int i = 0; i < 8; ++i) { cfg.colsb[i] = 64; cfg.rows[i] = 16; }
  _tile_loadconfig(&cfg);
}

static int8_t amx_operands[4][1024] __attribute__((aligned(64)));

// The tile unit runs faster on zero tiles (Xeon model 207: 2,830 GFLOP/s
// bf16 with zero operands, 2,315 with varied ones, the rate real kernels
// can reach): the operands are varied bf16 values near 1 (the bytes, read
// as int8, vary too), the same on every run.
static void fill_amx_operands(void) {
  uint32_t state = 12345;
  uint16_t *halves = (uint16_t *)amx_operands;
  for (size_t i = 0; i < sizeof amx_operands / 2; ++i) {
    state = state * 1664525u + 1013904223u;
    halves[i] = (uint16_t)(0x3f80 ^ ((state >> 16) & 0x7f));
  }
}

// Four independent accumulators (tiles 0-3) against tiles 4-7, loaded once.
#define AMX_SPINNER(name, PRODUCT, acc_t)                                                      \
  static void *name(void *arg) {                                                               \
    struct job *job = arg;                                                                     \
    configure_tiles();                                                                         \
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);                                \
    _tile_loadd(4, amx_operands[0], 64); _tile_loadd(5, amx_operands[1], 64);                  \
    _tile_loadd(6, amx_operands[2], 64); _tile_loadd(7, amx_operands[3], 64);                  \
    for (int64_t k = 0; k < job->iters; ++k) {                                                 \
      PRODUCT(0, 4, 6); PRODUCT(1, 4, 7); PRODUCT(2, 5, 6); PRODUCT(3, 5, 7);                  \
    }                                                                                          \
    acc_t out[256] __attribute__((aligned(64)));                                               \
    _tile_stored(0, out, 64);                                                                  \
    _tile_release();                                                                           \
    job->sink = (float)out[0];                                                                 \
    return 0;                                                                                  \
  }
AMX_SPINNER(spin_amx_bf16, _tile_dpbf16ps, float)
AMX_SPINNER(spin_amx_int8, _tile_dpbusd, int32_t)
#undef AMX_SPINNER

static int amx_permitted(void) {
  fill_amx_operands();
  return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}
#endif

double cuvil_bench_amx_bf16_gflops(int threads, int64_t iters) {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AMX_INT8__)
  if (!amx_permitted()) return -1;
  double t = run_spinners(threads, iters, spin_amx_bf16);
  return t < 0 ? -1 : (double)threads * iters * 4 * 16 * 16 * 32 * 2 / t * 1e-9;
#else
  (void)threads; (void)iters;
  return -1;
#endif
}

double cuvil_bench_amx_int8_gops(int threads, int64_t iters) {
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AMX_INT8__)
  if (!amx_permitted()) return -1;
  double t = run_spinners(threads, iters, spin_amx_int8);
  return t < 0 ? -1 : (double)threads * iters * 4 * 16 * 16 * 64 * 2 / t * 1e-9;
#else
  (void)threads; (void)iters;
  return -1;
#endif
}

struct read_job { const vfloat *data; int64_t vectors, reps; float sink; };

static void *stream_read(void *arg) {
  struct read_job *job = arg;
  vfloat a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
  for (int64_t r = 0; r < job->reps; ++r)
    for (int64_t i = 0; i + 4 <= job->vectors; i += 4) {
      a0 += job->data[i]; a1 += job->data[i + 1]; a2 += job->data[i + 2]; a3 += job->data[i + 3];
    }
  vfloat sum = a0 + a1 + a2 + a3;
  job->sink = sum[0];
  return 0;
}

// GB/s per thread of `threads` threads each summing its own `bytes`-sized
// buffer `reps` times, all at once (buffers written before the clock starts).
double cuvil_bench_read_gbps(int threads, int64_t bytes, int64_t reps) {
  pthread_t tid[64];
  struct read_job jobs[64];
  if (threads < 1 || threads > 64 || bytes < 256) return -1;
  int64_t vectors = bytes / (int64_t)sizeof(vfloat);
  for (int i = 0; i < threads; ++i) {
    vfloat *data = aligned_alloc(64, vectors * sizeof(vfloat));
    if (!data) return -1;
    for (int64_t v = 0; v < vectors; ++v)
      for (int k = 0; k < LANES; ++k) data[v][k] = (float)(v & 7);
    jobs[i] = (struct read_job){data, vectors, reps, 0};
  }
  double t = now_s();
  for (int i = 0; i < threads; ++i)
    if (pthread_create(&tid[i], 0, stream_read, &jobs[i])) return -1;
  for (int i = 0; i < threads; ++i) pthread_join(tid[i], 0);
  t = now_s() - t;
  for (int i = 0; i < threads; ++i) free((void *)jobs[i].data);
  return (double)vectors * sizeof(vfloat) * reps / t * 1e-9;
}

static _Atomic int64_t pingPong;

static void *pong(void *arg) {
  int64_t rounds = *(int64_t *)arg;
  for (int64_t i = 0; i < rounds; ++i) {
    while (atomic_load_explicit(&pingPong, memory_order_acquire) != 2 * i + 1)
      ;
    atomic_store_explicit(&pingPong, 2 * i + 2, memory_order_release);
  }
  return 0;
}

// Nanoseconds for one one-way handoff of a cache line between two threads.
double cuvil_bench_handoff_ns(int64_t rounds) {
  pthread_t tid;
  atomic_store(&pingPong, 0);
  if (pthread_create(&tid, 0, pong, &rounds)) return -1;
  double t = now_s();
  for (int64_t i = 0; i < rounds; ++i) {
    atomic_store_explicit(&pingPong, 2 * i + 1, memory_order_release);
    while (atomic_load_explicit(&pingPong, memory_order_acquire) != 2 * i + 2)
      ;
  }
  t = now_s() - t;
  pthread_join(tid, 0);
  return t / (2.0 * rounds) * 1e9;
}
