"""`torch.compile(model, backend="cuvil")`.

Registered through the `torch_dynamo_backends` entry point, so no import of
cuvil is needed. Each graph Dynamo captures is compiled with cuvil.compile
(same cache). A graph Cuvil cannot lower runs eagerly after one warning
naming the op, unless `options={"strict": True}`, which raises instead.
Options: target, opt_level, num_threads, strict, max_recompiles.
"""
import logging
import warnings

log = logging.getLogger("cuvil")

_KNOWN_OPTIONS = {"target", "opt_level", "num_threads", "strict", "max_recompiles", "schedule"}


def cuvil_backend(gm, example_inputs, options=None, **kwargs):
    from .compiler import CompiledModule
    from .errors import CuvilError

    options = dict(options or {}, **kwargs)
    unknown = set(options) - _KNOWN_OPTIONS
    if unknown:
        raise ValueError(f"unknown cuvil backend option(s) {sorted(unknown)}; "
                         f"known: {sorted(_KNOWN_OPTIONS)}")
    strict = bool(options.pop("strict", False))
    max_recompiles = int(options.pop("max_recompiles", 8))
    schedule = options.pop("schedule", None)
    if schedule is not None:
        options["schedule"] = tuple(schedule)
    compiled = CompiledModule(gm, **options)
    state = {"fallback": False}

    def run(*args):
        if state["fallback"]:
            return gm(*args)
        try:
            if len(compiled._compiled) >= max_recompiles and \
                    compiled._key_of(args) not in compiled._compiled:
                raise CuvilError(f"more than {max_recompiles} input signatures for one graph")
            out = compiled(*args)
        except CuvilError as err:
            if strict:
                raise
            op = getattr(err, "op", None)
            what = f"unsupported op {op}" if op else str(err).splitlines()[0]
            warnings.warn(f"cuvil: running a graph eagerly: {what}", RuntimeWarning, stacklevel=2)
            state["fallback"] = True
            return gm(*args)
        # Dynamo graphs return a tuple/list; keep that structure.
        return out

    return run
