"""A fixed sample of PyTorch's op database cases, rerun in CI against the
outcomes the full run recorded (scripts/opdb_conformance.py -> conformance/opdb/).

Cases that passed must still pass. Cases that failed must still fail the
way they did (never a crash): a case that now passes means the record is
stale, rerun the script."""
import pytest

from conftest import ROOT, load_script, recorded_sample

pytest.importorskip("expecttest")   # torch's op database imports it
RECORD = ROOT / "conformance" / "opdb" / "results.json"
SAMPLE_PASSING, SAMPLE_FAILING = 40, 12


@pytest.fixture(scope="module")
def conformance():
    # Each test has its own cache (conftest): the cases' modules, all of one
    # class, cannot find each other's builds.
    return load_script("opdb_conformance")


@pytest.mark.parametrize("name,recorded", recorded_sample(RECORD, True, SAMPLE_PASSING, skip=("crash", "eager-error")))
def test_recorded_pass_still_passes(conformance, name, recorded):
    result = conformance.run_case(conformance.all_cases()[name])
    assert result["status"] == "pass", result


@pytest.mark.parametrize("name,recorded", recorded_sample(RECORD, False, SAMPLE_FAILING, skip=("crash", "eager-error")))
def test_recorded_failure_still_fails_the_same_way(conformance, name, recorded):
    result = conformance.run_case(conformance.all_cases()[name])
    assert result["status"] == recorded, (result, "rerun scripts/opdb_conformance.py if this is an improvement")


def test_float32_mismatch_passes_only_when_as_close_to_float64(conformance):
    """A float32 output that differs from eager's passes only when each of
    its elements is as close to eager's float64 result as eager's own."""
    import torch

    class Expm1Scaled(torch.nn.Module):
        def forward(self, x):
            return (torch.exp(x) - 1) * 1e6   # float32 cancels: ~6% off at x = 1e-6

    x = torch.linspace(1e-6, 1e-5, 64)
    want = Expm1Scaled()(x)
    precise = Expm1Scaled()(x.double()).float()      # what computing it in float64 returns
    assert not torch.allclose(precise, want, rtol=1e-5, atol=1e-5)
    detail = conformance._closer_to_float64(Expm1Scaled(), [x], precise, want)
    assert "as close to eager float64" in detail
    worse = want.clone()
    worse[-1] += 1.0                                 # one element farther off than eager's
    assert conformance._closer_to_float64(Expm1Scaled(), [x], worse, want) == ""
    assert conformance._closer_to_float64(Expm1Scaled(), [x], precise.double(), want) == ""   # a dtype differs
    nan = precise.clone()
    nan[3] = float("nan")
    assert conformance._closer_to_float64(Expm1Scaled(), [x], nan, want) == ""
