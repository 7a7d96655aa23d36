"""The notebooks' aggregate of eval runs over the texts (results.aggregate_eval_runs, used by
the dgq3-low block): geometric-mean KLD, arithmetic means of bits, p99 and ΔPPL in % of the fp16
PPL, per-text KLDs, and a KLD of 0 kept 0. By hand: tests/python/run_pytest.sh -k aggregate
"""

import math
from types import SimpleNamespace

import pytest

from dgqtools import results


def run(scheme, text, kld, ppl=11.0, dppl=1.0, bits=4.5, bits_avg=4.25, p99=0.5):
    return SimpleNamespace(
        attrs={
            "scheme": scheme,
            "text": text,
            "kld_mean": kld,
            "ppl": ppl,
            "dppl": dppl,
            "bits_per_element": bits,
            "bits_averaged": bits_avg,
            "kld_p99": p99,
        }
    )


def test_texts_are_aggregated_per_scheme():
    agg = results.aggregate_eval_runs(
        [
            run("a", "code", 0.01, p99=0.2, bits_avg=4.0),
            run("a", "prose", 0.04, ppl=21.0, dppl=1.0, p99=0.4, bits_avg=4.5),
            run("b", "code", 0.5),
        ]
    )
    assert set(agg) == {"a", "b"}
    a = agg["a"]
    assert a["kld"] == pytest.approx(math.sqrt(0.01 * 0.04))
    assert a["bits_avg"] == pytest.approx(4.25) and a["bits"] == pytest.approx(4.5)
    assert a["p99"] == pytest.approx(0.3)
    assert a["dppl_pct"] == pytest.approx((10.0 + 5.0) / 2)  # 1 of 10 and 1 of 20
    assert a["per_text"] == {"code": 0.01, "prose": 0.04} and a["n"] == 2
    assert agg["b"]["kld"] == pytest.approx(0.5) and agg["b"]["n"] == 1


def test_an_exact_cache_keeps_kld_zero_and_one_zero_text_stays_finite():
    assert results.aggregate_eval_runs([run("fp32", "code", 0.0), run("fp32", "prose", 0.0)])["fp32"]["kld"] == 0.0
    mixed = results.aggregate_eval_runs([run("a", "code", 0.0), run("a", "prose", 1e-4)])["a"]["kld"]
    assert mixed == pytest.approx(math.sqrt(1e-12 * 1e-4))


def test_short_spec_shortens_each_part_of_a_layer_plan_and_of_a_pair():
    canonical = "dgq3:kbits=5,vbits=3,block=64,rot=hadamard,center=kv,hi_frac=0.05"  # block, rot: defaults
    assert results.short_spec(canonical) == "dgq3:kbits=5,vbits=3,center=kv,hi_frac=0.05"
    assert (
        results.short_spec(f"{canonical};0-2,5={canonical}/fp32;7=q4_0")
        == "dgq3:kbits=5,vbits=3,center=kv,hi_frac=0.05;0-2,5=dgq3:kbits=5,vbits=3,center=kv,hi_frac=0.05/fp32;7=q4_0"
    )
    assert results.short_spec("q8_0/dgq3:block=64,kbits=3") == "q8_0/dgq3:kbits=3"


def test_a_table_names_the_raw_dtype_of_its_runs_and_refuses_to_mix_two():
    new = [{"spec": "q8_0", "raw_dtype": "none"}, {"spec": "kivi-4", "raw_dtype": "f16"}]
    assert results.raw_rows_words(new) == "raw rows held in fp16 (docs/spec.md rule C9)"
    assert results.raw_rows_words([{"spec": "q8_0", "raw_dtype": "none"}]) == "no raw rows"
    # A run written before --raw-dtype held its raw rows in the runner's fp32.
    old = [{"spec": "kivi-4"}]
    assert results.raw_dtype_of(old[0]) == "f32"
    with pytest.raises(ValueError, match="f16, f32"):
        results.raw_rows_words(new + old)
