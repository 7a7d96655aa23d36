"""The campaign's one way of choosing among items: a mutation is the same for the same seed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

T = TypeVar("T")


def pick(items: Sequence[T], rng: np.random.Generator) -> T:
    """One of items, drawn with one rng.integers call."""
    return items[int(rng.integers(len(items)))]
