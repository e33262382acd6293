"""Author Transform-dialect schedules from Python.

Builds the same ops a hand-written script would (through the MLIR Python
bindings, not text templates), so a schedule can be generated, printed,
saved under transform_scripts/ and applied with `cuvil.transform.apply`:

    from cuvil.transform_builder import ScheduleBuilder
    with ScheduleBuilder("fuse_matmul_epilogue") as s:
        epilogue = s.match(s.root, "linalg.generic")
        matmul = s.producer_of_operand(epilogue, 0)
        _, loop = s.tile_using_forall(epilogue, [8, 32])
        s.fuse_into(matmul, loop)
        s.vectorize_children(s.match(s.root, "func.func"))
    script = s.text            # a module with @fuse_matmul_epilogue
"""
from typing import List, Sequence, Tuple


class ScheduleBuilder:
    """One named sequence taking the payload root (`%root`, read-only)."""

    def __init__(self, name: str, context=None):
        from .ir import Context, Location

        self.name = name
        self._context = context or Context()
        self._location = Location.unknown(context=self._context)
        self.text = None

    # -- construction ------------------------------------------------------------
    def __enter__(self):
        from .dialects import transform
        from .ir import InsertionPoint, Module, UnitAttr

        self._context.__enter__()
        self._location.__enter__()
        self.module = Module.create()
        self.module.operation.attributes["transform.with_named_sequence"] = UnitAttr.get()
        with InsertionPoint(self.module.body):
            self._seq = transform.NamedSequenceOp(
                self.name, [transform.AnyOpType.get()], [],
                arg_attrs=[{"transform.readonly": UnitAttr.get()}])
        self._ip = InsertionPoint(self._seq.body)
        self._ip.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        from .dialects import transform

        try:
            if exc_type is None:
                transform.YieldOp([])
                self.text = str(self.module)
        finally:
            self._ip.__exit__(exc_type, exc, tb)
            self._location.__exit__(exc_type, exc, tb)
            self._context.__exit__(exc_type, exc, tb)
        return False

    @property
    def root(self):
        return self._seq.bodyTarget

    # -- steps ---------------------------------------------------------------------
    def match(self, target, *op_names: str):
        """All payload ops named `op_names` nested in `target`."""
        from .dialects.transform import structured
        return structured.MatchOp.match_op_names(target, list(op_names)).result

    def producer_of_operand(self, target, index: int):
        from .dialects import transform
        return transform.GetProducerOfOperand(transform.AnyOpType.get(), target, index).result

    def tile_using_forall(self, target, tile_sizes: Sequence[int]) -> Tuple:
        """(tiled op, scf.forall) — one forall iteration per tile."""
        from .dialects.transform import structured
        op = structured.TileUsingForallOp(target, tile_sizes=list(tile_sizes))
        return op.tiled_op, op.forall_op

    def tile_using_for(self, target, tile_sizes: Sequence[int]) -> Tuple:
        """(tiled op, [scf.for loops])."""
        from .dialects.transform import structured
        op = structured.TileUsingForOp(target, sizes=list(tile_sizes))
        return op.tiled_linalg_op, list(op.loops)

    def fuse_into(self, producer, containing) -> Tuple:
        """(fused producer, new containing op)."""
        from .dialects.transform import structured
        op = structured.FuseIntoContainingOp(producer, containing)
        return op.fused_op, op.new_containing_op

    def vectorize(self, target, vector_sizes: Sequence[int] = ()):
        from .dialects.transform import structured
        structured.VectorizeOp(target, list(vector_sizes))

    def vectorize_children(self, target):
        """Vectorize every linalg op under `target` (e.g. a func) + cleanups."""
        from .dialects.transform import structured
        return structured.VectorizeChildrenAndApplyPatternsOp(target).result
