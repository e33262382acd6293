"""torch.fft's transforms and torch.stft compile (cuvil.importer_fft: DFTs as
real products on (re, im) pairs) and match eager; complex results come back
complex (cuvil.importer_complex). Tolerances: rtol 1e-5 / atol 1e-5 against
eager's pocketfft in float32 (the tables are rounded once from float64; the
products accumulate at most ~64 terms here), 1e-10 in float64, unless a test
says otherwise."""
import pytest
import torch

import cuvil
from conftest import Lambda, compile_and_compare



def _check(fn, *inputs, rtol=1e-5, atol=1e-5):
    compile_and_compare(Lambda(fn), *inputs, rtol=rtol, atol=atol)


TRANSFORMS = {
    "rfft": lambda x: torch.fft.rfft(x),
    "rfft-n-dim-ortho": lambda x: torch.fft.rfft(x, n=10, dim=1, norm="ortho"),
    "fft": lambda x: torch.fft.fft(x),
    "ifft-forward": lambda x: torch.fft.ifft(x, n=4, dim=0, norm="forward"),
    "irfft": lambda x: torch.fft.irfft(x),
    "irfft-odd-n": lambda x: torch.fft.irfft(x, n=9, dim=1),
    "hfft": lambda x: torch.fft.hfft(x, n=10, norm="ortho"),
    "ihfft": lambda x: torch.fft.ihfft(x),
    "fft2": lambda x: torch.fft.fft2(x),
    "rfftn-s-dim": lambda x: torch.fft.rfftn(x, s=(3, 10), dim=(1, 2)),
    "irfft2": lambda x: torch.fft.irfft2(x),
    "hfftn": lambda x: torch.fft.hfftn(x, s=(3, 10), dim=(1, 2), norm="forward"),
    "ihfft2": lambda x: torch.fft.ihfft2(x),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transforms_match_eager_with_eager_dtypes(name):
    torch.manual_seed(0)
    _check(TRANSFORMS[name], torch.randn(5, 6, 7))


def test_integer_input_transforms_in_float32():
    _check(lambda x: torch.fft.rfft(x), torch.randint(-5, 5, (4, 8)))


def test_float64_gives_complex128():
    torch.manual_seed(0)
    _check(lambda x: torch.fft.fft(x, norm="ortho"), torch.randn(4, 16, dtype=torch.float64), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name, fn", [
    ("roundtrip", lambda x: torch.fft.irfft(torch.fft.rfft(x), n=x.shape[-1])),
    ("magnitude", lambda x: torch.fft.rfft(x).abs()),
    ("phase", lambda x: torch.fft.rfft(x).angle()),
    ("real-imag", lambda x: (torch.fft.fft(x).real, torch.fft.fft(x).imag)),
    ("view-as-real", lambda x: torch.view_as_real(torch.fft.rfft2(x))),
    ("two-outputs", lambda x: (torch.fft.rfft(x), torch.fft.rfft(x).abs() * 2)),
], ids=lambda v: v if isinstance(v, str) else "")
def test_complex_values_between_ops_stay_real_pairs(name, fn):
    torch.manual_seed(1)
    _check(fn, torch.randn(3, 16))


def test_spectrogram_of_a_centered_hann_stft():
    def spectrogram(x):
        spec = torch.stft(x, n_fft=64, hop_length=16, window=torch.hann_window(64), center=True,
                          return_complex=True)
        return spec, spec.abs().pow(2)
    torch.manual_seed(2)
    _check(spectrogram, torch.randn(2, 400), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("n", [65, 97, 128, 400, 1000, 4096, 16000])
def test_the_factored_dft_is_the_dft(n):
    """Lengths over importer_fft.DENSE_MAX are split (Cooley-Tukey), again
    and again (16000 = 125 x 128, 125 = 5 x 25 ...); a prime length stays
    one dense product. Checked in float64 against pocketfft, no compile: the
    onesided and the full, both directions, transformed along a middle dim."""
    from cuvil.importer_fft import _c2c
    torch.manual_seed(n)
    x = torch.randn(2, n, 3, dtype=torch.complex128)
    re, im = _c2c((x.real, None), 1, -1, cols=n // 2 + 1)
    torch.testing.assert_close(torch.complex(re, im), torch.fft.rfft(x.real, dim=1), rtol=0, atol=1e-9 * n ** 0.5)
    re, im = _c2c((x.real, x.imag), 1, 1)
    torch.testing.assert_close(torch.complex(re, im), torch.fft.ifft(x, dim=1, norm="forward"),
                               rtol=0, atol=1e-9 * n ** 0.5)


def test_a_one_second_rfft_compiles_with_small_tables():
    """16000 points: dense tables would be 2 x 16000 x 8001 floats (1 GB);
    the factored transform's are a few thousand. float32 against pocketfft,
    atol 2e-3 (|X| reaches ~500 here; the products accumulate ~250 terms)."""
    torch.manual_seed(3)
    _check(lambda x: torch.fft.rfft(x), torch.randn(2, 16000), rtol=1e-5, atol=2e-3)


def test_stft_short_window_normalized_two_sided():
    torch.manual_seed(3)
    _check(lambda x: torch.stft(x, 16, hop_length=5, win_length=12, window=torch.hann_window(12),
                                normalized=True, onesided=False, center=False, return_complex=True),
           torch.randn(100))


def test_dynamo_backend_returns_complex():
    torch.manual_seed(4)
    x = torch.randn(4, 32)
    fast = torch.compile(Lambda(lambda x: torch.fft.rfft(x * 2)), backend="cuvil")
    got = fast(x)
    assert got.dtype == torch.complex64
    torch.testing.assert_close(got, torch.fft.rfft(x * 2), rtol=1e-5, atol=1e-5)


class SquaredSpectrum(torch.nn.Module):
    def forward(self, x):
        return torch.fft.rfft(x) * torch.fft.rfft(x)    # complex mul: no real-pair form


def test_complex_arithmetic_is_refused_naming_the_op():
    model = SquaredSpectrum()
    with pytest.raises(cuvil.UnsupportedOpError, match=r"aten\.mul at test_fft\.py:\d+") as info:
        cuvil.compile(model)(torch.randn(4, 8))
    assert "complex64" in str(info.value)


def test_exported_header_says_a_complex_output_is_pairs(tmp_path):
    import re
    out = cuvil.export(Lambda(lambda x: torch.fft.rfft(x)), (torch.randn(4, 16),), tmp_path / "artifact")
    described = re.findall(r"^ \*   (\(?(?:input|output) \d+: .*)$", (out / "model.h").read_text(), re.M)
    assert described == ["input 0: float[4][16]", "output 0: float[4][9][2]",
                         "(output 0: complex64, as (real, imaginary) pairs in its last dim)"]


@pytest.mark.parametrize("name, fn", [
    ("complex", lambda x: torch.complex(x, x * 2)),
    ("polar", lambda x: torch.polar(x.abs(), x)),
    ("cfloat", lambda x: x.cfloat()),
    ("cdouble", lambda x: x.cdouble()),
    ("view-as-complex", lambda x: torch.view_as_complex(x.reshape(4, 4, 2) * 3)),
    ("then-transformed", lambda x: torch.fft.ifft(torch.complex(x, -x))),
], ids=lambda v: v if isinstance(v, str) else "")
def test_complex_tensors_made_from_real_ones(name, fn):
    torch.manual_seed(5)
    _check(fn, torch.randn(4, 8))


class HalfComplex(torch.nn.Module):
    def forward(self, x):
        return x.chalf()    # complex32: no real-pair form (eager's half FFTs are CUDA-only)


def test_complex32_is_refused_not_widened():
    with pytest.raises(cuvil.UnsupportedOpError, match="complex32"):
        cuvil.compile(HalfComplex())(torch.randn(4, 8))
