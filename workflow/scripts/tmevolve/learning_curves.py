"""TMEvolve's optimisation diagnostic: learning curves of the MIL learners against the task's floors.

    python workflow/scripts/tmevolve/learning_curves.py results/tmevolve/spatial \\
        --methods mean abmil tmevolve --lrs 5e-4 2e-3 --epochs 40 --out curves.csv

Reads a built cohort (``dataset.pt``, ``folds.csv``, ``results/tmevolve/concepts/minilm.npz``),
leaves the outer test fold ``--fold`` of repeat 0 out entirely, splits its training slides once more
(a quarter held out) and trains each (method, lr) on the rest, keeping the survival loss of every
epoch on the inner training and held-out parts. Beside the curves it fits the same loss with a linear
model for four feature sets (none: the marginal; the true composition; the true arrangement; the
planted log hazard), which show what a learner that finds the planted signal reaches. Only training
data is read: epochs and learning rate are set from these curves, never from a test metric.

A command-line tool, not a Snakemake job (training runs for many epochs at several rates).
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "src"))  # the checkout's library first
import pandas as pd
import yaml

from repro.methods.mil_train import load_prepared
from repro.papers.tmevolve.experiment import learning_curve, load_concepts, loss_floors
from repro.tableio import read_csv

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("cohort_dir", type=Path, help="results/tmevolve/<cohort> of a built run")
parser.add_argument("--config", type=Path, default=Path("config.yaml"), help="the preset's model settings")
parser.add_argument("--scale", default="small")
parser.add_argument("--methods", nargs="+", default=["mean", "abmil", "tmevolve"])
parser.add_argument("--lrs", nargs="+", type=float, default=[5e-4, 2e-3])
parser.add_argument("--epochs", type=int, default=40)
parser.add_argument("--fold", type=int, default=0)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--out", type=Path, required=True, help="CSV: method, lr, epoch, part (train, heldout), loss; the floors as methods floor_*")
args = parser.parse_args()

cfg = yaml.safe_load(args.config.read_text())["tmevolve"][args.scale]
data = load_prepared(str(args.cohort_dir / "dataset.pt"))
folds = read_csv(args.cohort_dir / "folds.csv", dtype={"slide_id": str})
split = folds[folds.repeat == 0][["slide_id", "fold"]]
concepts = load_concepts(args.cohort_dir.parent / "concepts" / "minilm.npz")
rows = []
for name, value in loss_floors(data, split, args.fold, seed=args.seed).items():
    rows += [{"method": f"floor_{name}", "lr": None, "epoch": None, "part": part, "loss": v} for part, v in value.items()]
    print(f"floor_{name:20s} train {value['train']:.4f} held-out {value['heldout']:.4f}", flush=True)
for method in args.methods:
    for lr in args.lrs:
        curves = learning_curve(method, data, split, args.fold, {**cfg, "lr": lr, "epochs": args.epochs},
                                concept_emb=concepts, seed=args.seed)
        for part, curve in curves.items():
            rows += [{"method": method, "lr": lr, "epoch": e + 1, "part": part, "loss": v} for e, v in enumerate(curve)]
            print(f"{method:10s} lr {lr:g} {part:8s}: " + " ".join(f"{v:.3f}" for v in curve), flush=True)
args.out.parent.mkdir(parents=True, exist_ok=True)
pd.DataFrame(rows).to_csv(args.out, index=False)
