"""The paper-scale canary in the workflow: where its caps sit, that it keeps every job type, that it runs."""

import json
import subprocess
import sys

import pytest
import yaml

from repro.canary import REAL_PATHS, Fixture, load_canaries, real_paths
from tests.conftest import REPO, job_counts, run_snakemake, scheduled_rules

LISTED = yaml.safe_load((REPO / "workflow/papers.yaml").read_text())
PAPERS = [p["key"] for p in LISTED["papers"]]
CANARIES = load_canaries(REPO / "workflow/canary", [*LISTED["stages"], *PAPERS], REPO / "workflow/schemas/canary.schema.yaml")
TARGETS = [f"paper_{k}" for k in PAPERS]


def test_every_paper_has_a_canary():
    assert sorted(set(PAPERS) - set(CANARIES)) == []


def test_a_canary_is_refused_in_the_checkout():
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--config", "canary=true", "--", "paper_cmcboot"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "a canary's capped runs are not the paper's results" in proc.stdout + proc.stderr


def test_the_caps_sit_over_the_preset_and_under_the_users_values(tmp_path):
    plain = run_snakemake(tmp_path, "-n", "paper_cmcboot", scale="paper").stdout
    capped = run_snakemake(tmp_path, "-n", "paper_cmcboot", scale="paper", config={"canary": "true"}).stdout
    user = run_snakemake(tmp_path, "-n", "paper_cmcboot", scale="paper",
                         config={"canary": "true", "cmcboot": "{'paper': {'n_chunks': 2}}"}).stdout
    # the paper preset's 10 chunks per setting, the canary's 1, the user's 2 over the canary's
    jobs = [job_counts(out)["cmcboot_intervals"] for out in (plain, capped, user)]
    assert jobs[0] > 10 * jobs[1] and jobs[2] == 2 * jobs[1]


def test_each_canary_keeps_every_job_type_of_its_paper_preset(tmp_path):
    full = scheduled_rules(run_snakemake(tmp_path, "-n", *TARGETS, scale="paper", timeout=600).stdout)
    for which in ("true", "smoke"):
        capped = scheduled_rules(run_snakemake(tmp_path, "-n", *TARGETS, scale="paper", config={"canary": which},
                                               timeout=600).stdout)
        assert sorted(full - capped) == [], f"canary={which} leaves out these rules of the paper presets"
        assert sorted(capped - full) == [], f"canary={which} adds rules the paper presets do not run"


#: The papers whose smoke canary CI runs: the smoke canary of all 19 costs about an hour of one core, more than
#: the suite's budget allows, so CI runs a sample that crosses the kinds of code a paper preset adds (a shipped
#: pretrained language model, a pretrained text encoder, numerical settings at their largest) and the whole set
#: runs on demand: python -m repro.canary --smoke.
CI_SAMPLE = ["cmcboot", "modellens", "toolgap", "incrimination"]


@pytest.mark.timeout(1800)
def test_the_smoke_canary_runs(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "repro.canary", "--smoke", "--folder", str(tmp_path), "--cores", "1",
                           "--papers", *CI_SAMPLE], cwd=REPO, capture_output=True, text=True, timeout=1800)
    results = json.loads((tmp_path / "smoke/canary.json").read_text())
    failed = {k: r.get("log_tail", "") for k, r in results["papers"].items() if r["exit"] != 0}
    assert proc.returncode == 0 and not failed, f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}\n{failed}"
    assert sorted(results["papers"]) == sorted(CI_SAMPLE)


#: The real-data paths whose smoke canary CI runs: a released folder read in place (driftbench, about 10 CPU-s)
#: and a file fetched from 127.0.0.1 and checked by its sha256 (modellens, about 45 CPU-s), the two cheapest of the
#: two kinds; all twelve cost about 25 minutes of one core, so they run on demand: python -m repro.canary --real
#: --smoke.
CI_REAL_SAMPLE = ["driftbench", "modellens"]


@pytest.mark.timeout(1200)
def test_the_real_data_smoke_canary_runs(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "repro.canary", "--real", "--smoke", "--folder", str(tmp_path),
                           "--cores", "1", "--papers", *CI_REAL_SAMPLE], cwd=REPO, capture_output=True, text=True,
                          timeout=1200)
    results = json.loads((tmp_path / "smoke/canary.json").read_text())
    failed = {k: r.get("log_tail", "") for k, r in results["real"].items() if r["exit"] != 0}
    assert proc.returncode == 0 and not failed, f"{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}\n{failed}"
    assert sorted(results["real"]) == sorted(CI_REAL_SAMPLE) and results["papers"] == {}
    assert all(r["jobs"] > 0 for r in results["real"].values())
    assert "## Real-data paths" in (tmp_path / "smoke/canary.md").read_text()


#: The rule of each real-data path that reads (or fetches) its data: in the DAG the path's configuration resolves to.
REAL_READERS = {"collapse": "collapse_neural_data", "driftbench": "driftbench_release", "evalmeta": "evalmeta_data",
                "m2le": "m2le_fetch", "mdadd": "mdadd_fetch", "mdadd_local": "mdadd_features",
                "modellens": "modellens_fetch", "munkey": "munkey_fetch", "opinion": "opinion_fetch",
                "rlqgrad": "rlqgrad_data", "toolgap": "toolgap_data", "wsi": "wsi_fetch"}


@pytest.mark.parametrize("name", real_paths())
def test_each_real_data_path_resolves_at_the_paper_canary(name, tmp_path):
    """The configuration each real-data path writes (real.yaml), over the paper canary's caps: a DAG (dry run)
    that reads the fixture; the generated data's rule is gone where the real data replace it."""
    from repro.data.fixtures import serve_folder

    work, served = tmp_path / "work", tmp_path / "served"
    served.mkdir(parents=True)
    with serve_folder(served) as url:
        run = REAL_PATHS.get(name)(Fixture(REPO, served, url, work, True))
    overlay = tmp_path / "real.yaml"
    overlay.write_text(yaml.safe_dump(run.config))
    proc = run_snakemake(work, "-n", "--configfile", str(REPO / "config.yaml"), str(overlay), "--",
                         run.target or f"paper_{run.block}", scale="paper", config={"canary": "true"})
    rules = scheduled_rules(proc.stdout)
    assert REAL_READERS[name] in rules, sorted(rules)
    if name.startswith("mdadd"):
        assert "mdadd_corpus" not in rules
