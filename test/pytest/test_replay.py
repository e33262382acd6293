"""`cuvil compile -o out/` writes replay.sh beside the IR of every stage: run
in a copy of out/ that holds only model.torch.mlir, it rebuilds every later
stage with torch-mlir-opt / cuvil-opt / mlir-translate (and the library with
llc and cc), byte for byte. IR is changed only by passes."""
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

FACTORIES = {
    "cnn": "def make():\n    torch.manual_seed(0)\n    return randomize_bn(CNN()).eval()\n",
    "transformer": "def make():\n    return LastHidden(gpt2(**SMALL_GPT2))\n",
}
INPUTS = {"cnn": "1x3x16x16xf32", "transformer": "1x32xi64"}


@pytest.mark.parametrize("model", ["cnn", "transformer"])
def test_replay_rebuilds_every_stage_byte_for_byte(tmp_path, model):
    factory = tmp_path / f"{model}.py"
    factory.write_text(f"import sys; sys.path.insert(0, {str(ROOT / 'examples')!r})\n"
                       "import torch\nfrom models import *\n" + FACTORIES[model])
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "cuvil.cli", "compile", f"{factory}:make",
                           "--input", INPUTS[model], "-o", str(out)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    replay = tmp_path / "replay"
    replay.mkdir()
    for name in ("model.torch.mlir", "replay.sh"):
        shutil.copy2(out / name, replay / name)
    proc = subprocess.run(["sh", str(replay / "replay.sh")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rebuilt = sorted(p.name for p in replay.iterdir())
    for stage in ("linalg", "cuvil", "scheduled", "llvm"):
        name = f"model.{stage}.mlir"
        assert (replay / name).read_bytes() == (out / name).read_bytes(), f"{name} differs"
    assert (replay / "model.ll").read_bytes() == (out / "model.ll").read_bytes()
    assert (replay / "model.so").stat().st_size > 0, rebuilt
