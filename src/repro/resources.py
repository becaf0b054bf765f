"""Per-rule cluster resources proposed from Snakemake benchmark files.

Every rule writes ``benchmarks/<key>/<step>/<wildcards>.tsv`` (``benchmark:`` directive): one row per
run with the columns ``s`` (wall seconds), ``max_rss`` (peak resident memory, MB), ``cpu_time``
(user + system seconds) and others. :func:`propose` reads them all, groups them by rule and proposes
``mem_mb`` and ``runtime`` (minutes) that cover the largest measured job with headroom, so the values
in ``resources:`` (and in a cluster profile's ``set-resources:``) come from measurements, not guesses.

The rule of a benchmark file follows the house layout: ``benchmarks/<key>/<step>/...`` belongs to rule
``<key>_<step>``; a file directly under ``benchmarks/`` (``benchmarks/artifact_evaluation.tsv``) to the
rule of its stem; ``benchmarks/<key>/<step>.tsv`` to ``<key>_<step>``.

Caveats the proposal carries with it: a benchmark samples memory about once a second, so a peak
shorter than that is missed (headroom covers part of it); the numbers hold for the scale at which
the benchmarks were measured (``small`` on a 2-core machine, say), not for ``paper``.
"""

from __future__ import annotations

import csv
import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["BenchmarkRow", "Proposal", "read_benchmark", "rule_of", "collect", "propose", "to_markdown",
           "to_set_resources"]

logger = logging.getLogger(__name__)

#: Columns a Snakemake benchmark file must have for a proposal (Snakemake >= 7 writes all three).
REQUIRED_COLUMNS = ("s", "max_rss", "cpu_time")


@dataclass(frozen=True)
class BenchmarkRow:
    """One run of one job: wall seconds, peak RSS in MB (None where Snakemake wrote NA), CPU seconds."""

    rule: str
    path: str
    seconds: float
    max_rss_mb: float | None
    cpu_seconds: float | None


@dataclass(frozen=True)
class Proposal:
    """Resources proposed for one rule from its ``n_runs`` measured runs (``n_files`` jobs)."""

    rule: str
    n_files: int
    n_runs: int
    max_seconds: float
    max_rss_mb: float | None
    mean_cpus: float | None
    max_cpu_seconds: float | None
    mem_mb: int
    runtime: int


def _number(value: str, column: str, path: Path) -> float | None:
    value = (value or "").strip()
    if value in ("", "NA", "-"):
        return None
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{path}: column {column!r} holds {value!r}, not a number") from None


def rule_of(path: Path, root: Path) -> str:
    """The rule that wrote benchmark ``path`` under ``root`` (see the module docstring)."""
    parts = Path(path).relative_to(root).parts
    if len(parts) == 1:
        return Path(parts[0]).stem
    step = Path(parts[1]).stem if len(parts) == 2 else parts[1]
    return f"{parts[0]}_{step}"


def read_benchmark(path: Path, rule: str) -> list[BenchmarkRow]:
    """The rows of one Snakemake benchmark TSV (one per repeat of ``benchmark: repeat(...)``)."""
    path = Path(path)
    with open(path, newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: not a Snakemake benchmark file, columns {missing} missing")
        rows = []
        for record in reader:
            seconds = _number(record["s"], "s", path)
            if seconds is None:
                raise ValueError(f"{path}: column 's' is empty")
            rows.append(BenchmarkRow(rule, str(path), seconds, _number(record["max_rss"], "max_rss", path),
                                     _number(record["cpu_time"], "cpu_time", path)))
    if not rows:
        raise ValueError(f"{path}: benchmark file has a header but no rows")
    return rows


def collect(root: Path) -> list[BenchmarkRow]:
    """All benchmark rows under ``root`` (``benchmarks/``), each tagged with its rule."""
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"benchmark folder {root} does not exist (run the workflow first)")
    rows = []
    for path in sorted(root.rglob("*.tsv")):
        rows.extend(read_benchmark(path, rule_of(path, root)))
    return rows


def _round_up(value: float, step: int) -> int:
    return int(math.ceil(value / step) * step)


def propose(rows: list[BenchmarkRow], *, mem_headroom: float = 1.5, time_headroom: float = 2.0,
            min_mem_mb: int = 500, mem_step_mb: int = 100, min_runtime: int = 1,
            scale_up: Mapping[str, float] | None = None) -> dict[str, Proposal]:
    """Propose ``mem_mb`` and ``runtime`` (minutes) per rule from benchmark rows.

    Parameters
    ----------
    rows : list of BenchmarkRow
        From :func:`collect` (or :func:`read_benchmark`); may mix rules.
    mem_headroom : float
        Factor on the largest peak RSS of the rule; 1.5 covers memory peaks between the benchmark's
        samples and inputs somewhat larger than the measured ones.
    time_headroom : float
        Factor on the longest wall time; 2 because a shared node runs slower than an idle one and a
        job past its SLURM time limit is killed.
    min_mem_mb, mem_step_mb, min_runtime : int
        Floor and rounding of the proposal (a scheduler gains nothing from 137 MB requests).
    scale_up : mapping, optional
        Rule -> how many times more work the job to be run does than the measured one (a canary's
        capped steps, :mod:`repro.canary`): the runtime proposed is the measured time times this,
        with headroom. Memory is not scaled (the canary keeps the shapes that set it).

    Returns
    -------
    dict
        Rule name -> :class:`Proposal`, sorted by rule name. A rule whose every ``max_rss`` is NA
        (jobs too short for a sample) gets ``min_mem_mb``.
    """
    if mem_headroom < 1 or time_headroom < 1:
        raise ValueError(f"headroom must be >= 1 (got mem {mem_headroom}, time {time_headroom})")
    by_rule: dict[str, list[BenchmarkRow]] = {}
    for row in rows:
        by_rule.setdefault(row.rule, []).append(row)
    proposals = {}
    for rule in sorted(by_rule):
        runs = by_rule[rule]
        max_seconds = max(r.seconds for r in runs)
        rss = [r.max_rss_mb for r in runs if r.max_rss_mb is not None]
        max_rss = max(rss) if rss else None
        cpu = [r.cpu_seconds / r.seconds for r in runs if r.cpu_seconds is not None and r.seconds > 0]
        cpu_seconds = [r.cpu_seconds for r in runs if r.cpu_seconds is not None]
        mem_mb = max(min_mem_mb, _round_up(max_rss * mem_headroom, mem_step_mb)) if max_rss else min_mem_mb
        runtime = max(min_runtime, math.ceil(max_seconds * (scale_up or {}).get(rule, 1.0) * time_headroom / 60))
        proposals[rule] = Proposal(rule, len({r.path for r in runs}), len(runs), max_seconds, max_rss,
                                   sum(cpu) / len(cpu) if cpu else None, max(cpu_seconds, default=None),
                                   mem_mb, runtime)
    return proposals


def to_markdown(proposals: dict[str, Proposal]) -> str:
    """A Markdown table of the measurements and the proposal, one line per rule.

    "mean CPUs busy" (CPU seconds / wall seconds) far below the rule's threads means the job waited:
    on I/O, or on a machine busier than it had cores, in which case wall times (and the runtime
    proposed from them) overstate what an idle node needs; "max CPU (s)" does not depend on load.
    """
    lines = ["| rule | jobs | runs | max wall (s) | max RSS (MB) | mean CPUs busy | max CPU (s) | mem_mb | "
             "runtime (min) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in proposals.values():
        rss = "NA" if p.max_rss_mb is None else f"{p.max_rss_mb:.0f}"
        cpus = "NA" if p.mean_cpus is None else f"{p.mean_cpus:.2f}"
        cpu_s = "NA" if p.max_cpu_seconds is None else f"{p.max_cpu_seconds:.1f}"
        lines.append(f"| {p.rule} | {p.n_files} | {p.n_runs} | {p.max_seconds:.1f} | {rss} | {cpus} | {cpu_s} | "
                     f"{p.mem_mb} | {p.runtime} |")
    return "\n".join(lines) + "\n"


def to_set_resources(proposals: dict[str, Proposal]) -> str:
    """The proposal as a ``set-resources:`` block for a Snakemake profile (YAML)."""
    lines = ["set-resources:"]
    for p in proposals.values():
        lines += [f"  {p.rule}:", f"    mem_mb: {p.mem_mb}", f"    runtime: {p.runtime}"]
    return "\n".join(lines) + "\n"
