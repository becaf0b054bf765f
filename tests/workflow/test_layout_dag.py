"""The DAG in the house layout: each rule sees only its part of the preset, and every data source resolves.

- Editing a figure-only key (``tmevolve.<scale>.figure.slide_index``) must reschedule the figure
  job and nothing upstream: rules receive only the part of the preset they use, so the training
  jobs' params do not change (Snakemake reruns a job whose params changed).
- With ``source: remote`` a block's DAG resolves (no global wildcard constraint of another paper
  forbids its names), or is refused with an error naming ``<key>.source`` where the block has no
  remote data.
- A job that writes under ``reports/`` (a figure, table or report) takes the log of every job whose
  output it reads (``logs_of`` in rules/common.smk), and reads nothing under ``results/`` or
  ``resources/`` that no job writes: Snakemake removes a failed job's outputs but keeps its log, so
  the figure command sees that the aggregate under its figure failed.
"""

from __future__ import annotations

import re

import pytest
import yaml

from tests.conftest import REPO, run_snakemake, scheduled_rules
from repro.config import workflow_config

CONFIG = workflow_config(REPO)
PAPERS = yaml.safe_load((REPO / "workflow/papers.yaml").read_text())
BLOCKS = [k for k in [*PAPERS["stages"], *(p["key"] for p in PAPERS["papers"])] if k in CONFIG]
#: Blocks with a real remote loader: their DAG must resolve (given what a remote source needs).
REMOTE = {"mdadd", "wsi"}
REMOTE_SETTINGS = {"mdadd": {"smoke": {"data": {"archives": [
    {"url": "http://127.0.0.1:9/caption_datasets.zip", "sha256": "a" * 64}]}}}}


def _overlay(tmp_path, block: dict, name: str = "overlay.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(block))
    return str(path)


@pytest.mark.slow
def test_a_figure_only_key_reschedules_only_the_figure(smoke_dir, tmp_path):
    run_snakemake(smoke_dir, "reports/tmevolve_fig3.pdf", timeout=1800)
    index = CONFIG["tmevolve"]["smoke"]["figure"]["slide_index"]
    overlay = _overlay(tmp_path, {"tmevolve": {"smoke": {"figure": {"slide_index": index + 1}}}})
    proc = run_snakemake(smoke_dir, "-n", "reports/tmevolve_fig3.pdf", "--configfile", str(REPO / "config.yaml"),
                         overlay)
    assert scheduled_rules(proc.stdout) == {"tmevolve_fig3"}, proc.stdout[-3000:]


@pytest.mark.parametrize("key", BLOCKS)
def test_every_block_resolves_with_a_remote_source_or_refuses_it_by_name(tmp_path, key):
    overlay = _overlay(tmp_path, {key: {"source": "remote", **REMOTE_SETTINGS.get(key, {})}})
    proc = run_snakemake(tmp_path, "-n", "--quiet", "rules", "--configfile", str(REPO / "config.yaml"), overlay,
                         check=False)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        assert key not in REMOTE, out[-3000:]
        assert f"{key}.source is 'remote'" in out, out[-3000:]
    else:
        assert "artifact_evaluation" in out


def dry_run_jobs(stdout: str) -> list[dict[str, object]]:
    """Each job of a dry run's listing: its rule and its input, output and log files."""
    jobs = []
    for block in re.split(r"^(?=(?:local)?rule \w+:$)", stdout, flags=re.M):
        head = re.match(r"(?:local)?rule (\w+):$", block, re.M)
        if not head:
            continue
        job = {"rule": head.group(1)}
        for field in ("input", "output", "log"):
            line = re.search(rf"^    {field}: (.*)$", block, re.M)
            job[field] = line.group(1).split(", ") if line else []
        jobs.append(job)
    return jobs


def reports_missing_upstream_logs(jobs: list[dict[str, object]]) -> list[str]:
    """Jobs writing under reports/ that read a job's output without its log, or a file no job writes."""
    producer = {path: job for job in jobs for path in [*job["output"], *job["log"]]}
    problems = []
    for job in jobs:
        if job["rule"] == "artifact_evaluation" or not any(p.startswith("reports/") for p in job["output"]):
            continue  # the AE report reads every figure and table: their logs stand for the aggregates'
        for path in job["input"]:
            source = producer.get(path)
            if source is None:
                if path.startswith(("results/", "resources/", "reports/", "logs/")):
                    problems.append(f"{job['rule']} reads {path}, which no job writes")
            elif path not in source["log"] and not set(source["log"]) <= set(job["input"]):
                problems.append(f"{job['rule']} reads {path} without its log {source['log']} (upstream_logs)")
    return problems


def test_every_figure_and_table_depends_on_the_logs_of_the_jobs_it_reads(tmp_path):
    proc = run_snakemake(tmp_path, "-n", "--forceall")
    jobs = dry_run_jobs(proc.stdout)
    assert len(jobs) > 100 and any(j["rule"] == "cmcboot_fig1" for j in jobs)
    assert reports_missing_upstream_logs(jobs) == []
