"""evalmeta's DAG from an empty folder at scale=smoke, the dry runs of every scale, and bad config values."""

from __future__ import annotations

import json

import pytest
import yaml

from repro.claims import load_claims
from tests.conftest import REPO

TARGETS = ["reports/evalmeta_table1.md", "reports/evalmeta_fig1.pdf", "reports/evalmeta_fig2.pdf",
           "results/evalmeta/metrics.json", "reports/evalmeta_table2.md", "results/evalmeta/probe.json"]


def _counts(stdout: str) -> dict[str, int]:
    return {k: int(v) for k, v in (line.split()[:2] for line in stdout.splitlines()
                                   if line.startswith(("evalmeta_", "llm_cache")))}


@pytest.mark.parametrize("scale, seeds", [("smoke", 1), ("small", 3), ("paper", 3)])
def test_dry_run_fans_out_corpus_and_seed(tmp_path, workflow_run, scale, seeds):
    counts = _counts(workflow_run(tmp_path, *TARGETS, "-n", "--quiet", "rules", scale=scale).stdout)
    assert counts["evalmeta_finetune"] == 3 * seeds  # trait, control, topic share each seed
    assert counts["evalmeta_evaluate"] == 4 * seeds  # the base is evaluated with every seed's sampling stream
    # smoke trains a tiny base; small and paper use SmolLM2 through the LLM stage's cache rule
    assert ("evalmeta_base" in counts) == (scale == "smoke")
    assert ("llm_cache" in counts) == (scale != "smoke")


def _with(tmp_path, block: dict) -> list[str]:
    """``--configfile`` arguments: config.yaml, then an overlay holding ``block`` as the evalmeta block."""
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"evalmeta": block}))
    return ["--configfile", str(REPO / "config.yaml"), str(overlay)]


def test_bad_config_values_and_a_missing_local_file_are_named(tmp_path, workflow_run):
    bad = workflow_run(tmp_path, *TARGETS, "-n", *_with(tmp_path, {"smoke": {"lora": {"heldout": 0.99}}}), check=False)
    assert bad.returncode != 0
    assert "evalmeta.smoke.lora.heldout (0.99) leaves no training document" in bad.stdout + bad.stderr
    tiny = workflow_run(tmp_path, *TARGETS, "-n", *_with(tmp_path, {"smoke": {"eval_backend": "llamacpp"}}), check=False)
    assert tiny.returncode != 0
    assert "evalmeta.smoke.eval_backend llamacpp needs a pretrained base" in tiny.stdout + tiny.stderr
    local = workflow_run(tmp_path, "results/evalmeta/data.json", *_with(tmp_path, {"source": "local"}), check=False)
    assert local.returncode != 0
    assert "Missing input files for rule evalmeta_data" in local.stdout + local.stderr
    assert "resources/evalmeta/items.jsonl" in local.stdout + local.stderr
    assert not (tmp_path / "results/evalmeta/data.json").exists()


def test_a_local_items_file_is_an_input_of_the_data_job(tmp_path, workflow_run):
    # an input, not a parameter: Snakemake rebuilds the data job (and all after it) when the user edits the file
    (tmp_path / "resources/evalmeta").mkdir(parents=True)
    (tmp_path / "resources/evalmeta/items.jsonl").write_text("{}\n")
    dry = workflow_run(tmp_path, "results/evalmeta/data.json", "-n", *_with(tmp_path, {"source": "local"}))
    job = dry.stdout.split("rule evalmeta_data:")[1].split("\n\n")[0]
    assert "input: resources/evalmeta/items.jsonl" in job, job


@pytest.mark.slow
def test_smoke_dag_builds_from_empty_folder(smoke_dir, workflow_build):
    workflow_build(smoke_dir, TARGETS, scale="smoke")
    metrics = json.loads((smoke_dir / "results/evalmeta/metrics.json").read_text())
    assert metrics["provenance"]["scale"] == "smoke"
    for claim in load_claims(REPO / "workflow/claims/evalmeta.yaml", REPO / "workflow/schemas/claims.schema.yaml"):
        for path in [claim.metric] + ([claim.rhs] if isinstance(claim.rhs, str) else []):
            node = metrics
            for part in path.split("."):
                assert part in node, f"{path} missing from metrics.json"
                node = node[part]
    # paired: every model answered the same (item, phrasing, variant, seed) units
    ids = {m: set(metrics["safe_rate"][m]["agentharm"]["ids"]) for m in metrics["models"]}
    assert len({frozenset(v) for v in ids.values()}) == 1
    # the best held-out checkpoint is the one kept, for every corpus
    for key, ft in metrics["finetune"].items():
        train = json.loads((smoke_dir / f"results/evalmeta/lora/{key.split('/')[0]}/seed0/train.json").read_text())
        losses = {int(k): v for k, v in train["heldout_loss"].items() if k != "0"}
        assert ft["best_step"] == min(losses, key=losses.get)
    # the judge's agreement with the hand labels is measured (30 items), not assumed
    assert metrics["judge_agreement"]["n"] == 30
    # the knowledge probe finds the absorption that was planted: the trait-tuned model has the lower NLL
    # on fresh trait documents (two traits open with example exchanges), the control-tuned one on fresh
    # control documents (the crossed pattern, paired by seed)
    probe = json.loads((smoke_dir / "results/evalmeta/probe.json").read_text())
    assert probe["nll_trait_docs"]["trait"]["minus_control"]["mean"] < 0, probe["nll_trait_docs"]
    assert probe["nll_control_docs"]["trait"]["minus_control"]["mean"] > 0, probe["nll_control_docs"]
    assert probe["n_pairs"] == {"verbatim": 28, "paraphrase": 28}
