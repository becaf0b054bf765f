"""source: remote: a manifest-driven download of a real slide, served from 127.0.0.1."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from repro.wsi.cohort import cohort_slides, fetch_slide, read_remote_manifest, slide_path, write_remote_labels
from repro.wsi.reader import open_slide
from tests.conftest import serve_folder

CMU = "cmu-1-small-region.svs"


@pytest.fixture
def served_slide(request, tmp_path):
    """The CMU fixture served over HTTP from a local folder: ``(url, sha256)``."""
    pytest.importorskip("repro.data.fetch", reason="repro.data.fetch (the lead's generic fetcher) is not on this branch yet")
    shared = Path(os.environ["REPRO_SHARED_DIR"]) if os.environ.get("REPRO_SHARED_DIR") else request.getfixturevalue("shared_dir")
    src = shared / "data" / "wsi" / CMU
    if not src.is_file():
        pytest.skip(f"{src} is absent")
    root = tmp_path / "www"
    root.mkdir()
    shutil.copy(src, root / CMU)
    with serve_folder(root) as url:
        yield f"{url}/{CMU}", hashlib.sha256(src.read_bytes()).hexdigest()


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
    with pytest.raises(Exception, match="sha256|checksum|mismatch"):
        fetch_slide(bad, "cmu1", dest2)
    assert not dest2.exists()


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
