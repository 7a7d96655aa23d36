"""Shared helpers for the dgq notebooks: where results live, how tables and figures are
written, and the model-shape arithmetic the claims ledger checks.

The notebooks read only results files (HDF5 from `dgq sweep`, JSON from `dgq memory`);
everything they produce goes under docs/: figures as PNG in docs/figures/, tables as
markdown fragments in docs/results/, each also spliced into docs/results.md between
`<!-- BEGIN name -->` and `<!-- END name -->` so that the report is regenerable.
Paths can be redirected with environment variables (experiments/run.sh sets them):
DGQ_RESULTS_DIR, DGQ_FIGURES_DIR, DGQ_FRAGMENTS_DIR, DGQ_REPORT.
"""
from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from dgqtools.repo import REPO_ROOT


def _env_path(var: str, default: Path) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else default


def results_dir() -> Path:
    return _env_path("DGQ_RESULTS_DIR", REPO_ROOT / "out" / "experiments")


def figures_dir() -> Path:
    return _env_path("DGQ_FIGURES_DIR", REPO_ROOT / "docs" / "figures")


def fragments_dir() -> Path:
    return _env_path("DGQ_FRAGMENTS_DIR", REPO_ROOT / "docs" / "results")


def report_path() -> Path:
    return _env_path("DGQ_REPORT", REPO_ROOT / "docs" / "results.md")


def results_file(name: str, suffix: str = ".h5") -> Path:
    """Path of an experiment's results file; a clear error if the experiment has not run."""
    path = results_dir() / f"{name}{suffix}"
    if not path.exists():
        raise FileNotFoundError(
            f"{path}: no results for experiment '{name}'; run `experiments/run.sh {name}` first")
    return path


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


def dgq_binary() -> Path:
    """The dgq CLI: $DGQ_BIN (experiments/run.sh and ctest set it), else build/sim/dgq."""
    path = _env_path("DGQ_BIN", REPO_ROOT / "build" / "sim" / "dgq")
    # experiments/run.sh runs from the repository root, the notebooks from notebooks/.
    return path if path.is_absolute() else REPO_ROOT / path


def probe_metrics() -> list[dict]:
    """The attention metrics of the replay, from their one table in the C++ code
    (sim/include/dgq/sim/probe_metrics.hpp) via `dgq metrics --json`: per metric its name, unit,
    better ("lower"/"higher"), aggregation, summary names (attn_<name>, clean_<name>) and
    description, in the order of the results file's datasets."""
    import json
    import subprocess

    out = subprocess.run([str(dgq_binary()), "metrics", "--json"], check=True, capture_output=True, text=True)
    doc = json.loads(out.stdout)
    if doc.get("format") != "dgq-metrics":
        raise ValueError(f"{dgq_binary()} metrics --json: format is {doc.get('format')!r}, expected 'dgq-metrics'")
    return doc["metrics"]


# Display names of the models of `dgq eval` (the model files' `model` attribute).
MODEL_LABEL = {"SmolLM2-135M-Instruct-Q4_1": "SmolLM2-135M", "gemma-3-270m-Q4_K_M": "Gemma 3 270M"}


_FAMILY_DEFAULTS: dict | None = None


def family_defaults() -> dict:
    """{family: {key: default value text}} from `dgq schemes` (the registry)."""
    global _FAMILY_DEFAULTS
    if _FAMILY_DEFAULTS is None:
        import subprocess

        out = subprocess.run([str(dgq_binary()), "schemes"], check=True, capture_output=True, text=True).stdout
        defaults, family = {}, None
        for line in out.splitlines():
            if line and not line.startswith(" ") and ":" in line:
                family = line.split(":")[0]
                defaults[family] = {}
            elif line.startswith("    ") and "=" in line and family:
                key, _, rest = line.strip().partition("=")
                defaults[family][key] = rest.split()[0]
        _FAMILY_DEFAULTS = defaults
    return _FAMILY_DEFAULTS


def short_spec(spec: str) -> str:
    """A canonical spec without the parameters at their defaults ("dgq2:bits=3,kgroup=64"); each
    part of a layer plan ("DEFAULT;LAYERS=SPEC", docs/eval.md) and of a K/V pair shortened alike."""
    if ";" in spec:
        default, *overrides = spec.split(";")
        return ";".join([short_spec(default)] + [o.partition("=")[0] + "=" + short_spec(o.partition("=")[2])
                                                  for o in overrides])
    if "/" in spec:
        return "/".join(short_spec(side) for side in spec.split("/"))
    family, _, rest = spec.partition(":")
    defaults = family_defaults().get(family, {})
    kept = [kv for kv in filter(None, rest.split(",")) if defaults.get(kv.partition("=")[0]) != kv.partition("=")[2]]
    return family + (":" + ",".join(kept) if kept else "")


def parse_scheme_spec(spec: str) -> tuple[str, dict]:
    """"dgq:win=16,group_ratio=0.75" -> ("dgq", {"win": 16, "group_ratio": 0.75})."""
    family, _, rest = spec.partition(":")
    params = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        params[key] = _number_or_text(value)
    return family, params


def _number_or_text(value: str):
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def _attr(value):
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
                "rerun into a new output, or pass allow_mixed=True and tell them apart by dgq_version")


def load_runs(path: Path, allow_mixed: bool = False) -> list[Run]:
    """Every complete run of a results file, in name order (incomplete runs are absent, as
    everywhere in dgq). Runs written by different dgq builds (attribute `dgq_version`; absent
    counts as "unknown") are refused with MixedVersionsError, as `dgq sweep` and `dgq merge`
    refuse them, unless allow_mixed=True: then each Run carries its own `dgq_version` label."""
    import h5py  # imported here so the arithmetic helpers work without h5py

    runs = []
    with h5py.File(path, "r") as f:
        kind = _attr(f.attrs.get("format", "dgq-results"))
        if kind != "dgq-results":
            hint = " read it with load_eval_file()" if kind == "dgq-eval" else ""
            raise ValueError(f"{path}: a {kind} file, not a replay or sweep results file (dgq-results);{hint}")
        if "runs" not in f:
            return runs
        for name in sorted(f["runs"]):
            group = f["runs"][name]
            attrs = {k: _attr(v) for k, v in group.attrs.items()}
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
        kind = _attr(f.attrs.get("format", ""))
        if kind != "dgq-eval":
            raise ValueError(f"{path}: a {kind or 'unlabelled'} file, not a dgq eval results file (dgq-eval)")
        common = {k: _attr(v) for k, v in f.attrs.items()}
        names = sorted(f["runs"], key=int) if "runs" in f else []
        runs = [{**common, **{k: _attr(v) for k, v in f["runs"][name].attrs.items()}, "run": int(name)}
                for name in names]
    require_one_version(str(path), [(f"run {r['run']}", str(r.get("dgq_version", NOT_RECORDED))) for r in runs],
                        allow_mixed)
    return runs


def load_eval_summaries(folder: Path, allow_mixed: bool = False) -> list[dict]:
    """The `dgq eval --json` summaries of a folder (experiments/run.sh e2e), in name order, as
    written. Summaries of different dgq builds (key `dgq_version`, absent = "unknown") are refused
    with MixedVersionsError unless allow_mixed=True (then read each one's `dgq_version`)."""
    import json

    paths = sorted(Path(folder).glob("*.json"))
    docs = [json.loads(p.read_text()) for p in paths]
    require_one_version(str(folder), [(p.name, str(d.get("dgq_version", NOT_RECORDED))) for p, d in zip(paths, docs)],
                        allow_mixed)
    return docs


# What a run held its raw rows in (docs/spec.md rule C9) when it does not say: the runner's fp32,
# the only dtype before `--raw-dtype` (2026-12-07).
RAW_DTYPE_BEFORE_THE_OPTION = "f32"
RAW_DTYPE_WORDS = {"f16": "fp16", "bf16": "bf16", "f32": "fp32"}


def raw_dtype_of(attrs: dict) -> str:
    """A run's `raw_dtype` ("f16", "bf16", "f32", or "none" where its cache keeps no raw row), from
    its attributes, a JSON summary's scheme entry or a run dict; "f32" where it was not recorded."""
    return str(attrs.get("raw_dtype", RAW_DTYPE_BEFORE_THE_OPTION))


def raw_rows_words(runs) -> str:
    """"raw rows held in fp16" for a table of runs (attribute dicts), from the runs whose cache keeps
    raw rows; "no raw rows" when none does. A table must not mix raw dtypes without a column that
    says which: ValueError names the dtypes found, so a notebook fails rather than publishes one."""
    found = sorted({raw_dtype_of(r) for r in runs} - {"none"})
    if len(found) > 1:
        raise ValueError(f"runs hold their raw rows in {', '.join(found)}: give the table a raw dtype column")
    if not found:
        return "no raw rows"
    return f"raw rows held in {RAW_DTYPE_WORDS.get(found[0], found[0])} (docs/spec.md rule C9)"


def nominal(value: float, grid) -> float:
    """The grid point closest to a measured value (e.g. the noise rate a mask was made for:
    round(rate * (L - 1)) tokens of L are marked, so the measured share is only close)."""
    return min(grid, key=lambda g: abs(g - value))


def read_run_array(path: Path, run: str, dataset: str):
    """One dataset of a run, e.g. "k/segments/count" or "clean/probes/noise_mass_hat"."""
    import h5py

    with h5py.File(path, "r") as f:
        return f["runs"][run][dataset][()]


# --- Writing tables and figures -------------------------------------------------------------

def markdown_table(headers: list[str], rows: list[list], align: str | None = None) -> str:
    """A GitHub markdown table. align: one char per column, 'l' or 'r' (default: first column
    left, the rest right, since the rest are numbers)."""
    align = align or ("l" + "r" * (len(headers) - 1))
    rule = ["---:" if a == "r" else ":---" for a in align]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(rule) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def _write_atomically(path: Path, text: str) -> None:
    # Write to X.partial then rename, so an interrupted run never leaves a half-written file.
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    partial.replace(path)


def splice_into_report(block: str, markdown: str, report: Path | None = None) -> bool:
    """Replaces the text between <!-- BEGIN block --> and <!-- END block --> in the report.
    Returns False (and leaves the report alone) when the report has no such markers."""
    report = report or report_path()
    if not report.exists():
        return False
    text = report.read_text()
    pattern = re.compile(
        rf"(<!-- BEGIN {re.escape(block)} -->\n)(.*?)(<!-- END {re.escape(block)} -->)", re.S)
    if not pattern.search(text):
        return False
    new_text = pattern.sub(lambda m: m.group(1) + markdown + m.group(3), text, count=1)
    if new_text != text:
        _write_atomically(report, new_text)
    return True


def readme_path() -> Path | None:
    """The README whose generated blocks (the findings) the notebooks update: $DGQ_README, else
    the repository's README.md when the report is docs/results.md itself; None when the report
    goes elsewhere (experiments/run.sh with DGQ_DOCS_OUT, tests), so that only the fragments are
    written there and the committed README is left alone."""
    if os.environ.get("DGQ_README"):
        return Path(os.environ["DGQ_README"])
    default_report = REPO_ROOT / "docs" / "results.md"
    return REPO_ROOT / "README.md" if report_path().resolve() == default_report.resolve() else None


def checkout_commit() -> str:
    """HEAD of this checkout, 12 digits, "-dirty" when tracked files differ from it: the label of a
    measurement made by a tool run from the checkout (not from a dgq binary's results)."""
    return subprocess.run(["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty", "--abbrev=12"],
                          capture_output=True, text=True).stdout.strip() or "unknown"


def publish_measurement(block: str, command: str, provenance: str, body: str, page: Path) -> Path:
    """The fragment "Measured by `command` (commit C; date; provenance)." and body, written as
    docs/results/<block>.md and spliced into page; SystemExit naming the block when page has no
    markers for it (a tool's --fragment run must not end silently half done)."""
    date = datetime.now(timezone.utc).date().isoformat()
    fragment = f"Measured by `{command}` (commit {checkout_commit()}; {date}; {provenance}\n\n{body}"
    try:
        path = publish_fragment(block, fragment, into=page, strict=True)
    except ValueError as e:
        raise SystemExit(f"{block}: {e}") from None
    print(f"wrote {path} and spliced it into {page}")
    return path


def publish_fragment(block: str, markdown: str, into: "str | Path" = "report", strict: bool = False) -> Path:
    """Writes docs/results/<block>.md and splices it into docs/results.md (into="report"), into
    the README (into="readme", see readme_path) or into the page at a Path. strict: a target
    without the block's markers is an error (ValueError) instead of a note."""
    path = fragments_dir() / f"{block}.md"
    _write_atomically(path, markdown)
    target = into if isinstance(into, Path) else report_path() if into == "report" else readme_path()
    if target is None:
        print(f"note: no README to update here; wrote {path} only")
    elif not splice_into_report(block, markdown, target):
        message = f"{target} has no <!-- BEGIN {block} --> markers; wrote {path} only"
        if strict:
            raise ValueError(message)
        print(f"note: {message}")
    return path


# --- Reading the published fragments back (the claims ledger) ----------------------------------

def fragment_tables(block: str) -> list[list[dict]]:
    """The markdown tables of docs/results/<block>.md, each a list of rows (header -> cell).
    The claims ledger reads the report's own generated tables rather than the results files in
    out/, so a rerun of some experiments on a machine without the others' results cannot turn
    their rows into "not run", and a ledger row cannot disagree with the section it quotes."""
    return markdown_tables((fragments_dir() / f"{block}.md").read_text(encoding="utf-8"))


def markdown_tables(text: str) -> list[list[dict]]:
    """The markdown tables of a text, each a list of rows (header -> cell)."""
    tables, header, rows = [], None, []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not all(set(c) <= set(":- ") for c in cells):
                rows.append(dict(zip(header, cells)))
        elif header is not None:
            tables.append(rows)
            header, rows = None, []
    return tables


def commit_label(dgq_version: str) -> str:
    """The commit a dgq_version string names, as fragments quote it: 12 hex digits, "-dirty" when
    the build had uncommitted changes. Accepts the recorded form ("<40 hex>[-dirty-<diff hash>]")
    and `dgq --version`'s ("dgq 0.1.0 <that>"); "?" when none is recorded."""
    words = str(dgq_version or "").split()
    if not words or not re.fullmatch(r"[0-9a-f]{7,40}(-dirty.*)?", words[-1]):
        return "?"
    commit, _, rest = words[-1].partition("-")
    return commit[:12] + ("-dirty" if rest.startswith("dirty") else "")


def binary_version() -> str:
    """`dgq --version` of the binary the notebooks use (for fragments computed without results
    files that record one)."""
    import subprocess

    return subprocess.run([str(dgq_binary()), "--version"], check=True, capture_output=True,
                          text=True).stdout.strip()


def measured_by(name: str, versions) -> str:
    """The provenance line every fragment starts with: the command that regenerates it, the
    commit(s) of the dgq build(s) that wrote its results, the mode and the date it was made.
    experiments/run.sh exports DGQ_EXPERIMENT_MODE (quick or full). tools/diff-fragments.sh
    compares fragments without this line, so a regenerated fragment equals the committed one
    whenever its figures do."""
    mode = os.environ.get("DGQ_EXPERIMENT_MODE", "")
    command = f"experiments/run.sh {'--quick ' if mode == 'quick' else ''}{name}"
    commits = sorted({commit_label(v) for v in versions}) or ["?"]
    from datetime import datetime, timezone

    date = datetime.now(timezone.utc).date().isoformat()
    return (f"Measured by `{command}` (commit {', '.join(commits)}; {mode or 'unknown'} mode; {date}).\n\n")


def marked_tables(doc: Path, marker: str) -> tuple[str, list[list[dict]]]:
    """The text and markdown tables of a generated block spliced into a document between
    "<!-- BEGIN MARKER -->" and "<!-- END MARKER -->" (e.g. docs/benchmarks.md's ggml blocks,
    written by bench/ggml/run.sh --update-docs), each table a list of rows (header -> cell)."""
    text = Path(doc).read_text(encoding="utf-8")
    begin = text.index(f"<!-- BEGIN {marker} -->")
    block = text[begin:text.index(f"<!-- END {marker} -->", begin)]
    return block, markdown_tables(block)


def fragment_source(block: str) -> str:
    """Where a fragment's figures come from: its file, the command and the commit(s) its
    "Measured by" line names."""
    text = (fragments_dir() / f"{block}.md").read_text(encoding="utf-8")
    first = text.splitlines()[0] if text else ""
    command = re.search(r"`(experiments/run\.sh[^`]*)`", first)
    commits = re.search(r"\(commits? ([0-9a-f]{7,40}(?:-dirty)?(?:, [0-9a-f]{7,40}(?:-dirty)?)*)", first)
    parts = [f"docs/results/{block}.md"]
    if command:
        parts.append(f"`{command.group(1)}`")
    parts.append(f"commit {commits.group(1)}" if commits else "commit not recorded")
    return ", ".join(parts)


def value_and_error(cell: str) -> tuple[float, float]:
    """"4.496 ± 0.327" -> (4.496, 0.327); a plain number has error 0."""
    value, _, error = cell.partition("±")
    return float(value), float(error) if error.strip() else 0.0


# --- Orderings judged against their standard errors -------------------------------------------

def ordering_verdict(gaps: list[tuple[str, float, float]]) -> tuple[str, str]:
    """Judges a claimed ordering a ≤ b ≤ c … on its adjacent gaps, each (label, gap, standard
    error) with gap > 0 meaning the claimed order. "holds" only when every gap exceeds one
    standard error; "fails" when some gap is reversed by more than one; otherwise "not resolved
    at this sample size" (a point estimate inside its noise decides nothing). Returns the verdict
    and the gaps that decided it."""
    reversed_ = [g for g in gaps if g[1] < -g[2]]
    unresolved = [g for g in gaps if -g[2] <= g[1] <= g[2]]
    def show(g):
        return f"{g[0]} {g[1]:+.2f} ± {g[2]:.2f}"
    if reversed_:
        return "fails", "reversed beyond one SE: " + ", ".join(show(g) for g in reversed_)
    if unresolved:
        return "not resolved at this sample size", "within one SE: " + ", ".join(show(g) for g in unresolved)
    return "holds", "every gap beyond one SE: " + ", ".join(show(g) for g in gaps)


def mean_with_error(pairs: list[tuple[float, float]]) -> tuple[float, float]:
    """Mean of independent estimates (value, standard error) and the standard error of that
    mean (texts are independent samples)."""
    n = len(pairs)
    return sum(v for v, _ in pairs) / n, (sum(e * e for _, e in pairs) ** 0.5) / n


def difference_error(a: float, b: float) -> float:
    """Standard error of the difference of two ΔPPLs against the same base, taken as if they
    were independent (sqrt(a² + b²)). Both are paired with the same fp16 run, so their errors
    are positively correlated and the true error of the difference is smaller: this is the
    cautious side, it can only make a gap look less resolved."""
    return (a * a + b * b) ** 0.5


def geometric_mean(values) -> float:
    """The geometric mean, each value floored at 1e-12 (a KLD of exactly 0 stays finite)."""
    import math
    values = [max(v, 1e-12) for v in values]
    return math.exp(sum(math.log(v) for v in values) / len(values))


def aggregate_eval_runs(runs) -> dict:
    """The eval runs (Run objects of load_runs) per scheme, over the texts: bits (final) and bits_avg
    (held, averaged over the appends) as means, kld the geometric mean of each text's mean KLD (0
    when every one is 0), p99 the mean KLD p99, dppl_pct the mean ΔPPL in % of the fp16 PPL,
    per_text each text's mean KLD, n the number of runs. Callers pass one model's (and n_ctx's)
    runs."""
    groups: dict[str, list] = {}
    for r in runs:
        groups.setdefault(r.attrs["scheme"], []).append(r)
    out = {}
    for scheme, rs in groups.items():
        klds = [r.attrs["kld_mean"] for r in rs]
        out[scheme] = dict(
            bits=sum(r.attrs["bits_per_element"] for r in rs) / len(rs),
            bits_avg=sum(r.attrs["bits_averaged"] for r in rs) / len(rs),
            kld=geometric_mean(klds) if any(k > 0 for k in klds) else 0.0,
            p99=sum(r.attrs["kld_p99"] for r in rs) / len(rs),
            dppl_pct=sum(100 * r.attrs["dppl"] / (r.attrs["ppl"] - r.attrs["dppl"]) for r in rs) / len(rs),
            per_text={r.attrs["text"]: r.attrs["kld_mean"] for r in rs}, n=len(rs))
    return out


def save_figure(fig, name: str) -> Path:
    """Saves a matplotlib figure as docs/figures/<name>.png at a page-width-readable size."""
    path = figures_dir() / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    fig.savefig(partial, dpi=110, bbox_inches="tight", format="png")
    partial.replace(path)
    return path


def fmt(x: float, digits: int = 3) -> str:
    """Compact number formatting for tables: fixed for ordinary magnitudes, else scientific."""
    if x != x:  # NaN
        return "n/a"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e5:
        return f"{x:.{digits}g}" if abs(x) < 1 else f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return f"{x:.{digits - 1}e}"


# --- Model-shape arithmetic for the claims ledger --------------------------------------------

@dataclass(frozen=True)
class ModelShape:
    name: str
    layers: int
    kv_heads: int
    head_dim: int


LLAMA3_8B = ModelShape("Llama-3-8B / 3.1-8B", 32, 8, 128)
LLAMA3_70B = ModelShape("Llama-3-70B", 80, 8, 128)
CONTEXTS = (8192, 32768, 131072)


def fp16_kv_bytes(shape: ModelShape, tokens: int) -> int:
    """FP16 KV cache: K and V, every layer and KV head, head_dim values of 2 bytes per token."""
    return 2 * tokens * shape.layers * shape.kv_heads * shape.head_dim * 2


def segment_id_bits(shape: ModelShape, tokens: int, tensors: int = 2) -> int:
    """The article's 1-bit segment id per token, per KV head, per layer, per tensor (K, V)."""
    return tokens * shape.kv_heads * shape.layers * tensors


def tokens_for_fp16_bytes(shape: ModelShape, nbytes: float) -> float:
    """How many tokens an FP16 KV cache of this shape holds in nbytes (to place 2.17 GB)."""
    return nbytes / fp16_kv_bytes(shape, 1)


def int8_ratio_with_overhead(elements: int, overhead_bytes: int) -> float:
    """FP16 -> INT8 compression when `overhead_bytes` of ranges/markers come with `elements`
    one-byte codes: 2x at best, never more."""
    return (2 * elements) / (elements + overhead_bytes)


def dgq_bytes_per_unit(tokens: int, channels: int, segments: int, granularity: str = "segment",
                       markers: str = "table") -> int:
    """DGQ's stored bytes for one [tokens][channels] tensor (docs/spec.md, rule 9): codes
    L*D, ranges 8 * segments * C, markers 4 * (segments - 1) | ceil(L/8) | 0."""
    c = 1 if granularity == "segment" else channels
    marker_bytes = {"table": 4 * (segments - 1), "bitmap": -(-tokens // 8), "inband": 0}[markers]
    return tokens * channels + 8 * segments * c + marker_bytes


def dgq_kv_bytes(shape: ModelShape, tokens: int, segments: int, **kw) -> int:
    """DGQ bytes for a whole KV cache: every layer, KV head, and K and V."""
    return 2 * shape.layers * shape.kv_heads * dgq_bytes_per_unit(tokens, shape.head_dim, segments, **kw)


def dgq_segment_budget(tokens: int, max_groups: int = 5, win: int = 16) -> int:
    """The most segments a head can get (docs/spec.md, rule 4)."""
    if tokens <= 0:
        return 0
    if tokens < 2 * win:
        return 1
    if tokens < 2048:
        rule = 2
    elif tokens < 16384:
        rule = 3
    else:
        rule = (tokens // 1024).bit_length() - 1 + 2  # floor(log2(L / 1024)) + 2
    return min(rule, max_groups)
