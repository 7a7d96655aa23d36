"""The notebooks' reader takes the attention metrics from the C++ metric table
(`dgq metrics --json`, sim/metrics/include/dgq/sim/metrics/probe_metrics.hpp), and a replay's results file has
exactly those datasets and summaries. By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -m needs_dgq
"""

import os
import subprocess

import h5py
import pytest

from conftest import REPO_ROOT
from dgqtools import results

pytestmark = pytest.mark.needs_dgq


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    if not os.environ.get("DGQ_BIN"):
        pytest.fail("DGQ_BIN is not set: point it at the dgq binary (ctest sets it when dgq is built)")
    out = tmp_path_factory.mktemp("metrics") / "r.h5"
    subprocess.run(
        [
            os.environ["DGQ_BIN"],
            "replay",
            str(REPO_ROOT / "data" / "synthetic-poetry-2k-noise10.h5"),
            "--scheme",
            "int8-token",
            "--layers",
            "0",
            "-o",
            str(out),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out


def test_reader_gets_the_metric_table_in_order():
    metrics = results.probe_metrics()
    assert [m["name"] for m in metrics] == ["kl", "tv", "top8", "top32", "out_rel_l2", "out_cos"]
    assert {m["better"] for m in metrics} <= {"lower", "higher"}
    kl = metrics[0]
    assert kl["unit"] == "nats" and kl["better"] == "lower" and kl["summaries"] == ["attn_kl", "clean_kl"]


def test_results_file_holds_every_metric_of_the_table(replayed):
    names = [m["name"] for m in results.probe_metrics()]
    with h5py.File(replayed, "r") as f:
        (run,) = f["runs"].values()
        # clean/ also holds the noise mass, which is not a probe-comparison metric of the table.
        for group, extra in (("attn", set()), ("clean", {"noise_mass", "noise_mass_hat"})):
            assert set(run[group].keys()) - {"probes"} == set(names) | extra
            assert set(run[group]["probes"].keys()) == set(names) | extra
        for name in names:
            assert f"attn_{name}" in run["summary"] and f"clean_{name}" in run["summary"]
