"""The MDA-DD DAG: resolved with each data source, and built whole at scale=smoke from an empty folder."""

import json

import numpy as np
import pandas as pd
import pytest

from repro.claims import evaluate, interval_rows, load_claims
from repro.data import fixtures
from repro.papers.mdadd.experiment import corpus_for_source
from tests.conftest import REPO

TARGETS = ["reports/mdadd_table1.md", "reports/mdadd_fig1.pdf", "reports/mdadd_fig2.pdf", "reports/mdadd_fig3.pdf",
           "results/mdadd/metrics.json"]
IMAGES = "resources/mdadd/flickr30k/flickr30k-images"
ARCHIVE = "{url: 'http://127.0.0.1:9/caption_datasets.zip', sha256: " + "a" * 64 + "}"


def test_remote_source_resolves_to_a_fetch_of_its_dataset(tmp_path, workflow_run):
    """With ``source: remote`` the features of flickr30k come from mdadd_fetch.

    A wildcard constraint that another rule file sets for the whole workflow (``dataset=[a-z_]+``)
    once made "flickr30k" unmatchable here; the mdadd rules constrain their own wildcards.
    """
    overlay = tmp_path / "remote.yaml"
    overlay.write_text(f"mdadd: {{source: remote, smoke: {{data: {{archives: [{ARCHIVE}]}}}}}}\n")
    proc = workflow_run(tmp_path, "-n", "--configfile", str(REPO / "config.yaml"), str(overlay), "--", *TARGETS)
    out = proc.stdout + proc.stderr
    assert "rule mdadd_fetch:" in out and "resources/mdadd/flickr30k/dataset_flickr30k.json" in out
    assert "results/mdadd/features/flickr30k.h5" in out and "rule mdadd_corpus:" not in out


def _remote_overlay(tmp_path, www, url, images=fixtures.flickr30k_images_tar_gz):
    """A config overlay: source remote, at smoke, from archives in the real layout served at ``url``."""
    archives = ", ".join(f"{{url: '{url}/{path.name}', sha256: {fixtures.sha256(path)}}}"
                         for path in (fixtures.caption_datasets_zip(www), images(www)))
    overlay = tmp_path / "remote.yaml"
    overlay.write_text(f"mdadd: {{source: remote, smoke: {{data: {{archives: [{archives}]}}}}}}\n")
    return overlay


@pytest.mark.slow
def test_remote_fetch_leaves_only_declared_outputs_that_the_features_job_accepts(tmp_path, served, workflow_run):
    """The real archives' layout (split files of three datasets in one zip, the images in a .tar.gz folder):
    the dataset's folder ends with the JSON, the image folder and their sidecars only, and they pass what the
    features job does first, its sidecar check included (Snakemake puts a flag file into a directory() output
    after the job that wrote it; that must not change the folder's sha256)."""
    www, url = served
    workdir = tmp_path / "run"
    ds = workdir / "resources/mdadd/flickr30k"
    workflow_run(workdir, "--configfile", str(REPO / "config.yaml"), str(_remote_overlay(tmp_path, www, url)), "--",
                 f"{IMAGES}.sha256")
    assert sorted(p.name for p in ds.iterdir()) == ["dataset_flickr30k.json", "dataset_flickr30k.json.sha256",
                                                    "flickr30k-images", "flickr30k-images.sha256"]
    corpus = corpus_for_source("remote", json_path=ds / "dataset_flickr30k.json", image_root=ds / "flickr30k-images")
    assert len(corpus.image_paths) == len(fixtures.FLICKR30K_IMAGES)


@pytest.mark.slow
def test_a_remote_fetch_that_fails_midway_unpacking_leaves_no_image_folder(tmp_path, served, workflow_run):
    """The image archive breaks after three of its six images are unpacked: the job fails naming the archive,
    and no image folder (half-filled or not) and no other leftover of the fetch lies in the dataset's folder."""
    www, url = served
    workdir = tmp_path / "run"
    overlay = _remote_overlay(tmp_path, www, url, images=fixtures.flickr30k_images_zip_damaged_midway)
    proc = workflow_run(workdir, "--configfile", str(REPO / "config.yaml"), str(overlay), "--",
                        "resources/mdadd/flickr30k/flickr30k-images.sha256", check=False)
    ds = workdir / "resources/mdadd/flickr30k"
    left = sorted(str(p.relative_to(ds)) for p in ds.rglob("*")) if ds.exists() else []
    assert left == [], left
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and f"{url}/flickr30k-images.zip: cannot unpack" in out, out[-3000:]


@pytest.mark.parametrize("archives, message", [
    ("[]", "mdadd.smoke.data.archives is empty"),
    ("[{url: 'http://127.0.0.1:9/caption_datasets.zip'}]", "mdadd.smoke.data.archives.0: 'sha256' is a required"),
    ("[{url: 'http://127.0.0.1:9/caption_datasets.zip', sha256: null}]", "mdadd.smoke.data.archives.0.sha256"),
])
def test_remote_archives_without_a_checksum_or_none_at_all_are_refused_by_name(tmp_path, workflow_run, archives,
                                                                              message):
    """Refused before any job runs, naming the preset key; never a download accepted unverified, nor
    "the archives did not contain ..." after an empty list downloaded nothing."""
    overlay = tmp_path / "remote.yaml"
    overlay.write_text(f"mdadd: {{source: remote, smoke: {{data: {{archives: {archives}}}}}}}\n")
    proc = workflow_run(tmp_path, "-n", "--configfile", str(REPO / "config.yaml"), str(overlay), "--", *TARGETS,
                        check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and message in out, out[-3000:]


@pytest.mark.slow
def test_smoke_dag_builds_table_figures_and_metrics(smoke_dir, workflow_run):
    tmp_path = smoke_dir  # shared with the whole-workflow tests (the AE report reuses these builds)
    workflow_run(tmp_path, *TARGETS)
    for t in TARGETS:
        assert (tmp_path / t).is_file(), t
    table = pd.read_csv(tmp_path / "reports/mdadd_table1.csv")
    methods = ["random", "herding", "covmatch", "lors", "mdadd_noqueue", "mdadd"]
    assert set(table["method"]) == set(methods) | {"full"}
    assert sorted(table.loc[table["method"] == "mdadd", "pairs"]) == [10, 20]  # smoke sizes
    metrics = json.loads((tmp_path / "results/mdadd/metrics.json").read_text())
    full = metrics["recall"]["full"]
    (n_full,) = full
    # smoke: 80 test images x 2 captions; chance TR@1 = 2/160 captions ~ 1.3 %, chance IR@1 = 1/80 ~ 1.3 %.
    # students trained on all 320 real pairs must retrieve far above chance (measured about 50 %).
    assert full[n_full]["TR@1"]["mean"] > 10 and full[n_full]["IR@1"]["mean"] > 10
    assert metrics["cost"]["max_rel_diff"] < 1e-5  # SOCM's Gram form and the full moment agree
    assert metrics["provenance"]["scale"] == "smoke"
    gap = pd.read_csv(tmp_path / "results/mdadd/init_gap.csv")
    assert {"mdadd", "mdadd_noqueue", "covmatch", "lors"} <= set(gap["method"])  # methods that see students
    assert "random" not in set(gap["method"])
    ev = metrics["evidence"]  # the claims' per-unit samples, paired by unit (distillation seed x unseen init)
    assert ev["mdadd_tr1_smallest"]["ids"] == ev["best_baseline_tr1_smallest"]["per_unit"]["ids"] == ["s0i0", "s0i1"]
    assert ev["gap_r1_mdadd"]["ids"] == ev["gap_r1_noqueue"]["ids"]
    assert metrics["cost"]["per_repeat"]["slope_socm"]["ids"] == ["r0", "r1"]
    claims = load_claims(REPO / "workflow/claims/mdadd.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    results = evaluate(claims, tmp_path / "results/mdadd/metrics.json")
    assert all(r.status in ("PASS", "FAIL", "INCONCLUSIVE") for r in results)  # every claim's metric exists
    # the figures draw each claim's quantity with the interval it is decided on: the aggregate's table holds
    # interval_rows of metrics.json to the last bit (at smoke, one distillation seed: no interval, the estimate kept)
    table = pd.read_csv(tmp_path / "results/mdadd/claim_intervals.csv", float_precision="round_trip")
    want = pd.DataFrame(interval_rows(claims, metrics))
    assert list(table["claim"]) == list(want["claim"])
    np.testing.assert_array_equal(table[["estimate", "low", "high"]].to_numpy(float),
                                  want[["estimate", "low", "high"]].to_numpy(float))
    fig1 = pd.read_csv(tmp_path / "reports/mdadd_fig1.csv")
    drawn = fig1[fig1["panel"] == "claim"].set_index("claim")
    assert list(drawn.index) == ["tr1_beats_baselines_100", "ir1_beats_baselines_100",
                                 "hundred_pairs_match_baselines_at_500", "hundred_pairs_match_baselines_at_500_noninferior"]
    assert drawn["low"].isna().all() and drawn["interval"].str.startswith("none").all()
    fig2 = pd.read_csv(tmp_path / "reports/mdadd_fig2.csv")
    assert "queue_reduces_init_overfitting" in set(fig2["claim"].dropna())
    fig3 = pd.read_csv(tmp_path / "reports/mdadd_fig3.csv")  # the cost claim, from the same timings as metrics.json's
    (cost,) = fig3[fig3["panel"] == "claim"].itertuples()
    (verdict,) = [r for r in results if r.claim.id == "socm_cost_scales_better"]
    assert cost.claim == "socm_cost_scales_better" and cost.status == verdict.status and cost.n == 2
