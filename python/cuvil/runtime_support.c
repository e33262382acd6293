/* Runtime support linked into every Cuvil library (in-process and exported):
 * the MLIR runtime entry points lowered code may call, implemented here so
 * that artifacts depend on nothing but libc (not on libMLIR.so). */
#ifdef CUVIL_PROFILE
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 too */
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef CUVIL_PROFILE
#include <time.h>
#endif

/* ---- Heap temporaries ------------------------------------------------------
 * Lowered code allocates its temporaries through these three functions
 * (`finalize-memref-to-llvm{use-generic-functions}`). A model allocates and
 * frees the same sizes on every call, so freed blocks are kept in a small
 * per-library pool and handed out again: without it, glibc returns large
 * blocks to the kernel and every call pays their page faults again (~4% of
 * BERT-base). The pool is private to the library (these symbols are not
 * exported) and bounded in blocks and bytes. */
enum { POOL_SLOTS = 64 };
static const size_t POOL_MAX_BYTES = (size_t)256 << 20;
/* Smaller blocks skip the pool: glibc keeps them per thread without page
 * faults, while the pool's one lock and list, shared by the threads of a
 * parallel loop allocating a small buffer per tile (the intermediates of a
 * row chain), made the threads wait on each other: a softmax kernel ran no
 * faster on 2 threads than on 1. */
static const size_t POOL_MIN_BYTES = (size_t)64 << 10;

typedef struct {
  void *base;   /* what aligned_alloc returned */
  size_t size;  /* requested bytes */
  size_t align; /* requested alignment */
} BlockHeader;  /* sits right before the pointer handed out */

/* Freed blocks, most recently freed last: a block freed just now is still in
 * cache, so allocation looks from the top. */
static struct {
  void *ptr;
  size_t size, align;
} pool[POOL_SLOTS];
static int pooled;
static size_t pooledBytes;
static atomic_flag poolLock = ATOMIC_FLAG_INIT;

static void lockPool(void) {
  while (atomic_flag_test_and_set_explicit(&poolLock, memory_order_acquire))
    ;
}
static void unlockPool(void) { atomic_flag_clear_explicit(&poolLock, memory_order_release); }

static BlockHeader *headerOf(void *ptr) { return (BlockHeader *)ptr - 1; }

static void *freshBlock(uint64_t align, uint64_t size) {
  /* aligned_alloc wants a multiple of the alignment. */
  size_t total = (size + align + align - 1) / align * align;
  char *base = aligned_alloc(align, total);
  if (!base)
    return NULL;
  char *ptr = base + align;
  *headerOf(ptr) = (BlockHeader){base, size, align};
  return ptr;
}

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t align, uint64_t size) {
  if (align < 64)
    align = 64; /* cache lines, and room for the header below */
  if (size < POOL_MIN_BYTES)
    return freshBlock(align, size);
  lockPool();
  for (int i = pooled - 1; i >= 0; --i) {
    if (pool[i].size == size && pool[i].align == align) {
      void *ptr = pool[i].ptr;
      memmove(&pool[i], &pool[i + 1], (size_t)(pooled - i - 1) * sizeof(pool[0]));
      --pooled;
      pooledBytes -= size;
      unlockPool();
      return ptr;
    }
  }
  unlockPool();
  return freshBlock(align, size);
}

void *_mlir_memref_to_llvm_alloc(uint64_t size) { return _mlir_memref_to_llvm_aligned_alloc(64, size); }

void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  BlockHeader header = *headerOf(ptr);
  if (header.size < POOL_MIN_BYTES) {
    free(header.base);
    return;
  }
  lockPool();
  if (pooled < POOL_SLOTS && pooledBytes + header.size <= POOL_MAX_BYTES) {
    pool[pooled].ptr = ptr;
    pool[pooled].size = header.size;
    pool[pooled].align = header.align;
    ++pooled;
    pooledBytes += header.size;
    unlockPool();
    return;
  }
  unlockPool();
  free(header.base);
}

typedef struct {
  int64_t rank;
  void *descriptor;
} CuvilUnrankedMemRef;

typedef struct {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[];
} CuvilStridedMemRef;

/* Strided copy of `elemSize`-byte elements from src to dst (same shape). */
void memrefCopy(int64_t elemSize, CuvilUnrankedMemRef *srcArg, CuvilUnrankedMemRef *dstArg) {
  int64_t rank = srcArg->rank;
  CuvilStridedMemRef *src = (CuvilStridedMemRef *)srcArg->descriptor;
  CuvilStridedMemRef *dst = (CuvilStridedMemRef *)dstArg->descriptor;
  const int64_t *sizes = src->sizesAndStrides;
  const int64_t *srcStrides = src->sizesAndStrides + rank;
  const int64_t *dstStrides = dst->sizesAndStrides + rank;
  char *s = src->aligned + src->offset * elemSize;
  char *d = dst->aligned + dst->offset * elemSize;
  if (rank == 0) {
    memcpy(d, s, elemSize);
    return;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (sizes[i] == 0)
      return;
  /* Unit inner strides on both sides: copy whole rows at a time. */
  int64_t inner = 1, rowBytes = elemSize;
  if (srcStrides[rank - 1] == 1 && dstStrides[rank - 1] == 1) {
    inner = sizes[rank - 1];
    rowBytes = inner * elemSize;
  }
  int64_t index[64] = {0};
  int64_t sOff = 0, dOff = 0;
  for (;;) {
    memcpy(d + dOff * elemSize, s + sOff * elemSize, rowBytes);
    int64_t axis = inner > 1 ? rank - 2 : rank - 1;
    for (; axis >= 0; --axis) {
      if (++index[axis] < sizes[axis]) {
        sOff += srcStrides[axis];
        dOff += dstStrides[axis];
        break;
      }
      sOff -= (sizes[axis] - 1) * srcStrides[axis];
      dOff -= (sizes[axis] - 1) * dstStrides[axis];
      index[axis] = 0;
    }
    if (axis < 0)
      return;
  }
}

/* ---- Kernel profile ---------------------------------------------------------
 * Compiled in (-DCUVIL_PROFILE) only for libraries built with `profile=True`
 * (pass cuvil-profile-kernels), whose kernel calls call these
 * around every kernel call: per kernel id, how many calls and how many
 * nanoseconds. Kernels are called from the thread that runs `main`, one at a
 * time; a library run from two threads at once gets approximate counts (the
 * counters are atomic, the attribution of overlapping calls is not). */
/* Errors compiled code reports instead of trapping or reading out of bounds
 * (cuvil-guard-integer-division, cuvil-check-gather-indices): the first one is
 * kept until the caller takes it after the call (cuvil.execution,
 * cuvil_model_run). Codes: 1 = integer division by zero, 2 = a gather index
 * out of range (cuvil-check-gather-indices). */
static _Atomic int32_t runtimeError;

void cuvil_runtime_error(int32_t code) {
  int32_t none = 0;
  atomic_compare_exchange_strong_explicit(&runtimeError, &none, code, memory_order_relaxed,
                                          memory_order_relaxed);
}

/* The error reported since the last call of this function (0: none); exported. */
int32_t cuvil_runtime_take_error(void) {
  return atomic_exchange_explicit(&runtimeError, 0, memory_order_relaxed);
}

#ifdef CUVIL_PROFILE
enum { PROFILE_KERNELS = 4096 };
static _Atomic uint64_t profileCalls[PROFILE_KERNELS];
static _Atomic uint64_t profileNanos[PROFILE_KERNELS];

int64_t cuvil_profile_clock(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

void cuvil_profile_record(int64_t kernel, int64_t start) {
  if (kernel < 0 || kernel >= PROFILE_KERNELS)
    return;
  atomic_fetch_add_explicit(&profileCalls[kernel], 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&profileNanos[kernel], (uint64_t)(cuvil_profile_clock() - start),
                            memory_order_relaxed);
}

/* Copies the counters of kernels 0..n-1 out (exported, read by Python);
 * returns how many kernel ids the library can record. */
int64_t cuvil_profile_read(int64_t n, uint64_t *calls, uint64_t *nanos) {
  for (int64_t i = 0; i < n && i < PROFILE_KERNELS; ++i) {
    calls[i] = atomic_load_explicit(&profileCalls[i], memory_order_relaxed);
    nanos[i] = atomic_load_explicit(&profileNanos[i], memory_order_relaxed);
  }
  return PROFILE_KERNELS;
}

void cuvil_profile_reset(void) {
  for (int i = 0; i < PROFILE_KERNELS; ++i) {
    atomic_store_explicit(&profileCalls[i], 0, memory_order_relaxed);
    atomic_store_explicit(&profileNanos[i], 0, memory_order_relaxed);
  }
}
#endif /* CUVIL_PROFILE */

/* ---- AMX tile state ----------------------------------------------------------
 * Linux hands a process AMX's tile registers only once it asks
 * (arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA)); until then the first
 * tile instruction is SIGILL. Asked when the library is loaded, for the whole
 * process (threads started later inherit it). The kernels use AMX only where
 * the compile-time CPU features had it; elsewhere the request fails, harmlessly,
 * and nothing asks again. */
#if defined(__linux__) && defined(__x86_64__)
__attribute__((constructor)) static void cuvilRequestAmxTiles(void) {
  const long archReqXcompPerm = 0x1023, xfeatureXtiledata = 18;
  (void)syscall(SYS_arch_prctl, archReqXcompPerm, xfeatureXtiledata);
}
#endif
