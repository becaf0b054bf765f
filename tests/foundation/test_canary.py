"""repro.canary: the caps a paper's canary merges over its paper preset, and the work ratio that scales runtime."""

import pytest

from repro.canary import REAL_PATHS, Fixture, load_canaries, mode, overlay, real_paths, scale_up
from tests.conftest import REPO

SCHEMA = REPO / "workflow/schemas/canary.schema.yaml"


@pytest.mark.parametrize(("value", "expected"), [(False, None), ("false", None), (True, "paper"), ("true", "paper"),
                                                 ("True", "paper"), ("smoke", "smoke")])
def test_mode_reads_the_command_lines_words(value, expected):
    assert mode(value) == expected


def test_an_unknown_mode_is_refused_by_name():
    with pytest.raises(ValueError, match="config.canary: 'yes please' is not one of"):
        mode("yes please")


def test_scale_up_is_the_product_of_ratios_and_a_slash_divides():
    preset = {"n_replicates": 1000, "n_chunks": 10, "train": {"steps": 2000}, "seeds": [0, 1, 2, 3]}
    capped = {"n_replicates": 1, "n_chunks": 1, "train": {"steps": 5}, "seeds": [0]}
    assert scale_up(preset, capped, []) == 1.0
    assert scale_up(preset, capped, ["n_replicates", "/n_chunks"]) == pytest.approx(100.0)
    assert scale_up(preset, capped, ["train.steps"]) == pytest.approx(400.0)
    assert scale_up(preset, capped, ["seeds"]) == pytest.approx(4.0)  # a list counts as its length


def test_scale_up_names_a_missing_path_and_refuses_a_zero():
    with pytest.raises(ValueError, match="no value at 'train.epochs'"):
        scale_up({"train": {}}, {"train": {}}, ["train.epochs"])
    with pytest.raises(ValueError, match="positive"):
        scale_up({"steps": 10}, {"steps": 0}, ["steps"])


def test_smoke_caps_go_over_the_paper_caps(tmp_path):
    (tmp_path / "demo.yaml").write_text(
        "demo:\n  why: fewer steps\n  caps: {train: {steps: 5, batch: 64}, seeds: 1}\n  smoke: {train: {batch: 4}}\n")
    canaries = load_canaries(tmp_path, ["demo", "other"], SCHEMA)
    assert list(canaries) == ["demo"]  # a block without a file has no canary
    assert overlay(canaries, "paper") == {"demo": {"paper": {"train": {"steps": 5, "batch": 64}, "seeds": 1}}}
    assert overlay(canaries, "smoke") == {"demo": {"paper": {"train": {"steps": 5, "batch": 4}, "seeds": 1}}}


def test_a_canary_file_must_name_its_block_and_match_the_schema(tmp_path):
    (tmp_path / "demo.yaml").write_text("other:\n  why: x\n  caps: {}\n")
    with pytest.raises(ValueError, match=r"demo.yaml: a canary file holds exactly one block named after the file \(demo:\)"):
        load_canaries(tmp_path, ["demo"], SCHEMA)
    (tmp_path / "demo.yaml").write_text("demo:\n  caps: {steps: 1}\n  scale_up: {demo_train: steps}\n")
    with pytest.raises(ValueError, match="demo"):
        load_canaries(tmp_path, ["demo"], SCHEMA)


def test_every_canary_file_of_the_workflow_is_valid_and_its_ratios_resolve():
    import yaml

    from repro.config import workflow_config

    listed = yaml.safe_load((REPO / "workflow/papers.yaml").read_text())
    blocks = [*listed["stages"], *(p["key"] for p in listed["papers"])]
    canaries = load_canaries(REPO / "workflow/canary", blocks, SCHEMA)
    assert canaries, "no canary files"
    presets = workflow_config(REPO)
    for which in ("paper", "smoke"):
        capped = workflow_config(REPO, overlay(canaries, which))
        for key, canary in canaries.items():
            for rule, paths in canary["scale_up"].items():
                assert rule.startswith(f"{key}_"), f"{key}'s canary scales rule {rule} of another block"
                factor = scale_up(presets[key]["paper"], capped[key]["paper"], paths, f"{key}.{rule}")
                assert which == "smoke" or factor >= 1.0, f"{key}'s canary does more work in {rule} than its paper preset"


# -- the real-data paths: each fixture is one its loader accepts --------------------------------------------------

def _fetched_images(run, tmp_path, block, *path, mode="RGB"):
    from repro.data.image_folder import fetch_image_set

    spec = run.config[block]["paper"]
    for part in path:
        spec = spec[part]
    return fetch_image_set(spec["url"], spec["sha256"], tmp_path / "fetched.npz", size=spec.get("image_size", 16),
                           mode=mode)


def _collapse(run, work, tmp_path, smoke):
    from repro.data.image_folder import read_npz
    from repro.papers.collapse.neural import NeuralConfig, check_pool, prepare_pool

    images = read_npz(_fetched_images(run, tmp_path, "collapse", "neural", "remote", mode="L"))
    cfg = NeuralConfig()
    _, pool_y = prepare_pool(images.x, images.y, images.classes, cfg)
    check_pool(pool_y, cfg.class_weights, 200 if smoke else 1350)  # the smoke canary's n, the paper preset's


def _driftbench(run, work, tmp_path, smoke):
    from repro.papers.driftbench.experiment import aggregate, read_release

    briefs, transcripts, scores, published, _ = read_release(run.config["driftbench"]["release_dir"])
    metrics, *_ = aggregate(transcripts, scores, briefs, sorted({t["metadata"]["model_id"] for t in transcripts}),
                            published)
    assert metrics["published_max_abs_diff"] == 0.0  # the summary the fixture wrote is the one recomputed


def _evalmeta(run, work, tmp_path, smoke):
    from repro.papers.evalmeta.suites import COLUMNS, load_items

    items = load_items(str(work / "resources/evalmeta/items.jsonl"))
    assert {i["column"] for i in items} == set(COLUMNS) and {i["phrasing"] for i in items} == {"eval", "deploy"}


def _mdadd(run, work, tmp_path, smoke):
    from repro.data.karpathy import fetch_dataset, load_karpathy

    ds = tmp_path / "flickr30k"
    members = [ds / "dataset_flickr30k.json", ds / "flickr30k-images"]
    fetch_dataset(run.config["mdadd"]["paper"]["data"]["archives"], ds, members)
    corpus = load_karpathy(*members)
    assert (corpus.split == "train").sum() > (20 if smoke else 500)  # past the canary's largest set distilled


def _mdadd_local(run, work, tmp_path, smoke):
    from repro.data.karpathy import load_karpathy

    ds = work / "resources/mdadd/flickr30k"  # the preset's default paths
    corpus = load_karpathy(ds / "dataset_flickr30k.json", ds / "flickr30k-images")
    assert (corpus.split == "train").sum() > (20 if smoke else 500)


def _modellens(run, work, tmp_path, smoke):
    from repro.data.fetch import fetch_url
    from repro.papers.modellens.real import read_real

    remote = run.config["modellens"]["remote"]
    real = read_real(fetch_url(remote["url"], tmp_path / "dump.csv", sha256=remote["sha256"]))
    assert len(real.models) == 120 and len(real.datasets) == 24


def _opinion(run, work, tmp_path, smoke):
    from repro.data.fetch import fetch_url
    from repro.papers.opinion.graphs import load_edge_list

    remote = run.config["opinion"]["paper"]["remote"]
    graph = load_edge_list(fetch_url(remote["url"], tmp_path / "edges.csv", sha256=remote["sha256"]))
    assert graph.n == (40 if smoke else 1000)


def _toolgap(run, work, tmp_path, smoke):
    from repro.papers.toolgap.synth import load_truthfulqa

    assert len(load_truthfulqa(work / "resources/toolgap/TruthfulQA.csv")) == (40 if smoke else 100)


def _m2le(run, work, tmp_path, smoke):
    from repro.papers.m2le.synth import make_sequence

    remote = run.config["m2le"]["paper"]["sequences"]["remote"]
    path = _fetched_images(run, tmp_path, "m2le", "sequences", "remote")
    seq = make_sequence("remote", remote["n_tasks"], seed=0, path=path, classes_per_task=remote["classes_per_task"])
    assert len(seq.tasks) == remote["n_tasks"]


def _munkey(run, work, tmp_path, smoke):
    from repro.papers.munkey.synth import make_regime

    path = _fetched_images(run, tmp_path, "munkey", "remote")
    n_images = 300 if smoke else 5000  # the remote regime subsamples the preset's n_images
    regime = make_regime("remote", 0, path=str(path), n_images=n_images)
    assert len(regime.y_train) + len(regime.y_test) == n_images and regime.n_classes == 10


def _rlqgrad(run, work, tmp_path, smoke):
    assert run.config == {}  # its only source is scikit-learn's bundled data


def _wsi(run, work, tmp_path, smoke):
    from repro.wsi.cohort import fetch_slide, read_remote_manifest
    from repro.wsi.reader import open_slide

    manifest = run.config["wsi"]["paper"]["remote"]["manifest"]
    rows = read_remote_manifest(manifest)
    assert set(rows.subtype) == {0, 1} and set(rows.event) == {0, 1}
    with open_slide(fetch_slide(manifest, rows.slide_id.iloc[0], tmp_path / "slide.svs")) as slide:
        assert slide.mpp == pytest.approx(0.499)


READERS = {"collapse": _collapse, "driftbench": _driftbench, "evalmeta": _evalmeta, "mdadd": _mdadd,
           "mdadd_local": _mdadd_local, "modellens": _modellens, "opinion": _opinion, "toolgap": _toolgap,
           "m2le": _m2le, "munkey": _munkey, "rlqgrad": _rlqgrad, "wsi": _wsi}


def test_every_real_data_path_has_a_reader_check():
    assert sorted(READERS) == real_paths()


@pytest.mark.parametrize("smoke", [True, False], ids=["smoke", "paper"])
@pytest.mark.parametrize("name", real_paths())
def test_each_real_data_fixture_is_accepted_by_its_loader(name, smoke, tmp_path):
    """What the canary writes for a path, read by the loader its jobs call, with the checksum it is served with,
    and large enough for what the canary's preset asks of it."""
    from repro.data.fixtures import serve_folder

    served, work = tmp_path / "served", tmp_path / "work"
    served.mkdir()
    work.mkdir()
    with serve_folder(served) as url:
        run = REAL_PATHS.get(name)(Fixture(REPO, served, url, work, smoke))
        assert run.source in ("remote", "local") and run.reads
        READERS[name](run, work, tmp_path, smoke)


def test_a_run_of_one_part_keeps_what_the_other_part_recorded(tmp_path):
    from repro.canary import record

    cost = {"jobs": 3, "cpu_s": 1.0, "wall_s": 2.0, "peak_rss_mb": 100.0}
    record(tmp_path, "smoke", papers={"cmcboot": {"exit": 0, **cost}}, rules={})
    report = record(tmp_path, "smoke", real={"opinion": {"exit": 1, "block": "opinion", "source": "remote",
                                                          "reads": "an edge list", "log_tail": "ValueError: bad", **cost}})
    assert list(report["papers"]) == ["cmcboot"] and list(report["real"]) == ["opinion"]
    report = record(tmp_path, "smoke", papers={"gtp": {"exit": 0, **cost}}, rules={})
    assert list(report["papers"]) == ["gtp"] and list(report["real"]) == ["opinion"]
    md = (tmp_path / "canary.md").read_text()
    assert "| gtp | 0 |" in md and "| opinion | 1 |" in md and "## real-data path opinion failed" in md
    assert "ValueError: bad" in md


def test_a_paper_without_a_real_data_path_says_why_on_its_page():
    """Every paper reads real data through the canary's real-data paths (its own, or the WSI stage's through
    the paper that reads it), or its page's Real data section says its block accepts only synthetic data."""
    import re

    import yaml

    covered = {name.split("_")[0] for name in real_paths()} | {"tmevolve"}  # the WSI path builds paper_tmevolve
    for paper in yaml.safe_load((REPO / "workflow/papers.yaml").read_text())["papers"]:
        if paper["key"] in covered:
            continue
        page = (REPO / f"docs/papers/{paper['key']}.md").read_text()
        section = re.search(r"^## Real data\n(.*?)(?=^## |\Z)", page, re.M | re.S)
        words = " ".join(section.group(1).split()) if section else ""
        assert f"`{paper['key']}.source` accepts only `synthetic`" in words, paper["key"]


def test_the_names_the_real_data_fixtures_use_are_the_papers_own():
    from repro.canary import DRIFTBENCH_CONDITIONS, EVALMETA_COLUMNS
    from repro.papers.driftbench.harness import CONDITIONS
    from repro.papers.evalmeta.suites import COLUMNS

    assert DRIFTBENCH_CONDITIONS == CONDITIONS and EVALMETA_COLUMNS == COLUMNS
