"""Orderings judged against their standard errors, and the aggregates of eval runs over the texts."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from dgqtools.results.runs import Run

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


def geometric_mean(values: Iterable[float]) -> float:
    """The geometric mean, each value floored at 1e-12 (a KLD of exactly 0 stays finite)."""
    import math

    values = [max(v, 1e-12) for v in values]
    return math.exp(sum(math.log(v) for v in values) / len(values))


def aggregate_eval_runs(runs: Iterable[Run]) -> dict:
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
            per_text={r.attrs["text"]: r.attrs["kld_mean"] for r in rs},
            n=len(rs),
        )
    return out
