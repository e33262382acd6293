"""PyTorch's own op database (torch.testing._internal.common_methods_invocations.op_db:
~700 ops, each with sample inputs) through cuvil.compile, compared with eager.

    python scripts/opdb_conformance.py --jobs 2        # all cases -> conformance/opdb/
    python scripts/opdb_conformance.py -k sort         # cases whose name contains "sort"; prints, writes nothing

A case is one op, one dtype and one of its samples: float32 (the first
SAMPLES[float32] samples) and, where the op takes them, int64 and bool (the
first sample). The samples are drawn with a seed fixed per op and dtype, so
a case is the same module and the same inputs on every run. The module calls
the op's function variant on the sample's tensors, which are its inputs
(every other argument is a constant of the module); each case compiles in a
worker process (scripts/conformance_runner.py) and its outputs are compared
with eager's on the same inputs: dtypes and shapes exactly, float32 within
rtol 1e-5 / atol 1e-5 (NaNs equal), integers and bools exactly; but the
values of `empty*` (uninitialized) and of random ops (RANDOM) are not compared, a float32
output that differs passes when each element is as close to eager's float64
result as eager's float32 one (plus the tolerance; _closer_to_float64), and the indices of
sort / argsort / topk / kthvalue pass when they pick the values eager's pick
(eager leaves the order of ties unspecified). Outcomes:

  pass         every output matches
  wrong        it ran, an output differs (value, shape or dtype)
  unsupported  Cuvil refused it by name (UnsupportedOpError: an op, a dtype)
  error        any other failure (the message is kept)
  crash        the worker died (signal) or took more than --timeout seconds
  eager-error  eager itself raises on the sample (not counted in the rates)

The full run writes conformance/opdb/results.json (per case) and README.md
(the rates, the failures by reason, the table per op), which are kept in the
repository; test/pytest/test_opdb_conformance.py reruns a fixed sample.
"""
import collections
import json
import sys
import time
import warnings
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conformance_runner as runner  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "conformance" / "opdb"
DTYPES = ("float32", "int64", "bool")
SAMPLES = {"float32": 2, "int64": 1, "bool": 1}
TOLERANCE = dict(rtol=1e-5, atol=1e-5)
# Ops whose output values eager leaves unspecified (uninitialized memory):
# only their shapes and dtypes are compared.
UNINITIALIZED = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted"}
# Ops that draw random numbers (cuvil.importer_random; eager's generator is
# another one): only shapes and dtypes are compared here; test_random.py
# checks their distributions.
RANDOM = {"bernoulli", "cauchy", "exponential", "geometric", "log_normal", "multinomial", "normal",
          "rand_like", "randint", "randint_like", "randn", "randn_like", "uniform", "nn.functional.dropout",
          "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.alpha_dropout",
          "nn.functional.feature_alpha_dropout", "nn.functional.rrelu", "nn.functional.fractional_max_pool2d",
          "nn.functional.fractional_max_pool3d", "pca_lowrank", "svd_lowrank"}
# Ops returning indices whose order among equal values eager leaves
# unspecified (its sort is stable only when asked): an index output passes
# when it picks the same values as eager's.
TIE_ORDER = {"sort", "argsort", "topk", "kthvalue"}


def _op_db():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return {op.name + (f".{op.variant_test_name}" if op.variant_test_name else ""): op for op in op_db}


def _samples(op, key: str, dtype_name: str, count: int):
    """The op's first `count` samples for the dtype, drawn with a fixed seed."""
    import torch
    dtype = getattr(torch, dtype_name)
    torch.manual_seed(zlib.crc32(f"{key}:{dtype_name}".encode()))
    samples = []
    for s in op.sample_inputs("cpu", dtype, requires_grad=False):
        samples.append(s)
        if len(samples) == count:
            break
    return samples


class Case:
    def __init__(self, key: str, op, dtype: str, index: int):
        self.name, self.key, self.op, self.dtype, self.index = f"{key}:{dtype}:{index}", key, op, dtype, index


class Cases:
    """name -> Case, looked up lazily: a worker draws the samples of its case's
    op only."""

    def __init__(self):
        self.ops = _op_db()

    def __getitem__(self, name: str) -> Case:
        key, dtype, index = name.rsplit(":", 2)
        return Case(key, self.ops[key], dtype, int(index))

    def names(self):
        import torch
        names = []
        for key, op in sorted(self.ops.items()):
            supported = op.supported_dtypes("cpu")
            for dtype in DTYPES:
                if getattr(torch, dtype) not in supported:
                    continue
                try:
                    n = len(_samples(op, key, dtype, SAMPLES[dtype]))
                except Exception:   # noqa: BLE001 - an op whose samples cannot be drawn here has no case
                    n = 0
                names += [f"{key}:{dtype}:{i}" for i in range(n)]
        return names


def all_cases():
    return Cases()


class OpModule:
    """The module of a case: the op's function variant, the sample's tensors
    as inputs, its other arguments constants."""

    @staticmethod
    def build(op, sample):
        import torch
        from torch.utils._pytree import tree_flatten, tree_unflatten
        leaves, spec = tree_flatten((sample.input, sample.args, sample.kwargs))
        slots = [i for i, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]
        inputs = [leaves[i] for i in slots]

        class Module(torch.nn.Module):
            def forward(self, *tensors):
                filled = list(leaves)
                for i, t in zip(slots, tensors):
                    filled[i] = t
                x, args, kwargs = tree_unflatten(filled, spec)
                return op.op(x, *args, **kwargs)

        return Module().eval(), inputs


def _same_picks(case, sample, got, want) -> bool:
    """Whether index outputs `got` and `want` of a TIE_ORDER op pick equal values."""
    import torch
    x, args, kwargs = sample.input, sample.args, sample.kwargs
    position = 0 if case.op.name in ("sort", "argsort") else 1
    dim = kwargs.get("dim", args[position] if len(args) > position and not isinstance(args[position], bool) else -1)
    if not isinstance(x, torch.Tensor) or x.dim() == 0:
        return False
    if got.dim() < x.dim():   # kthvalue without keepdim
        got, want = got.unsqueeze(dim), want.unsqueeze(dim)
    return torch.equal(x.gather(dim, got), x.gather(dim, want))


def _compare(got, want, case=None, sample=None) -> str:
    import torch
    from torch.utils._pytree import tree_flatten
    g, _ = tree_flatten(got)
    w, _ = tree_flatten(want)
    if len(g) != len(w):
        return f"{len(g)} outputs, expected {len(w)}"
    for i, (a, b) in enumerate(zip(g, w)):
        if not isinstance(b, torch.Tensor):
            a = a.item() if isinstance(a, torch.Tensor) and a.numel() == 1 else a
            if a != b:
                return f"output {i}: {a!r}, expected {b!r}"
            continue
        if not isinstance(a, torch.Tensor):
            return f"output {i}: a {type(a).__name__}, expected a tensor"
        if a.dtype != b.dtype:
            return f"output {i}: dtype {a.dtype}, expected {b.dtype}"
        if a.shape != b.shape:
            return f"output {i}: shape {tuple(a.shape)}, expected {tuple(b.shape)}"
        if case is not None and (case.op.name in UNINITIALIZED or case.op.name in RANDOM):
            continue
        exact = not (b.is_floating_point() or b.is_complex())
        if (exact and case is not None and case.op.name in TIE_ORDER and b.dtype == torch.int64
                and not torch.equal(a, b) and _same_picks(case, sample, a, b)):
            continue
        try:
            torch.testing.assert_close(a, b, equal_nan=True, **(dict(rtol=0, atol=0) if exact else TOLERANCE))
        except AssertionError as err:
            mismatch = next((line.strip() for line in str(err).splitlines() if "Greatest" in line), "values differ")
            return f"output {i}: {mismatch}"
    return ""


def _closer_to_float64(module, inputs, got, want, case=None, sample=None) -> str:
    """For a float32 case whose outputs differ from eager's: why they still
    pass when they are as accurate as eager's float32 ones against eager on
    the inputs in float64 (Cuvil computes some ops in float64, e.g.
    matrix_exp, where eager's float32 rounding is the larger error): every
    element's distance to the float64 result is at most eager float32's
    plus the tolerance; every other output as _compare wants it, dtypes and
    shapes exactly. "" when not (or when float64 eager cannot run)."""
    import torch
    from torch.utils._pytree import tree_flatten
    try:
        with torch.no_grad():
            ref = module(*[t.double() if t.is_floating_point() else t.clone() for t in inputs])
    except Exception:   # noqa: BLE001 - no float64 reference: the mismatch stands
        return ""
    g, _ = tree_flatten(got)
    w, _ = tree_flatten(want)
    r, _ = tree_flatten(ref)
    if not (len(g) == len(w) == len(r)):
        return ""
    worst = [0.0, 0.0]
    for a, b, c in zip(g, w, r):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and b.is_floating_point()):
            if _compare(a, b, case, sample):
                return ""
            continue
        if a.dtype != b.dtype or a.shape != b.shape or not isinstance(c, torch.Tensor) or c.shape != b.shape:
            return ""
        a, b, c = a.double(), b.double(), c.double()
        both_nan = torch.isnan(a) & torch.isnan(c)
        err_got = torch.where(both_nan, 0.0, (a - c).abs())
        err_eager = torch.where(torch.isnan(b) & torch.isnan(c), 0.0, (b - c).abs())
        allowed = err_eager + TOLERANCE["atol"] + TOLERANCE["rtol"] * c.abs()
        if not bool((err_got <= allowed).all()):   # also False where only one side is NaN
            return ""
        worst = [max(worst[0], float(err_got.max())), max(worst[1], float(err_eager.nan_to_num().max()))]
    return (f"differs from eager float32, as close to eager float64 (max error {worst[0]:.3g}; "
            f"eager float32's {worst[1]:.3g})")


def run_case(case: Case) -> dict:
    """Compiles and runs one case; its outcome and a short detail."""
    import torch

    import cuvil
    try:
        sample = _samples(case.op, case.key, case.dtype, case.index + 1)[case.index]
        module, inputs = OpModule.build(case.op, sample)
    except Exception as err:   # noqa: BLE001
        return dict(status="eager-error", detail=f"sample: {type(err).__name__}: {runner.first_line(str(err))}")
    try:
        with torch.no_grad():
            want = module(*[t.clone() for t in inputs])
    except Exception as err:   # noqa: BLE001
        return dict(status="eager-error", detail=f"{type(err).__name__}: {runner.first_line(str(err))}")
    try:
        got = cuvil.compile(module)(*[t.clone() for t in inputs])
        why = _compare(got, want, case, sample)
        if why and case.dtype == "float32":
            closer = _closer_to_float64(module, inputs, got, want, case, sample)
            if closer:
                return dict(status="pass", detail=closer)
        return dict(status="wrong", detail=why) if why else dict(status="pass", detail="")
    except cuvil.UnsupportedOpError as err:
        return dict(status="unsupported", detail=runner.first_line(str(err)))
    except Exception as err:   # noqa: BLE001 - every failure is an outcome here
        return dict(status="error", detail=f"{type(err).__name__}: {runner.first_line(str(err))}")


def summarize(results: dict) -> dict:
    counted = {n: r for n, r in results.items() if r["status"] != "eager-error"}
    by_op = collections.defaultdict(collections.Counter)
    by_dtype = collections.defaultdict(collections.Counter)
    for name, r in counted.items():
        key, dtype, _ = name.rsplit(":", 2)
        by_op[key][r["status"]] += 1
        by_dtype[dtype][r["status"]] += 1
    total = collections.Counter(r["status"] for r in results.values())
    passed = sum(r["status"] == "pass" for r in counted.values())
    ops_all_pass = sum(1 for c in by_op.values() if c["pass"] == sum(c.values()))
    return dict(cases=len(counted), counts=dict(total), passed=passed, pass_rate=passed / max(len(counted), 1),
                ops=len(by_op), ops_all_pass=ops_all_pass,
                by_dtype={d: dict(c) for d, c in sorted(by_dtype.items())},
                by_op={op: dict(c) for op, c in sorted(by_op.items())})


def write_report(results: dict, summary: dict, meta: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(dict(meta=meta, summary=summary, cases={
        n: results[n] for n in sorted(results)}), indent=1) + "\n")
    s = summary
    lines = [
        "# PyTorch op database conformance", "",
        f"The ops of torch {meta['torch']}'s `op_db` (with their sample inputs) through `cuvil.compile`,",
        "each compared with eager on the same inputs (float32 within rtol 1e-5 / atol 1e-5, or each element as",
        "close to eager's float64 result as eager's float32 one; integers and bools",
        "exactly; dtypes and shapes exactly). Cases: float32 (2 samples), int64 and bool (1 sample) where the op",
        f"takes them. Written by `python scripts/opdb_conformance.py` ({meta['date']}, {meta['seconds']:.0f} s,",
        f"host: {meta['host']}); `test/pytest/test_opdb_conformance.py` reruns a fixed sample in CI.",
        *([f"Note: {meta['note']}."] if meta.get("note") else []), "",
        "| | cases | pass | rate |", "|---|---|---|---|",
        f"| all (less eager-error) | {s['cases']} | {s['passed']} | {100 * s['pass_rate']:.1f}% |",
    ]
    for dtype, c in s["by_dtype"].items():
        n = sum(c.values())
        lines.append(f"| {dtype} | {n} | {c.get('pass', 0)} | {100 * c.get('pass', 0) / max(n, 1):.1f}% |")
    lines += ["", f"Ops: {s['ops']}, of which {s['ops_all_pass']} pass every case.",
              "Outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(s["counts"].items())) + ".",
              "(see the script's docstring for what each means)", "", "## Failures by reason", ""]
    lines += runner.failures_by_reason({n: r for n, r in results.items() if r["status"] != "eager-error"})
    lines += runner.per_op_table(s["by_op"], ("pass", "wrong", "unsupported", "error", "crash"))
    (OUT / "README.md").write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    args = runner.arguments(__doc__, argv, timeout=120.0)
    if args.worker:
        return runner.serve(all_cases, run_case)
    t0 = time.time()
    names = [n for n in all_cases().names() if args.k in n]
    results = runner.run_all(__file__, names, args.jobs, args.timeout)
    summary = summarize(results)
    if args.k:
        runner.print_selected(names, results, summary)
        return 0
    import torch
    meta = dict(torch=torch.__version__, date=time.strftime("%Y-%m-%d"), seconds=time.time() - t0,
                host=runner.host())
    write_report(results, summary, meta)
    print(json.dumps({k: v for k, v in summary.items() if k != "by_op"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
