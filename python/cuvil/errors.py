"""Errors Cuvil raises. Every user-caused failure ends in one of these, with
the op / stage, a location and, where IR is involved, a reproducer command."""


class CuvilError(Exception):
    """Base class of Cuvil's errors."""


class UnsupportedOpError(CuvilError):
    """A model uses an op Cuvil cannot lower.

    Attributes: ``op`` (e.g. ``aten.nonzero``), ``location`` (``file.py:LINE``
    in the model's source), ``stage`` and ``reproducer`` (a shell command that
    replays the failing step on the saved IR), possibly empty.
    """

    def __init__(self, op, location="<unknown>", stage="import", detail="", reproducer=""):
        self.op, self.location, self.stage = op, location, stage
        self.detail, self.reproducer = detail, reproducer
        msg = f"unsupported op {op} at {location} (stage: {stage})"
        if detail:
            msg += f"\n  {detail}"
        if reproducer:
            msg += f"\n  reproduce with: {reproducer}"
        super().__init__(msg)

    def __reduce__(self):   # pickles with its fields (errors cross from cuvil.isolation's child)
        return type(self), (self.op, self.location, self.stage, self.detail, self.reproducer)


class CompileError(CuvilError):
    """A compile stage failed on IR that Cuvil produced or was given."""

    def __init__(self, stage, message, reproducer=""):
        self.stage, self.reproducer = stage, reproducer
        text = f"{stage} failed: {message}"
        if reproducer:
            text += f"\n  reproduce with: {reproducer}"
        self.message = message
        super().__init__(text)

    def __reduce__(self):
        return type(self), (self.stage, self.message, self.reproducer)


class TransformError(CuvilError):
    """A transform script failed to parse, match or apply."""


class ExecutionError(CuvilError, RuntimeError):
    """The compiled code reported an error while running (e.g. an integer
    division by zero, where eager PyTorch raises ZeroDivisionError); the
    outputs of that call are discarded. A RuntimeError, as eager's is."""


class WeightsChangedError(CuvilError, TypeError):
    """A weight of a compiled model changed its dtype or shape after the
    compile (e.g. `model.to(torch.bfloat16)` or `model.half()` after
    `cuvil.compile(model)`; those convert the parameters in place): the
    library was built for the old ones. Compile the converted model again."""


class ExecutionIndexError(ExecutionError, IndexError):
    """An index the model gathered with (embedding, gather, index_select,
    x[idx]) was out of range: an IndexError, as eager's is."""


def __getattr__(name):
    """ExecutionLinAlgError: a raising linalg op (linalg.inv, linalg.solve,
    linalg.cholesky ...) met a singular or not positive-definite matrix. A
    torch.linalg.LinAlgError, with eager's message, as eager raises; made on
    first use, since subclassing torch's class imports torch (`import cuvil`
    does not)."""
    if name != "ExecutionLinAlgError":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import torch

    cls = type("ExecutionLinAlgError", (ExecutionError, torch.linalg.LinAlgError),
               {"__doc__": __getattr__.__doc__, "__module__": __name__})
    globals()[name] = cls
    return cls
