"""TMEvolve's experiment plumbing: fold outputs, summaries, metrics.json, tables, the Fig. 3 trace.

Every function takes paths or plain data and returns data, so each pipeline script is one call.
``metrics.json`` layout (the claims address it by dotted path)::

    {task: {method: {mean, sd, folds, metric, [ari_q0, ari_final, ...]}},   # every run
     best_baseline: {task: {method, mean, sd}},
     ablation: {task: {drop: {variant: full - variant}, max_drop_other_than_randcon}},
     grid: {task: {"q{Q}_k{K}": mean}},
     ari: {q0, final, gain}}                                                    # main TMEvolve, survival
"""

from __future__ import annotations

import logging
import os

import numpy as np
import pandas as pd
import torch

from repro.io import atomic_path, read_json
from repro.methods.mil_train import FoldResult, TASKS, load_prepared, summarize_folds

__all__ = ["save_fold", "summarize_fold_files", "aggregate_metrics", "make_tables", "trace_slide",
           "save_concepts", "load_concepts", "BASELINES", "read_summaries", "slide_thumbnail", "survival_bars"]

log = logging.getLogger(__name__)

#: The registry keys that count as baselines for "best baseline".
BASELINES = ("mean", "abmil", "transmil", "graphmil", "dsmil")


def save_concepts(path: str | os.PathLike, names: list[str], texts: list[str], emb: np.ndarray) -> None:
    with atomic_path(path) as tmp:
        np.savez(tmp, names=np.array(names), texts=np.array(texts), emb=emb.astype(np.float32))


def load_concepts(path: str | os.PathLike) -> np.ndarray:
    with np.load(path) as z:
        return z["emb"]


def save_fold(result: FoldResult, model_path: str, *, method: str, task: str, fold: int) -> dict:
    """Write the fold's weights (``.pt``); return its metric, predictions and diagnostics (for the JSON)."""
    with atomic_path(model_path) as tmp:
        torch.save({"state_dict": result.state_dict, "model_cfg": result.model_cfg, "method": method,
                    "in_dim": result.in_dim, "out_dim": result.out_dim}, tmp)
    return {"metric": result.metric, "metric_name": TASKS.get(task).metric_name, "method": method, "task": task,
            "fold": fold, "diagnostics": result.diagnostics, "predictions": result.predictions.to_dict(orient="list")}


def summarize_fold_files(paths: list[str]) -> dict:
    return summarize_folds([read_json(p) for p in paths])


def aggregate_metrics(summaries: dict[str, dict[str, dict]], cfg: dict) -> dict:
    """The paper's ``metrics.json`` from ``{task: {method: summary}}``."""
    out: dict = {task: dict(methods) for task, methods in summaries.items()}
    out["best_baseline"] = {}
    for task, methods in summaries.items():
        base = {m: s for m, s in methods.items() if m in BASELINES and s["mean"] == s["mean"]}
        if base:
            best = max(base, key=lambda m: base[m]["mean"])
            out["best_baseline"][task] = {"method": best, "mean": base[best]["mean"], "sd": base[best]["sd"]}
    out["ablation"] = {}
    for task, methods in summaries.items():
        if "tmevolve" not in methods:
            continue
        drops = {v: methods["tmevolve"]["mean"] - methods[v]["mean"] for v in cfg.get("ablations", []) if v in methods}
        if drops:
            others = [d for v, d in drops.items() if v != "tmevolve_randcon"]
            out["ablation"][task] = {"drop": drops, "max_drop_other_than_randcon": max(others) if others else None}
    grid = cfg.get("grid", {})
    gtask = grid.get("task")
    if gtask in summaries:
        out["grid"] = {gtask: {f"q{q}_k{k}": summaries[gtask].get(f"tmevolve_q{q}_k{k}", {}).get("mean")
                               for q in grid.get("Q", []) for k in grid.get("K", [])}}
    main = summaries.get("survival", {}).get("tmevolve", {})
    if "ari_q0" in main:
        out["ari"] = {"q0": main["ari_q0"], "final": main["ari_final"], "gain": main["ari_final"] - main["ari_q0"]}
    return out


def _fmt(s: dict | None) -> str:
    if not s or s.get("mean") is None or s["mean"] != s["mean"]:
        return "n/a"
    return f"{s['mean']:.3f} +- {s['sd']:.3f}"


def make_tables(metrics: dict, cfg: dict) -> dict[str, pd.DataFrame]:
    """Table 1 (methods x tasks), Table 3 (ablations x tasks), Table 4 (Q x K grid)."""
    tasks = cfg["tasks"]
    names = {t: TASKS.get(t).metric_name for t in tasks}
    t1 = pd.DataFrame([{"method": m, **{f"{t} ({names[t]})": _fmt(metrics.get(t, {}).get(m)) for t in tasks}}
                       for m in cfg["methods"]])
    t3 = pd.DataFrame([{"variant": m, **{f"{t} ({names[t]})": _fmt(metrics.get(t, {}).get(m)) for t in tasks}}
                       for m in ["tmevolve", *cfg["ablations"]]])
    grid = cfg["grid"]
    t4 = pd.DataFrame([{"Q": q, **{f"K={k}": _fmt(metrics.get(grid["task"], {}).get(f"tmevolve_q{q}_k{k}"))
                                   for k in grid["K"]}} for q in grid["Q"]])
    return {"table1": t1, "table3": t3, "table4": t4}


def trace_slide(dataset_path: str, folds_path: str, model_path: str, concepts_path: str, *, fold: int,
                slide_index: int = 0) -> tuple[pd.DataFrame, dict]:
    """Run the fold's trained TMEvolve on one of its test slides and return per-patch maps.

    Returns a tidy DataFrame (``slide_id, gx, gy, truth, region_q0, region_final, response, flux``)
    and a dict of slide-level facts (slide id, Q, K, ARI at q = 0 and after evolution).
    """
    from repro.methods.mil import create_mil_model
    from repro.methods.mil_train import region_ari

    data = load_prepared(dataset_path)
    folds = pd.read_csv(folds_path, dtype={"slide_id": str})
    test_ids = set(folds.slide_id[folds.fold == fold])
    test = [b for b in data.bags if b.slide_id in test_ids]
    if not test:
        raise ValueError(f"{folds_path}: fold {fold} has no slides")
    bag = sorted(test, key=lambda b: -b.n)[min(slide_index, len(test) - 1)]   # the largest test slides first
    ckpt = torch.load(model_path, weights_only=False)
    model = create_mil_model(ckpt["method"], ckpt["in_dim"], ckpt["out_dim"], concept_emb=load_concepts(concepts_path),
                             **ckpt["model_cfg"])
    model.load_state_dict(ckpt["state_dict"])
    model.eval()
    with torch.no_grad():
        res = model(bag, trace=True)
    tr = res["trace"]
    flux = tr["flux"].norm(dim=-1).numpy() if "flux" in tr else np.zeros(bag.n)
    df = pd.DataFrame({"slide_id": bag.slide_id, "gx": bag.grid[:, 0].numpy().astype(int),
                       "gy": bag.grid[:, 1].numpy().astype(int), "truth": bag.patch_types.astype(int),
                       "region_q0": tr["S"][0].argmax(1).numpy(), "region_final": tr["S"][-1].argmax(1).numpy(),
                       "response": tr["a"].numpy(), "flux": flux})
    facts = {"slide_id": bag.slide_id, "Q": model.cfg.Q, "K": model.cfg.K, "tissue_types": data.tissue_types,
             "ari_q0": region_ari(tr["S"][0], bag.patch_types), "ari_final": region_ari(tr["S"][-1], bag.patch_types)}
    return df, facts


def read_summaries(paths: dict[str, str]) -> dict[str, dict[str, dict]]:
    """``{"task/method": path}`` -> ``{task: {method: summary}}``."""
    out: dict[str, dict[str, dict]] = {}
    for key, path in paths.items():
        task, method = key.split("/", 1)
        out.setdefault(task, {})[method] = read_json(path)
    return out


def slide_thumbnail(slides_dir: str, slide_id: str, max_size: int = 256) -> np.ndarray | None:
    """The slide's thumbnail through the WSI stage's reader, or None (no slide file, e.g. bags only)."""
    from pathlib import Path

    paths = sorted(Path(slides_dir).glob(f"{slide_id}.*"))
    if not paths:
        return None
    try:
        from repro.wsi.reader import open_slide
    except ImportError:
        return None
    with open_slide(paths[0]) as slide:
        return slide.thumbnail(max_size)


def survival_bars(paths: dict[str, str]) -> pd.DataFrame:
    """``method, mean, sd`` of the survival C-index from the per-method summaries."""
    rows = [{"method": m, "mean": read_json(p)["mean"], "sd": read_json(p)["sd"]} for m, p in paths.items()]
    return pd.DataFrame(rows)


def experiment_runs(cfg: dict) -> list[str]:
    """Every ``task/method`` the preset asks for: all methods on every task, the ablations on the
    ablation tasks, and the Q x K grid on the grid task (the DAG's fan-out)."""
    from repro.methods.tmevolve import grid_name

    runs = [f"{t}/{m}" for t in cfg["tasks"] for m in cfg["methods"]]
    runs += [f"{t}/{m}" for t in cfg["ablation_tasks"] for m in cfg["ablations"]]
    grid = cfg["grid"]
    runs += [f"{grid['task']}/{grid_name(q, k)}" for q in grid["Q"] for k in grid["K"]]
    return list(dict.fromkeys(runs))
