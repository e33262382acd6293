"""Stage 2, raise: linalg text from the importer -> Cuvil's context, where the
raise step of the pipeline (cuvil.pipeline.raise_passes: recognised patterns
raised to Cuvil ops and lowered back in Cuvil's form, convolutions rewritten,
the weight-only subgraph split into a run-once `main_prepack`, kernels
outlined) runs on it."""


def parse(text: str, context):
    """Parses importer output in Cuvil's context (objects never cross from
    torch_mlir; only text does)."""
    from .errors import CompileError
    from .ir import MLIRError, Module
    from .parser_guards import describe, find_parser_crash
    crash = find_parser_crash(text)
    if crash is not None:
        from .diagnostics import save_reproducer
        raise CompileError("parse", describe(crash),
                           reproducer=f"cuvil-opt {save_reproducer(text, 'parse')}")
    try:
        return Module.parse(text, context=context)
    except MLIRError as err:
        from .diagnostics import save_reproducer
        path = save_reproducer(text, "parse")
        raise CompileError("parse", str(err), reproducer=f"cuvil-opt {path}") from None


def lookup_func(module, name: str):
    for op in module.body.operations:
        if op.operation.name == "func.func" and op.attributes["sym_name"].value == name:
            return op
    return None
