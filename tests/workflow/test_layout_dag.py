"""The DAG in the house layout: each rule sees only its part of the preset, and every data source resolves.

- Editing a figure-only key (``tmevolve.<scale>.figure.slide_index``) must reschedule the figure
  job and nothing upstream: rules receive only the part of the preset they use, so the training
  jobs' params do not change (Snakemake reruns a job whose params changed).
- With ``source: remote`` a block's DAG resolves (no global wildcard constraint of another paper
  forbids its names), or is refused with an error naming ``<key>.source`` where the block has no
  remote data.
"""

from __future__ import annotations


import pytest
import yaml

from tests.conftest import REPO, run_snakemake, scheduled_rules
from repro.config import workflow_config

CONFIG = workflow_config(REPO)
PAPERS = yaml.safe_load((REPO / "workflow/papers.yaml").read_text())
BLOCKS = [k for k in [*PAPERS["stages"], *(p["key"] for p in PAPERS["papers"])] if k in CONFIG]
#: Blocks with a real remote loader: their DAG must resolve.
REMOTE = {"mdadd", "wsi"}


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
    overlay = _overlay(tmp_path, {key: {"source": "remote"}})
    proc = run_snakemake(tmp_path, "-n", "--quiet", "rules", "--configfile", str(REPO / "config.yaml"), overlay,
                         check=False)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        assert key not in REMOTE, out[-3000:]
        assert f"{key}.source is 'remote'" in out, out[-3000:]
    else:
        assert "artifact_evaluation" in out
