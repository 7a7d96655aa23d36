"""The campaign's summary: the table per kind x command, and the shapes of the error messages."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from dgqtools.campaign.running import CLASSES

if TYPE_CHECKING:
    from collections.abc import Iterable


def message_shape(line: str) -> str:
    """An error line without its file names and numbers, to count kinds of messages."""
    line = re.sub(r"\S*\.(h5|toml|json)\b", "FILE", line)
    line = re.sub(r"\(HDF5: .*", "(HDF5: ...)", line)
    line = re.sub(r"(?<![A-Za-z_])-?\d+(\.\d+)?(e[-+]?\d+)?", "N", line)
    return line[:110]


def summarize(results: list[dict], kinds: Iterable[str]) -> tuple[str, dict]:
    table: dict = {}
    messages: dict = {}
    for res in results:
        for r in res["runs"]:
            if r["verdict"] == "ok" and r["rc"] != 0:
                shape = message_shape(r["why"])
                messages[shape] = messages.get(shape, 0) + 1
            row = table.setdefault((res["kind"], r["command"]), {c: 0 for c in ["inputs", *CLASSES]})
            row["inputs"] += 1
            row[r["verdict"]] += 1
            row["exit0"] = row.get("exit0", 0) + (r["rc"] == 0)
            row["partial_left"] = row.get("partial_left", 0) + bool(r["partial_files_left"])
    cols = ["inputs", "ok", "crash", "hang", "oom", "badmsg", "partial", "exit0", "partial_left"]
    lines = [f"{'kind':<12} {'command':<17}" + "".join(f"{c:>13}" for c in cols)]
    total = {c: 0 for c in cols}
    for kind in kinds:
        for (k, cmd), row in sorted(table.items()):
            if k != kind:
                continue
            lines.append(f"{k:<12} {cmd:<17}" + "".join(f"{row.get(c, 0):>13}" for c in cols))
            for c in cols:
                total[c] += row.get(c, 0)
    lines.append(f"{'all':<12} {'':<17}" + "".join(f"{total[c]:>13}" for c in cols))
    rechecked = [r["oom_recheck"] for res in results for r in res["runs"] if "oom_recheck" in r]
    if rechecked:
        same = sum(r["same_outcome"] for r in rechecked)
        lines.append(
            f"oom runs rerun with twice the --as limit: {len(rechecked)}, same exit code and error line: "
            f"{same} (the limit did not decide those: the allocation fails at any limit or is not one)"
        )
    lines.append(f"most frequent error messages of the rejected inputs ({len(messages)} distinct shapes):")
    for shape, n in sorted(messages.items(), key=lambda kv: -kv[1])[:25]:
        lines.append(f"{n:>7}  {shape}")
    return "\n".join(lines), {
        "messages": messages,
        "rows": [{"kind": k, "command": c, **row} for (k, c), row in sorted(table.items())],
        "total": total,
    }
