/* The MLIR async runtime ABI (mlir/ExecutionEngine/AsyncRuntime.h), as used by
 * `async-parallel-for` + `convert-async-to-llvm`, implemented for Cuvil's
 * multi-threaded libraries in place of libmlir_async_runtime.so.
 *
 * Why: upstream runs tasks on an llvm::ThreadPool whose idle workers sleep on a
 * condition variable; waking one costs ~0.05-0.1 ms on the test VM, and a model
 * runs hundreds of parallel regions per call (one per kernel), each a few tens
 * of microseconds of work. Here idle workers spin for a while before sleeping,
 * and a thread waiting for a group runs queued tasks itself instead of blocking.
 * It also makes N-thread libraries depend on libc only (no libLLVM.so).
 *
 * Objects (tokens, values, groups) are reference counted as upstream (tokens
 * and values start with two references, groups with one; see newObject),
 * destroyed when the count drops to zero. Each has a mutex
 * guarding its state and its awaiters; the task queue has its own. */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

typedef void (*CoroResume)(void *);

/* ---- the task queue and its workers ------------------------------------- */

typedef struct Task {
  void *handle;
  CoroResume resume;
  struct Task *next;
} Task;

/* Polling rounds before an idle worker sleeps (~0.3 ms), so that a worker
 * stays awake through the short serial stretches of a model call: a worker
 * that has gone to sleep costs a futex wake-up at the next parallel region.
 * CUVIL_SPIN_ROUNDS overrides it (0: sleep at once). */
static int SPIN_ROUNDS = 200000;

static struct {
  pthread_mutex_t mu;
  pthread_cond_t wake;
  Task *head, *tail;
  atomic_int queued;   /* tasks in the queue (read without the lock) */
  int sleepers;        /* workers blocked on `wake` */
  int numWorkers;      /* threads besides the caller */
  pthread_t *workers;
  bool stopping;
  pthread_once_t once;
} pool = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL, NULL, 0, 0, 0, NULL, false,
          PTHREAD_ONCE_INIT};

/* No `pause` in the polling loops: in a VM, pause loops trigger pause-loop
 * exits and the hypervisor deschedules the spinning vCPU; measured here, that
 * made 2-thread runs bimodal per process (ResNet-18 26 or 34 ms, MLP 16 or
 * 26 ms, BERT-base 121 or 140 ms). A plain load loop was stable at the low end. */
static inline void cpuRelax(void) { __asm__ __volatile__("" ::: "memory"); }

/* One queued task, or NULL. */
static Task *popTask(void) {
  if (atomic_load_explicit(&pool.queued, memory_order_acquire) == 0)
    return NULL;
  pthread_mutex_lock(&pool.mu);
  Task *t = pool.head;
  if (t) {
    pool.head = t->next;
    if (!pool.head)
      pool.tail = NULL;
    atomic_fetch_sub_explicit(&pool.queued, 1, memory_order_release);
  }
  pthread_mutex_unlock(&pool.mu);
  return t;
}

static bool runOneTask(void) {
  Task *t = popTask();
  if (!t)
    return false;
  void *handle = t->handle;
  CoroResume resume = t->resume;
  free(t);
  resume(handle);
  return true;
}

static void *workerMain(void *arg) {
  (void)arg;
  for (;;) {
    int idle = 0;
    while (idle < SPIN_ROUNDS) {
      if (runOneTask())
        idle = 0;
      else {
        ++idle;
        cpuRelax();
      }
    }
    pthread_mutex_lock(&pool.mu);
    while (!pool.head && !pool.stopping) {
      ++pool.sleepers;
      pthread_cond_wait(&pool.wake, &pool.mu);
      --pool.sleepers;
    }
    bool stop = pool.stopping && !pool.head;
    pthread_mutex_unlock(&pool.mu);
    if (stop)
      return NULL;
  }
}

/* The thread count the library was compiled for (artifact.py passes it), the
 * calling thread included; the online CPUs when built without it. */
#ifndef CUVIL_NUM_THREADS
#define CUVIL_NUM_THREADS 0
#endif

static void startWorkers(void) {
  const char *spin = getenv("CUVIL_SPIN_ROUNDS");
  if (spin && atoi(spin) >= 0)
    SPIN_ROUNDS = atoi(spin);
  long threads = CUVIL_NUM_THREADS > 0 ? CUVIL_NUM_THREADS : sysconf(_SC_NPROCESSORS_ONLN);
  pool.numWorkers = threads > 1 ? (int)threads - 1 : 1;
  pool.workers = calloc((size_t)pool.numWorkers, sizeof(pthread_t));
  for (int i = 0; i < pool.numWorkers; ++i)
    if (pthread_create(&pool.workers[i], NULL, workerMain, NULL) != 0)
      pool.workers[i] = 0;
}

/* Workers reference this library's code: stop them before it is unloaded. */
__attribute__((destructor)) static void stopWorkers(void) {
  if (!pool.workers)
    return;
  pthread_mutex_lock(&pool.mu);
  pool.stopping = true;
  pthread_cond_broadcast(&pool.wake);
  pthread_mutex_unlock(&pool.mu);
  for (int i = 0; i < pool.numWorkers; ++i)
    if (pool.workers[i])
      pthread_join(pool.workers[i], NULL);
}

void mlirAsyncRuntimeExecute(void *handle, CoroResume resume) {
  pthread_once(&pool.once, startWorkers);
  Task *t = malloc(sizeof(Task));
  if (!t) { /* no memory for a queue entry: run it here */
    resume(handle);
    return;
  }
  *t = (Task){handle, resume, NULL};
  pthread_mutex_lock(&pool.mu);
  if (pool.tail)
    pool.tail->next = t;
  else
    pool.head = t;
  pool.tail = t;
  atomic_fetch_add_explicit(&pool.queued, 1, memory_order_release);
  if (pool.sleepers)
    pthread_cond_signal(&pool.wake);
  pthread_mutex_unlock(&pool.mu);
}

int64_t mlirAsyncRuntimGetNumWorkerThreads(void) {
  pthread_once(&pool.once, startWorkers);
  return pool.numWorkers + 1;
}

/* ---- tokens, values, groups --------------------------------------------- */

enum Kind { TOKEN, VALUE, GROUP };
enum State { PENDING, READY, ERROR };

/* Something to do when an object becomes ready: resume a coroutine, or count
 * a token of a group down. */
typedef struct Awaiter {
  void *handle;
  CoroResume resume;
  struct Object *group;
  struct Awaiter *next;
} Awaiter;

typedef struct Object {
  atomic_int_fast64_t refs;
  enum Kind kind;
  pthread_mutex_t mu;
  atomic_int state;            /* tokens and values */
  atomic_int_fast64_t pending; /* groups: tokens not ready yet */
  atomic_int_fast64_t rank;    /* groups: tokens added so far */
  atomic_int_fast64_t errors;  /* groups */
  Awaiter *awaiters;
  void *storage; /* values */
} Object;

/* Tokens and values start with two references, as upstream: one for the
 * caller of async.execute, one dropped by the task when it emplaces them. */
static Object *newObject(enum Kind kind) {
  Object *o = calloc(1, sizeof(Object));
  if (!o)
    abort();
  atomic_init(&o->refs, kind == GROUP ? 1 : 2);
  o->kind = kind;
  pthread_mutex_init(&o->mu, NULL);
  return o;
}

void mlirAsyncRuntimeAddRef(void *ptr, int64_t n) {
  atomic_fetch_add_explicit(&((Object *)ptr)->refs, n, memory_order_relaxed);
}

void mlirAsyncRuntimeDropRef(void *ptr, int64_t n) {
  Object *o = ptr;
  if (atomic_fetch_sub_explicit(&o->refs, n, memory_order_acq_rel) == n) {
    pthread_mutex_destroy(&o->mu);
    free(o->storage);
    free(o);
  }
}

void *mlirAsyncRuntimeCreateToken(void) { return newObject(TOKEN); }

void *mlirAsyncRuntimeCreateValue(int64_t size) {
  Object *o = newObject(VALUE);
  o->storage = calloc(1, size > 0 ? (size_t)size : 1);
  return o;
}

void *mlirAsyncRuntimeCreateGroup(int64_t size) {
  Object *o = newObject(GROUP);
  atomic_init(&o->pending, size);
  return o;
}

void *mlirAsyncRuntimeGetValueStorage(void *value) { return ((Object *)value)->storage; }

static void groupTokenReady(Object *group, bool error);

/* Runs (and frees) awaiters taken off an object that just became ready. */
static void runAwaiters(Awaiter *a, bool error) {
  while (a) {
    Awaiter *next = a->next;
    if (a->group) {
      groupTokenReady(a->group, error);
      mlirAsyncRuntimeDropRef(a->group, 1);
    } else {
      mlirAsyncRuntimeExecute(a->handle, a->resume);
    }
    free(a);
    a = next;
  }
}

static void groupTokenReady(Object *group, bool error) {
  if (error)
    atomic_fetch_add(&group->errors, 1);
  if (atomic_fetch_sub_explicit(&group->pending, 1, memory_order_acq_rel) == 1) {
    pthread_mutex_lock(&group->mu);
    Awaiter *a = group->awaiters;
    group->awaiters = NULL;
    pthread_mutex_unlock(&group->mu);
    runAwaiters(a, false);
  }
}

static void settle(Object *o, enum State state) {
  pthread_mutex_lock(&o->mu);
  atomic_store_explicit(&o->state, state, memory_order_release);
  Awaiter *a = o->awaiters;
  o->awaiters = NULL;
  pthread_mutex_unlock(&o->mu);
  runAwaiters(a, state == ERROR);
  mlirAsyncRuntimeDropRef(o, 1); /* the task's reference */
}

void mlirAsyncRuntimeEmplaceToken(void *token) { settle(token, READY); }
void mlirAsyncRuntimeEmplaceValue(void *value) { settle(value, READY); }
void mlirAsyncRuntimeSetTokenError(void *token) { settle(token, ERROR); }
void mlirAsyncRuntimeSetValueError(void *value) { settle(value, ERROR); }

bool mlirAsyncRuntimeIsTokenError(void *token) {
  return atomic_load(&((Object *)token)->state) == ERROR;
}
bool mlirAsyncRuntimeIsValueError(void *value) {
  return atomic_load(&((Object *)value)->state) == ERROR;
}
bool mlirAsyncRuntimeIsGroupError(void *group) {
  return atomic_load(&((Object *)group)->errors) > 0;
}

int64_t mlirAsyncRuntimeAddTokenToGroup(void *tokenPtr, void *groupPtr) {
  Object *token = tokenPtr, *group = groupPtr;
  int64_t rank = atomic_fetch_add(&group->rank, 1);
  pthread_mutex_lock(&token->mu);
  int state = atomic_load_explicit(&token->state, memory_order_acquire);
  if (state == PENDING) {
    Awaiter *a = calloc(1, sizeof(Awaiter));
    if (!a)
      abort();
    mlirAsyncRuntimeAddRef(group, 1); /* alive until the token is ready */
    a->group = group;
    a->next = token->awaiters;
    token->awaiters = a;
    pthread_mutex_unlock(&token->mu);
    return rank;
  }
  pthread_mutex_unlock(&token->mu);
  groupTokenReady(group, state == ERROR);
  return rank;
}

/* Waiting threads run queued tasks (the tasks they wait for, typically). */
static void helpUntil(bool (*done)(Object *), Object *o) {
  int idle = 0;
  while (!done(o)) {
    if (runOneTask()) {
      idle = 0;
    } else if (++idle < SPIN_ROUNDS) {
      cpuRelax();
    } else {
      sched_yield();
    }
  }
}

static bool isSettled(Object *o) { return atomic_load_explicit(&o->state, memory_order_acquire) != PENDING; }
static bool isEmpty(Object *o) { return atomic_load_explicit(&o->pending, memory_order_acquire) == 0; }

void mlirAsyncRuntimeAwaitToken(void *token) { helpUntil(isSettled, token); }
void mlirAsyncRuntimeAwaitValue(void *value) { helpUntil(isSettled, value); }
void mlirAsyncRuntimeAwaitAllInGroup(void *group) { helpUntil(isEmpty, group); }

/* Resume `handle` once `o` is ready (now, from a worker, if it already is). */
static void awaitAndExecute(Object *o, bool (*ready)(Object *), void *handle, CoroResume resume) {
  pthread_mutex_lock(&o->mu);
  if (!ready(o)) {
    Awaiter *a = calloc(1, sizeof(Awaiter));
    if (!a)
      abort();
    a->handle = handle;
    a->resume = resume;
    a->next = o->awaiters;
    o->awaiters = a;
    pthread_mutex_unlock(&o->mu);
    return;
  }
  pthread_mutex_unlock(&o->mu);
  resume(handle);
}

void mlirAsyncRuntimeAwaitTokenAndExecute(void *token, void *handle, CoroResume resume) {
  awaitAndExecute(token, isSettled, handle, resume);
}
void mlirAsyncRuntimeAwaitValueAndExecute(void *value, void *handle, CoroResume resume) {
  awaitAndExecute(value, isSettled, handle, resume);
}
void mlirAsyncRuntimeAwaitAllInGroupAndExecute(void *group, void *handle, CoroResume resume) {
  awaitAndExecute(group, isEmpty, handle, resume);
}
