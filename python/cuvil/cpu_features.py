"""The host CPU's vector and matrix units, which pick Cuvil's kernels at
compile time (the schedules for bf16 contractions, the code generator's
target features).

Read from /proc/cpuinfo (Linux flag names: avx512_bf16, amx_bf16, ...).
CUVIL_CPU_FEATURES edits the set, so tests and users can force the narrower
paths on a wider host: comma- or space-separated names, `-name` removes,
`+name` (or `name`) adds; `amx` stands for every amx_* flag, e.g.
`CUVIL_CPU_FEATURES=-amx,-avx512_bf16`. Adding a feature the CPU lacks
builds code that dies of SIGILL: only removing is safe.
"""
import functools
from pathlib import Path
from typing import FrozenSet, Optional

#: Groups a CUVIL_CPU_FEATURES name may stand for.
ALIASES = {"amx": ("amx_tile", "amx_bf16", "amx_int8", "amx_fp16", "amx_complex")}

#: Linux flag -> LLVM target attribute, for the features whose removal must
#: also reach the code generator (llc -mattr=-...): else LLVM would still
#: pick those instructions for plain conversions (vcvtneps2bf16 for truncf).
LLVM_ATTRS = {"avx512_bf16": "avx512bf16", "avx512_fp16": "avx512fp16", "avx512_vnni": "avx512vnni",
              "avx_vnni": "avxvnni", "amx_tile": "amx-tile", "amx_bf16": "amx-bf16", "amx_int8": "amx-int8",
              "amx_fp16": "amx-fp16", "avx512f": "avx512f", "avx512bw": "avx512bw", "avx512vl": "avx512vl",
              "avx512dq": "avx512dq"}


@functools.lru_cache(maxsize=None)
def _host_flags() -> FrozenSet[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def _spec(spec) -> str:
    if spec is not None:
        return spec
    from .options import environment
    return environment().cpu_features


def _edits(spec: str):
    for token in spec.replace(",", " ").split():
        sign, name = ("-", token[1:]) if token.startswith("-") else ("+", token.lstrip("+"))
        if not name:
            raise ValueError(f"CUVIL_CPU_FEATURES={spec!r}: empty feature name in {token!r}")
        yield sign, ALIASES.get(name, (name,))


def removed(spec: Optional[str] = None) -> FrozenSet[str]:
    """The host features CUVIL_CPU_FEATURES (or `spec`) takes away."""
    flags = _host_flags()
    return frozenset(n for sign, names in _edits(_spec(spec)) if sign == "-" for n in names if n in flags)


def features(spec: Optional[str] = None) -> FrozenSet[str]:
    """The features kernels may use: the host's, edited by CUVIL_CPU_FEATURES
    (read on each call, so a changed variable takes effect at the next compile)."""
    have = set(_host_flags())
    for sign, names in _edits(_spec(spec)):
        (have.difference_update if sign == "-" else have.update)(names)
    return frozenset(have)


def llvm_mattr(spec: Optional[str] = None) -> str:
    """llc -mattr value disabling the removed features LLVM would use on its own."""
    return ",".join(f"-{LLVM_ATTRS[n]}" for n in sorted(removed(spec)) if n in LLVM_ATTRS)

