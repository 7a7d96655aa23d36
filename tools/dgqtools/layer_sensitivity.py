"""Per-layer sensitivity of a model's KV cache, and the layer plans it buys (docs/eval.md, "Layer
plans": bits by measured sensitivity, as KVTuner allocates them).

    tools/layer-sensitivity.py --model M.h5 --text T1.h5 [--text T2.h5 ...] [--window 6144,512] \\
        --ctx 512 [--chunks 4] [--keys pre-rope] --level SPEC0 --level SPEC1 ... --budget 4.0 [--budget 3.5] \\
        -o OUT.json

0. The calibration text: one token file, or with --window START,COUNT the tokens
   [START, START + COUNT) of each --text, concatenated into OUT-calibration.h5 (so that a window
   past the tokens a report evaluates calibrates on the same kinds of text without reusing them).

1. `dgq eval` (causal cache; with --keys, keys stored at that position, docs/eval.md "Pre-RoPE
   keys") of every level alone, for its bits held, and of every (layer, level):
   that level on that layer and the fp16 cache elsewhere ("fp16;L=SPEC"), whose KLD against the
   fp16 base is the layer's sensitivity at that level. The levels are cache specs listed from the
   fewest bits to the most; a calibration text should not be one the plans are evaluated on.
2. For each budget (bits per element, averaged over the layers, which hold equally many
   elements in the models dgq runs): every layer starts at the first level; the upgrade of one
   layer by one level with the largest KLD reduction per bit is taken while the mean stays within
   the budget (upgrades that do not reduce the measured KLD are never taken). Ties go to the
   lower layer. The predicted KLD is the sum of the layers' sensitivities (additive, as KVTuner
   assumes); dgq eval measures the real one.
   With --k-level/--v-level instead of --level, K and V of each layer are allocated apart: a K
   level is measured as the pair "SPEC/fp16" on one layer, a V level as "fp16/SPEC", a role's
   bits are read from the pair's (2 x bits - 16), the 2 x layers (layer, role) items share the
   budget (K and V hold equally many elements), and a plan gives each layer the pair "K/V".
3. The sensitivity-blind control of each plan: the same levels, assigned to the layers in a fixed
   low-discrepancy order (layer l ranked by frac(0.618... x (l + 1)), which spreads any count of
   layers over the depth and favours neither end), so that a plan's gain over it is the gain of
   knowing where the sensitive layers are.

Writes OUT.json (levels with bits and KLD, sensitivity[layer][level], and per budget the plan and
control specs with their predicted bits and KLD) and prints the plans. Everything it reports comes
from the dgq eval runs it makes (their results files beside OUT, kept for provenance).
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

GOLDEN = 0.6180339887498949


def calibration_text(texts: list[str], window: str | None, out: Path) -> str:
    """The one token file to calibrate on: texts[0], or the windows of every text (--window)."""
    if window is None:
        if len(texts) != 1:
            sys.exit("layer-sensitivity.py: several --text need --window START,COUNT")
        return texts[0]
    import h5py
    import numpy as np

    start, count = (int(x) for x in window.split(","))
    parts, attrs = [], None
    for path in texts:
        with h5py.File(path, "r") as f:
            tokens = np.asarray(f["tokens"], dtype=np.int32)
            attrs = attrs or {k: f.attrs[k] for k in ("format", "version", "model", "tokenizer_id") if k in f.attrs}
        if len(tokens) < start + count:
            sys.exit(f"layer-sensitivity.py: {path} has {len(tokens)} tokens, the window ends at {start + count}")
        parts.append(tokens[start : start + count])
    partial = out.with_name(out.name + ".partial")
    with h5py.File(partial, "w") as f:
        f.attrs.update(attrs)
        f.attrs["kind"] = "calibration"
        f.attrs["noise_rate"] = np.float64(0)
        f.create_dataset("tokens", data=np.concatenate(parts))
    partial.replace(out)
    return str(out)


def run_eval(dgq: str, args: argparse.Namespace, schemes: list[str], out: Path, threads: int) -> list[dict]:
    """dgq eval of the schemes (fp16 base, causal) into out (.h5 and .json); their JSON summaries."""
    # --force: out is this tool's own intermediate file, remade on every run (dgq eval refuses an
    # existing output without it).
    command = [
        dgq,
        "eval",
        "--model",
        args.model,
        "--text",
        args.calibration,
        "--ctx",
        str(args.ctx),
        "--chunks",
        str(args.chunks),
        "--cache",
        "causal",
        "-o",
        str(out),
        "--json",
        str(out.with_suffix(".json")),
        "--force",
    ]
    if threads:
        command += ["--threads", str(threads)]
    if args.keys != "post-rope":
        command += ["--keys", args.keys]
    for s in schemes:
        command += ["--scheme", s]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"layer-sensitivity.py: {' '.join(command[:3])} ... failed: {result.stderr.strip()}")
    summaries = json.loads(out.with_suffix(".json").read_text())["schemes"]
    return summaries[1:]  # the base first


def allocate(sensitivity: list[list[float]], bits: list, budget: float) -> list[int]:
    """Greedy: each item's level index, every item from level 0, best KLD reduction per bit first.
    bits: one chain for every item (a list of numbers) or one chain per item (a list of lists)."""
    layers = len(sensitivity)
    chains = bits if bits and isinstance(bits[0], list) else [bits] * layers
    level = [0] * layers
    total = sum(chain[0] for chain in chains)
    while True:
        best = None
        for layer in range(layers):
            j = level[layer]
            if j + 1 >= len(chains[layer]):
                continue
            cost = chains[layer][j + 1] - chains[layer][j]
            gain = sensitivity[layer][j] - sensitivity[layer][j + 1]
            if gain <= 0 or (total + cost) / layers > budget + 1e-12:
                continue
            ratio = gain / cost if cost > 0 else float("inf")
            if best is None or ratio > best[0]:
                best = (ratio, layer, cost)
        if best is None:
            return level
        level[best[1]] += 1
        total += best[2]


def control_of(level: list[int]) -> list[int]:
    """The same levels, highest first, over the layers in the fixed order frac(GOLDEN * (l + 1))."""
    order = sorted(range(len(level)), key=lambda layer: ((GOLDEN * (layer + 1)) % 1.0, layer))
    out = [0] * len(level)
    for layer, value in zip(order, sorted(level, reverse=True)):
        out[layer] = value
    return out


def role_pair(role: str, spec: str) -> str:
    """The K/V pair that puts spec on one role and fp16 on the other."""
    return f"{spec}/fp16" if role == "k" else f"fp16/{spec}"


def pair_plan(k_level: list[int], v_level: list[int], k_specs: list[str], v_specs: list[str]) -> str:
    """A plan of per-layer K/V pairs: each distinct pair one part, the most common the default."""
    pairs = [f"{k_specs[k]}/{v_specs[v]}" for k, v in zip(k_level, v_level)]
    distinct = sorted(set(pairs), key=pairs.index)
    return plan_spec([distinct.index(p) for p in pairs], distinct)


def plan_spec(level: list[int], specs: list[str]) -> str:
    """ "DEFAULT;LAYERS=SPEC...": the most common level is the default."""
    default = max(range(len(specs)), key=lambda j: (level.count(j), -j))
    parts = [specs[default]]
    for j, spec in enumerate(specs):
        layers = [str(layer) for layer, v in enumerate(level) if v == j]
        if j != default and layers:
            parts.append(",".join(layers) + "=" + spec)
    return ";".join(parts)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument(
        "--text",
        action="append",
        required=True,
        help="calibration token file (not an evaluated text); repeat with --window",
    )
    p.add_argument("--window", help="START,COUNT: calibrate on these tokens of every --text")
    p.add_argument("--ctx", type=int, required=True)
    p.add_argument("--chunks", type=int, default=0)
    p.add_argument("--level", action="append", help="cache spec, fewest bits first (repeat)")
    p.add_argument("--k-level", action="append", help="with --v-level: K's levels, allocated apart from V's")
    p.add_argument("--v-level", action="append", help="with --k-level: V's levels")
    p.add_argument("--budget", type=float, action="append", required=True, help="bits per element (repeat)")
    p.add_argument("--layers", type=int, help="the model's layer count (default: a dgq model file's num_layers)")
    p.add_argument(
        "--keys",
        default="post-rope",
        choices=["post-rope", "pre-rope"],
        help="where the cache stores keys (dgq eval --keys); the plans are for that position",
    )
    p.add_argument("--dgq", default="build/sim/dgq")
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("-o", "--output", required=True)
    args = p.parse_args()
    split = bool(args.k_level or args.v_level)
    if split and (args.level or not args.k_level or not args.v_level):
        sys.exit("layer-sensitivity.py: give --level, or --k-level and --v-level (not both kinds)")
    if not split and (not args.level or len(args.level) < 2):
        sys.exit("layer-sensitivity.py: give at least two --level specs")
    if args.layers is None:
        import h5py

        with h5py.File(args.model, "r") as f:
            args.layers = int(f.attrs["num_layers"])
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    args.calibration = calibration_text(args.text, args.window, out.with_name(out.stem + "-calibration.h5"))
    if split:
        write_split_plans(args, out)
        return

    uniform = run_eval(args.dgq, args, args.level, out.with_name(out.stem + "-levels.h5"), args.threads)
    bits = [u["bits_averaged"] for u in uniform]
    if any(b2 <= b1 for b1, b2 in zip(bits, bits[1:])):
        sys.exit(f"layer-sensitivity.py: the levels' bits {bits} do not increase: list them from the fewest bits")
    per_layer = [f"fp16;{layer}={spec}" for layer in range(args.layers) for spec in args.level]
    runs = run_eval(args.dgq, args, per_layer, out.with_name(out.stem + "-layers.h5"), args.threads)
    J = len(args.level)
    sensitivity = [[runs[layer * J + j]["kld_mean"] for j in range(J)] for layer in range(args.layers)]

    plans = {}
    for budget in args.budget:
        level = allocate(sensitivity, bits, budget)
        control = control_of(level)

        def predicted(lv: list[int]) -> tuple[float, float]:
            return sum(bits[j] for j in lv) / len(lv), sum(sensitivity[layer][j] for layer, j in enumerate(lv))

        plans[f"{budget:g}"] = {
            "budget": budget,
            "levels": level,
            "spec": plan_spec(level, args.level),
            "predicted_bits": predicted(level)[0],
            "predicted_kld": predicted(level)[1],
            "control_levels": control,
            "control_spec": plan_spec(control, args.level),
            "control_predicted_kld": predicted(control)[1],
        }
    write_plans(
        args,
        out,
        {
            "levels": [{"spec": s, "bits": b, "kld": u["kld_mean"]} for s, b, u in zip(args.level, bits, uniform)],
            "sensitivity": sensitivity,
            "plans": plans,
        },
    )


def write_plans(args: argparse.Namespace, out: Path, measured: dict) -> None:
    """OUT.json: what the run was (model, texts, calibration, dgq) and what it measured and planned."""
    doc = {
        "format": "dgq-layer-sensitivity",
        "version": 1,
        "model": args.model,
        "texts": args.text,
        "window": args.window,
        "calibration": args.calibration,
        "ctx": args.ctx,
        "chunks": args.chunks,
        "cache": "causal",
        "base": "fp16",
        "keys": args.keys,
        "dgq_version": subprocess.run([args.dgq, "--version"], capture_output=True, text=True).stdout.split()[-1],
        **measured,
    }
    partial = out.with_name(out.name + ".partial")
    partial.write_text(json.dumps(doc, indent=1) + "\n")
    partial.replace(out)
    for key, plan in measured["plans"].items():
        print(
            f"budget {key}: {plan['spec']}  (predicted {plan['predicted_bits']:.3f} bits, KLD {plan['predicted_kld']:.3e}; "
            f"control {plan['control_predicted_kld']:.3e})"
        )


def write_split_plans(args: argparse.Namespace, out: Path) -> None:
    """Step 1-3 with K and V of each layer as separate items (--k-level/--v-level)."""
    roles = {"k": args.k_level, "v": args.v_level}
    bits, levels = {}, {}
    for role, specs in roles.items():
        uniform = run_eval(
            args.dgq,
            args,
            [role_pair(role, s) for s in specs],
            out.with_name(f"{out.stem}-levels-{role}.h5"),
            args.threads,
        )
        bits[role] = [2 * u["bits_averaged"] - 16 for u in uniform]  # the other role holds fp16
        if any(b2 <= b1 for b1, b2 in zip(bits[role], bits[role][1:])):
            sys.exit(f"layer-sensitivity.py: the {role.upper()} levels' bits {bits[role]} do not increase")
        levels[role] = [{"spec": s, "bits": b, "kld": u["kld_mean"]} for s, b, u in zip(specs, bits[role], uniform)]
    per_layer = [
        f"fp16;{layer}={role_pair(role, spec)}"
        for role in roles
        for layer in range(args.layers)
        for spec in roles[role]
    ]
    runs = iter(run_eval(args.dgq, args, per_layer, out.with_name(out.stem + "-layers.h5"), args.threads))
    sensitivity = {
        role: [[next(runs)["kld_mean"] for _ in specs] for _ in range(args.layers)] for role, specs in roles.items()
    }
    items = sensitivity["k"] + sensitivity["v"]
    chains = [bits["k"]] * args.layers + [bits["v"]] * args.layers
    plans = {}
    for budget in args.budget:
        level = allocate(items, chains, budget)
        k, v = level[: args.layers], level[args.layers :]
        control = control_of(k) + control_of(v)

        def predicted(lv: list[int]) -> tuple[float, float]:
            return sum(c[j] for c, j in zip(chains, lv)) / len(lv), sum(items[i][j] for i, j in enumerate(lv))

        plans[f"{budget:g}"] = {
            "budget": budget,
            "k_levels": k,
            "v_levels": v,
            "spec": pair_plan(k, v, args.k_level, args.v_level),
            "predicted_bits": predicted(level)[0],
            "predicted_kld": predicted(level)[1],
            "control_k_levels": control[: args.layers],
            "control_v_levels": control[args.layers :],
            "control_spec": pair_plan(control[: args.layers], control[args.layers :], args.k_level, args.v_level),
            "control_predicted_kld": predicted(control)[1],
        }
    write_plans(
        args,
        out,
        {
            "roles": "split",
            "k_levels": levels["k"],
            "v_levels": levels["v"],
            "k_sensitivity": sensitivity["k"],
            "v_sensitivity": sensitivity["v"],
            "plans": plans,
        },
    )


if __name__ == "__main__":
    main()
