"""Reading results files (docs/results-format.md): the runs of a replay, sweep or eval file and eval
summaries, refused when they mix dgq builds unless asked. Any results file as one flat table,
without these helpers: `dgq export FILE -o FILE.csv`, then pandas.read_csv.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    import numpy as np

# --- Reading results files (docs/results-format.md) ------------------------------------------
# Any results file (replay, sweep, eval, passkey) as one flat table, without these helpers:
# `dgq export FILE -o FILE.csv`, then pandas.read_csv (docs/results-format.md, "Export").

SUMMARY_FIELDS = ("mean", "p50", "p95", "max")


@dataclass
class Run:
    """One complete run of a results file: its attributes, its overall summaries
    ({metric: {mean, p50, p95, max}}) and, parsed from the canonical scheme spec, the scheme's
    family and parameters (so grids can be read whatever the sweep calls its points)."""

    name: str
    attrs: dict
    summary: dict
    family: str
    params: dict
    noise_fraction: float = 0.0  # share of tokens marked as noise (0 without a noise mask)
    # The dgq build that wrote the run (its `dgq_version` attribute; "unknown" for runs written
    # before dgq recorded it). Runs of one load share it unless load_runs(allow_mixed=True).
    dgq_version: str = "unknown"

    @property
    def trace(self) -> str:
        return Path(self.attrs["trace"]).stem

    def metric(self, name: str, field: str = "mean") -> float:
        if name not in self.summary:
            return float("nan")
        return self.summary[name][field]


# Display names of the models of `dgq eval` (the model files' `model` attribute).
MODEL_LABEL = {"SmolLM2-135M-Instruct-Q4_1": "SmolLM2-135M", "gemma-3-270m-Q4_K_M": "Gemma 3 270M"}


def model_label(model: str) -> str:
    """The display name of a model, or its own name when it has none."""
    return MODEL_LABEL.get(model, model)


def parse_scheme_spec(spec: str) -> tuple[str, dict]:
    """ "dgq:win=16,group_ratio=0.75" -> ("dgq", {"win": 16, "group_ratio": 0.75})."""
    family, _, rest = spec.partition(":")
    params = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        params[key] = _number_or_text(value)
    return family, params


def _number_or_text(value: str) -> int | float | str:
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def attribute_value(value):
    if isinstance(value, bytes):
        return value.decode()
    if hasattr(value, "item") and getattr(value, "shape", None) in ((), (1,)):
        return value.item() if value.shape == () else value[0].item()
    return value


NOT_RECORDED = "unknown"  # the version of runs and summaries written before dgq recorded it


class MixedVersionsError(ValueError):
    """Results of different dgq builds would be combined (docs/results-format.md, "Provenance")."""


def require_one_version(where: str, labelled: list[tuple[str, str]], allow_mixed: bool) -> None:
    """labelled: (what, dgq version) pairs, e.g. ("run fp16@code", "<commit>"). Raises
    MixedVersionsError naming the first two that differ, unless allow_mixed."""
    if allow_mixed or not labelled:
        return
    first_what, first_version = labelled[0]
    for what, version in labelled[1:]:
        if version != first_version:
            raise MixedVersionsError(
                f"{where}: {what} was written by dgq {version}, {first_what} by dgq {first_version}; "
                "rerun into a new output, or pass allow_mixed=True and tell them apart by dgq_version"
            )


def load_runs(path: Path, allow_mixed: bool = False) -> list[Run]:
    """Every complete run of a results file, in name order (incomplete runs are absent, as
    everywhere in dgq). Runs written by different dgq builds (attribute `dgq_version`; absent
    counts as "unknown") are refused with MixedVersionsError, as `dgq sweep` and `dgq merge`
    refuse them, unless allow_mixed=True: then each Run carries its own `dgq_version` label."""
    import h5py  # imported here so the arithmetic helpers work without h5py

    runs: list[Run] = []
    with h5py.File(path, "r") as f:
        kind = attribute_value(f.attrs.get("format", "dgq-results"))
        if kind != "dgq-results":
            hint = " read it with load_eval_file()" if kind == "dgq-eval" else ""
            raise ValueError(f"{path}: a {kind} file, not a replay or sweep results file (dgq-results);{hint}")
        if "runs" not in f:
            return runs
        for name in sorted(f["runs"]):
            group = f["runs"][name]
            attrs = {k: attribute_value(v) for k, v in group.attrs.items()}
            if attrs.get("complete") != 1:
                continue
            summary = {}
            if "summary" in group:
                for metric, ds in group["summary"].items():
                    summary[metric] = dict(zip(SUMMARY_FIELDS, (float(x) for x in ds[()])))
            family, params = parse_scheme_spec(attrs["scheme"])
            noise = float(group["noise_mask"][()].mean()) if "noise_mask" in group else 0.0
            version = str(attrs.get("dgq_version", NOT_RECORDED))
            runs.append(Run(name, attrs, summary, family, params, noise, version))
    require_one_version(str(path), [(f"run {r.name}", r.dgq_version) for r in runs], allow_mixed)
    return runs


def load_eval_file(path: Path, allow_mixed: bool = False) -> list[dict]:
    """The runs of a `dgq eval` results file (format dgq-eval, docs/eval.md), one dict per scheme
    in run order: the file's attributes (model, text_kind, ctx, chunks, base, cache, ...) with the
    run's own (spec, ppl, dppl, kld_mean, bits_per_element, ...) over them. Runs of different dgq
    builds are refused as load_runs refuses them."""
    import h5py

    with h5py.File(path, "r") as f:
        kind = attribute_value(f.attrs.get("format", ""))
        if kind != "dgq-eval":
            raise ValueError(f"{path}: a {kind or 'unlabelled'} file, not a dgq eval results file (dgq-eval)")
        common = {k: attribute_value(v) for k, v in f.attrs.items()}
        names = sorted(f["runs"], key=int) if "runs" in f else []
        runs = [
            {**common, **{k: attribute_value(v) for k, v in f["runs"][name].attrs.items()}, "run": int(name)}
            for name in names
        ]
    require_one_version(
        str(path), [(f"run {r['run']}", str(r.get("dgq_version", NOT_RECORDED))) for r in runs], allow_mixed
    )
    return runs


def load_eval_summaries(folder: Path, allow_mixed: bool = False) -> list[dict]:
    """The `dgq eval --json` summaries of a folder (experiments/run.sh e2e), in name order, as
    written. Summaries of different dgq builds (key `dgq_version`, absent = "unknown") are refused
    with MixedVersionsError unless allow_mixed=True (then read each one's `dgq_version`)."""
    import json

    paths = sorted(Path(folder).glob("*.json"))
    docs = [json.loads(p.read_text()) for p in paths]
    require_one_version(
        str(folder), [(p.name, str(d.get("dgq_version", NOT_RECORDED))) for p, d in zip(paths, docs)], allow_mixed
    )
    return docs


# What a run held its raw rows in (docs/spec.md rule C9) when it does not say: the runner's fp32,
# the only dtype before `--raw-dtype`.
RAW_DTYPE_BEFORE_THE_OPTION = "f32"
RAW_DTYPE_WORDS = {"f16": "fp16", "bf16": "bf16", "f32": "fp32"}


def raw_dtype_of(attrs: dict) -> str:
    """A run's `raw_dtype` ("f16", "bf16", "f32", or "none" where its cache keeps no raw row), from
    its attributes, a JSON summary's scheme entry or a run dict; "f32" where it was not recorded."""
    return str(attrs.get("raw_dtype", RAW_DTYPE_BEFORE_THE_OPTION))


def raw_rows_words(runs: Iterable[dict]) -> str:
    """ "raw rows held in fp16" for a table of runs (attribute dicts), from the runs whose cache keeps
    raw rows; "no raw rows" when none does. A table must not mix raw dtypes without a column that
    says which: ValueError names the dtypes found, so a notebook fails rather than publishes one."""
    found = sorted({raw_dtype_of(r) for r in runs} - {"none"})
    if len(found) > 1:
        raise ValueError(f"runs hold their raw rows in {', '.join(found)}: give the table a raw dtype column")
    if not found:
        return "no raw rows"
    return f"raw rows held in {RAW_DTYPE_WORDS.get(found[0], found[0])} (docs/spec.md rule C9)"


def nominal(value: float, grid: Iterable[float]) -> float:
    """The grid point closest to a measured value (e.g. the noise rate a mask was made for:
    round(rate * (L - 1)) tokens of L are marked, so the measured share is only close)."""
    return min(grid, key=lambda g: abs(g - value))


def read_run_array(path: Path, run: str, dataset: str) -> np.ndarray:
    """One dataset of a run, e.g. "k/segments/count" or "clean/probes/noise_mass_hat"."""
    import h5py

    with h5py.File(path, "r") as f:
        return f["runs"][run][dataset][()]
