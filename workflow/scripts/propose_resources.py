"""Propose mem_mb and runtime per rule from the benchmark files of a finished run.

    python workflow/scripts/propose_resources.py                    # benchmarks/ of this folder, a table
    python workflow/scripts/propose_resources.py run/benchmarks --format yaml >> my-profile/config.yaml

A command-line tool (not a Snakemake job): the logic is repro.resources; see its docstring for the
headroom and the caveats.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))  # the checkout's library first
from repro.resources import collect, propose, to_markdown, to_set_resources

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("benchmarks", nargs="?", default="benchmarks", type=Path, help="benchmark folder")
parser.add_argument("--format", choices=("markdown", "yaml"), default="markdown",
                    help="a table, or a set-resources: block for a Snakemake profile")
parser.add_argument("--mem-headroom", type=float, default=1.5, help="factor on the peak RSS")
parser.add_argument("--time-headroom", type=float, default=2.0, help="factor on the longest wall time")
args = parser.parse_args()
try:
    proposals = propose(collect(args.benchmarks), mem_headroom=args.mem_headroom, time_headroom=args.time_headroom)
except ValueError as err:
    sys.exit(f"propose_resources: {err}")
sys.stdout.write(to_markdown(proposals) if args.format == "markdown" else to_set_resources(proposals))
