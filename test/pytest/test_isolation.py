"""cuvil.isolation: a step run in a forked child; its crash is an exception."""
import os
import signal

import pytest

import cuvil
from cuvil import isolation

pytestmark = pytest.mark.skipif(not isolation.available(), reason="no os.fork on this platform")


def test_result_comes_back():
    assert isolation.run(lambda: {"text": "module {}", "dims": [[2, "batch"]]}) == \
        {"text": "module {}", "dims": [[2, "batch"]]}


def test_a_signal_is_crashed_with_its_name():
    with pytest.raises(isolation.Crashed, match="SIGSEGV"):
        isolation.run(lambda: os.kill(os.getpid(), signal.SIGSEGV))


def test_cuvil_errors_cross_with_their_fields():
    def refuse():
        raise cuvil.UnsupportedOpError("ONNX Foo (node 'n', opset 17)", "node 'n' of g", "onnx-to-torch",
                                       "why", reproducer="torch-mlir-opt x.mlir")
    with pytest.raises(cuvil.UnsupportedOpError) as info:
        isolation.run(refuse)
    err = info.value
    assert (err.op, err.location, err.stage, err.detail, err.reproducer) == \
        ("ONNX Foo (node 'n', opset 17)", "node 'n' of g", "onnx-to-torch", "why", "torch-mlir-opt x.mlir")
    with pytest.raises(cuvil.CompileError, match="import failed: bad") as info2:
        isolation.run(lambda: (_ for _ in ()).throw(cuvil.CompileError("import", "bad", reproducer="r")))
    assert info2.value.reproducer == "r"


def test_an_exception_that_does_not_pickle_still_says_what_it_was():
    class Local(Exception):   # a local class does not pickle
        pass

    def fail():
        raise Local("no")
    with pytest.raises(isolation.ChildError, match="Local: no"):
        isolation.run(fail)


class TwoArgs(Exception):
    """Pickles (its args are the message) but does not unpickle (two arguments)."""

    def __init__(self, a, b):
        super().__init__(f"{a} {b}")


def test_an_exception_that_pickles_but_does_not_unpickle():
    def fail():
        raise TwoArgs("x", "y")
    with pytest.raises(isolation.ChildError, match="TwoArgs: x y"):
        isolation.run(fail)
