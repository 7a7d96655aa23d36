#!/usr/bin/env python3
"""Log-log figure of tools/bench-scaling.sh's table: `dgq compress` and `dgq replay` wall time
and peak RSS against the work (tokens x KV heads x layers), for the length sweep and the layer
sweep. Usage: .venv/bin/python tools/plot-scaling.py SCALING.md OUT.png"""

import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def rows(path):
    out = []
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 13 and cells[0] in ("length", "layers"):
            out.append(
                dict(
                    sweep=cells[0],
                    work=float(cells[3]),
                    c_wall=float(cells[4]),
                    c_rss=float(cells[6]),
                    r_wall=float(cells[8]),
                    r_rss=float(cells[10]),
                    layer=float(cells[12]),
                )
            )
    return out


def main(src, dst):
    data = rows(src)
    fig, (t, m) = plt.subplots(1, 2, figsize=(11, 4.2))
    for sweep, marker in (("length", "o"), ("layers", "s")):
        pts = [r for r in data if r["sweep"] == sweep]
        x = [r["work"] for r in pts]
        label = "L = 1K..128K, 2 layers" if sweep == "length" else "L = 4096, 4..32 layers"
        t.loglog(x, [r["c_wall"] for r in pts], marker=marker, label=f"compress, {label}")
        t.loglog(x, [r["r_wall"] for r in pts], marker=marker, ls="--", label=f"replay, {label}")
        m.loglog(x, [r["c_rss"] for r in pts], marker=marker, label=f"compress, {label}")
        m.loglog(x, [r["r_rss"] for r in pts], marker=marker, ls="--", label=f"replay, {label}")
        m.loglog(x, [r["layer"] for r in pts], marker=marker, ls=":", color="grey", label=f"one layer's K+V, {label}")
    t.set_xlabel("work: M tokens x KV heads x layers")
    t.set_ylabel("wall time (s)")
    m.set_xlabel("work: M tokens x KV heads x layers")
    m.set_ylabel("peak RSS (MiB)")
    for ax in (t, m):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("dgq compress / replay (scheme dgq, 1 thread): time linear in the work, memory bounded by a layer")
    fig.savefig(dst, dpi=110, bbox_inches="tight")


if __name__ == "__main__":
    main(*sys.argv[1:3])
