"""The notebooks' library (`from dgqtools import results as R`): where results live, how they are
read, how tables and figures are written, and the model-shape arithmetic the claims ledger checks.

The notebooks read only results files (HDF5 from `dgq sweep`, JSON from `dgq memory`);
everything they produce goes under docs/: figures as PNG in docs/figures/, tables as
markdown fragments in docs/results/, each also spliced into docs/results.md between
`<!-- BEGIN name -->` and `<!-- END name -->` so that the report is regenerable.
Paths can be redirected with environment variables (experiments/run.sh sets them):
DGQ_RESULTS_DIR, DGQ_FIGURES_DIR, DGQ_FRAGMENTS_DIR, DGQ_REPORT.
"""

from dgqtools.repo import REPO_ROOT
from dgqtools.results.ledger import (
    fragment_source,
    fragment_tables,
    markdown_tables,
    marked_tables,
    value_and_error,
)
from dgqtools.results.model_shape import (
    CONTEXTS,
    LLAMA3_8B,
    LLAMA3_70B,
    ModelShape,
    dgq_kv_bytes,
    dgq_segment_budget,
    fp16_kv_bytes,
    int8_ratio_with_overhead,
    segment_id_bits,
    tokens_for_fp16_bytes,
)
from dgqtools.results.paths import (
    checkout_commit,
    dgq_binary,
    figures_dir,
    fragments_dir,
    readme_path,
    report_path,
    results_dir,
    results_file,
)
from dgqtools.results.publish import (
    commit_label,
    fmt,
    markdown_table,
    measured_by,
    publish_fragment,
    publish_measurement,
    save_figure,
    splice_into_report,
)
from dgqtools.results.registry import (
    binary_version,
    family_defaults,
    probe_metrics,
    short_spec,
)
from dgqtools.results.runs import (
    MODEL_LABEL,
    NOT_RECORDED,
    RAW_DTYPE_BEFORE_THE_OPTION,
    RAW_DTYPE_WORDS,
    SUMMARY_FIELDS,
    MixedVersionsError,
    Run,
    attribute_value,
    load_eval_file,
    load_eval_summaries,
    load_runs,
    model_label,
    nominal,
    parse_scheme_spec,
    raw_dtype_of,
    raw_rows_words,
    read_run_array,
    require_one_version,
)
from dgqtools.results.statistics import (
    aggregate_eval_runs,
    difference_error,
    geometric_mean,
    mean_with_error,
    ordering_verdict,
)

__all__ = [
    "REPO_ROOT",
    "attribute_value",
    "CONTEXTS",
    "LLAMA3_70B",
    "LLAMA3_8B",
    "MODEL_LABEL",
    "model_label",
    "MixedVersionsError",
    "ModelShape",
    "NOT_RECORDED",
    "RAW_DTYPE_BEFORE_THE_OPTION",
    "RAW_DTYPE_WORDS",
    "Run",
    "SUMMARY_FIELDS",
    "aggregate_eval_runs",
    "binary_version",
    "checkout_commit",
    "commit_label",
    "dgq_binary",
    "dgq_kv_bytes",
    "dgq_segment_budget",
    "difference_error",
    "family_defaults",
    "figures_dir",
    "fmt",
    "fp16_kv_bytes",
    "fragment_source",
    "fragment_tables",
    "fragments_dir",
    "geometric_mean",
    "int8_ratio_with_overhead",
    "load_eval_file",
    "load_eval_summaries",
    "load_runs",
    "markdown_table",
    "markdown_tables",
    "marked_tables",
    "mean_with_error",
    "measured_by",
    "nominal",
    "ordering_verdict",
    "parse_scheme_spec",
    "probe_metrics",
    "publish_fragment",
    "publish_measurement",
    "raw_dtype_of",
    "raw_rows_words",
    "read_run_array",
    "readme_path",
    "report_path",
    "require_one_version",
    "results_dir",
    "results_file",
    "save_figure",
    "segment_id_bits",
    "short_spec",
    "splice_into_report",
    "tokens_for_fp16_bytes",
    "value_and_error",
]
