"""Multi-threaded libraries run on Cuvil's own implementation of the MLIR
async runtime ABI (python/cuvil/parallel_runtime.c): numerics under many
parallel regions and concurrent callers, a worker pool of the compiled size,
and no libLLVM / libmlir_async_runtime dependency.

2 threads and more take different pipelines (lowering.parallel_passes): 2
splits each parallel loop into two contiguous halves; 3 and more leave the
sharding to async-parallel-for (num-workers=N) and the shared task queue, the
default on larger hosts. On a small CI machine 3 and 4 threads oversubscribe
the cores: the results must not change."""
import os
import subprocess
import threading

import pytest
import torch

import cuvil

THREADS = [2, 3, 4]


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(),
                               torch.nn.Linear(1024, 256), torch.nn.LayerNorm(256)).eval()


def _native_threads() -> set:
    """This process's threads that Python did not start (Cuvil's workers)."""
    python = {t.native_id for t in threading.enumerate()}
    return {int(tid) for tid in os.listdir("/proc/self/task")} - python


@pytest.mark.parametrize("num_threads", THREADS)
def test_library_is_self_contained_and_correct(num_threads):
    model = _mlp()
    x0 = torch.randn(64, 256)
    with torch.no_grad():
        model(x0)
    # Whatever threads compiling itself starts once (before counting workers).
    cuvil.compile(model, example_inputs=(x0,), num_threads=1)
    before = _native_threads()
    fast = cuvil.compile(model, example_inputs=(x0,), num_threads=num_threads)
    fast(x0)
    # The pool: the caller and num_threads - 1 workers, whatever the host's cores.
    assert len(_native_threads() - before) == num_threads - 1

    path = fast.library_path
    deps = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    assert "libc.so" in deps, deps
    assert "async_runtime" not in deps and "libLLVM" not in deps and "libMLIR" not in deps
    exported = subprocess.run(["nm", "-D", "--defined-only", path],
                              capture_output=True, text=True, check=True).stdout
    assert "_mlir_ciface_main" in exported
    assert "mlirAsyncRuntime" not in exported    # the runtime stays private to the library...
    local = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    assert " t mlirAsyncRuntimeExecute\n" in local   # ...but is in it: the code is parallel
    with torch.no_grad():
        for seed in range(20):                   # hundreds of parallel regions
            x = torch.randn(64, 256, generator=torch.Generator().manual_seed(seed))
            torch.testing.assert_close(fast(x), model(x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("num_threads", THREADS)
def test_concurrent_callers_share_the_worker_pool(num_threads):
    model = _mlp()
    fast = cuvil.compile(model, example_inputs=(torch.randn(64, 256),), num_threads=num_threads)
    inputs = [torch.randn(64, 256, generator=torch.Generator().manual_seed(s)) for s in range(4)]
    with torch.no_grad():
        want = [model(x) for x in inputs]
    got, errors = [None] * len(inputs), []

    def work(i):
        try:
            for _ in range(10):
                got[i] = fast(inputs[i])
                torch.testing.assert_close(got[i], want[i], rtol=1e-4, atol=1e-5)
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and not any(t.is_alive() for t in threads), errors
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
