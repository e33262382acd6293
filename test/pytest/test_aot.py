"""cuvil.export: the artifact folder runs from C (no Python) and matches
eager; a cross build for AArch64 produces an AArch64 object."""
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import cuvil

from models import CNN

HERE = Path(__file__).parent


def test_exported_cnn_runs_from_c_and_matches_eager(tmp_path):
    torch.manual_seed(0)
    model, x = CNN().eval(), torch.randn(1, 3, 32, 32)
    out = cuvil.export(model, (x,), tmp_path / "artifact")
    assert {p.name for p in out.iterdir()} >= {"libmodel.so", "model.h", "weights.bin", "README.md"}
    deps = subprocess.run(["ldd", str(out / "libmodel.so")], capture_output=True, text=True).stdout
    assert "libMLIR" not in deps and "libLLVM" not in deps and "python" not in deps.lower()

    exe = tmp_path / "run_model"
    subprocess.run([shutil.which("cc") or "gcc", str(HERE / "Inputs" / "run_model.c"), f"-I{out}",
                    f"-L{out}", "-lmodel", f"-Wl,-rpath,{out}", "-o", str(exe)], check=True)
    x.numpy().astype(np.float32).tofile(tmp_path / "input.bin")
    with torch.no_grad():
        want = model(x).numpy()
    proc = subprocess.run([str(exe), str(out / "weights.bin"), str(tmp_path / "input.bin"),
                           str(tmp_path / "output.bin"), str(want.size)],
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("output[0..3] =")
    got = np.fromfile(tmp_path / "output.bin", dtype=np.float32).reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_wrong_weights_file_is_refused(tmp_path):
    torch.manual_seed(0)
    out = cuvil.export(CNN().eval(), (torch.randn(1, 3, 16, 16),), tmp_path / "a")
    exe = tmp_path / "run_model"
    subprocess.run(["cc", str(HERE / "Inputs" / "run_model.c"), f"-I{out}", f"-L{out}", "-lmodel",
                    f"-Wl,-rpath,{out}", "-o", str(exe)], check=True)
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\0" * 10)
    proc = subprocess.run([str(exe), str(bad), str(bad), str(tmp_path / "o.bin"), "10"],
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "is not this model's weights" in proc.stderr


def test_aarch64_cross_build_is_aarch64(tmp_path):
    torch.manual_seed(0)
    out = cuvil.export(CNN().eval(), (torch.randn(1, 3, 16, 16),), tmp_path / "arm",
                       target="aarch64-linux-gnu")
    header = (out / "model.o").read_bytes()[:20]
    assert header[:4] == b"\x7fELF"
    (machine,) = struct.unpack_from("<H", header, 18)
    assert machine == 183  # EM_AARCH64
