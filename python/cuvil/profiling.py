"""Where a compiled model's time goes, kernel by kernel.

    fast = cuvil.compile(model, (x,), profile=True)
    print(fast.profile(x, runs=20))

A library built with `profile=True` times every call of an outlined kernel
(`cuvil-profile-kernels` in the lowering pipeline; counters in the C runtime,
indexed by the kernel's `cuvil.kernel` id).
Identical kernels are one function (cuvil-outline-kernels), so a row is every
call of that function: e.g. the twelve FFN matmuls of a BERT-base. What the
kernel computes is described from the raised IR (its linalg ops, their
iterators and scalar body ops, its operand types), and kept in the cache
index so that a library loaded from the cache is described too. The rest of
a call (argument marshalling, allocation, the output copy, and any op that
was not outlined, e.g. ops on dynamic shapes) is the "outside kernels" row.
"""
import ctypes
import json
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional

# The kernel id attribute of outlined kernels (CuvilDialect::getKernelAttrName).
KERNEL_ATTR = "cuvil.kernel"
# Ops that only set up a kernel's operands: not what it computes. (Slices
# and reshapes: views of an argument, or of a padded destination whose
# border the fills write; the signature shows the padded type.)
_SETUP_OPS = {"tensor.empty", "arith.constant", "func.return", "linalg.fill", "linalg.yield",
              "linalg.index", "tensor.extract_slice", "tensor.insert_slice", "tensor.expand_shape",
              "tensor.collapse_shape"}


def kernel_id(func) -> Optional[int]:
    """The `cuvil.kernel` id of a func.func op (cuvil.ir), the profiler's
    counter index: None for a function that is not an outlined kernel. The
    kernel's name (`cuvil_kernel_<id>_<op>`) is only for reading."""
    from .ir import IntegerAttr
    if KERNEL_ATTR not in func.attributes:
        return None
    return IntegerAttr(func.attributes[KERNEL_ATTR]).value


def _iterators(op) -> str:
    if "iterator_types" not in op.attributes:
        return ""
    kinds = [str(a).split("<")[-1].rstrip(">") for a in op.attributes["iterator_types"]]
    return "(" + ",".join(k[0] for k in kinds) + ")"  # p = parallel, r = reduction


def _body_ops(op) -> List[str]:
    names = []
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                name = inner.operation.name
                if name not in _SETUP_OPS:
                    short = name.split(".", 1)[1] if name.startswith(("arith.", "math.")) else name
                    if short not in names:
                        names.append(short)
    return names


def describe_kernels(module) -> Dict[str, dict]:
    """{kernel function name: {"id": its cuvil.kernel id, "what": what it
    computes}} for a raised module, "what" e.g.
    `linalg.generic(p,p,r,p){mulf,addf} 128x768xf32, 48x768x64xf32, ... -> ...`.
    Plain JSON: it is kept in the cache index beside the library."""
    described = {}
    for op in module.body.operations:
        if op.operation.name != "func.func":
            continue
        kid = kernel_id(op)
        if kid is None:
            continue
        name = op.attributes["sym_name"].value
        parts = []
        for inner in op.regions[0].blocks[0].operations:
            if inner.operation.name in _SETUP_OPS:
                continue
            body = _body_ops(inner)
            parts.append(inner.operation.name + _iterators(inner) + ("{" + ",".join(body) + "}" if body else ""))
        # "(tensor<128x768xf32>, ...) -> tensor<...>" -> "128x768xf32, ... -> ..."
        signature = re.sub(r"tensor<([^>]*)>", r"\1", str(op.attributes["function_type"].value))
        described[name] = {"id": kid,
                           "what": " + ".join(parts) + " " + signature.replace("(", "").replace(")", "")}
    return described


@dataclass
class KernelRow:
    name: str
    what: str
    calls_per_run: float
    ms_per_run: float
    share: float  # of the wall time of a call


@dataclass
class KernelProfile:
    """Per-kernel time of `runs` calls, slowest first, and the wall time."""
    runs: int
    wall_ms_per_run: float
    rows: List[KernelRow] = field(default_factory=list)

    @property
    def outside_kernels_ms(self) -> float:
        return self.wall_ms_per_run - sum(r.ms_per_run for r in self.rows)

    def table(self, top: int = 15, width: int = 100) -> str:
        lines = [f"{'kernel':<32} {'calls':>6} {'ms/run':>8} {'share':>6}  what",
                 f"{'(all kernels)':<32} {sum(r.calls_per_run for r in self.rows):>6.0f} "
                 f"{sum(r.ms_per_run for r in self.rows):>8.3f} "
                 f"{sum(r.share for r in self.rows):>6.1%}"]
        for r in self.rows[:top]:
            lines.append(f"{r.name:<32} {r.calls_per_run:>6.0f} {r.ms_per_run:>8.3f} {r.share:>6.1%}  "
                         f"{r.what[:width]}")
        if len(self.rows) > top:
            rest = self.rows[top:]
            lines.append(f"{f'({len(rest)} more kernels)':<32} {sum(r.calls_per_run for r in rest):>6.0f} "
                         f"{sum(r.ms_per_run for r in rest):>8.3f} {sum(r.share for r in rest):>6.1%}")
        lines.append(f"{'(outside kernels)':<32} {'':>6} {self.outside_kernels_ms:>8.3f} "
                     f"{self.outside_kernels_ms / self.wall_ms_per_run:>6.1%}  "
                     "main itself (allocation, copies, ops not outlined) and the Python call around it")
        lines.append(f"{'(wall time of a call)':<32} {'':>6} {self.wall_ms_per_run:>8.3f}")
        return "\n".join(lines)

    __str__ = table

    def to_json(self) -> str:
        return json.dumps(dict(runs=self.runs, wall_ms_per_run=self.wall_ms_per_run,
                               outside_kernels_ms=self.outside_kernels_ms,
                               kernels=[r.__dict__ for r in self.rows]), indent=2)


class Counters:
    """The per-kernel counters of one loaded library (runtime_support.c)."""

    def __init__(self, cdll):
        try:
            self._read, self._reset = cdll.cuvil_profile_read, cdll.cuvil_profile_reset
        except AttributeError:
            raise RuntimeError("this library has no kernel profile counters: "
                               "compile with cuvil.compile(..., profile=True)") from None
        self._read.restype = ctypes.c_int64
        self._read.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
        self._reset.restype = None

    def reset(self) -> None:
        self._reset()

    def read(self, n: int):
        """(calls, nanoseconds) lists for kernel ids 0..n-1."""
        calls, nanos = (ctypes.c_uint64 * n)(), (ctypes.c_uint64 * n)()
        self._read(n, ctypes.addressof(calls), ctypes.addressof(nanos))
        return list(calls), list(nanos)


def summarize(counters: Counters, kernels: Dict[str, dict], runs: int, wall_s: float) -> KernelProfile:
    """The rows for `kernels` (describe_kernels' {name: {"id", "what"}}) from
    counters covering `runs` calls. Entries without an id (a cache index
    written before kernel ids were attributes) have no row."""
    described = {name: k for name, k in kernels.items() if isinstance(k, dict) and "id" in k}
    calls, nanos = counters.read(max((k["id"] for k in described.values()), default=-1) + 1)
    wall_ms = wall_s * 1e3 / runs
    rows = [KernelRow(name, k["what"], calls[k["id"]] / runs, nanos[k["id"]] * 1e-6 / runs,
                      nanos[k["id"]] * 1e-6 / runs / wall_ms)
            for name, k in described.items() if calls[k["id"]]]
    rows.sort(key=lambda r: -r.ms_per_run)
    return KernelProfile(runs=runs, wall_ms_per_run=wall_ms, rows=rows)
