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
