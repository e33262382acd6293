"""ONNX models through cuvil.compile, checked against onnxruntime.

Tolerances: fp32 graphs 1e-4 of the largest reference output (sums
reassociated by the schedules); QDQ graphs 3e-2 (a rounding to another
quantization step where the float sums differ in their last bits)."""
import logging
import os

import numpy as np
import onnx
import pytest
import torch
from onnx import TensorProto, helper

import cuvil
from cuvil.compiler_onnx import CompiledOnnxModule

ort = pytest.importorskip("onnxruntime")
rng = np.random.default_rng(0)


def relative_error(got, want) -> float:
    return float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))


def reference(path_or_proto, feeds):
    source = path_or_proto.SerializeToString() if isinstance(path_or_proto, onnx.ModelProto) else str(path_or_proto)
    return ort.InferenceSession(source, providers=["CPUExecutionProvider"]).run(None, feeds)


def export(model, args, path, **kw):
    torch.onnx.export(model.eval(), args, str(path), dynamo=True, verbose=False, **kw)
    return path


def hand_built(batch="batch"):
    """MatMul -> Sigmoid -> Softmax with a symbolic batch, and a second output."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 16])
    s = helper.make_tensor_value_info("s", TensorProto.FLOAT, [batch, 16])
    w = helper.make_tensor("w", TensorProto.FLOAT, [32, 16], rng.standard_normal(32 * 16).astype(np.float32))
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"]),
                               helper.make_node("Sigmoid", ["h"], ["s"]),
                               helper.make_node("Softmax", ["s"], ["y"], axis=-1)], "hand", [x], [y, s], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def block_onnx(tmp_path_factory):
    torch.manual_seed(0)
    block = torch.nn.TransformerEncoderLayer(64, 4, 128, batch_first=True, dropout=0.0)
    return export(block, (torch.randn(2, 16, 64),), tmp_path_factory.mktemp("onnx") / "block.onnx",
                  dynamic_shapes=({0: torch.export.Dim("batch")},), external_data=False)


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.bn = torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16)
        self.c2, self.fc = torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.Linear(16, 10)

    def forward(self, x):
        y = torch.relu(self.bn(self.c1(x)))
        y = torch.nn.functional.max_pool2d(torch.relu(self.c2(y) + y), 2)
        return self.fc(y.mean((2, 3)))


def test_transformer_block_with_a_dynamic_batch_is_one_build(block_onnx):
    fast = cuvil.compile(block_onnx)
    for batch in (2, 5):
        x = rng.standard_normal((batch, 16, 64), dtype=np.float32)
        got = fast(x)
        assert isinstance(got, np.ndarray) and got.shape == (batch, 16, 64) and got.dtype == np.float32
        assert relative_error(got, reference(block_onnx, {"src": x})[0]) <= 1e-4
    assert fast.num_signatures == 1, "the symbolic batch is a dynamic dim: one library serves both"
    assert "?x16x64xf32" in fast.stage_ir("linalg")


def test_conv_net_with_external_data(tmp_path):
    torch.manual_seed(0)
    net = ConvNet()
    net.bn.running_mean.normal_()
    net.bn.running_var.uniform_(0.5, 2.0)
    path = export(net, (torch.randn(2, 3, 32, 32),), tmp_path / "conv.onnx", external_data=True)
    assert (tmp_path / "conv.onnx.data").is_file()
    fast = cuvil.compile(path)
    x = rng.standard_normal((2, 3, 32, 32), dtype=np.float32)
    name = fast.input_names[0]
    assert relative_error(fast(x), reference(path, {name: x})[0]) <= 1e-4
    # The convolutions' weights are arguments of @main, not constants of the IR.
    weights = [a for a in fast.last_signature.contract.main_args if a[0] != "input"]
    assert len(weights) >= 2
    assert "dense_resource" not in fast.stage_ir("linalg")


def test_hand_built_graph_symbolic_batch_two_outputs_and_keywords():
    model = hand_built()
    fast = cuvil.compile(model)
    for batch in (1, 7):
        x = rng.standard_normal((batch, 32), dtype=np.float32)
        y, s = fast(x)
        want_y, want_s = reference(model, {"x": x})
        assert relative_error(y, want_y) <= 1e-4 and relative_error(s, want_s) <= 1e-4
    assert fast.num_signatures == 1
    x = rng.standard_normal((3, 32), dtype=np.float32)
    by_name = fast(x=torch.from_numpy(x))
    assert all(isinstance(t, torch.Tensor) for t in by_name), "torch tensors in, torch tensors out"
    np.testing.assert_array_equal(by_name[0].numpy(), fast(x)[0])


def _mlp_onnx(path):
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                              torch.nn.ReLU(), torch.nn.Linear(256, 32))
    return export(mlp, (torch.randn(8, 64),), path, external_data=False)


def test_quantize_static_qdq_mlp(tmp_path):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static
    fp32 = _mlp_onnx(tmp_path / "mlp.onnx")
    name = onnx.load(str(fp32)).graph.input[0].name

    class Calibration(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{name: rng.standard_normal((8, 64), dtype=np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.batches, None)

    qdq = tmp_path / "mlp_qdq.onnx"
    quantize_static(str(fp32), str(qdq), Calibration(), quant_format=QuantFormat.QDQ)
    ops = {n.op_type for n in onnx.load(str(qdq)).graph.node}
    assert {"QuantizeLinear", "DequantizeLinear"} <= ops
    x = rng.standard_normal((8, 64), dtype=np.float32)
    fast = cuvil.compile(qdq)
    # The integer sums are exact: only float roundings differ from onnxruntime.
    assert relative_error(fast(x), reference(qdq, {name: x})[0]) <= 1e-4
    assert _int8_matmuls(fast) == 3   # each Gemm on the int8 kernels


def _int8_matmuls(fast) -> int:
    import re
    return len(re.findall(r"linalg\.(batch_)?matmul ins\(%\w+, %\w+ : tensor<[0-9x]+xi8>, tensor<[0-9x]+xi8>\)",
                          fast.stage_ir("linalg")))


def _calibrated_qdq(fp32, qdq, shape, **options):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, quantize_static
    name = onnx.load(str(fp32)).graph.input[0].name

    class Calibration(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{name: rng.standard_normal(shape, dtype=np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.batches, None)

    quantize_static(str(fp32), str(qdq), Calibration(), quant_format=QuantFormat.QDQ, **options)
    return name


def test_qdq_uint8_activations_per_channel_weights_on_int8_kernels(tmp_path):
    """uint8 activations (quantized again to int8, zero point - 128: the
    same values) times per-channel int8 weights, on 3-D activations with a
    residual: MatMul in QDQ form runs as i8 x i8 -> i32 matmuls."""
    from onnxruntime.quantization import QuantType

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.up, self.down = torch.nn.Linear(64, 128), torch.nn.Linear(128, 64)

        def forward(self, x):
            return self.down(torch.relu(self.up(x))) + x

    torch.manual_seed(0)
    fp32 = export(Block(), (torch.randn(2, 16, 64),), tmp_path / "block.onnx", external_data=False)
    qdq = tmp_path / "block_qdq.onnx"
    name = _calibrated_qdq(fp32, qdq, (2, 16, 64), per_channel=True, activation_type=QuantType.QUInt8,
                           weight_type=QuantType.QInt8)
    fast = cuvil.compile(qdq)
    x = rng.standard_normal((2, 16, 64), dtype=np.float32)
    assert relative_error(fast(x), reference(qdq, {name: x})[0]) <= 1e-4
    assert _int8_matmuls(fast) == 2


def test_qdq_weights_with_a_zero_point_run_in_float(tmp_path, caplog):
    """Asymmetric uint8 weights (a zero point per weight) are not an int8
    kernel's form: dequantized, in float, with a log line; never a failed
    compile."""
    import logging

    from onnxruntime.quantization import QuantType
    qdq = tmp_path / "mlp_qdq_u8.onnx"
    name = _calibrated_qdq(_mlp_onnx(tmp_path / "mlp.onnx"), qdq, (8, 64), activation_type=QuantType.QUInt8,
                           weight_type=QuantType.QUInt8)
    x = rng.standard_normal((8, 64), dtype=np.float32)
    with caplog.at_level(logging.INFO, logger="cuvil"):
        fast = cuvil.compile(qdq)
        got = fast(x)
    assert relative_error(got, reference(qdq, {name: x})[0]) <= 3e-2
    assert _int8_matmuls(fast) == 0
    assert "runs in float (dequantized)" in caplog.text


def test_quantize_dynamic_matmul_integer(tmp_path):
    from onnxruntime.quantization import quantize_dynamic
    fp32 = _mlp_onnx(tmp_path / "mlp.onnx")
    dyn = tmp_path / "mlp_dyn.onnx"
    quantize_dynamic(str(fp32), str(dyn))
    assert {"DynamicQuantizeLinear", "MatMulInteger"} <= {n.op_type for n in onnx.load(str(dyn)).graph.node}
    name = onnx.load(str(dyn)).graph.input[0].name
    x = rng.standard_normal((8, 64), dtype=np.float32)
    assert relative_error(cuvil.compile(dyn)(x), reference(dyn, {name: x})[0]) <= 3e-2


def test_a_second_process_starts_warm_from_the_model_content(tmp_path, monkeypatch):
    path = tmp_path / "hand.onnx"
    onnx.save(hand_built(), str(path))
    x = rng.standard_normal((4, 32), dtype=np.float32)
    first = cuvil.compile(path)
    want = first(x)
    assert first.stats["cache_hit"] == 0.0
    from cuvil import importer_onnx
    monkeypatch.setattr(importer_onnx, "import_model", lambda *a, **k: pytest.fail("imported again"))
    second = CompiledOnnxModule(str(path))
    got = second(x)
    assert second.stats["cache_hit"] == 1.0
    np.testing.assert_array_equal(got[0], want[0])


def test_other_weights_same_graph_share_the_library_but_not_the_results(tmp_path):
    a, b = hand_built(), hand_built()
    b.graph.initializer[0].CopyFrom(helper.make_tensor("w", TensorProto.FLOAT, [32, 16],
                                                       rng.standard_normal(32 * 16).astype(np.float32)))
    x = rng.standard_normal((2, 32), dtype=np.float32)
    fa, fb = cuvil.compile(a), cuvil.compile(b)
    ya, yb = fa(x)[1], fb(x)[1]
    assert fa.library_path == fb.library_path, "weights are arguments: the code is the same"
    assert relative_error(yb, reference(b, {"x": x})[1]) <= 1e-4 and not np.allclose(ya, yb)


def test_bad_inputs_are_named():
    fast = cuvil.compile(hand_built())
    with pytest.raises(TypeError, match="input 'x' has dtype float64; the model takes float32"):
        fast(np.zeros((2, 32)))
    with pytest.raises(ValueError, match=r"input 'x' dim 1 is 31; the model takes \[batch, 32\]"):
        fast(np.zeros((2, 31), np.float32))
    with pytest.raises(TypeError, match="has no input 'y'; its inputs: x"):
        fast(y=np.zeros((2, 32), np.float32))
    with pytest.raises(TypeError, match=r"takes 1 input\(s\) \(x\), got 2"):
        fast(np.zeros((2, 32), np.float32), np.zeros((2, 32), np.float32))


def test_an_op_cuvil_cannot_take_names_the_onnx_op_node_and_opset():
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])
    # An op with no ONNX -> torch conversion in torch-mlir.
    node = helper.make_node("MelWeightMatrix", ["x"], ["y"], name="the_node")
    model = helper.make_model(helper.make_graph([node], "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(cuvil.UnsupportedOpError) as info:
        cuvil.compile(model)(np.zeros((4, 4), np.float32))
    err = info.value
    assert "ONNX MelWeightMatrix" in err.op and "'the_node'" in err.op and "opset 17" in err.op
    assert err.reproducer.startswith(("torch-mlir-opt", "/")) and "torch-onnx-to-torch" in err.reproducer
    path = err.reproducer.split()[1]
    assert os.path.isfile(path) and "onnx.MelWeightMatrix" in open(path).read()


def test_not_an_onnx_file(tmp_path):
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"\x00\xff not a protobuf \xff" * 10)
    with pytest.raises(cuvil.CompileError, match="is not an ONNX model"):
        cuvil.compile(bad)
    with pytest.raises(FileNotFoundError, match="no ONNX model at"):
        cuvil.compile(tmp_path / "missing.onnx")


def test_aot_export_of_an_onnx_model_runs_from_c(tmp_path, block_onnx):
    """cuvil.export takes the ONNX file as it takes a module: its symbolic
    batch takes the example's size (the C API has static shapes)."""
    from test_aot import _build_driver, _run_from_c
    x = rng.standard_normal((3, 16, 64), dtype=np.float32)
    out = cuvil.export(block_onnx, (x,), tmp_path / "artifact")
    assert "input 0: float[3][16][64]" in (out / "model.h").read_text()
    _build_driver(out, tmp_path / "run_model_io")
    want = reference(block_onnx, {"src": x})
    (got,) = _run_from_c(tmp_path / "run_model_io", out, (torch.from_numpy(x),), [torch.from_numpy(want[0])],
                         tmp_path)
    assert relative_error(got, want[0]) <= 1e-4


def test_cli_compiles_and_profiles_an_onnx_file_against_onnxruntime(tmp_path, block_onnx, capsys):
    import json

    from cuvil import cli
    with pytest.raises(SystemExit, match=r"input 'src' has symbolic dims .* --input Nx16x64xf32"):
        cli.main(["compile", str(block_onnx), "-o", str(tmp_path / "out")])
    assert cli.main(["compile", str(block_onnx), "--input", "2x16x64xf32", "-o", str(tmp_path / "out")]) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["within_tolerance"] and report["max_abs_error_vs_onnxruntime"] < 1e-4
    assert (tmp_path / "out" / "model.so").is_file() and (tmp_path / "out" / "model.torch.mlir").is_file()
    assert cli.main(["profile", str(block_onnx), "--input", "2x16x64xf32", "--runs", "2"]) == 0
    assert "max |cuvil - onnxruntime|" in capsys.readouterr().out


def test_a_crash_inside_torch_mlir_is_an_error_not_the_end_of_the_process():
    """torch-mlir's ONNX lowering divides by zero on a Reshape with
    allowzero and a shape computed at run time (SIGFPE): its passes run in a
    forked child, so the caller gets a CompileError with a reproducer."""
    data = helper.make_tensor_value_info("data", TensorProto.FLOAT, [0, 3, 4])
    shape = helper.make_tensor_value_info("shape", TensorProto.INT64, [3])
    out = helper.make_tensor_value_info("reshaped", TensorProto.FLOAT, [3, 4, 0])
    node = helper.make_node("Reshape", ["data", "shape"], ["reshaped"], allowzero=1)
    model = helper.make_model(helper.make_graph([node], "g", [data, shape], [out]),
                              opset_imports=[helper.make_opsetid("", 14)])
    with pytest.raises(cuvil.CompileError, match=r"torch-mlir crashed \(SIG(FPE|SEGV)\)") as info:
        cuvil.compile(model)(np.zeros((0, 3, 4), np.float32), np.array([3, 4, 0]))
    assert "torch-onnx-to-torch-backend-pipeline" in info.value.reproducer
    assert os.path.isfile(info.value.reproducer.split()[1])


def test_scalar_and_int16_inputs_and_unknown_ranks():
    """Rank-0 inputs stay rank 0; int16 crosses the boundary; an input with
    no shape in the model is compiled for each shape it is called with."""
    a = helper.make_tensor_value_info("a", TensorProto.INT16, [])
    b = helper.make_tensor_value_info("b", TensorProto.INT16, None)   # rank unknown
    s = helper.make_tensor_value_info("s", TensorProto.INT16, None)
    model = helper.make_model(helper.make_graph([helper.make_node("Add", ["a", "b"], ["s"])], "g", [a, b], [s]),
                              opset_imports=[helper.make_opsetid("", 17)])
    fast = cuvil.compile(model)
    for shape in ((3,), (2, 5)):
        x = np.int16(7)
        y = rng.integers(-100, 100, shape).astype(np.int16)
        got = fast(np.asarray(x), y)
        assert got.dtype == np.int16 and got.shape == shape
        np.testing.assert_array_equal(got, y + x)
    assert fast.num_signatures == 2


def test_forms_torch_mlir_computes_wrong_are_refused_by_name():
    """A per-axis uint8 zero point (torch-mlir reads it as int8: 1280 off in
    the conformance case) is refused; per tensor it computes right."""
    x = helper.make_tensor_value_info("x", TensorProto.UINT8, [4, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])
    xx = rng.integers(0, 255, (4, 3)).astype(np.uint8)

    def model(zero_point, **attrs):
        inits = [onnx.numpy_helper.from_array(np.array([2.0, 4.0, 5.0][:zero_point.size], np.float32)
                                              .reshape(zero_point.shape), "s"),
                 onnx.numpy_helper.from_array(zero_point, "z")]
        node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], **attrs)
        return helper.make_model(helper.make_graph([node], "g", [x], [y], inits),
                                 opset_imports=[helper.make_opsetid("", 19)])
    with pytest.raises(cuvil.UnsupportedOpError, match="per-axis uint8 zero point"):
        cuvil.compile(model(np.array([84, 24, 196], np.uint8), axis=1))(xx)
    per_tensor = model(np.array(196, np.uint8))
    np.testing.assert_array_equal(cuvil.compile(per_tensor)(xx), reference(per_tensor, {"x": xx})[0])


def test_rms_normalization_is_written_in_ops_torch_mlir_converts():
    """RMSNormalization (opset 23, LLM exports) has no torch-mlir conversion:
    Cuvil rewrites it as the spec's function body, its axes made constants."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 8, 64])
    scale = onnx.numpy_helper.from_array(rng.standard_normal(64).astype(np.float32), "scale")
    node = helper.make_node("RMSNormalization", ["x", "scale"], ["y"], axis=-1, epsilon=1e-6)
    model = helper.make_model(helper.make_graph([node], "g", [x], [y], [scale]),
                              opset_imports=[helper.make_opsetid("", 23)])
    fast = cuvil.compile(model)
    for batch in (1, 3):
        xx = rng.standard_normal((batch, 8, 64), dtype=np.float32)
        want = xx / np.sqrt((xx.astype(np.float64) ** 2).mean(-1, keepdims=True) + 1e-6) * onnx.numpy_helper.to_array(scale)
        assert relative_error(fast(xx), want) <= 1e-5
    assert fast.num_signatures == 1


@pytest.mark.parametrize("name", ["N", "E", "batch size"])
def test_symbolic_dims_named_like_sympy_constants_size_outputs_right(name):
    """dim_params are names, never sympy's own (N is a function, E a
    constant: an output sized by E would be 2 rows for 5 written)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [name, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [name, 4])
    model = helper.make_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 17)])
    fast = cuvil.compile(model)
    for rows in (5, 2):
        xx = rng.standard_normal((rows, 4), dtype=np.float32)
        np.testing.assert_array_equal(fast(xx), np.maximum(xx, 0))
    assert fast.num_signatures == 1


def test_inputs_read_at_compile_time_make_one_build_per_value():
    """A Slice's bounds and a reduction's axes given as graph inputs:
    torch-mlir needs them as constants, so each call's values are constants
    of its build (one build per distinct value; a repeat reuses it)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 8])
    ints = [helper.make_tensor_value_info(n, TensorProto.INT64, [1]) for n in ("start", "end", "axes")]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Slice", ["x", "start", "end"], ["s"]),
             helper.make_node("ReduceSum", ["s", "axes"], ["y"], keepdims=0)]
    model = helper.make_model(helper.make_graph(nodes, "g", [x, *ints], [y]),
                              opset_imports=[helper.make_opsetid("", 18)])
    fast = cuvil.compile(model)
    xx = rng.standard_normal((6, 8), dtype=np.float32)
    i64 = lambda v: np.array([v], dtype=np.int64)   # noqa: E731
    for start, end, axis in [(1, 4, 0), (0, -1, 1), (1, 4, 0)]:
        want = xx[start:end].sum(axis=axis)
        got = fast(xx, i64(start), i64(end), axes=i64(axis))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert fast.num_signatures == 2


def test_builds_for_values_are_bounded_least_recently_used_first(monkeypatch, caplog):
    """Value inputs that change on every call keep at most max_value_builds
    builds (each holds the packed weights); a dropped value builds again
    (from the disk cache) and still computes right."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 8])
    end = helper.make_tensor_value_info("end", TensorProto.INT64, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    start = helper.make_tensor("start", TensorProto.INT64, [1], [0])
    model = helper.make_model(helper.make_graph([helper.make_node("Slice", ["x", "start", "end"], ["y"])], "g",
                                                [x, end], [y], initializer=[start]),
                              opset_imports=[helper.make_opsetid("", 18)])
    monkeypatch.setattr(CompiledOnnxModule, "max_value_builds", 2)
    fast = cuvil.compile(model)
    xx = rng.standard_normal((6, 8), dtype=np.float32)
    with caplog.at_level(logging.INFO, logger="cuvil"):
        for e in (1, 2, 1, 3, 2, 1):
            np.testing.assert_array_equal(fast(xx, np.array([e], dtype=np.int64)), xx[:e])
            assert fast.num_signatures <= 2
    builds = [r for r in caplog.records if "building for" in r.getMessage()]
    # 1, 2 built; 1 reused; 3 drops 2; 2 drops 1; 1 drops 3.
    assert len(builds) == 5
    assert sum("dropped the least recently used" in r.getMessage() for r in caplog.records) == 3


def test_shapes_computed_from_static_shapes_are_folded_to_constants():
    """Reshape(y, Shape(x)) and Shape -> Gather -> Concat chains (exporters,
    ONNX's function bodies) are computed before torch-mlir sees them: it
    converts a Reshape whose shape it cannot read to a rank-0 view."""
    from cuvil import importer_onnx_folding
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])
    z = helper.make_tensor_value_info("z", TensorProto.FLOAT, None)
    idx = onnx.numpy_helper.from_array(np.array([0], dtype=np.int64), "idx")
    minus_one = onnx.numpy_helper.from_array(np.array([-1], dtype=np.int64), "minus_one")
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
             helper.make_node("Shape", ["x"], ["shape"]),
             helper.make_node("Reshape", ["t", "shape"], ["r"]),
             helper.make_node("Gather", ["shape", "idx"], ["n"], axis=0),
             helper.make_node("Concat", ["n", "minus_one"], ["flat_shape"], axis=0),
             helper.make_node("Reshape", ["r", "flat_shape"], ["z"])]
    model = helper.make_model(helper.make_graph(nodes, "g", [x], [z], [idx, minus_one]),
                              opset_imports=[helper.make_opsetid("", 17)])
    folded = onnx.shape_inference.infer_shapes(model)
    assert importer_onnx_folding.fold_constants(folded)
    assert [n.op_type for n in folded.graph.node] == ["Transpose", "Reshape", "Reshape"]
    xx = rng.standard_normal((2, 3, 4), dtype=np.float32)
    np.testing.assert_array_equal(cuvil.compile(model)(xx), xx.transpose(0, 2, 1).reshape(2, -1))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_softmax_cross_entropy_with_weights_and_ignore_index(reduction):
    """SoftmaxCrossEntropyLoss is LogSoftmax + NegativeLogLikelihoodLoss:
    torch-mlir's own conversion lowers rank 2 only, and gives inf with
    weights. Compared with ONNX's reference implementation."""
    from onnx.reference import ReferenceEvaluator
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 5, 4])
    labels = helper.make_tensor_value_info("labels", TensorProto.INT64, [3, 4])
    w = helper.make_tensor_value_info("w", TensorProto.FLOAT, [5])
    loss = helper.make_tensor_value_info("loss", TensorProto.FLOAT, None)
    log_prob = helper.make_tensor_value_info("log_prob", TensorProto.FLOAT, None)
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "labels", "w"], ["loss", "log_prob"],
                            reduction=reduction, ignore_index=2)
    model = helper.make_model(helper.make_graph([node], "g", [x, labels, w], [loss, log_prob]),
                              opset_imports=[helper.make_opsetid("", 13)])
    feeds = dict(x=rng.standard_normal((3, 5, 4), dtype=np.float32),
                 labels=rng.integers(0, 5, (3, 4)).astype(np.int64),
                 w=rng.uniform(0.5, 1.5, 5).astype(np.float32))
    feeds["labels"][0, 0] = 2   # one ignored
    want = ReferenceEvaluator(model).run(None, feeds)
    got = cuvil.compile(model)(**feeds)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def _single_node_model(node, inputs, opset, inits=()):
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in node.output]
    return helper.make_model(helper.make_graph([node], "g", inputs, outs, list(inits)),
                             opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("node,why", [
    (helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap"), "does not terminate"),
    (helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2], auto_pad="SAME_UPPER"),
     "disagree on its output size"),
    (helper.make_node("GridSample", ["x", "grid"], ["y"], mode="nearest"), "rounds sample points"),
    (helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear",
                      coordinate_transformation_mode="align_corners"), "align_corners"),
])
def test_forms_torch_mlir_hangs_on_or_computes_wrong_are_refused(node, why):
    """Found by the conformance run: Pad wrap hangs torch-mlir's conversion;
    GridSample nearest and align_corners downsampling by scales compute
    wrong values. Refused by name, at import, instead."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])
    extra = {"pads": onnx.numpy_helper.from_array(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64), "pads"),
             "grid": onnx.numpy_helper.from_array(rng.uniform(-1, 1, (1, 3, 3, 2)).astype(np.float32), "grid"),
             "scales": onnx.numpy_helper.from_array(np.array([1, 1, 0.6, 0.6], np.float32), "scales")}
    model = _single_node_model(node, [x], 22, [extra[n] for n in node.input[1:] if n in extra])
    with pytest.raises(cuvil.UnsupportedOpError, match=why):
        cuvil.compile(model)(rng.standard_normal((1, 1, 5, 5), dtype=np.float32))


def test_rotary_embedding_and_swiglu_run_as_their_function_bodies():
    """torch-mlir has no conversion for RotaryEmbedding (opset 23) and
    SwiGLU: their ONNX function bodies are inlined, then folded. Compared
    with ONNX's reference implementation."""
    from onnx.reference import ReferenceEvaluator
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 3, 8])   # batch, heads, seq, head dim
    pos = helper.make_tensor_value_info("pos", TensorProto.INT64, [2, 3])
    cos = onnx.numpy_helper.from_array(rng.standard_normal((16, 4)).astype(np.float32), "cos")
    sin = onnx.numpy_helper.from_array(rng.standard_normal((16, 4)).astype(np.float32), "sin")
    rope = _single_node_model(helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"]),
                              [x, pos], 23, [cos, sin])
    feeds = dict(x=rng.standard_normal((2, 4, 3, 8), dtype=np.float32),
                 pos=rng.integers(0, 16, (2, 3)).astype(np.int64))
    np.testing.assert_allclose(cuvil.compile(rope)(**feeds), ReferenceEvaluator(rope).run(None, feeds)[0],
                               rtol=1e-5, atol=1e-6)
    gate, value = (helper.make_tensor_value_info(n, TensorProto.FLOAT, [3, 16]) for n in ("gate", "value"))
    swiglu = _single_node_model(helper.make_node("SwiGLU", ["gate", "value"], ["y"], alpha=1.5), [gate, value], 28)
    feeds = dict(gate=rng.standard_normal((3, 16), dtype=np.float32),
                 value=rng.standard_normal((3, 16), dtype=np.float32))
    np.testing.assert_allclose(cuvil.compile(swiglu)(**feeds), ReferenceEvaluator(swiglu).run(None, feeds)[0],
                               rtol=1e-5, atol=1e-6)


def test_resize_with_axes_scales_the_named_axes_only():
    """Resize's `axes` (opset 18), which torch-mlir does not convert:
    the scales are spread over every axis (1 on the others)."""
    from onnx.reference import ReferenceEvaluator
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 4])
    scales = onnx.numpy_helper.from_array(np.array([2.0, 3.0], np.float32), "scales")
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="nearest", axes=[3, 2])
    model = _single_node_model(node, [x], 19, [scales])
    xx = rng.standard_normal((1, 2, 3, 4), dtype=np.float32)
    got = cuvil.compile(model)(xx)
    assert got.shape == (1, 2, 9, 8)
    np.testing.assert_array_equal(got, ReferenceEvaluator(model).run(None, {"x": xx})[0])


def test_an_input_a_pad_width_is_computed_from_is_a_build_constant_too():
    """Pad's pads computed at run time from a small integer input (as
    CenterCropPad's function body does from its `shape`): that input is
    read at compile time too, through the ops between."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])
    half = helper.make_tensor_value_info("half", TensorProto.INT64, [4])
    two = onnx.numpy_helper.from_array(np.array(2, np.int64), "two")
    nodes = [helper.make_node("Mul", ["half", "two"], ["pads"]),
             helper.make_node("Pad", ["x", "pads"], ["y"])]
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    model = helper.make_model(helper.make_graph(nodes, "g", [x, half], [y], [two]),
                              opset_imports=[helper.make_opsetid("", 19)])
    fast = cuvil.compile(model)
    xx = rng.standard_normal((4, 6), dtype=np.float32)
    for h in ([0, 1, 1, 0], [1, 0, 0, 2]):
        want = np.pad(xx, [(2 * h[0], 2 * h[2]), (2 * h[1], 2 * h[3])])
        np.testing.assert_array_equal(fast(xx, np.array(h, np.int64)), want)


def _node_case(op, inputs, opset, **attrs):
    """A one-node model over (name, array) inputs, all graph inputs."""
    infos = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape) for n, a in inputs]
    node = helper.make_node(op, [n for n, _ in inputs], ["y"], **attrs)

    def model(y):
        return helper.make_model(helper.make_graph([node], "g", infos, [y]),
                                 opset_imports=[helper.make_opsetid("", opset)])
    from onnx.reference import ReferenceEvaluator
    want = ReferenceEvaluator(model(helper.make_empty_tensor_value_info("y"))).run(None, dict(inputs))[0]
    return model(helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(want.dtype), None)), dict(inputs)


@pytest.mark.parametrize("case", ["dropout_opset_11", "matmul_vector_left", "matmul_vector_right",
                                  "compress_axis", "compress_flat", "qlinear_matmul_3d", "lp_pool_dilated", "lp_pool_same",
                                  "lp_normalization_zero_slice", "reduce_min_opset_11_axis",
                                  "reduce_max_opset_11_all"])
def test_forms_written_in_ops_torch_mlir_converts(case):
    """Each a form torch-mlir does not convert (or converts wrong), written
    in ops it does (importer_onnx_rewrites); against ONNX's reference."""
    from onnx.reference import ReferenceEvaluator
    f32 = lambda *shape: rng.standard_normal(shape, dtype=np.float32)   # noqa: E731
    i8 = lambda *shape: rng.integers(-128, 127, shape).astype(np.int8)   # noqa: E731
    model, feeds = {
        "dropout_opset_11": lambda: _node_case("Dropout", [("x", f32(3, 4))], 11, ratio=0.3),
        "matmul_vector_left": lambda: _node_case("MatMul", [("a", f32(5)), ("b", f32(2, 3, 5, 4))], 13),
        "matmul_vector_right": lambda: _node_case("MatMul", [("a", f32(2, 3, 4, 5)), ("b", f32(5))], 13),
        "compress_axis": lambda: _node_case("Compress", [("x", f32(3, 4)), ("keep", np.array([1, 0, 1], bool))],
                                            13, axis=0),
        "compress_flat": lambda: _node_case("Compress", [("x", f32(3, 4)), ("keep", rng.random(7) > 0.5)], 13),
        "qlinear_matmul_3d": lambda: _node_case(
            "QLinearMatMul", [("a", i8(2, 3, 8)), ("sa", np.array(0.02, np.float32)), ("za", np.array(3, np.int8)),
                              ("b", i8(2, 8, 5)), ("sb", np.array(0.01, np.float32)), ("zb", np.array(-2, np.int8)),
                              ("sy", np.array(0.5, np.float32)), ("zy", np.array(1, np.int8))], 21),
        "lp_pool_dilated": lambda: _node_case("LpPool", [("x", f32(1, 2, 7, 7))], 18, kernel_shape=[2, 2],
                                              dilations=[2, 2], strides=[2, 1], p=3),
        "lp_pool_same": lambda: _node_case("LpPool", [("x", f32(1, 2, 7, 7))], 18, kernel_shape=[3, 2],
                                           auto_pad="SAME_LOWER", p=2),
        "lp_normalization_zero_slice": lambda: _node_case(
            "LpNormalization", [("x", np.array([[1, 0, 3], [2, 0, -1]], np.float32))], 13, axis=0, p=2),
        "reduce_min_opset_11_axis": lambda: _node_case("ReduceMin", [("x", f32(3, 4, 5))], 11, axes=[-2],
                                                       keepdims=0),
        "reduce_max_opset_11_all": lambda: _node_case("ReduceMax", [("x", f32(3, 4))], 11, keepdims=1),
    }[case]()
    want = ReferenceEvaluator(model).run(None, feeds)[0]
    np.testing.assert_allclose(cuvil.compile(model)(**feeds), want, rtol=1e-5, atol=1e-6)


def test_qdq_activation_times_activation_on_int8_kernels():
    """Attention's q k^T in QDQ form: both operands per-tensor uint8
    activations. The integer form adds both zero points' terms
    (- za colsum(b) - zb rowsum(a) + K za zb): exact, as onnxruntime."""
    from onnx import numpy_helper
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 8, 16])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, 16, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    inits = [numpy_helper.from_array(np.array(0.02, np.float32), "sa"),
             numpy_helper.from_array(np.array(130, np.uint8), "za"),
             numpy_helper.from_array(np.array(0.03, np.float32), "sb"),
             numpy_helper.from_array(np.array(100, np.uint8), "zb")]
    nodes = [helper.make_node("QuantizeLinear", ["a", "sa", "za"], ["aq"]),
             helper.make_node("DequantizeLinear", ["aq", "sa", "za"], ["ad"]),
             helper.make_node("QuantizeLinear", ["b", "sb", "zb"], ["bq"]),
             helper.make_node("DequantizeLinear", ["bq", "sb", "zb"], ["bd"]),
             helper.make_node("MatMul", ["ad", "bd"], ["y"])]
    model = helper.make_model(helper.make_graph(nodes, "g", [a, b], [y], inits),
                              opset_imports=[helper.make_opsetid("", 19)])
    feeds = dict(a=rng.standard_normal((2, 8, 16), dtype=np.float32),
                 b=rng.standard_normal((2, 16, 8), dtype=np.float32))
    fast = cuvil.compile(model)
    np.testing.assert_allclose(fast(**feeds), reference(model, feeds)[0], rtol=1e-6, atol=1e-5)
    assert _int8_matmuls(fast) == 1
