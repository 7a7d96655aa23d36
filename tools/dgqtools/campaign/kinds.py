"""What the campaign mutates: the kinds of files dgq reads, and a seed file of one kind with the
valid companions its commands need.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

KINDS = ["trace", "compressed", "results", "model", "tokens", "base-logits", "gguf"]
EVAL_CTX = "32"
GGUF_CTX = "8"  # the GGUF seeds' token files hold 24 tokens


@dataclass
class Seed:
    kind: str
    name: str
    path: Path
    # kind-specific companions: "config" (sweep config that made a results file), "model",
    # "tokens" (the valid partner of a model/token file), "trace" (a valid trace)
    extra: dict = field(default_factory=dict)
