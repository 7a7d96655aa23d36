"""Passkey task files for `dgq eval --task passkey` (format "dgq-passkey" v1, docs/eval.md).

Each prompt is the passkey retrieval test of Mohtashami & Jaggi (2023, "Landmark Attention") as
LongLoRA runs it, as plain completion (no chat template):

    INTRO + haystack part A + NEEDLE + haystack part B + QUESTION    -> answer " {key}"

with the texts below. The haystack is natural text, the prose, legal and poetry prompts of
tools/prompts.sh joined by blank lines (out/prompts/{prose,legal,poetry}.txt: with SmolLM2's
tokenizer 80,790 tokens, with Gemma 3's 51,747: more than either model's context).

The pieces are tokenized separately with the model's own tokenizer (rebuilt from its GGUF as in
tools/make-eval-texts.py) and their token ids concatenated, so a prompt (without BOS) holds
exactly its target length: intro, needle and question are whole, and the haystack's first
`length - intro - needle - question` tokens fill the rest. At depth d % the needle follows
floor(d/100 * haystack + 1/2) haystack tokens (0: right after the intro; 100: right before the
question). The answer's tokens are those of QUESTION + answer after the question's own tokens,
where the question ends with the lone space token before the key when the tokenizer makes one
(both models here do; see split_answer), so the answer is the key's digits (an error when no
question spelling is a prefix: the answer would not be the continuation).

Keys: numpy's default_rng(seed) draws, for each (length, depth, index) cell in that order, a
digit count uniform in {5, 6, 7} and then a key uniform among the numbers of that many digits.

Usage: tools/make-passkey.py {smollm2,gemma3} --prompts out/prompts --lengths 1024,2048,4096 \\
           --depths 0,25,50,75,100 --keys 10 --seed 0 -o out/passkey/smollm2.h5
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dgqtools.export_trace import ExportError

INTRO = (
    "There is an important info hidden inside a lot of irrelevant text. Find it and memorize it. "
    "I will quiz you about the important information there.\n\n"
)
NEEDLE = " The pass key is {key}. Remember it. {key} is the pass key. "
QUESTION = "\n\nWhat is the pass key? The pass key is"
ANSWER = " {key}"
HAYSTACK_KINDS = ("prose", "legal", "poetry")

Encode = Callable[[str], Sequence[int]]


@dataclass
class PasskeyPrompt:
    tokens: list[int]
    answer: list[int]
    key: int
    length: int
    depth: float
    needle_position: int


def draw_keys(seed: int, cells: int) -> list[int]:
    """One key per cell: a digit count uniform in {5, 6, 7}, then a uniform key of that many digits."""
    rng = np.random.default_rng(seed)
    keys = []
    for _ in range(cells):
        digits = int(rng.integers(5, 8))
        keys.append(int(rng.integers(10 ** (digits - 1), 10**digits)))
    return keys


def split_answer(encode: Encode, key: int) -> tuple[list[int], list[int]]:
    """The question's tokens and the tokens that continue it with the key.

    Both tokenizers here spell " 71432" as a lone space token and then the digits. A space token
    is no evidence of retrieval, and SmolLM2 often prefers " a" there ("The pass key is a ..."),
    which would fail a prompt whose digits the model knows. So when QUESTION + " " tokenizes as a
    prefix of QUESTION + answer, the space belongs to the prompt and the answer is the digits;
    otherwise (a tokenizer that merges the space into the first digit) the answer is everything
    after QUESTION's tokens.
    """
    whole = list(encode(QUESTION + ANSWER.format(key=key)))
    for question in (list(encode(QUESTION + " ")), list(encode(QUESTION))):
        if whole[: len(question)] == question and len(whole) > len(question):
            return question, whole[len(question) :]
    raise ExportError(
        f"key {key}: the question's tokens are not a prefix of question + answer "
        f"({list(encode(QUESTION))} vs {whole}); the answer would not continue the prompt"
    )


def answer_tokens(encode: Encode, key: int) -> list[int]:
    """The tokens that continue the prompt with the key (split_answer)."""
    return split_answer(encode, key)[1]


def needle_offset(depth: float, haystack_tokens: int) -> int:
    """Haystack tokens before the needle: depth percent of them, rounded half up."""
    return int(np.floor(depth / 100.0 * haystack_tokens + 0.5))


def build_prompt(encode: Encode, haystack: Sequence[int], length: int, depth: float, key: int) -> PasskeyPrompt:
    intro = list(encode(INTRO))
    question, answer = split_answer(encode, key)
    needle = list(encode(NEEDLE.format(key=key)))
    fill = length - len(intro) - len(needle) - len(question)
    if fill < 0:
        raise ExportError(
            f"length {length}: intro, needle and question alone take {len(intro) + len(needle) + len(question)} tokens"
        )
    if fill > len(haystack):
        raise ExportError(f"length {length}: needs {fill} haystack tokens, the haystack has {len(haystack)}")
    cut = needle_offset(depth, fill)
    hay = list(haystack[:fill])
    tokens = intro + hay[:cut] + needle + hay[cut:] + question
    assert len(tokens) == length
    return PasskeyPrompt(tokens, answer, key, length, float(depth), len(intro) + cut)


def build_prompts(
    encode: Encode,
    haystack: Sequence[int],
    lengths: Sequence[int],
    depths: Sequence[float],
    keys_per_cell: int,
    seed: int,
) -> list[PasskeyPrompt]:
    keys = iter(draw_keys(seed, len(lengths) * len(depths) * keys_per_cell))
    return [
        build_prompt(encode, haystack, length, depth, next(keys))
        for length in lengths
        for depth in depths
        for _ in range(keys_per_cell)
    ]


def haystack_text(prompts_dir: Path) -> str:
    parts = []
    for kind in HAYSTACK_KINDS:
        source = prompts_dir / f"{kind}.txt"
        if not source.is_file():
            raise ExportError(f"{source}: prompt missing; run tools/prompts.sh {prompts_dir}")
        parts.append(source.read_text(encoding="utf-8").strip())
    return "\n\n".join(parts)


def offsets(pieces: Sequence[Sequence[int]]) -> np.ndarray:
    return np.concatenate([[0], np.cumsum([len(p) for p in pieces])]).astype(np.int64)


def write_task(path: Path, model_name: str, seed: int, prompts: Sequence[PasskeyPrompt], tokenizer: str = "") -> None:
    """Writes PATH.partial and renames it when whole (make-eval-texts.py's pattern); `tokenizer`: the
    tokenizer's identity (dgqtools/tokenizer_id.py), empty for none."""
    import h5py

    partial = path.with_name(path.name + ".partial")
    try:
        with h5py.File(partial, "w") as f:
            f.attrs["format"] = "dgq-passkey"
            f.attrs["version"] = np.int64(1)
            f.attrs["model"] = model_name
            if tokenizer:
                f.attrs["tokenizer_id"] = tokenizer
            f.attrs["seed"] = np.int64(seed)
            f.attrs["intro"], f.attrs["needle"], f.attrs["question"], f.attrs["answer"] = (
                INTRO,
                NEEDLE,
                QUESTION,
                ANSWER,
            )
            f.create_dataset("tokens", data=np.concatenate([p.tokens for p in prompts]).astype(np.int32))
            f.create_dataset("prompt_offsets", data=offsets([p.tokens for p in prompts]))
            f.create_dataset("answer_tokens", data=np.concatenate([p.answer for p in prompts]).astype(np.int32))
            f.create_dataset("answer_offsets", data=offsets([p.answer for p in prompts]))
            f.create_dataset("key", data=np.array([p.key for p in prompts], dtype=np.int64))
            f.create_dataset("length", data=np.array([p.length for p in prompts], dtype=np.int64))
            f.create_dataset("depth", data=np.array([p.depth for p in prompts], dtype=np.float64))
            f.create_dataset("needle_position", data=np.array([p.needle_position for p in prompts], dtype=np.int64))
        os.replace(partial, path)
    finally:
        if partial.exists():
            partial.unlink()


def number_list(text: str, kind: Callable[[str], float] = int) -> list:
    try:
        return [kind(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': expected comma-separated numbers") from None


def main(argv: list[str] | None = None) -> int:
    from dgqtools.make_eval_texts import MODEL_NAMES, gguf_reader, load_tokenizer

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", choices=sorted(MODEL_NAMES))
    parser.add_argument("--prompts", type=Path, required=True, help="folder of tools/prompts.sh")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--lengths", type=number_list, default=[1024, 2048, 4096], help="prompt lengths in tokens")
    parser.add_argument(
        "--depths",
        type=lambda t: number_list(t, float),
        default=[0.0, 25.0, 50.0, 75.0, 100.0],
        help="needle depths in percent of the haystack",
    )
    parser.add_argument("--keys", type=int, default=10, help="keys per (length, depth) cell")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        if args.keys < 1 or any(not 0 <= d <= 100 for d in args.depths):
            raise ExportError("--keys must be at least 1 and --depths within 0..100")
        from dgqtools.tokenizer_id import tokenizer_id

        reader = gguf_reader(args.model)
        tokenizer = load_tokenizer(args.model, reader)

        def encode(text: str) -> list[int]:
            return tokenizer.encode(text, add_special_tokens=False).ids

        haystack = encode(haystack_text(args.prompts))
        prompts = build_prompts(encode, haystack, args.lengths, args.depths, args.keys, args.seed)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        write_task(args.output, MODEL_NAMES[args.model], args.seed, prompts, tokenizer_id(reader))
        print(f"make-passkey.py: {args.output}: {len(prompts)} prompts, haystack of {len(haystack)} tokens")
    except ExportError as err:
        print(f"make-passkey.py: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
