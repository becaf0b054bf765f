"""Our feature-level Gaussian mirror against the GM package's ``gm()`` on identical draws.

A diagnostic, not in the DAG, and the only code of the project that runs R: it needs ``Rscript`` with the
authors' package ``GM`` (BioAlgs/GM) and glmnet. Each draw comes from our generators; X and y go to
``workflow/scripts/groupfdr/gm_reference.R``, which runs the unmodified ``gm()`` after ``set.seed`` and
records its CV (lambda grid, folds, lambda.min, coefficients), its perturbations (the standard normal
Z_j and the scale c_j of each mirror) and its statistics and selection. Our mirror
(:func:`repro.methods.mirror.group_mirror_statistics`, singleton groups, lasso path) then runs on the SAME
X, y, Z and CV folds, twice: ``mirror_scale="exact"`` (ours: c_j from the realised residual norms) and
``mirror_scale="package"`` (the package's c_j). The comparison per draw: correlation and largest
difference of M, the two lambdas, the selected sets; over draws: FDR, power and the null signs of M
under the package's rule (step-down, +1, q = 0.1), Eq. 2.5 and knockoff+, each with its standard error.

    python -m repro.papers.groupfdr.reference_check --design ar05_pn --draws 20 --out results/x.csv

The fixture under ``tests/groupfdr/data/`` (``--fixture``) keeps a few small draws with the package's
outputs, so the tests check our implementation against the reference without R.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from repro.methods.mirror import SELECTION_RULES, group_mirror_statistics
from repro.papers.groupfdr.synth import lag_covariance, simulate_grouped

__all__ = ["DESIGNS", "draw", "run_reference", "run_ours", "compare_draw", "summarise", "main"]

R_SCRIPT = Path(__file__).resolve().parents[4] / "workflow" / "scripts" / "groupfdr" / "gm_reference.R"

#: ``ar05_pn``: p > n, AR(0.5) columns (Corr = 0.5^|i - j|), k signals beta = +-amplitude / sqrt(n) at
#: random columns (the comparison's p > n setting, scaled down from the package example's n = 300, p = 1000 to fit
#: the CPU). ``low_r05`` / ``high_r05``: Table 3's grouped designs (config.yaml), mirrored per column.
DESIGNS = {
    "ar05_pn": {"kind": "ar", "n": 100, "p": 200, "k": 15, "rho": 0.5, "amplitude": 8.0},
    "ar05_tiny": {"kind": "ar", "n": 50, "p": 80, "k": 8, "rho": 0.5, "amplitude": 8.0},  # the fixture's
    "low_r05": {"kind": "grouped", "n": 150, "p": 20, "d": 2, "rho_within": 0.5, "rho_between": 0.25,
                "n_true": 4, "amplitude": 6.0},
    "high_r05": {"kind": "grouped", "n": 60, "p": 30, "d": 3, "rho_within": 0.5, "rho_between": 0.25,
                 "n_true": 4, "amplitude": 6.0},
}

#: The selection rules compared, each at q = 0.1 (the package hard-codes 0.1).
RULES = ("gm_package", "min_t", "min_t_plus")
Q = 0.1


def draw(design: dict, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """X, y and the boolean truth (nonzero coefficient) of one draw of ``design``."""
    rng = np.random.default_rng(seed)
    if design["kind"] == "ar":
        n, p, k = design["n"], design["p"], design["k"]
        L = np.linalg.cholesky(lag_covariance(1, p, design["rho"], 0.0))
        X = rng.standard_normal((n, p)) @ L.T
        beta = np.zeros(p)
        beta[rng.choice(p, k, replace=False)] = rng.choice([-1.0, 1.0], k) * design["amplitude"] / np.sqrt(n)
        return X, X @ beta + rng.standard_normal(n), beta != 0
    if design["kind"] == "grouped":
        kw = {key: v for key, v in design.items() if key != "kind"}
        data = simulate_grouped(**kw, rng=rng)
        return data.X, data.y, data.beta != 0
    raise ValueError(f"unknown design kind {design['kind']!r}")


def run_reference(X: np.ndarray, y: np.ndarray, seed: int, workdir: Path | None = None) -> dict:
    """Run the package's ``gm()`` on (X, y) through ``gm_reference.R``; its recorded outputs and CPU-s."""
    if shutil.which("Rscript") is None:
        raise RuntimeError("Rscript not found: this diagnostic needs R with the GM package (not needed by the tests)")
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory()
        workdir = Path(tmp.name)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    n, p = X.shape
    (workdir / "dims.txt").write_text(f"{n} {p}\n")
    np.asfortranarray(X, dtype=float).T.ravel().tofile(workdir / "X.f64")  # column-major
    np.asarray(y, dtype=float).tofile(workdir / "y.f64")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(["Rscript", str(R_SCRIPT), str(workdir), str(seed)], capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"gm_reference.R failed:\n{proc.stderr[-2000:]}")
    out = read_reference(workdir, n, p)
    out["cpu_s"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if tmp is not None:
        tmp.cleanup()
    return out


def read_reference(workdir: Path, n: int, p: int) -> dict:
    """The files ``gm_reference.R`` wrote (selected indices 0-based)."""
    workdir = Path(workdir)
    f64 = lambda name: np.fromfile(workdir / name, dtype=float)
    summary = dict(line.split() for line in (workdir / "summary.txt").read_text().splitlines())
    return {
        "M": f64("M.f64"), "Z": f64("Z.f64").reshape(p, n).T, "c": f64("c.f64"), "coef": f64("coef.f64"),
        "cvm": f64("cvm.f64"), "lambda_grid": f64("lambda.f64"),
        "foldid": np.array((workdir / "foldid.txt").read_text().split(), dtype=int),
        "selected": np.array((workdir / "selected.txt").read_text().split(), dtype=int) - 1,
        "lambda": float(summary["lambda_min"]), "lambda_index": int(summary["lambda_index"]) - 1,
        "cv_refit_gap": float(summary["cv_refit_gap"]),
    }


def run_ours(X: np.ndarray, y: np.ndarray, Z: np.ndarray, foldid: np.ndarray, *, mirror_scale: str,
             lasso_tol: float = 1e-7, penalty="reference") -> dict:
    """Our singleton-group lasso mirror on the reference's Z and folds (c_j, M_j, lambda, initial fit)."""
    t0 = time.process_time()
    res = group_mirror_statistics(X, y, np.arange(X.shape[1]), Z, fit="lasso", penalty=penalty,
                                  lasso_tol=lasso_tol, foldid=foldid, mirror_scale=mirror_scale)
    return {"M": res["M"], "c": np.array([C[0, 0] for C in res["C"]]), "lambda": res["alpha"],
            "coef": res["init_coef"], "cpu_s": time.process_time() - t0}


def _rates(M: np.ndarray, truth: np.ndarray) -> dict:
    out = {"null_pos": int(np.sum(M[~truth] > 0)), "null_neg": int(np.sum(M[~truth] < 0))}
    for rule in RULES:
        sel = SELECTION_RULES.get(rule)(M, Q)
        out[f"fdp_{rule}"] = float(np.sum(~truth[sel]) / max(len(sel), 1))
        out[f"power_{rule}"] = float(np.sum(truth[sel]) / max(truth.sum(), 1))
    return out


def compare_draw(design_name: str, seed: int) -> dict:
    """One draw: the reference and our two scales on the same X, y, Z and folds; a flat record."""
    X, y, truth = draw(DESIGNS[design_name], seed)
    ref = run_reference(X, y, seed)
    row = {"design": design_name, "seed": seed, "ref_cpu_s": ref["cpu_s"], "ref_lambda": ref["lambda"],
           "ref_lambda_index": ref["lambda_index"], "ref_cv_refit_gap": ref["cv_refit_gap"],
           "ref_n_screened": int(np.sum(ref["coef"] != 0)),
           "ref_package_rule_matches": bool(np.array_equal(np.sort(ref["selected"]),
                                                          SELECTION_RULES.get("gm_package")(ref["M"], Q)))}
    row.update({f"ref_{k}": v for k, v in _rates(ref["M"], truth).items()})
    for scale in ("package", "exact"):
        ours = run_ours(X, y, ref["Z"], ref["foldid"], mirror_scale=scale)
        tag = f"ours_{scale}"
        row.update({f"{tag}_{k}": v for k, v in _rates(ours["M"], truth).items()})
        row[f"{tag}_cpu_s"] = ours["cpu_s"]
        row[f"{tag}_lambda_ratio"] = ours["lambda"] / ref["lambda"]
        row[f"{tag}_M_corr"] = float(np.corrcoef(ours["M"], ref["M"])[0, 1]) if np.std(ours["M"]) > 0 else float("nan")
        row[f"{tag}_M_maxdiff"] = float(np.max(np.abs(ours["M"] - ref["M"])))
        row[f"{tag}_sign_agree"] = float(np.mean(np.sign(ours["M"]) == np.sign(ref["M"])))
        row[f"{tag}_c_maxrel"] = float(np.max(np.abs(ours["c"] / ref["c"] - 1)))
        row[f"{tag}_coef_maxdiff"] = float(np.max(np.abs(ours["coef"] - ref["coef"])))
        sel_ref = set(SELECTION_RULES.get("gm_package")(ref["M"], Q).tolist())
        sel_ours = set(SELECTION_RULES.get("gm_package")(ours["M"], Q).tolist())
        row[f"{tag}_same_selection"] = sel_ref == sel_ours
    return row


def summarise(rows: list[dict]) -> dict:
    """Mean and standard error over draws of every numeric column (the draw the unit)."""
    out = {}
    for key in rows[0]:
        if key in ("seed", "design"):
            continue
        vals = np.array([r[key] for r in rows], dtype=float)
        vals = vals[~np.isnan(vals)]
        if vals.size == 0:
            continue
        out[key] = (float(vals.mean()), float(vals.std(ddof=1) / np.sqrt(len(vals))) if len(vals) > 1 else float("nan"))
    return out


def write_fixture(design_name: str, seed: int, directory: Path) -> None:
    """Save one small draw with the reference's outputs (``npz``, a few kB) for the R-free test."""
    X, y, truth = draw(DESIGNS[design_name], seed)
    ref = run_reference(X, y, seed)
    np.savez_compressed(Path(directory) / f"gm_reference_{design_name}_{seed}.npz", X=X, y=y, Z=ref["Z"],
                        foldid=ref["foldid"], M=ref["M"], c=ref["c"], coef=ref["coef"], selected=ref["selected"],
                        lambda_=ref["lambda"], lambda_index=ref["lambda_index"], lambda_grid=ref["lambda_grid"],
                        cvm=ref["cvm"])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--design", choices=sorted(DESIGNS), required=True)
    ap.add_argument("--draws", type=int, default=10)
    ap.add_argument("--seed0", type=int, default=0)
    ap.add_argument("--out", type=Path, help="CSV of per-draw records (appended to when it exists)")
    ap.add_argument("--fixture", type=Path, help="write the draws as reference fixtures into this folder instead")
    args = ap.parse_args(argv)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        if args.fixture is not None:
            for seed in range(args.seed0, args.seed0 + args.draws):
                write_fixture(args.design, seed, args.fixture)
            return
        rows = []
        for seed in range(args.seed0, args.seed0 + args.draws):
            rows.append(compare_draw(args.design, seed))
            print(json.dumps({k: rows[-1][k] for k in ("seed", "ref_cpu_s", "ours_package_M_corr",
                                                        "ours_package_M_maxdiff", "ours_exact_M_corr")}), flush=True)
    if args.out is not None:
        import pandas as pd

        df = pd.DataFrame(rows)
        df.to_csv(args.out, mode="a", header=not args.out.exists(), index=False)
    for key, (m, se) in summarise(rows).items():
        print(f"{key:40s} {m:10.4f} +- {se:.4f}")


if __name__ == "__main__":
    main()
