"""source: remote: a manifest-driven download of a real slide, served from 127.0.0.1.

Every download is checked: a manifest row without sha256 or md5 is refused before anything is fetched unless the
config opts out (``wsi.<scale>.remote.allow_unverified``), and a wrong checksum leaves nothing where a later job
would read it.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from pathlib import Path

import pytest
import yaml

import repro.data.fetch
from repro.data.fetch import FetchError, partial_path
from repro.data.fixtures import serve_folder
from repro.data.sidecar import read_sidecar
from repro.wsi.cohort import cohort_slides, fetch_slide, read_remote_manifest, slide_path, write_remote_labels
from repro.wsi.reader import open_slide
from tests.conftest import REPO

CMU = "cmu-1-small-region.svs"
SLIDE_BYTES = b"not a slide: the fetch itself never opens it\n" * 100


@pytest.fixture
def served_slide(tmp_path):
    """The CMU fixture shipped with the tests, served over HTTP from a local folder: ``(url, sha256)``."""
    src = REPO / "tests" / "data" / "wsi" / CMU
    root = tmp_path / "www"
    root.mkdir()
    shutil.copy(src, root / CMU)
    with serve_folder(root) as url:
        yield f"{url}/{CMU}", hashlib.sha256(src.read_bytes()).hexdigest()


@pytest.fixture
def served_bytes(served):
    """A small file served as ``s1.svs`` (the fetch does not read the slide): its URL."""
    root, url = served
    (root / "s1.svs").write_bytes(SLIDE_BYTES)
    return f"{url}/s1.svs"


@pytest.fixture
def no_download(monkeypatch):
    """Every call to the fetcher, recorded and refused: a test that expects none asserts the list is empty."""
    calls = []

    def refuse(url, *args, **kwargs):
        calls.append(url)
        raise AssertionError(f"{url} was fetched")

    monkeypatch.setattr(repro.data.fetch, "fetch_url", refuse)
    return calls


def _manifest(path: Path, url: str, sha: str) -> Path:
    path.write_text("slide_id,url,filename,sha256,survival_months,event,subtype,subtype_name,gene_expr\n"
                    f"cmu1,{url},{CMU},{sha},12.5,1,0,demo,6.1\n")
    return path


def test_fetch_checks_the_manifest_checksum(served_slide, tmp_path):
    url, sha = served_slide
    man = _manifest(tmp_path / "m.csv", url, sha)
    dest = tmp_path / "resources" / "cmu1.svs"
    fetch_slide(man, "cmu1", dest)
    assert hashlib.sha256(dest.read_bytes()).hexdigest() == sha
    with open_slide(dest) as s:
        assert s.mpp == pytest.approx(0.499)
    bad = _manifest(tmp_path / "bad.csv", url, "0" * 64)
    dest2 = tmp_path / "resources" / "bad.svs"
    with pytest.raises(FetchError, match="sha256 mismatch"):
        fetch_slide(bad, "cmu1", dest2)
    assert not dest2.exists() and not partial_path(dest2).exists()


@pytest.mark.parametrize("header", ["slide_id,url,filename", "slide_id,url,filename,sha256,md5"])
def test_a_row_without_checksum_is_refused_before_anything_is_fetched(header, served_bytes, no_download, tmp_path):
    """No checksum column at all, or empty ones: the error names the manifest, the slide and the two ways out."""
    man = tmp_path / "m.csv"
    man.write_text(f"{header}\ns1,{served_bytes},s1.svs{',,' if 'md5' in header else ''}\n")
    dest = tmp_path / "resources" / "s1.svs"
    with pytest.raises(ValueError) as err:
        fetch_slide(man, "s1", dest)
    message = str(err.value)
    assert str(man) in message and "'s1'" in message, message
    assert "sha256" in message and "wsi.<scale>.remote.allow_unverified" in message, message
    assert no_download == [] and not dest.exists() and not partial_path(dest).exists()


def test_the_opt_out_fetches_a_row_without_checksum_and_warns_by_name(served_bytes, tmp_path, caplog):
    man = tmp_path / "m.csv"
    man.write_text(f"slide_id,url,filename\ns1,{served_bytes},s1.svs\n")
    dest = tmp_path / "resources" / "s1.svs"
    with caplog.at_level(logging.WARNING, logger="repro.wsi.cohort"):
        fetch_slide(man, "s1", dest, allow_unverified=True)
    assert dest.read_bytes() == SLIDE_BYTES
    warned = [r.getMessage() for r in caplog.records if r.name == "repro.wsi.cohort" and r.levelno == logging.WARNING]
    assert any("'s1'" in w and "unverified" in w and "allow_unverified" in w for w in warned), warned


def test_a_wrong_md5_leaves_nothing_at_the_destination(served_bytes, tmp_path):
    man = tmp_path / "m.csv"
    man.write_text(f"slide_id,url,filename,md5\ns1,{served_bytes},s1.svs,{'0' * 32}\n")
    dest = tmp_path / "resources" / "s1.svs"
    with pytest.raises(FetchError, match="md5 mismatch"):
        fetch_slide(man, "s1", dest)
    assert not dest.exists() and not partial_path(dest).exists()
    good = man.with_name("good.csv")
    good.write_text(f"slide_id,url,filename,md5\ns1,{served_bytes},s1.svs,{hashlib.md5(SLIDE_BYTES).hexdigest()}\n")
    assert fetch_slide(good, "s1", dest).read_bytes() == SLIDE_BYTES


@pytest.mark.slow
def test_the_fetch_rule_refuses_an_unchecked_row_unless_the_config_opts_out(served_bytes, tmp_path, workflow_run):
    """The opt-out reaches the job from the config the user writes; the slide it fetches gets its sha256 sidecar."""
    man = tmp_path / "m.csv"
    man.write_text(f"slide_id,url,filename\ns1,{served_bytes},s1.svs\n")
    remote = {"cohort": "demo", "manifest": str(man)}
    target = "resources/wsi/demo/slides/s1.svs"
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"wsi": {"smoke": {"remote": remote}}}))
    proc = workflow_run(tmp_path / "work", "--configfile", str(REPO / "config.yaml"), str(overlay),
                        "--", target, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "'s1' has no sha256 or md5" in out, out[-3000:]
    assert not (tmp_path / "work" / target).exists()
    overlay.write_text(yaml.safe_dump({"wsi": {"smoke": {"remote": {**remote, "allow_unverified": True}}}}))
    proc = workflow_run(tmp_path / "work", "--configfile", str(REPO / "config.yaml"), str(overlay), "--", target)
    assert (tmp_path / "work" / target).read_bytes() == SLIDE_BYTES
    assert read_sidecar(tmp_path / "work" / target) == hashlib.sha256(SLIDE_BYTES).hexdigest()
    log = (tmp_path / "work" / "logs/wsi/fetch/demo/s1.svs.log").read_text()
    assert "unverified" in log and "allow_unverified" in log, log


def test_a_cohort_with_unchecked_rows_is_refused_where_its_jobs_are_planned(tmp_path, no_download):
    """Planning the cohort (its slide list, which every job over the whole cohort asks for) names every row
    without a checksum, so that no slide is downloaded before a later one is refused; the opt-out lists them."""
    man = tmp_path / "m.csv"
    rows = "".join(f"s{i},http://127.0.0.1:9/s{i}.svs,s{i}.svs,{'ab' * 32 if i == 0 else ''}\n" for i in range(8))
    man.write_text("slide_id,url,filename,sha256\n" + rows)
    cfg = {"synthetic": {"n_slides": 3}, "remote": {"cohort": "demo", "manifest": "m.csv"}}
    with pytest.raises(ValueError) as err:
        cohort_slides(cfg, "demo", tmp_path)
    message = str(err.value)
    assert "7 slides have no sha256 or md5 ('s1', 's2', 's3', 's4', 's5' and 2 more)" in message, message
    assert str(man) in message and "wsi.<scale>.remote.allow_unverified" in message and no_download == []
    cfg["remote"]["allow_unverified"] = True
    assert cohort_slides(cfg, "demo", tmp_path) == [f"s{i}" for i in range(8)]


@pytest.mark.slow
def test_the_workflow_refuses_an_unchecked_cohort_before_any_job_runs(tmp_path, workflow_run):
    """A dry run of the cohort's bags already fails, naming the slide, with nothing made."""
    man = tmp_path / "m.csv"
    man.write_text("slide_id,url,filename\ns1,http://127.0.0.1:9/s1.svs,s1.svs\n")
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"wsi": {"smoke": {"remote": {"cohort": "demo", "manifest": str(man)}}}}))
    proc = workflow_run(tmp_path / "work", "--configfile", str(REPO / "config.yaml"), str(overlay), "-n",
                        "--", "results/wsi/demo/bags/efficientnet_lite0.h5", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "slide 's1' has no sha256 or md5" in out, out[-3000:]
    assert not (tmp_path / "work/resources").exists() and not (tmp_path / "work/results").exists()


def test_remote_cohort_paths_and_labels(tmp_path):
    man = _manifest(tmp_path / "m.csv", "http://127.0.0.1:9/x.svs", "ab" * 32)
    cfg = {"synthetic": {"n_slides": 3}, "remote": {"cohort": "demo", "manifest": "m.csv"}}
    assert cohort_slides(cfg, "synthetic") == ["S0000", "S0001", "S0002"]
    assert cohort_slides(cfg, "demo", tmp_path) == ["cmu1"]
    assert slide_path(cfg, "demo", "cmu1", tmp_path) == "resources/wsi/demo/slides/cmu1.svs"
    with pytest.raises(ValueError, match="'other'"):
        cohort_slides(cfg, "other", tmp_path)
    write_remote_labels(man, tmp_path / "labels.csv")
    import pandas as pd

    df = pd.read_csv(tmp_path / "labels.csv")
    assert list(df.columns[:6]) == ["slide_id", "survival_months", "event", "subtype", "subtype_name", "gene_expr"]
    assert "url" not in df.columns and df.survival_months.iloc[0] == 12.5


def test_manifest_validation(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text("slide_id,url\na,http://x/a.svs\na,http://x/b.svs\n")
    with pytest.raises(ValueError, match="duplicated slide_id"):
        read_remote_manifest(p)
    p.write_text("slide_id,url,filename\na,http://x/a.zip,a.zip\n")
    with pytest.raises(ValueError, match="unsupported slide extensions"):
        read_remote_manifest(p)
