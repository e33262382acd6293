"""Multi-threaded libraries run on Cuvil's own implementation of the MLIR
async runtime ABI (python/cuvil/parallel_runtime.c): numerics under many
parallel regions and concurrent callers, and no libLLVM / libmlir_async_runtime
dependency."""
import subprocess
import threading

import torch

import cuvil


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(),
                               torch.nn.Linear(1024, 256), torch.nn.LayerNorm(256)).eval()


def test_two_thread_library_is_self_contained_and_correct():
    model = _mlp()
    fast = cuvil.compile(model, example_inputs=(torch.randn(64, 256),), num_threads=2)
    path = fast._last.library.path
    deps = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    assert "async_runtime" not in deps and "libLLVM" not in deps and "libMLIR" not in deps
    nm = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True).stdout
    assert "mlirAsyncRuntime" not in nm          # the runtime stays private to the library
    with torch.no_grad():
        for seed in range(20):                   # hundreds of parallel regions
            x = torch.randn(64, 256, generator=torch.Generator().manual_seed(seed))
            torch.testing.assert_close(fast(x), model(x), rtol=1e-4, atol=1e-5)


def test_concurrent_callers_share_the_worker_pool():
    model = _mlp()
    fast = cuvil.compile(model, example_inputs=(torch.randn(64, 256),), num_threads=2)
    inputs = [torch.randn(64, 256, generator=torch.Generator().manual_seed(s)) for s in range(4)]
    with torch.no_grad():
        want = [model(x) for x in inputs]
    got, errors = [None] * len(inputs), []

    def work(i):
        try:
            for _ in range(10):
                got[i] = fast(inputs[i])
        except Exception as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors and not any(t.is_alive() for t in threads)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
