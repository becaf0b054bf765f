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


def test_a_boolean_on_the_command_line_is_read_in_yaml_spelling(tmp_path):
    """Snakemake reads only True/False as booleans on --config; the schema's type decides the rest."""
    run_snakemake(tmp_path, "-n", "--quiet", "rules", config={"offline": "false"})
    proc = run_snakemake(tmp_path, "-n", "--quiet", "rules", config={"offline": "maybe"}, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "config.offline: 'maybe' is not of type 'boolean'" in out, out[-3000:]
    assert "'description'" not in out  # one line naming the key, not a dump of the schema


def test_a_nested_numeric_override_on_the_command_line_is_applied(tmp_path):
    """Snakemake parses a dict on --config with every scalar a string: '3' is read as the integer 3."""
    run_snakemake(tmp_path, "-n", "--quiet", "rules", config={"driftbench": "{'smoke': {'repetitions': 3}}"})
    proc = run_snakemake(tmp_path, "-n", "--quiet", "rules", config={"driftbench": "{'smoke': {'repetitions': 0}}"},
                         check=False)
    out = proc.stdout + proc.stderr
    # read as the number 0, so the schema's minimum refuses it (a string would be refused for its type)
    assert proc.returncode != 0 and "driftbench.smoke.repetitions: 0 is less than the minimum of 1" in out, out[-3000:]


def test_a_misspelt_global_key_is_named_with_the_key_it_could_be(tmp_path):
    proc = run_snakemake(tmp_path, "-n", config={"scal": "smoke"}, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "unknown key 'scal' (did you mean 'scale'?)" in out, out[-3000:]


def test_a_yaml_syntax_error_in_config_yaml_names_its_line(tmp_path):
    (tmp_path / "config.yaml").write_text("scale: smoke\nseed: 7\n  device: cpu\noffline: true\n")
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--directory",
                           str(tmp_path), "--cores", "1", "-n"], capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "config.yaml, line 3, column 9: mapping values are not allowed here" in out, \
        out[-3000:]


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
    """The house rule: every rule has log, benchmark, threads, resources (mem_mb, runtime) and conda.

    Rules defined in a loop (``rule:`` with a ``name:`` directive) count too; ``**SMALL_JOB`` (common.smk)
    supplies mem_mb and runtime."""
    common = (REPO / "workflow/rules/common.smk").read_text()
    assert re.search(r'^SMALL_JOB = \{"mem_mb": \d+, "runtime": \d+\}', common, re.M)
    blocks = {}
    for smk in sorted((REPO / "workflow/rules").glob("*.smk")):
        for chunk in re.split(r"^(?=[ \t]*(?:checkpoint|rule)\b[^:\n]*:)", smk.read_text(), flags=re.M)[1:]:
            head = re.match(r"[ \t]*(?:checkpoint|rule)[ \t]*(\w*)[ \t]*:", chunk)
            name = head.group(1) or re.search(r"name:\s*(f?\"[^\"]+\")", chunk).group(1)
            blocks[name] = chunk.replace("**SMALL_JOB", "mem_mb=, runtime=")
    assert "artifact_evaluation" in blocks and "mcpo_safety" in blocks
    required = ["log:", "benchmark:", "threads:", "resources:", "mem_mb=", "runtime=", "conda:"]
    incomplete = {name: [d for d in required if d not in body] for name, body in blocks.items()}
    assert not {k: v for k, v in incomplete.items() if v}, f"rules missing directives: {incomplete}"
