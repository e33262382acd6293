"""ONNX's own node test cases (onnx.backend.test.case.node, ~1,900 small
models with numpy-computed outputs) through cuvil.compile.

    python scripts/onnx_conformance.py                 # all cases -> conformance/onnx/
    python scripts/onnx_conformance.py --jobs 2        # two worker processes
    python scripts/onnx_conformance.py -k gemm         # cases whose name contains "gemm"; prints, writes nothing

Each case compiles in a worker process (scripts/conformance_runner.py: a
crash or a hang costs one case, not the run), runs on every data set, and is compared with the case's own
tolerances (np.testing.assert_allclose(rtol, atol) as ONNX's backend tests
do; shapes and dtypes exactly). Outcomes:

  pass         every output matches
  wrong        it ran, an output differs (value, shape or dtype)
  unmapped     torch-mlir's ONNX conversion has no pattern for the node (the op,
               or this form of it: attributes, types)
  unsupported  Cuvil refused it by name (a type or op it cannot take)
  error        any other failure (the message is kept)
  crash        the worker died (signal) or took more than --timeout seconds

The full run writes conformance/onnx/results.json (per case) and README.md
(the rates, the table per op, the failures by reason), which are kept in
the repository; test_onnx_conformance.py reruns a fixed sample of them.
"""
import collections
import json
import re
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conformance_runner as runner  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "conformance" / "onnx"


def all_cases():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the case generators divide by zero on purpose
        from onnx.backend.test.case.node import collect_testcases
        return {c.name: c for c in collect_testcases(None)}


def op_of(case, names) -> str:
    """The op a case tests: its node's type, or its unexpanded sibling's."""
    base = re.sub(r"_expanded(_ver\d+)?$", "", case.name)
    if base != case.name and base in names:
        return op_of(names[base], names)
    nodes = case.model.graph.node
    return nodes[0].op_type if len(nodes) == 1 else (nodes[-1].op_type if nodes else "?")


def _compare(got, want, rtol, atol) -> str:
    import numpy as np
    got = np.asarray(got)
    want = np.asarray(want)
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    # ml_dtypes' bfloat16 / float8 are not of numpy's float kind: compared as float64.
    if want.dtype.kind in "fc" or "float" in want.dtype.name:
        ok = np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = np.array_equal(got, want)
    if ok:
        return ""
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    return f"max |diff| {np.nanmax(diff):.3g} (rtol {rtol}, atol {atol})"


def _array(value):
    """A data set's value as numpy (some are TensorProtos: bf16, float8 ...)."""
    import numpy as np
    import onnx
    if isinstance(value, onnx.TensorProto):
        from onnx import numpy_helper
        return numpy_helper.to_array(value)
    return np.asarray(value)


def run_case(case) -> dict:
    """Compiles and runs one case; its outcome and a short detail."""
    import cuvil
    try:
        fast = cuvil.compile(case.model)
        for inputs, outputs in case.data_sets:
            outputs = [_array(o) for o in outputs]
            got = fast(*[_array(i) for i in inputs])
            got = got if isinstance(got, tuple) else (got,)
            if len(got) != len(outputs):
                return dict(status="wrong", detail=f"{len(got)} outputs, expected {len(outputs)}")
            for i, (g, w) in enumerate(zip(got, outputs)):
                why = _compare(g, w, case.rtol, case.atol)
                if why:
                    return dict(status="wrong", detail=f"output {i}: {why}")
        return dict(status="pass", detail="")
    except cuvil.UnsupportedOpError as err:
        # An `onnx.*` operator torch-mlir left as it was (no pattern matched
        # it) fails to legalize in one of the two pipelines.
        unmapped = "'torch.operator'" in err.detail
        return dict(status="unmapped" if unmapped else "unsupported", detail=runner.first_line(str(err)))
    except Exception as err:   # noqa: BLE001 - every failure is an outcome here
        return dict(status="error", detail=f"{type(err).__name__}: {runner.first_line(str(err))}")


def summarize(results: dict, ops: dict) -> dict:
    by_op = collections.defaultdict(collections.Counter)
    for name, r in results.items():
        by_op[ops[name]][r["status"]] += 1
    total = collections.Counter(r["status"] for r in results.values())
    converted = [r for r in results.values() if r["status"] != "unmapped"]
    mapped_ops = {op for op, c in by_op.items() if sum(c.values()) > c["unmapped"]}
    of_mapped_ops = [r for n, r in results.items() if ops[n] in mapped_ops]
    # Of those, the ones whose tensors are of element types Cuvil takes (not
    # refused at the boundary: strings, sequences, float8, int4, uint16-64).
    typed = [r for n, r in results.items() if ops[n] in mapped_ops and not _type_refusal(r)]
    passed = lambda rs: sum(r["status"] == "pass" for r in rs)   # noqa: E731
    return dict(cases=len(results), counts=dict(total),
                pass_rate_all=passed(results.values()) / max(len(results), 1),
                pass_rate_converted=passed(converted) / max(len(converted), 1),
                converted_cases=len(converted),
                pass_rate_mapped_ops=passed(of_mapped_ops) / max(len(of_mapped_ops), 1),
                mapped_op_cases=len(of_mapped_ops), ops=len(by_op), mapped_ops=len(mapped_ops),
                pass_rate_mapped_ops_cuvil_types=passed(typed) / max(len(typed), 1),
                mapped_op_cases_cuvil_types=len(typed),
                by_op={op: dict(c) for op, c in sorted(by_op.items())})


def _type_refusal(result) -> bool:
    return result["status"] == "unsupported" and "an ONNX graph value of type" in result["detail"]


def write_report(results: dict, ops: dict, summary: dict, meta: dict) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps(dict(meta=meta, summary=summary, cases={
        n: dict(results[n], op=ops[n]) for n in sorted(results)}), indent=1) + "\n")
    s = summary
    lines = [
        "# ONNX node conformance", "",
        f"ONNX's node test cases (onnx {meta['onnx']}, `onnx.backend.test.case.node`) through",
        "`cuvil.compile`, each checked against its numpy-computed outputs with its own tolerances.",
        f"Written by `python scripts/onnx_conformance.py` ({meta['date']}, {meta['seconds']:.0f} s, host: {meta['host']});",
        "`test/pytest/test_onnx_conformance.py` reruns a fixed sample in CI.", "",
        "| | cases | pass | rate |", "|---|---|---|---|",
        f"| all cases | {s['cases']} | {s['counts'].get('pass', 0)} | {100 * s['pass_rate_all']:.1f}% |",
        f"| cases torch-mlir converts (not `unmapped`) | {s['converted_cases']} | {s['counts'].get('pass', 0)} | "
        f"{100 * s['pass_rate_converted']:.1f}% |",
        f"| cases of the {s['mapped_ops']} ops (of {s['ops']}) with a converted case | {s['mapped_op_cases']} | "
        f"{s['counts'].get('pass', 0)} | {100 * s['pass_rate_mapped_ops']:.1f}% |",
        f"| those, less the cases refused for their element types | {s['mapped_op_cases_cuvil_types']} | "
        f"{s['counts'].get('pass', 0)} | {100 * s['pass_rate_mapped_ops_cuvil_types']:.1f}% |", "",
        "Outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(s["counts"].items())) + ".",
        "(see the script's docstring for what each means)", "",
        "## Failures by reason", "",
    ]
    lines += runner.failures_by_reason(results)
    lines += runner.per_op_table(s["by_op"], ("pass", "wrong", "unmapped", "unsupported", "error", "crash"))
    (OUT / "README.md").write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    args = runner.arguments(__doc__, argv, timeout=180.0)
    if args.worker:
        return runner.serve(all_cases, run_case)
    cases = all_cases()
    ops = {n: op_of(c, cases) for n, c in cases.items()}
    names = sorted(n for n in cases if args.k in n)
    t0 = time.time()
    results = runner.run_all(__file__, names, args.jobs, args.timeout)
    summary = summarize(results, {n: ops[n] for n in results})
    if args.k:
        runner.print_selected(names, results, summary)
        return 0
    import onnx
    meta = dict(onnx=onnx.__version__, date=time.strftime("%Y-%m-%d"), seconds=time.time() - t0, host=runner.host())
    write_report(results, ops, summary, meta)
    print(json.dumps({k: v for k, v in summary.items() if k != "by_op"}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
