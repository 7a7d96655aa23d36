"""One mutant of a seed: byte-level, structure-aware, both, or aimed at the global heap."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from dgqtools.campaign.byte_mutations import ByteMutator, GlobalHeapMutator
from dgqtools.campaign.kinds import Seed
from dgqtools.campaign.structure_mutations import structural_mutation


def make_mutant(seed: Seed, meta: np.ndarray, target: Path, rng: np.random.Generator) -> list[str]:
    """Writes one mutant of seed to target; returns the list of edits."""
    shutil.copy(seed.path, target)
    if seed.kind == "gguf":  # not HDF5: byte-level edits only
        return byte_edits(target, meta, rng)
    r = rng.random()
    if r < 0.15:  # variable-length strings: their global heap and heap ids
        m = GlobalHeapMutator(target.read_bytes(), rng)
        steps = [m.apply() for _ in range(int(rng.choice([1, 1, 2, 3])))]
        target.write_bytes(bytes(m.b))
        return steps
    steps = []
    if r >= 0.5:  # structure-aware, alone (40 %) or followed by byte edits (10 %)
        steps.append(structural_mutation(target, rng))
        if rng.random() < 0.2:
            steps.append(structural_mutation(target, rng))
    if r < 0.5 or r >= 0.9:
        steps += byte_edits(target, np.arange(0) if steps else meta, rng)  # after an edit, offsets moved
    return steps


def byte_edits(target: Path, meta: np.ndarray, rng: np.random.Generator) -> list[str]:
    m = ByteMutator(target.read_bytes(), meta, rng)
    steps = [m.apply() for _ in range(int(rng.choice([1, 1, 1, 2, 3, 4])))]
    target.write_bytes(bytes(m.b))
    return steps
