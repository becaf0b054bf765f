"""The workflow as a whole: config validation, dry-runs at every scale, lint, the AE report."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
import yaml

from conftest import REPO, run_snakemake
from repro.config import workflow_config


def test_unknown_scale_is_rejected_naming_the_key(tmp_path):
    proc = run_snakemake(tmp_path, "-n", scale="huge", check=False)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "scale" in out and "huge" in out


def test_wrong_type_is_rejected_naming_the_key(tmp_path):
    proc = run_snakemake(tmp_path, "-n", config={"seed": "abc"}, check=False)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "seed" in out and "abc" in out


def test_unknown_top_level_key_is_rejected(tmp_path):
    cfg = workflow_config(REPO)
    cfg["sclae"] = "smoke"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(cfg))
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(bad), check=False)
    assert proc.returncode != 0 and "sclae" in proc.stdout + proc.stderr


def test_a_wrong_type_inside_a_paper_preset_names_paper_and_scale(tmp_path):
    """Every paper block is checked against its own schema, at every scale, on every run."""
    cfg = workflow_config(REPO)
    papers = [k for k in cfg if isinstance(cfg[k], dict) and (REPO / f"workflow/schemas/{k}.schema.yaml").exists()]
    if not papers:
        pytest.skip("no paper block in config.yaml yet")
    key = papers[0]
    schema = yaml.safe_load((REPO / f"workflow/schemas/{key}.schema.yaml").read_text())
    numeric = next(name for name, spec in schema["properties"].items() if spec.get("type") in ("integer", "number"))
    cfg[key]["paper"][numeric] = "lots"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(cfg))
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(bad), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert f"{key}.paper" in out and "lots" in out


@pytest.mark.parametrize("scale", ["smoke", "small", "paper"])
def test_dry_run_of_everything(tmp_path, scale):
    proc = run_snakemake(tmp_path, "-n", "--quiet", "rules", scale=scale)
    assert "artifact_evaluation" in proc.stdout


def test_lint_is_clean():
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--lint", "--configfile", str(REPO / "config.yaml")],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Congratulations" in proc.stdout + proc.stderr


def test_every_rule_declares_log_benchmark_resources_and_conda():
    """The house rule: every rule has log, benchmark, threads, resources (mem_mb, runtime) and conda."""
    blocks = {}
    for smk in sorted((REPO / "workflow/rules").glob("*.smk")):
        for chunk in re.split(r"^(?=(?:checkpoint|rule) \w+:)", smk.read_text(), flags=re.M)[1:]:
            name = re.match(r"(?:checkpoint|rule) (\w+):", chunk).group(1)
            blocks[name] = chunk
    assert "artifact_evaluation" in blocks
    required = ["log:", "benchmark:", "threads:", "resources:", "mem_mb=", "runtime=", "conda:"]
    incomplete = {name: [d for d in required if d not in body] for name, body in blocks.items()}
    assert not {k: v for k, v in incomplete.items() if v}, f"rules missing directives: {incomplete}"
