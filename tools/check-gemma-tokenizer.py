#!/usr/bin/env python3
"""Cross-check of tools/dgqtools/gemma_tokenizer.py (a `tokenizers` BPE built from the GGUF) against an
independent re-implementation of llama.cpp's SentencePiece tokenizer (llm_tokenizer_spm: merge the
adjacent pair whose merged piece has the best score, byte fallback; user-defined tokens matched
first, longest first). Prints, per prompt kind, whether the two token sequences are identical.
Usage: tools/check-gemma-tokenizer.py [PROMPTS_DIR] [CHARS]   (default out/prompts, 6000)
Not in CI: building the tokenizer takes about a minute.
"""

import heapq
import re
import sys
from pathlib import Path

import gguf

from dgqtools import export_model, gemma_tokenizer

prompts = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("out/prompts")
chars = int(sys.argv[2]) if len(sys.argv) > 2 else 6000
r = gguf.GGUFReader(str(export_model.gemma3_gguf_path()))


def f(name):
    return r.fields[name].contents()


tokens = f("tokenizer.ggml.tokens")
scores = f("tokenizer.ggml.scores")
types = f("tokenizer.ggml.token_type")
vocab = {t: i for i, t in enumerate(tokens)}
user = [t for t, k in zip(tokens, types) if k == 4]
user.sort(key=len, reverse=True)


def spm(text):
    text = text.replace(" ", "\u2581")
    syms = list(text)
    # llama.cpp-like: symbols with prev/next links
    n = len(syms)
    prev = list(range(-1, n - 1))
    nxt = list(range(1, n + 1))
    nxt[-1] = -1 if n else -1
    txt = syms[:]
    heap: list[tuple[float, int, str]] = []

    def push(left, right):
        if left < 0 or right < 0:
            return
        s = txt[left] + txt[right]
        if s in vocab:
            heapq.heappush(heap, (-scores[vocab[s]], left, s))

    for i in range(n - 1):
        push(i, i + 1)
    while heap:
        _, left, s = heapq.heappop(heap)
        right = nxt[left]
        if right < 0 or txt[left] + txt[right] != s:
            continue
        txt[left] = s
        txt[right] = ""
        nxt[left] = nxt[right]
        if nxt[left] >= 0:
            prev[nxt[left]] = left
        push(prev[left], left)
        push(left, nxt[left])
    out = []
    i = 0
    while i >= 0 and i < n:
        t = txt[i]
        if t in vocab:
            out.append(vocab[t])
        else:
            out += [vocab[f"<0x{b:02X}>"] for b in t.encode()]
        i = nxt[i]
    return out


def llama_like(text):
    # user-defined tokens are matched first (longest first), SPM on the pieces between
    pat = re.compile("|".join(re.escape(u) for u in user))
    ids = []
    pos = 0
    for m in pat.finditer(text):
        if m.start() > pos:
            ids += spm(text[pos : m.start()])
        ids.append(vocab[m.group()])
        pos = m.end()
    if pos < len(text):
        ids += spm(text[pos:])
    return ids


tk = gemma_tokenizer.load_gemma_tokenizer(r)
for kind in ["prose", "code", "legal", "poetry"]:
    text = (prompts / f"{kind}.txt").read_text()[:chars]
    a = tk.encode(text, add_special_tokens=False).ids
    b = llama_like(text)
    same = a == b
    first = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
    print(
        kind,
        len(a),
        len(b),
        "identical"
        if same
        else f"differ at {first}: {a[first - 2 : first + 3] if first else ''} vs "
        f"{b[first - 2 : first + 3] if first else ''}",
    )
