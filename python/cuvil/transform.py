"""The transform-script driver: load Transform-dialect scripts (files or
strings), apply a named entry sequence to a payload module, and report what
it touched. Errors carry the transform diagnostics and their locations.

    from cuvil import transform
    report = transform.apply(module, transform.load("matmul_cpu"), params={"TM": 32})
    print(report.matched)            # {'linalg.matmul': 3, ...} before the script ran
    transform.parameters(transform.load("matmul_cpu"))   # {'TM': 64, 'TN': 256, ...}

Parameters are transform params, never edits of the script text. A script's
entry sequence binds their defaults and includes the schedule, a named
sequence whose arguments after the payload root are `!transform.param<i64>`
values named by a `cuvil.param` argument attribute:

    transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
      %tm = transform.param.constant 64 : i64 -> !transform.param<i64>
      transform.include @cuvil_matmul_cpu_schedule failures(propagate) (%root, %tm) : ...
      transform.yield
    }
    transform.named_sequence @cuvil_matmul_cpu_schedule(%root: !transform.any_op {transform.readonly},
        %tm: !transform.param<i64> {transform.readonly, cuvil.param = "TM"}) { ... }

So cuvil-opt runs a script with its defaults (`--transform-interpreter=entry-point=...`),
and `apply(..., params=...)` adds to the parsed library an entry sequence that
binds the given values (the defaults for the others) and includes the same
schedule.
"""
import collections
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from .errors import TransformError

# Not resolve(): in the build tree the modules are symlinks to the sources.
SCRIPTS_DIR = Path(__file__).absolute().parent / "transform_scripts"

# The argument attribute naming a schedule parameter.
PARAM_ATTR = "cuvil.param"


def script_path(name: str) -> Path:
    """A script shipped with Cuvil (transform_scripts/<name>.mlir)."""
    path = SCRIPTS_DIR / f"{name}.mlir"
    if not path.exists():
        known = sorted(p.stem for p in SCRIPTS_DIR.glob("*.mlir"))
        raise TransformError(f"no transform script named {name!r}; shipped: {known}")
    return path


def load(name_or_path: Union[str, Path]) -> str:
    """Script text from a shipped name, a file path, or literal text."""
    text = str(name_or_path)
    if "transform." in text and "\n" in text:
        return text
    path = Path(text)
    if path.suffix == ".mlir" or path.exists():
        if not path.exists():
            raise TransformError(f"transform script {path} does not exist")
        return path.read_text()
    return script_path(text).read_text()


@dataclass
class ApplyReport:
    entry: str
    matched: Dict[str, int] = field(default_factory=dict)   # payload op counts before
    remaining: Dict[str, int] = field(default_factory=dict)  # and after
    params: Dict[str, int] = field(default_factory=dict)     # every parameter, as bound


def _linalg_ops(module) -> Dict[str, int]:
    counts: "collections.Counter[str]" = collections.Counter()

    def visit(op):
        name = op.operation.name if hasattr(op, "operation") else op.name
        if name.startswith("linalg.") and name != "linalg.yield":
            counts[name] += 1
        from .ir import WalkResult
        return WalkResult.ADVANCE

    module.operation.walk(visit)
    return dict(counts)


# -- parameters ------------------------------------------------------------------
@dataclass
class _Binding:
    """One `transform.include` of a parameterized schedule in an entry sequence."""
    callee: str
    types: List[str]                     # the callee's argument types
    names: List[Optional[str]]           # per argument after the root: its parameter name
    defaults: List[Optional[int]]        # the value the entry binds


def _parse(script: str, context=None):
    from .ir import Context, MLIRError, Module
    from .parser_guards import describe, find_parser_crash
    crash = find_parser_crash(script)
    if crash is not None:
        raise TransformError(f"transform script does not parse: {describe(crash)}")
    try:
        if context is not None:
            return Module.parse(script, context)
        with Context():
            return Module.parse(script)
    except MLIRError as err:
        raise TransformError(f"transform script does not parse:\n{_diags(err)}") from None


def _sequences(library) -> Dict[str, Any]:
    return {op.attributes["sym_name"].value: op for op in library.body.operations
            if op.operation.name == "transform.named_sequence"}


def _bindings(library, entry: str) -> Tuple[Any, List[_Binding]]:
    """The entry sequence and the parameterized schedules it includes."""
    from .ir import DictAttr, FunctionType, IntegerAttr, OpResult, StringAttr
    sequences = _sequences(library)
    if entry not in sequences:
        raise TransformError(f"transform script has no named sequence @{entry}")
    seq = sequences[entry]
    bindings = []
    for op in seq.regions[0].blocks[0].operations:
        if op.operation.name != "transform.include":
            continue
        callee = sequences.get(op.attributes["target"].value)
        if callee is None or "arg_attrs" not in callee.attributes:
            continue
        names = []
        for attrs in list(callee.attributes["arg_attrs"])[1:]:
            attrs = DictAttr(attrs)
            names.append(StringAttr(attrs[PARAM_ATTR]).value if PARAM_ATTR in attrs else None)
        if not any(names):
            continue
        defaults: List[Optional[int]] = []
        for name, operand in zip(names, list(op.operands)[1:]):
            owner = operand.owner.operation if isinstance(operand, OpResult) else None
            if owner is not None and owner.name == "transform.param.constant":
                defaults.append(IntegerAttr(owner.attributes["value"]).value)
            elif name is not None:
                raise TransformError(f"@{entry} binds parameter {name} of "
                                     f"@{op.attributes['target'].value} to a computed value")
            else:
                defaults.append(None)
        ftype = FunctionType(callee.attributes["function_type"].value)
        bindings.append(_Binding(op.attributes["target"].value, [str(t) for t in ftype.inputs],
                                 names, defaults))
    return seq, bindings


def parameters(script: str, entry: str = "__transform_main") -> Dict[str, int]:
    """The parameters of `script` run from `entry`, with their defaults."""
    return parameters_of(_parse(script), entry)


def parameters_of(library, entry: str) -> Dict[str, int]:
    """`parameters` of a parsed library (a cuvil.ir.Module)."""
    _, bindings = _bindings(library, entry)
    return {n: d for b in bindings for n, d in zip(b.names, b.defaults) if n is not None and d is not None}


def _bind_entry(library, entry: str, params: Dict[str, int]) -> Tuple[str, Dict[str, int]]:
    """Adds to `library` an entry sequence that includes what `entry` includes,
    with `params` bound instead of the defaults; returns its name and every
    parameter's value."""
    from .ir import Module
    seq, bindings = _bindings(library, entry)
    known = {n: d for b in bindings for n, d in zip(b.names, b.defaults) if n is not None and d is not None}
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise TransformError(f"script has no parameters named {unknown}; "
                             f"@{entry} has {sorted(known)}")
    other = [op.operation.name for op in seq.regions[0].blocks[0].operations
             if op.operation.name not in ("transform.param.constant", "transform.include",
                                          "transform.yield")]
    if other:
        raise TransformError(f"@{entry} does more than bind parameters ({other[0]}): "
                             f"cannot bind others")
    for name, value in params.items():
        if isinstance(value, bool) or int(value) != value:
            raise TransformError(f"parameter {name} must be an integer, got {value!r}")
    values = {**known, **{k: int(v) for k, v in params.items()}}

    name = f"__cuvil_bound_{entry}"
    while name in _sequences(library):
        name += "_"
    root_type = seq.regions[0].blocks[0].arguments[0].type
    decls, body = [], []
    for i, b in enumerate(bindings):
        args = ", ".join(f"%a{j}: {t} {{transform.readonly}}" for j, t in enumerate(b.types))
        decls.append(f"  transform.named_sequence private @{b.callee}({args})")
        operands = ["%root"]
        for j, (pname, default) in enumerate(zip(b.names, b.defaults)):
            body.append(f"    %p{i}_{j} = transform.param.constant "
                        f"{values[pname] if pname else default} : i64 -> {b.types[j + 1]}")
            operands.append(f"%p{i}_{j}")
        types = ", ".join([str(root_type)] + b.types[1:])
        body.append(f"    transform.include @{b.callee} failures(propagate) ({', '.join(operands)})"
                    f" : ({types}) -> ()")
    text = "\n".join([
        "module attributes {transform.with_named_sequence} {", *decls,
        f"  transform.named_sequence @{name}(%root: {root_type} {{transform.readonly}}) {{",
        *body, "    transform.yield", "  }", "}"])
    composed = Module.parse(text, library.context)
    library.body.append(_sequences(composed)[name])
    return name, values


def apply(module, script: str, entry: str = "__transform_main", params=None) -> ApplyReport:
    """Applies `entry` of `script` (text) to `module` (cuvil.ir.Module) in place.
    `params` ({name: int}) binds schedule parameters (see `parameters`)."""
    from .dialects.transform import interpreter
    from .ir import MLIRError

    with module.context:
        library = _parse(script, module.context)
        if params:
            run, values = _bind_entry(library, entry, dict(params))
        else:  # raises for a missing entry
            run, values = entry, parameters_of(library, entry)
        sequence = _sequences(library)[run]
        report = ApplyReport(entry=entry, matched=_linalg_ops(module), params=values)
        try:
            interpreter.apply_named_sequence(module.operation, sequence, library)
        except (MLIRError, ValueError) as err:  # the interpreter reports as ValueError
            raise TransformError(f"transform @{entry} failed:\n{_diags(err)}") from None
        report.remaining = _linalg_ops(module)
    return report


def _diags(err) -> str:
    lines = []
    for d in getattr(err, "error_diagnostics", []):
        lines.append(f"  {d.location}: {d.message}")
        lines.extend(f"    note: {n.location}: {n.message}" for n in d.notes)
    return "\n".join(lines) or str(err)
