"""cuvil.export: the artifact folder runs from C (no Python) and matches
eager, for float and int64 inputs and for several outputs (tuples, dicts);
model.h declares the API and describes the buffers; a cross build for
AArch64 produces an AArch64 object that links, with the generated C, into
an AArch64 library (and, under qemu-aarch64 when present, runs and matches
eager)."""
import re
import shutil
import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils import _pytree as pytree

import cuvil
from cuvil import execution

from models import CNN, MLP

HERE = Path(__file__).parent
CROSS = "aarch64-linux-gnu"
CROSS_SYSROOT = Path("/usr") / CROSS          # Debian's cross libc (for qemu-aarch64 -L)


@pytest.fixture(scope="module")
def cross_cc(tmp_path_factory):
    """The AArch64 cross compiler, if it is installed and links (a cross
    libc is there); the test is skipped, saying why, otherwise."""
    cc = shutil.which(f"{CROSS}-gcc")
    if cc is None:
        pytest.skip(f"no {CROSS}-gcc cross compiler (Debian/Ubuntu: apt-get install gcc-{CROSS} "
                    f"libc6-dev-arm64-cross; scripts/install.sh does it as root)")
    probe = tmp_path_factory.mktemp("cross-probe") / "probe.c"
    probe.write_text("#include <math.h>\ndouble f(double x) { return sqrt(x); }\n")
    proc = subprocess.run([cc, "-O1", "-fPIC", "-shared", str(probe), "-o", str(probe.with_suffix(".so")), "-lm"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"{cc} cannot link a shared library (no AArch64 libc? Debian: apt-get install "
                    f"libc6-dev-arm64-cross): {proc.stderr.strip()[-300:]}")
    return cc


@pytest.fixture(scope="module")
def qemu_aarch64(cross_cc):
    """How to run an AArch64 program here (qemu user mode), or a skip."""
    qemu = shutil.which("qemu-aarch64")
    if qemu is None:
        pytest.skip("no qemu-aarch64 to run AArch64 programs (Debian/Ubuntu: apt-get install qemu-user)")
    if not (CROSS_SYSROOT / "lib" / "ld-linux-aarch64.so.1").exists():
        pytest.skip(f"no AArch64 dynamic loader under {CROSS_SYSROOT}/lib for qemu-aarch64 -L")
    return [qemu, "-L", str(CROSS_SYSROOT)]


def _cc() -> str:
    return shutil.which("cc") or "gcc"


class TokenModel(nn.Module):
    """Token ids (int64) and a float mask in; four outputs of two dtypes and
    ranks 0 to 3, as a tuple or as a dict whose keys are not in sorted order."""

    def __init__(self, as_dict=False):
        super().__init__()
        self.emb, self.proj, self.as_dict = nn.Embedding(50, 16), nn.Linear(16, 8), as_dict

    def forward(self, ids, mask):
        h = self.emb(ids) * mask.unsqueeze(-1)
        logits = self.proj(h)
        pooled = h.sum(1) / mask.sum(1, keepdim=True)
        top, count = logits.argmax(-1), mask.sum()
        if self.as_dict:
            return {"logits": logits, "top": top, "pooled": pooled, "count": count}
        return logits, pooled, top, count


def _token_inputs():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 50, (2, 5), generator=g)          # int64
    mask = (torch.rand(2, 5, generator=g) > 0.3).float()
    mask[:, 0] = 1.0                                         # no empty row
    return ids, mask


def _build_driver(out: Path, exe: Path, cc=None, link=None):
    """Inputs/run_model_io.c against the exported folder (host: -lmodel)."""
    link = link if link is not None else [f"-L{out}", "-lmodel", f"-Wl,-rpath,{out}"]
    subprocess.run([cc or _cc(), "-O1", "-Wall", "-Werror", str(HERE / "Inputs" / "run_model_io.c"),
                    f"-I{out}", *link, "-o", str(exe)], check=True)


def _run_from_c(exe: Path, out: Path, inputs, want, work: Path, runner=()):
    """Runs the driver on `inputs` (tensors) with outputs sized like the
    tensors `want`; returns the outputs read back in want's dtypes/shapes."""
    args = [*runner, str(exe), str(out / "weights.bin")]
    for i, x in enumerate(inputs):
        execution.to_array(x).tofile(work / f"in{i}.bin")   # bf16: its bits
        args.append(str(work / f"in{i}.bin"))
    for j, w in enumerate(want):
        args += [str(work / f"out{j}.bin"), str(execution.to_array(w).nbytes)]
    proc = subprocess.run(args, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"ran {len(inputs)} input(s) -> {len(want)} output(s)")
    return [np.fromfile(work / f"out{j}.bin", dtype=execution.to_array(w).dtype).reshape(w.shape)
            for j, w in enumerate(want)]


def _assert_matches(got, want):
    assert len(got) == len(want)
    for j, (g, w) in enumerate(zip(got, want)):
        w = w.numpy()
        if np.issubdtype(w.dtype, np.integer):
            np.testing.assert_array_equal(g, w, err_msg=f"output {j}")
        else:
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5, err_msg=f"output {j}")


def _dynamic_deps(lib: Path):
    """ldd's lines for a host library: check=True and non-empty, so that a
    failing or silent ldd cannot pass the "no libLLVM" checks below."""
    deps = subprocess.run(["ldd", str(lib)], capture_output=True, text=True, check=True).stdout
    assert "libc.so" in deps, deps
    return deps


def test_exported_cnn_runs_from_c_and_matches_eager(tmp_path):
    torch.manual_seed(0)
    model, x = CNN().eval(), torch.randn(1, 3, 32, 32)
    out = cuvil.export(model, (x,), tmp_path / "artifact")
    assert {p.name for p in out.iterdir()} >= {"libmodel.so", "model.h", "weights.bin", "README.md"}
    deps = _dynamic_deps(out / "libmodel.so")
    assert "libMLIR" not in deps and "libLLVM" not in deps and "python" not in deps.lower()
    # Exported: the C API and the C-interface entry point, not MLIR's plain
    # `main` or the runtime support (version script).
    syms = subprocess.run(["nm", "-D", "--defined-only", str(out / "libmodel.so")],
                          capture_output=True, text=True, check=True).stdout.split()
    assert {"cuvil_model_load", "cuvil_model_run", "cuvil_model_free", "_mlir_ciface_main"} <= set(syms)
    assert "main" not in syms and "memrefCopy" not in syms

    exe = tmp_path / "run_model"
    subprocess.run([_cc(), str(HERE / "Inputs" / "run_model.c"), f"-I{out}",
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


def test_exported_cnn_runs_twice_from_one_load(tmp_path):
    """The conv's prepacked weights are computed once at load: a run must
    not change them (read-only entry arguments), or the second run differs."""
    torch.manual_seed(0)
    model, x = CNN().eval(), torch.randn(1, 3, 16, 16)
    out = cuvil.export(model, (x,), tmp_path / "artifact")
    _build_driver(out, tmp_path / "run_model_io")
    with torch.no_grad():
        want = [model(x)]
    _assert_matches(_run_from_c(tmp_path / "run_model_io", out, (x,), want, tmp_path), want)


@pytest.mark.parametrize("as_dict", [False, True], ids=["tuple", "dict"])
def test_exported_int64_inputs_and_several_outputs_match_eager(tmp_path, as_dict):
    torch.manual_seed(0)
    model, inputs = TokenModel(as_dict).eval(), _token_inputs()
    out = cuvil.export(model, inputs, tmp_path / "artifact")
    with torch.no_grad():
        want = pytree.tree_leaves(model(*inputs))   # C output j = leaf j (dict: insertion order)
    assert [w.dtype for w in want] == ([torch.float32, torch.int64, torch.float32, torch.float32] if as_dict
                                       else [torch.float32, torch.float32, torch.int64, torch.float32])
    _build_driver(out, tmp_path / "run_model_io")
    _assert_matches(_run_from_c(tmp_path / "run_model_io", out, inputs, want, tmp_path), want)


def test_exported_bf16_model_runs_from_c(tmp_path):
    """bf16 buffers cross the C API as their 16-bit patterns (uint16_t)."""
    torch.manual_seed(0)
    model = MLP((64, 128, 16)).eval().to(torch.bfloat16)
    x = torch.randn(4, 64).bfloat16()
    out = cuvil.export(model, (x,), tmp_path / "artifact")
    described = re.findall(r"^ \*   ((?:input|output) \d+: .*)$", (out / "model.h").read_text(), re.M)
    assert described == ["input 0: uint16_t[4][64] (bfloat16)", "output 0: uint16_t[4][16] (bfloat16)"]
    _build_driver(out, tmp_path / "run_model_io")
    with torch.no_grad():
        want = [model(x)]
    (bits,) = _run_from_c(tmp_path / "run_model_io", out, (x,), want, tmp_path)
    got = execution.to_tensor(bits, "bf16")
    # The same math as cuvil.compile's (f32 accumulation): one bf16 rounding of eager's.
    torch.testing.assert_close(got, want[0], rtol=2 ** -7, atol=2 ** -7 * float(want[0].abs().max()))


def test_model_header_declares_the_api_and_describes_the_buffers(tmp_path):
    torch.manual_seed(0)
    out = cuvil.export(TokenModel(as_dict=True).eval(), _token_inputs(), tmp_path / "artifact")
    header = (out / "model.h").read_text()
    # Buffers, in the C API's order: inputs as passed, outputs as the dict's
    # insertion order (the C element type and the dims of each).
    described = re.findall(r"^ \*   ((?:input|output) \d+: .*)$", header, re.M)
    assert described == ["input 0: int64_t[2][5]", "input 1: float[2][5]",
                         "output 0: float[2][5][8]", "output 1: int64_t[2][5]",
                         "output 2: float[2][16]", "output 3: float (scalar)"]
    assert "#define CUVIL_MODEL_NUM_INPUTS 2\n" in header
    assert "#define CUVIL_MODEL_NUM_OUTPUTS 4\n" in header
    for decl in ["typedef struct cuvil_model cuvil_model;",
                 "cuvil_model *cuvil_model_load(const char *weights_path);",
                 "int cuvil_model_run(cuvil_model *model, const void *const *inputs, void *const *outputs);",
                 "void cuvil_model_free(cuvil_model *model);"]:
        assert decl in header
    # The header compiles on its own, twice (include guard), in strict C and
    # in C++, with exactly these prototypes and counts; the C++ program links
    # against the library (extern "C": unmangled names).
    check = tmp_path / "check.c"
    check.write_text(
        '#include "model.h"\n#include "model.h"\n'
        "_Static_assert(CUVIL_MODEL_NUM_INPUTS == 2, \"inputs\");\n"
        "_Static_assert(CUVIL_MODEL_NUM_OUTPUTS == 4, \"outputs\");\n"
        "cuvil_model *(*const load_fn)(const char *) = cuvil_model_load;\n"
        "int (*const run_fn)(cuvil_model *, const void *const *, void *const *) = cuvil_model_run;\n"
        "void (*const free_fn)(cuvil_model *) = cuvil_model_free;\n"
        "int main(void) {\n"
        "  (void)run_fn;\n"
        "  cuvil_model *m = load_fn(\"/nonexistent/weights.bin\");  /* NULL, a message */\n"
        "  free_fn(m);\n"
        "  return m != 0;\n"
        "}\n")
    subprocess.run([_cc(), "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{out}", str(check),
                    f"-L{out}", "-lmodel", f"-Wl,-rpath,{out}", "-o", str(tmp_path / "check")], check=True)
    _expect_load_refused(tmp_path / "check")
    cxx = shutil.which("c++") or shutil.which("g++")
    if cxx:
        cpp = tmp_path / "check.cpp"
        cpp.write_text(check.read_text().replace("_Static_assert", "static_assert"))
        subprocess.run([cxx, "-Wall", "-Wextra", "-Werror", f"-I{out}", str(cpp), f"-L{out}", "-lmodel",
                        f"-Wl,-rpath,{out}", "-o", str(tmp_path / "check_cxx")], check=True)
        _expect_load_refused(tmp_path / "check_cxx")


def _expect_load_refused(exe):
    proc = subprocess.run([str(exe)], capture_output=True, text=True)
    assert proc.returncode == 0 and "cuvil: cannot open /nonexistent/weights.bin" in proc.stderr, proc


def test_wrong_weights_file_is_refused(tmp_path):
    torch.manual_seed(0)
    out = cuvil.export(CNN().eval(), (torch.randn(1, 3, 16, 16),), tmp_path / "a")
    exe = tmp_path / "run_model"
    subprocess.run([_cc(), str(HERE / "Inputs" / "run_model.c"), f"-I{out}", f"-L{out}", "-lmodel",
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


def _cross_library(cc: str, out: Path) -> Path:
    """What the README tells a user to do: the target's C compiler builds
    model.c + runtime_support.c and links them with model.o; every symbol
    must resolve against the target's libc and libm."""
    lib = out / "libmodel.so"
    subprocess.run([cc, "-O2", "-fPIC", "-shared", "-Wall", "-Werror", f"-I{out}",
                    str(out / "model.c"), str(out / "runtime_support.c"), str(out / "model.o"),
                    "-Wl,--no-undefined", "-o", str(lib), "-lm"], check=True)
    return lib


def test_aarch64_export_cross_compiles_into_a_library(tmp_path, cross_cc):
    torch.manual_seed(0)
    out = cuvil.export(TokenModel().eval(), _token_inputs(), tmp_path / "arm", target=CROSS)
    assert not (out / "libmodel.so").exists()
    # model.o defines the C-interface entry point and keeps the rest (MLIR's
    # plain `main`, the kernels) local: a global `main` would clash with the
    # program's own when linked into it, or interpose on it from a library.
    obj_syms = subprocess.run([f"{CROSS}-nm", "--defined-only", "--extern-only", str(out / "model.o")],
                              capture_output=True, text=True, check=True).stdout
    defined = set(re.findall(r"^[0-9a-f]+ [A-Za-z] (\S+)$", obj_syms, re.M))
    assert "_mlir_ciface_main" in defined and defined <= {"_mlir_ciface_main", "_mlir_ciface_main_prepack"}, \
        obj_syms
    lib = _cross_library(cross_cc, out)
    elf = subprocess.run([f"{CROSS}-readelf", "-h", "-d", str(lib)],
                         capture_output=True, text=True, check=True).stdout
    assert re.search(r"Machine:\s+AArch64", elf), elf
    needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", elf))
    assert "libc.so.6" in needed and needed <= {"libc.so.6", "libm.so.6", "ld-linux-aarch64.so.1"}, needed
    syms = subprocess.run([f"{CROSS}-nm", "-D", "--defined-only", str(lib)],
                          capture_output=True, text=True, check=True).stdout.split()
    assert {"cuvil_model_load", "cuvil_model_run", "cuvil_model_free", "_mlir_ciface_main"} <= set(syms)
    # A program cross-builds against it, or with the objects linked in.
    _build_driver(out, tmp_path / "run_model_io", cc=cross_cc, link=[str(lib)])
    _build_driver(out, tmp_path / "run_model_io_static", cc=cross_cc, link=_cross_objects(out))


def _cross_objects(out: Path):
    return [str(out / "model.c"), str(out / "runtime_support.c"), str(out / "model.o"), "-lm"]


@pytest.mark.parametrize("link", ["shared", "static"])
def test_aarch64_export_runs_under_qemu_and_matches_eager(tmp_path, link, cross_cc, qemu_aarch64):
    torch.manual_seed(0)
    model, inputs = TokenModel(as_dict=True).eval(), _token_inputs()
    out = cuvil.export(model, inputs, tmp_path / "arm", target=CROSS)
    exe = tmp_path / "run_model_io"
    _build_driver(out, exe, cc=cross_cc,
                  link=[str(_cross_library(cross_cc, out)), f"-Wl,-rpath,{out}"] if link == "shared"
                  else _cross_objects(out))
    with torch.no_grad():
        want = pytree.tree_leaves(model(*inputs))
    got = _run_from_c(exe, out, inputs, want, tmp_path, runner=qemu_aarch64)
    _assert_matches(got, want)


class Noise(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.dropout(x, 0.5, training=True) + torch.rand_like(x)


def test_exported_random_ops_take_the_seed_as_last_input(tmp_path):
    """The C caller passes the seed (cuvil.importer_random); with the seed a
    Python call drew, the C run gives the generator's numbers exactly."""
    from cuvil import importer_random
    x = torch.randn(8, 33)
    out = cuvil.export(Noise(), (x,), tmp_path / "artifact")
    header = (out / "model.h").read_text()
    assert "input 1: int64_t (scalar)" in header and "the seed of the model's random numbers" in header
    seed = torch.tensor(123456789123, dtype=torch.int64)
    keep = importer_random.uniform01(seed, 0, x.shape, torch.float32) >= 0.5
    want = [x * keep * 2.0 + importer_random.uniform01(seed, 1, x.shape, torch.float32)]
    _build_driver(out, tmp_path / "run_model_io")
    _assert_matches(_run_from_c(tmp_path / "run_model_io", out, (x, seed), want, tmp_path), want)


class Spectrum(nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x).abs()


def test_exported_model_without_weights_runs_its_prepack_from_c(tmp_path):
    """No weights, but constant tables (the rfft's cosines and sines) are
    computed once, by main_prepack, which cuvil_model_load runs with no
    weight to read: the C run matches eager."""
    torch.manual_seed(0)
    x = torch.randn(2, 96)
    out = cuvil.export(Spectrum(), (x,), tmp_path / "artifact")
    assert "_mlir_ciface_main_prepack" in subprocess.run(["nm", str(out / "libmodel.so")], capture_output=True,
                                                         text=True, check=True).stdout
    _build_driver(out, tmp_path / "run_model_io")
    want = [Spectrum()(x)]
    _assert_matches(_run_from_c(tmp_path / "run_model_io", out, (x,), want, tmp_path), want)
