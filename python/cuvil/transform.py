"""The transform-script driver: load Transform-dialect scripts (files or
strings), apply a named entry sequence to a payload module, and report what
it touched. Errors carry the transform diagnostics and their locations.

    from cuvil import transform
    report = transform.apply(module, transform.load("matmul_cpu"))
    print(report.matched)            # {'linalg.matmul': 3, ...} before the script ran
"""
import collections
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, Optional, Union

from .errors import TransformError

# Not resolve(): in the build tree the modules are symlinks to the sources.
SCRIPTS_DIR = Path(__file__).absolute().parent / "transform_scripts"


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


def substitute_params(script: str, params: Optional[Dict[str, int]]) -> str:
    """Sets `transform.param.constant` values named by a `// param: NAME`
    trailing comment, e.g. `%tm = transform.param.constant 64 : i64 ... // param: TM`."""
    if not params:
        return script
    lines, seen = [], set()
    for line in script.splitlines():
        if "// param:" in line and "transform.param.constant" in line:
            name = line.split("// param:")[1].strip()
            if name in params:
                head, rest = line.split("transform.param.constant", 1)
                value_and_tail = rest.strip().split(" ", 1)
                line = f"{head}transform.param.constant {int(params[name])} {value_and_tail[1]}"
                seen.add(name)
        lines.append(line)
    unknown = set(params) - seen
    if unknown:
        raise TransformError(f"script has no parameters named {sorted(unknown)}")
    return "\n".join(lines)


@dataclass
class ApplyReport:
    entry: str
    matched: Dict[str, int] = field(default_factory=dict)   # payload op counts before
    remaining: Dict[str, int] = field(default_factory=dict)  # and after


def _linalg_ops(module) -> Dict[str, int]:
    counts = collections.Counter()

    def visit(op):
        name = op.operation.name if hasattr(op, "operation") else op.name
        if name.startswith("linalg.") and name != "linalg.yield":
            counts[name] += 1
        from .ir import WalkResult
        return WalkResult.ADVANCE

    module.operation.walk(visit)
    return dict(counts)


def apply(module, script: str, entry: str = "__transform_main", params=None) -> ApplyReport:
    """Applies `entry` of `script` (text) to `module` (cuvil.ir.Module) in place."""
    from .dialects.transform import interpreter
    from .ir import MLIRError, Module

    script = substitute_params(script, params)
    with module.context:
        try:
            library = Module.parse(script)
        except MLIRError as err:
            raise TransformError(f"transform script does not parse:\n{_diags(err)}") from None
        sequence = None
        for op in library.body.operations:
            if "sym_name" in op.attributes and op.attributes["sym_name"].value == entry:
                sequence = op
        if sequence is None:
            raise TransformError(f"transform script has no named sequence @{entry}")
        report = ApplyReport(entry=entry, matched=_linalg_ops(module))
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
