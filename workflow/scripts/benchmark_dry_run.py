"""Benchmark: wall and CPU time of `snakemake -n` over every target (parse, validate, build the DAG).

    python workflow/scripts/benchmark_dry_run.py [--scale smoke] [--repeats 5]

Every Snakemake call (and every cluster job) pays the parse time, so rule files import only light
modules at parse time. Prints one JSON line: median and min wall seconds, median CPU seconds of the
snakemake process and its children, and the number of jobs in the DAG. Run it on an idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def one_run(workdir: str, scale: str) -> tuple[float, float, int]:
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory", workdir, "-n",
           "--configfile", str(REPO / "config.yaml"), "--cores", "1", "--config", f"scale={scale}"]
    before = os.times()
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    total = re.search(r"^total\s+(\d+)", proc.stdout, re.M)
    return wall, cpu, int(total.group(1)) if total else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="smoke", choices=["smoke", "small", "paper"])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workdir:
        runs = [one_run(workdir, args.scale) for _ in range(args.repeats)]
    walls, cpus, jobs = zip(*runs)
    print(json.dumps({"scale": args.scale, "repeats": args.repeats, "wall_s_median": round(statistics.median(walls), 2),
                      "wall_s_min": round(min(walls), 2), "cpu_s_median": round(statistics.median(cpus), 2),
                      "jobs": jobs[0], "load_avg_1min": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
