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
- No job upstream of a verdict (a JSON under ``results/<key>/``) runs a figure or table script: the
  reason ``repro.staleness`` leaves those out of what a paper's verdicts depend on.
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
REMOTE = {"mdadd"}  # wsi refuses any source: the target's cohort chooses its slides
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


@pytest.fixture(scope="module")
def every_job(tmp_path_factory) -> list[dict[str, object]]:
    """Every job of the whole workflow at smoke, from a forced dry run."""
    proc = run_snakemake(tmp_path_factory.mktemp("dag"), "-n", "--forceall")
    jobs = dry_run_jobs(proc.stdout)
    assert len(jobs) > 100 and any(j["rule"] == "cmcboot_fig1" for j in jobs)
    return jobs


def test_every_figure_and_table_depends_on_the_logs_of_the_jobs_it_reads(every_job):
    assert reports_missing_upstream_logs(every_job) == []


def rule_scripts() -> dict[str, str]:
    """``{rule: script path}`` of every rule file's ``script:`` directive (snakefmt's layout)."""
    out = {}
    for path in (REPO / "workflow/rules").glob("*.smk"):
        for block in re.split(r"^(?=rule \w+:$)", path.read_text(), flags=re.M):
            head = re.match(r"rule (\w+):$", block, re.M)
            script = re.search(r"^    script:\n\s+\"([^\"]+)\"", block, re.M)
            if head and script:
                out[head.group(1)] = script.group(1)
    return out


def test_no_job_upstream_of_a_verdict_runs_a_report_script(every_job):
    """The premise of leaving figure and table code out of what a paper's verdicts depend on
    (repro.staleness.is_report_file): no job that the verdicts read from (every results/<key>/*.json,
    metrics.json first) runs such a script, and none writes a JSON under results/."""
    from repro.staleness import is_report_file

    scripts = rule_scripts()
    assert scripts["cmcboot_fig1"].endswith("cmcboot/fig1.py") and is_report_file(scripts["cmcboot_fig1"])
    producer = {path: job for job in every_job for path in job["output"]}
    todo = [job for job in every_job if any(re.fullmatch(r"results/\w+/[^/]+\.json", o) for o in job["output"])]
    seen, upstream = set(), []
    while todo:
        job = todo.pop()
        if id(job) in seen:
            continue
        seen.add(id(job))
        upstream.append(job)
        todo += [producer[i] for i in job["input"] if i in producer]
    assert any(j["rule"] == "cmcboot_aggregate" for j in upstream)
    assert sorted({j["rule"] for j in upstream if is_report_file(scripts.get(j["rule"], ""))}) == []
    # nor does one write a JSON under results/, the files claims read
    writes_json = sorted({j["rule"] for j in every_job if is_report_file(scripts.get(j["rule"], ""))
                          and any(o.startswith("results/") and o.endswith(".json") for o in j["output"])})
    assert writes_json == []
