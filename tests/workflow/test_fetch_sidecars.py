"""Every fetch or cache job declares the sha256 sidecar it writes, and every job that reads its file declares the
sidecar beside it (so the job checks it first: :func:`repro.data.sidecar.verify_inputs`, or the reader function).

Each case is a dry run of one data path, with the configuration that turns it on; nothing is downloaded.
"""

from __future__ import annotations

import re

import pytest
import yaml

from tests.conftest import REPO

SHA = "ab" * 32
URL = "http://127.0.0.1:9"


def _jobs(stdout: str) -> list[tuple[str, list[str], list[str]]]:
    """(rule, inputs, outputs) of every job a dry run lists."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:\n)", stdout):
        head = re.match(r"(?:local)?rule (\w+):\n", block)
        if head is None:
            continue
        fields = dict(re.findall(r"^    (input|output): (.*)$", block, re.M))
        jobs.append((head.group(1), *(fields.get(k, "").split(", ") for k in ("input", "output"))))
    return jobs


def _wsi_manifest(tmp_path) -> dict:
    manifest = tmp_path / "manifest.csv"
    manifest.write_text(f"slide_id,url,filename,sha256\ncmu1,{URL}/cmu1.svs,cmu1.svs,{SHA}\n")
    return {"wsi": {"smoke": {"remote": {"cohort": "demo", "manifest": str(manifest)}}}}


# key: (overlay, targets, the fetch or cache rule, the file it writes, the rules that read the file)
CASES = {
    "wsi": (_wsi_manifest, ["results/wsi/demo/features/efficientnet_lite0/cmu1.h5"], "wsi_fetch",
            "resources/wsi/demo/slides/cmu1.svs", {"wsi_tissue", "wsi_patch", "wsi_features"}),
    "m2le": (lambda tmp: {"m2le": {"smoke": {"sequences": {"remote": {
                 "n_tasks": 2, "classes_per_task": 2, "image_size": 8, "url": f"{URL}/set.tar.gz", "sha256": SHA}}}}},
             ["results/m2le/runs/remote/seed0.json"], "m2le_fetch", "results/m2le/data/remote.npz",
             {"m2le_pretrain", "m2le_run"}),
    "collapse": (lambda tmp: {}, ["results/collapse/metrics.json"], "collapse_neural_data",
                 "results/collapse/neural/data.npz", {"collapse_neural"}),
    "modellens": (lambda tmp: {"modellens": {"source": "remote", "remote": {"url": f"{URL}/dump.csv", "sha256": SHA},
                                             "smoke": {"text_encoder": "hashing", "ks": [3], "main_k": 3}}},
                  ["results/modellens/metrics.json", "reports/modellens_ablations.md"], "modellens_fetch",
                  "resources/modellens/remote/leaderboard.csv",
                  {"modellens_embed", "modellens_run", "modellens_ablation"}),
    "opinion": (lambda tmp: {"opinion": {"source": "remote", "smoke": {"remote": {"url": f"{URL}/edges.csv",
                                                                                    "sha256": SHA}}}},
                ["results/opinion/metrics.json"], "opinion_fetch", "resources/opinion/remote/edges.csv",
                {"opinion_train"}),
    "mdadd": (lambda tmp: {"mdadd": {"source": "remote", "smoke": {"data": {"archives": [
                  {"url": f"{URL}/caption_datasets.zip", "sha256": SHA}]}}}},
              ["results/mdadd/features/flickr30k.h5"], "mdadd_fetch",
              "resources/mdadd/flickr30k/dataset_flickr30k.json", {"mdadd_features"}),
    # the cache is a folder, read by name through repro.llm.load, which checks it (tests/llm)
    "llm": (lambda tmp: {}, ["resources/llm/smollm2-135m/model.safetensors"], "llm_cache",
            "resources/llm/smollm2-135m/model.safetensors", set()),
}
SIDECARS = {"llm": "resources/llm/smollm2-135m.sha256"}


@pytest.mark.parametrize("key", CASES)
def test_fetch_jobs_declare_their_sidecar_and_readers_take_it(key, tmp_path, workflow_run):
    overlay, targets, fetch, written, readers = CASES[key]
    path = tmp_path / "overlay.yaml"
    path.write_text(yaml.safe_dump(overlay(tmp_path)))
    proc = workflow_run(tmp_path / "work", "-n", "--configfile", str(REPO / "config.yaml"), str(path), "--",
                        *targets)
    jobs = _jobs(proc.stdout)
    sidecar = SIDECARS.get(key, f"{written}.sha256")
    fetched = [outputs for rule, _, outputs in jobs if rule == fetch]
    assert fetched and all(written in out and sidecar in out for out in fetched), (fetch, fetched, proc.stdout[-3000:])
    reading = {(rule, tuple(inputs)) for rule, inputs, _ in jobs if written in inputs}
    assert {rule for rule, _ in reading} == readers, reading
    assert all(sidecar in inputs for _, inputs in reading), reading


def test_the_mdadd_image_folder_is_declared_with_its_own_sidecar(tmp_path, workflow_run):
    """source: remote unpacks a folder of images as well as the JSON: the folder and its sidecar are outputs of the
    fetch (the folder a directory(), so Snakemake removes it when the job fails) and inputs of the features job."""
    overlay, targets, *_ = CASES["mdadd"]
    path = tmp_path / "overlay.yaml"
    path.write_text(yaml.safe_dump(overlay(tmp_path)))
    jobs = _jobs(workflow_run(tmp_path / "work", "-n", "--configfile", str(REPO / "config.yaml"), str(path), "--",
                              *targets).stdout)
    for written in ("resources/mdadd/flickr30k/flickr30k-images", "resources/mdadd/flickr30k/flickr30k-images.sha256"):
        assert [rule for rule, _, outputs in jobs if written in outputs] == ["mdadd_fetch"], (written, jobs)
        assert [rule for rule, inputs, _ in jobs if written in inputs] == ["mdadd_features"], (written, jobs)


def test_an_mdadd_image_folder_the_archives_cannot_fill_is_refused_by_name(tmp_path, workflow_run):
    overlay = CASES["mdadd"][0](tmp_path)
    overlay["mdadd"]["smoke"]["data"]["images"] = "resources/elsewhere/images"
    path = tmp_path / "overlay.yaml"
    path.write_text(yaml.safe_dump(overlay))
    proc = workflow_run(tmp_path / "work", "-n", "--configfile", str(REPO / "config.yaml"), str(path), "--",
                        *CASES["mdadd"][1], check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "mdadd.smoke.data.images (resources/elsewhere/images) is not under" in out, out[-2000:]
