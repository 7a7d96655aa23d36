"""What the dgq CLI says about itself: its metrics, its schemes' defaults, its version."""

from __future__ import annotations

import functools

from dgqtools.results.paths import dgq_binary


def probe_metrics() -> list[dict]:
    """The attention metrics of the replay, from their one table in the C++ code
    (sim/metrics/include/dgq/sim/metrics/probe_metrics.hpp) via `dgq metrics --json`: per metric its name, unit,
    better ("lower"/"higher"), aggregation, summary names (attn_<name>, clean_<name>) and
    description, in the order of the results file's datasets."""
    import json
    import subprocess

    out = subprocess.run([str(dgq_binary()), "metrics", "--json"], check=True, capture_output=True, text=True)
    doc = json.loads(out.stdout)
    if doc.get("format") != "dgq-metrics":
        raise ValueError(f"{dgq_binary()} metrics --json: format is {doc.get('format')!r}, expected 'dgq-metrics'")
    return doc["metrics"]


@functools.cache
def family_defaults() -> dict:
    """{family: {key: default value text}} from `dgq schemes` (the registry), asked once."""
    import subprocess

    out = subprocess.run([str(dgq_binary()), "schemes"], check=True, capture_output=True, text=True).stdout
    defaults: dict[str, dict[str, str]] = {}
    family = None
    for line in out.splitlines():
        if line and not line.startswith(" ") and ":" in line:
            family = line.split(":")[0]
            defaults[family] = {}
        elif line.startswith("    ") and "=" in line and family:
            key, _, rest = line.strip().partition("=")
            defaults[family][key] = rest.split()[0]
    return defaults


def short_spec(spec: str) -> str:
    """A canonical spec without the parameters at their defaults ("dgq2:bits=3,kgroup=64"); each
    part of a layer plan ("DEFAULT;LAYERS=SPEC", docs/eval.md) and of a K/V pair shortened alike."""
    if ";" in spec:
        default, *overrides = spec.split(";")
        return ";".join(
            [short_spec(default)] + [o.partition("=")[0] + "=" + short_spec(o.partition("=")[2]) for o in overrides]
        )
    if "/" in spec:
        return "/".join(short_spec(side) for side in spec.split("/"))
    family, _, rest = spec.partition(":")
    defaults = family_defaults().get(family, {})
    kept = [kv for kv in filter(None, rest.split(",")) if defaults.get(kv.partition("=")[0]) != kv.partition("=")[2]]
    return family + (":" + ",".join(kept) if kept else "")


def binary_version() -> str:
    """`dgq --version` of the binary the notebooks use (for fragments computed without results
    files that record one)."""
    import subprocess

    return subprocess.run([str(dgq_binary()), "--version"], check=True, capture_output=True, text=True).stdout.strip()
