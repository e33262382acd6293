"""The benchmark harness (benchmarks/run.py) end to end on the smallest
workload, and its machine probe. No timing is asserted: only that the run
produces checked numbers and that the report says what it measured."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCH))

import machine  # noqa: E402
import run as harness  # noqa: E402


def test_machine_probes_report_per_thread_rates():
    one, two = machine.probe(1, seconds=0.02), machine.probe(2, seconds=0.02)
    # Any x86-64 or arm64 core does at least 1 GFLOP/s of fp32 FMA; no core 10 TFLOP/s.
    assert 1 < one < 10_000 and 1 < two < 10_000
    # Reading a cache-resident buffer: more than 0.5 GB/s, less than 10 TB/s.
    assert 0.5 < machine.bandwidth(2, megabytes=1, reps=4) < 10_000
    if len(os.sched_getaffinity(0)) >= 2:
        assert 0 < machine.handoff_ns(rounds=2000) < 1e6
    else:
        assert machine.handoff_ns(rounds=2000) is None
    assert machine.degraded({"fma_gflops": 50.0, "l3_read_gbps": 90.0, "handoff_ns": 170.0},
                            {"fma_gflops": 100.0, "l3_read_gbps": 90.0, "handoff_ns": 30.0}) \
        == ["fma_gflops", "handoff_ns"]
    assert machine.degraded({"handoff_ns": 38.0}, {"handoff_ns": 30.0}) == []


def test_amx_probes_measure_the_tile_unit_where_the_host_has_one():
    flags = next((ln.split(":", 1)[1].split() for ln in open("/proc/cpuinfo") if ln.startswith("flags")), [])
    bf16, int8 = machine.amx_bf16_probe(1, seconds=0.02), machine.amx_int8_probe(1, seconds=0.02)
    if not {"amx_bf16", "amx_int8"} <= set(flags):
        assert bf16 is None and int8 is None
    elif bf16 is not None:   # (None: a kernel that does not grant the tile state)
        # A tdpbusd is twice a tdpbf16ps's operations in the same time; a
        # core's tile unit does more than 100 GFLOP/s, no core 100 TFLOP/s.
        assert 100 < bf16 < 100_000 and 100 < int8 < 200_000 and int8 > 1.3 * bf16
    # Reports compare bf16 / int8 rows against AMX where it was probed, else the dot products.
    assert machine.reduced_precision_roofs({"fma_gflops": 1.0, "bf16_gflops": 2.0, "amx_bf16_gflops": 30.0,
                                            "int8_gops": 4.0}) == {"bf16": ("amx_bf16_gflops", 30.0),
                                                                   "int8": ("int8_gops", 4.0)}
    assert machine.reduced_precision_roofs({"fma_gflops": 1.0}) == {}


def test_harness_runs_matmul_against_eager(tmp_path):
    out, scratch = tmp_path / "bench", tmp_path / "scratch"
    scratch.mkdir()
    proc = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--workloads", "matmul", "--systems", "eager", "cuvil",
         "--threads", "1", "--repeats", "2", "--warmup", "1", "--out", str(out)],
        capture_output=True, text=True, timeout=600, env=dict(os.environ, TMPDIR=str(scratch)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    # Each child removes its scratch folder (exports, caches) when it exits.
    assert not [p.name for p in scratch.iterdir() if p.name.startswith("cuvil-bench-")]
    report = json.loads(out.with_suffix(".json").read_text())
    rows = {r["system"]: r for r in report["results"]}
    assert set(rows) == {"eager", "cuvil"}, rows
    cuvil = rows["cuvil"]
    assert "error" not in cuvil, cuvil
    assert cuvil["max_abs_err"] < 1e-3
    assert cuvil["compile_cached_s"] < cuvil["compile_cold_s"]   # the warm start hit the cache
    assert cuvil["gflops"] == pytest.approx(2 * 1024 ** 3 / (cuvil["median_ms"] * 1e-3) / 1e9, rel=1e-9)
    assert 0 < cuvil["peak_fraction"] < 1.5
    assert len(cuvil["machine"]["fma_gflops"]) == len(cuvil["machine"]["l3_read_gbps"]) == 2
    assert report["meta"]["machine_at_start"]["1"]["fma_gflops"] > 0
    table = out.with_suffix(".md").read_text()
    assert "| matmul | 1 | cuvil |" in table and "% peak" in table and "GB/s L3 read" in table


def test_report_flags_rows_measured_on_a_busy_machine():
    start = {2: {"fma_gflops": 117.0, "l3_read_gbps": 90.0}}
    row = dict(workload="matmul", threads=2, system="cuvil", median_ms=20.0, min_ms=19.0, gflops=107.0,
               peak_fraction=0.9, max_abs_err=0.0,
               machine={"fma_gflops": [116.0, 118.0], "l3_read_gbps": [40.0, 88.0]})
    healthy = dict(row, machine={"fma_gflops": [116.0, 118.0], "l3_read_gbps": [89.0, 88.0]})
    table = harness.markdown([row, healthy], start)
    flagged = [line for line in table.splitlines() if "busy: l3_read_gbps" in line and line.startswith("|")]
    assert len(flagged) == 1


def test_a_child_past_the_timeout_is_a_row_not_a_crash(tmp_path):
    out, scratch = tmp_path / "bench", tmp_path / "scratch"
    scratch.mkdir()
    proc = subprocess.run(
        [sys.executable, str(BENCH / "run.py"), "--workloads", "matmul", "--systems", "cuvil",
         "--threads", "1", "--repeats", "2", "--timeout", "2", "--out", str(out)],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, TMPDIR=str(scratch)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    (row,) = json.loads(out.with_suffix(".json").read_text())["results"]
    assert row["error"] == "timed out after 2 s"
    assert not list(scratch.iterdir())   # the killed child's scratch is removed too


def test_rounds_are_merged_and_ratios_taken_round_by_round():
    rows = [dict(workload="mlp", system="cuvil", threads=1, median_ms=m, min_ms=m - 1, gflops=100.0 / m,
                 peak_fraction=0.5 / m) for m in (10.0, 30.0, 20.0)]
    merged = harness.merge_rounds(rows)
    assert merged["median_ms"] == 20.0 and merged["min_ms"] == 9.0 and merged["rounds"] == 3
    assert merged["round_ms"] == [10.0, 30.0, 20.0] and merged["gflops"] == pytest.approx(5.0)
    other = harness.merge_rounds([dict(workload="mlp", system="eager", threads=1, median_ms=m, min_ms=m)
                                  for m in (20.0, 30.0, 80.0)])
    # eager / cuvil per round: 2, 1, 4 -> min 1, median 2
    assert harness.ratios_vs([merged, other]) == {("mlp", "eager", 1): (1.0, 2.0)}
    failed = [dict(workload="mlp", system="x", threads=1, error="boom")]
    assert harness.merge_rounds(failed) == failed[0]


def test_openvino_profile_lists_the_layers_of_one_call():
    pytest.importorskip("openvino")
    import openvino_profile
    compiled, feed = openvino_profile.compiled_model("matmul", "fp32", threads=1)
    result = openvino_profile.profile(compiled, feed, runs=2, warmup=1)
    assert result["runs"] == 2 and result["wall_ms_per_call"] > 0
    # The workload's one product is a layer of its own, with the primitive
    # OpenVINO picked for it; every row's time is a mean per call.
    products = [r for r in result["layers"] if r["type"] in ("MatMul", "FullyConnected")]
    assert products and all(r["primitive"] for r in products)
    times = [r["ms"] for r in result["layers"]]
    assert times == sorted(times, reverse=True)   # slowest first
    text = openvino_profile.table(result, top=len(result["layers"]))
    assert all(r["layer"] in text for r in result["layers"]) and "(wall time of a call)" in text
