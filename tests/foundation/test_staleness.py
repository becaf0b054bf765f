"""What a paper's verdicts depend on, a published report's staleness, and the published report itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repro.claims import main as claims_main
from repro.claims import read_claim_file
from repro.provenance import git_commit
from repro.publish import publish
import subprocess

from repro.staleness import (BANNER_END, BANNER_START, adopt_unchanged, banner, fingerprint, is_report_file, mark,
                             paper_inputs, stale)
from tests.conftest import REPO


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


@pytest.fixture
def tree(tmp_path) -> Path:
    """Two papers: ``a`` imports a shared module (absolutely, through its package), ``b`` lazily and
    relatively, and reads the ``wsi`` stage; nothing imports ``repro.unused``."""
    _write(tmp_path, {
        "config.yaml": "seed: 1\n",
        "workflow/schemas/claims.schema.yaml": "{}\n",
        "src/repro/__init__.py": "",
        "src/repro/claims.py": "from repro.io import x\n",
        "src/repro/io.py": "x = 1\n",
        "src/repro/unused.py": "",
        "src/repro/stats/__init__.py": "",
        "src/repro/stats/boot.py": "import numpy\n",
        "src/repro/stats/other.py": "",
        "src/repro/papers/__init__.py": "",
        "src/repro/papers/a/__init__.py": "",
        "src/repro/papers/a/experiment.py": "from repro.stats import boot\n",
        "src/repro/papers/b/__init__.py": "",
        "src/repro/papers/b/experiment.py": "def f():\n    from ...stats.other import y\n    return y\n",
        "workflow/rules/a.smk": "rule a_x:\n    output: 'results/a/m.json'\n",
        "workflow/rules/b.smk": "rule b_x:\n    input: 'results/wsi/c/bags.h5'\n",
        "workflow/rules/wsi.smk": "rule wsi_x:\n    output: 'results/wsi/c/bags.h5'\n",
        "workflow/presets/a.yaml": "a: {}\n",
        "workflow/claims/a.yaml": "paper: a\n",
        "workflow/scripts/a/run.py": "from repro.papers.a.experiment import boot\n",
    })
    return tmp_path


def test_inputs_follow_imports_transitively_and_name_the_stages_a_paper_reads(tree):
    a = paper_inputs("a", tree)
    assert {"workflow/rules/a.smk", "workflow/presets/a.yaml", "workflow/claims/a.yaml", "workflow/scripts/a/run.py",
            "src/repro/papers/a/experiment.py", "src/repro/stats/boot.py", "src/repro/stats/__init__.py",
            "src/repro/__init__.py", "src/repro/claims.py", "src/repro/io.py", "config.yaml",
            "workflow/schemas/claims.schema.yaml"} <= set(a)
    assert "src/repro/stats/other.py" not in a and "workflow/rules/wsi.smk" not in a
    assert "src/repro/unused.py" not in a and not any("papers/b" in p for p in a)
    b = paper_inputs("b", tree)  # a relative import inside a function, and the stage it reads
    assert {"src/repro/stats/other.py", "workflow/rules/wsi.smk"} <= set(b) and "src/repro/stats/boot.py" not in b
    with pytest.raises(FileNotFoundError, match="no rule file"):
        paper_inputs("nope", tree)


def test_a_stage_named_only_by_a_papers_code_is_an_input_and_a_record_without_it_adopts_it_if_unchanged(tree):
    """A paper whose rule file reads a stage's output through a path its grid module builds (the language-model
    cache: ``resources/llm/<name>/...``) depends on that stage's files. A fingerprint recorded before that was
    seen gains the stage's files only where they are the same at the build's commit as now."""
    _write(tree, {"src/repro/papers/a/grid.py": "PRETRAINED = 'resources/llm/{name}/model.safetensors'\n",
                  "workflow/rules/llm.smk": "rule llm_cache:\n    output: 'resources/llm/{name}/model.safetensors'\n"})
    assert "workflow/rules/llm.smk" in paper_inputs("a", tree)
    git = ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "built"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    recorded = {k: v for k, v in fingerprint("a", tree).items() if k != "workflow/rules/llm.smk"}
    assert stale({"a": recorded}, tree) == {"a": ["added workflow/rules/llm.smk"]}
    assert adopt_unchanged("a", recorded, commit, tree) == fingerprint("a", tree)  # the same file as at the build
    (tree / "workflow/rules/llm.smk").write_text("rule llm_cache:\n    output: 'resources/llm/{name}/other'\n")
    assert "workflow/rules/llm.smk" not in adopt_unchanged("a", recorded, commit, tree)  # changed since: stays stale


def test_figure_and_table_code_is_left_out_unless_verdict_code_imports_it(tree):
    _write(tree, {"src/repro/papers/a/figures.py": "from repro.unused import z\n",
                  "workflow/scripts/a/fig1.py": "from repro.papers.a.figures import z\n",
                  "workflow/scripts/a/table2.py": "", "workflow/scripts/a/ablation_table.py": ""})
    inputs = paper_inputs("a", tree)
    assert not any(p.endswith(("figures.py", "fig1.py", "table2.py", "ablation_table.py", "unused.py")) for p in inputs)
    assert "src/repro/staleness.py" not in paper_inputs("cmcboot", REPO)  # the --stale command judges no claim
    (tree / "workflow/scripts/a/run.py").write_text("from repro.papers.a.figures import z\n")  # verdict code draws on it
    assert {"src/repro/papers/a/figures.py", "src/repro/unused.py"} <= set(paper_inputs("a", tree))


def test_no_papers_verdicts_depend_on_figure_code():
    """A verdict is read from what an aggregate computes, never from how a figure is drawn: were a paper's
    verdict code to import its figures (or the shared style), every change to a figure would mark its
    published verdicts stale."""
    import yaml

    keys = [p["key"] for p in yaml.safe_load((REPO / "workflow/papers.yaml").read_text())["papers"]]
    drawn = {key: [f for f in paper_inputs(key, REPO) if f.startswith("src/repro/figures/")
                   or (f.startswith(("src/repro/papers/", "workflow/scripts/")) and is_report_file(f))] for key in keys}
    assert not {k: v for k, v in drawn.items() if v}, drawn


def test_stale_names_exactly_the_papers_whose_inputs_changed(tree):
    before = {k: fingerprint(k, tree) for k in ("a", "b")}
    assert stale(before, tree) == {}
    (tree / "src/repro/stats/boot.py").write_text("import numpy as np\n")
    assert stale(before, tree) == {"a": ["changed src/repro/stats/boot.py"]}
    (tree / "workflow/rules/wsi.smk").write_text("rule wsi_x:\n    output: 'results/wsi/c/other.h5'\n")
    (tree / "src/repro/papers/b/experiment.py").write_text("from repro.unused import z\n")
    found = stale(before, tree)
    assert found["b"] == ["changed src/repro/papers/b/experiment.py", "changed workflow/rules/wsi.smk",
                          "added src/repro/unused.py", "removed src/repro/stats/__init__.py",
                          "removed src/repro/stats/other.py"]
    (tree / "src/repro/io.py").write_text("x = 2\n")  # what judges every claim
    assert set(stale(before, tree)) == {"a", "b"}


def test_banner_and_stale_command_agree_and_mark_rewrites_only_the_banner(tree, capsys):
    results = tree / "docs/results"
    results.mkdir(parents=True)
    build = {"commit": "0123456789abcdef", "papers": {k: {"fingerprint": fingerprint(k, tree)} for k in ("a", "b")}}
    (results / "build.json").write_text(json.dumps(build))
    (results / "README.md").write_text(f"# Report\n\n{BANNER_START}\nold\n{BANNER_END}\n\nthe table\n")
    assert mark(results, tree) and "**Current**" in (results / "README.md").read_text()
    assert claims_main(["--stale", "--repo", str(tree)]) == 0 and "current" in capsys.readouterr().out
    (tree / "workflow/presets/a.yaml").write_text("a: {n: 2}\n")
    assert claims_main(["--stale", "--repo", str(tree), "--mark"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("a: stale (1 inputs differ from commit 0123456789ab): changed workflow/presets/a.yaml")
    page = (results / "README.md").read_text()
    assert "**Stale for 1 of 2 papers**" in page and "- `a` (built at `0123456789ab`): workflow/presets/a.yaml" in page
    assert page.endswith("\n\nthe table\n") and page.count(BANNER_START) == 1
    assert not mark(results, tree)  # idempotent


def test_stale_without_a_published_report_says_how_to_make_one(tree, capsys):
    assert claims_main(["--stale", "--repo", str(tree)]) == 2
    assert "python -m repro.publish" in capsys.readouterr().out


_BENCH = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _built(build: Path, key: str, *, scale: str = "smoke", extra: dict[str, str] | None = None) -> None:
    """A build folder holding paper ``key`` as a build leaves it: metrics, benchmarks, a figure with its CSV."""
    _write(build, {
        f"results/{key}/metrics.json": json.dumps({"provenance": {"scale": scale}}),
        f"results/{key}/model.pt": "weights, not evidence",
        f"benchmarks/{key}/fit/s1.tsv": _BENCH + "2.5\t0:00:02\t120.0\t1\t1\t1\t0\t0\t50\t2.0\n",
        f"benchmarks/{key}/figure.tsv": _BENCH + "1.5\t0:00:01\t90.0\t1\t1\t1\t0\t0\t50\t1.0\n",
        f"reports/{key}_fig1.pdf": "%PDF-1.4 not rendered\n", f"reports/{key}_fig1.csv": "x,y\n1,2\n",
        f"reports/{key}_table1.md": "| a |\n|---|\n", **(extra or {}),
    })


def test_publish_records_commit_costs_verdicts_and_fingerprints(tmp_path):
    build = tmp_path / "build"
    _built(build, "cmcboot")
    to = tmp_path / "published"
    if git_commit(REPO)["dirty"]:  # a report of uncommitted code names no commit it is true of
        with pytest.raises(ValueError, match="uncommitted"):
            publish(build, to, REPO)
    record = publish(build, to, REPO, allow_dirty=True)
    assert len(record["commit"]) == 40 and list(record["papers"]) == ["cmcboot"]
    paper = record["papers"]["cmcboot"]
    assert paper["scale"] == "smoke" and paper["targets"] == ["reports/cmcboot_fig1.pdf", "reports/cmcboot_table1.md"]
    assert paper["cost"] | {"source": ""} == {"jobs": 2, "cpu_s": 3.0, "wall_s": 4.0, "peak_rss_mb": 120.0, "source": ""}
    ids = [c.id for c in read_claim_file(REPO / "workflow/claims/cmcboot.yaml", REPO / "workflow/schemas/claims.schema.yaml").claims]
    assert list(paper["claims"]) == ids and set(paper["claims"].values()) == {"NOT RUN"}  # no metric in the file
    assert paper["fingerprint"] == fingerprint("cmcboot", REPO)
    page = (to / "README.md").read_text()
    assert banner(json.loads((to / "build.json").read_text()), REPO) in page and "**Current**" in page
    assert "1 of 19 papers published" in page and "Not published yet" in page
    # the evidence, laid out as in the build; what no verdict or figure reads (a model's weights) left behind
    evidence = to / "evidence"
    assert sorted(str(p.relative_to(evidence)) for p in evidence.rglob("*") if p.is_file()) == [
        "benchmarks/cmcboot/figure.tsv", "benchmarks/cmcboot/fit/s1.tsv", "reports/cmcboot_fig1.csv",
        "reports/cmcboot_fig1.pdf", "reports/cmcboot_table1.md", "results/cmcboot/metrics.json"]
    report = (to / "artifact_evaluation.md").read_text()
    assert "[cmcboot_fig1.pdf](evidence/reports/cmcboot_fig1.pdf)" in report and '<a id="cmcboot"></a>' in report
    assert "Papers built: 1 of 19" in report and "href='evidence/reports/cmcboot_fig1.csv'" in (to / "artifact_evaluation.html").read_text()


def test_papers_published_one_by_one_make_one_report_and_a_republished_paper_replaces_its_evidence(tmp_path):
    first, second = tmp_path / "monday", tmp_path / "tuesday"
    _built(first, "cmcboot", extra={"reports/cmcboot_fig2.pdf": "%PDF old figure\n"})
    _built(second, "groupfdr")
    to = tmp_path / "published"
    publish(first, to, REPO, allow_dirty=True)
    record = publish(second, to, REPO, allow_dirty=True)
    assert list(record["papers"]) == ["cmcboot", "groupfdr"]  # the registry's order
    assert "Papers built: 2 of 19" in (to / "artifact_evaluation.md").read_text()
    assert record["total"]["jobs"] == 4
    _built(first, "cmcboot")
    (first / "reports/cmcboot_fig2.pdf").unlink()  # the rebuilt paper no longer draws it
    publish(first, to, REPO, allow_dirty=True, papers=["cmcboot"])
    assert not (to / "evidence/reports/cmcboot_fig2.pdf").exists() and (to / "evidence/reports/groupfdr_fig1.pdf").exists()
    assert publish(None, to, REPO, allow_dirty=True)["papers"].keys() == {"cmcboot", "groupfdr"}  # rewritten as is


def test_publish_refuses_a_paper_built_from_other_inputs_than_the_commit(tmp_path):
    """A build that moved across commits (python -m repro.timedbuild) is published only where each paper's
    recorded inputs are the published commit's, and only once it is complete."""
    build = tmp_path / "build"
    _built(build, "cmcboot")
    now = fingerprint("cmcboot", REPO)
    (build / "costs.json").write_text(json.dumps({"cmcboot": {"cpu_s": 1.0, "fingerprint": now, "complete": True,
                                                              "commit": "f" * 40}}))
    record = publish(build, tmp_path / "ok", REPO, allow_dirty=True)
    paper = record["papers"]["cmcboot"]
    assert paper["cost"]["measured"] == {"cpu_s": 1.0} and paper["commit"] == "f" * 40  # the commit it was built at
    changed = dict(now, **{"src/repro/papers/cmcboot/__init__.py": "0" * 16})
    (build / "costs.json").write_text(json.dumps({"cmcboot": {"cpu_s": 1.0, "fingerprint": changed, "complete": True}}))
    with pytest.raises(ValueError, match="cmcboot was built from other inputs.*changed src/repro/papers/cmcboot/__init__.py"):
        publish(build, tmp_path / "refused", REPO, allow_dirty=True)
    (build / "costs.json").write_text(json.dumps({"cmcboot": {"cpu_s": 1.0, "fingerprint_started": now, "complete": False}}))
    with pytest.raises(ValueError, match="cmcboot is not complete"):
        publish(build, tmp_path / "refused", REPO, allow_dirty=True)
    assert not (tmp_path / "refused").exists()


def test_a_paper_whose_inputs_changed_since_it_was_built_is_cleared_for_a_rebuild(tree):
    from repro.timedbuild import changed_inputs, clear_outputs

    entry = {"complete": True, "fingerprint": fingerprint("a", tree)}
    assert changed_inputs("a", tree, entry) == []
    (tree / "src/repro/stats/boot.py").write_text("import numpy as np\n")  # a module a imports
    assert changed_inputs("a", tree, entry) == ["changed src/repro/stats/boot.py"]
    assert changed_inputs("a", tree, {"complete": False}) == []  # nothing recorded: it resumes as it is
    started = {"complete": False, "fingerprint_started": entry["fingerprint"]}  # its first jobs ran the old code
    assert changed_inputs("a", tree, started) == ["changed src/repro/stats/boot.py"]
    _write(tree, {"results/a/m.json": "{}", "benchmarks/a/x.tsv": "", "reports/a_fig1.pdf": "", "reports/ab_fig1.pdf": "",
                  "results/b/m.json": "{}"})
    assert clear_outputs(tree, ["a"]) == ["results/a", "benchmarks/a", "reports/a_fig1.pdf"]
    assert (tree / "results/b/m.json").exists() and (tree / "reports/ab_fig1.pdf").exists()


PUBLISHED = REPO / "docs/results"


@pytest.mark.skipif(not (PUBLISHED / "build.json").is_file(), reason="no report has been published yet")
def test_the_published_report_matches_the_claim_files_and_says_whether_it_is_stale():
    build = json.loads((PUBLISHED / "build.json").read_text())
    changed = stale({k: p["fingerprint"] for k, p in build["papers"].items()}, REPO)
    for key, paper in build["papers"].items():
        if key in changed:  # the banner says so; its claims may have changed since
            continue
        claims = read_claim_file(REPO / f"workflow/claims/{key}.yaml", REPO / "workflow/schemas/claims.schema.yaml")
        assert sorted(paper["claims"]) == sorted(c.id for c in claims.claims), f"{key}: the published claim ids differ"
    assert banner(build, REPO) in (PUBLISHED / "README.md").read_text(), (
        "the published page's banner is out of date: run python -m repro.claims --stale --mark")
