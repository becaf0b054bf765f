"""Shared utilities: atomic writes, job seeds, provenance, deterministic figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from repro.io import atomic_open, atomic_path, read_json, write_json
from repro.provenance import config_hash, strip_volatile, write_metrics
from repro.seeding import job_seed


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.json"
    with pytest.raises(RuntimeError):
        with atomic_open(target) as fh:
            fh.write("half")
            raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []


def test_atomic_path_replaces_old_file_only_on_success(tmp_path):
    target = tmp_path / "t.txt"
    target.write_text("old")
    with pytest.raises(KeyError):
        with atomic_path(target) as tmp:
            tmp.write_text("new")
            raise KeyError
    assert target.read_text() == "old"
    with atomic_path(target) as tmp:
        tmp.write_text("new")
    assert target.read_text() == "new" and len(list(tmp_path.iterdir())) == 1


def _folder(tmp, files: dict[str, str]) -> None:
    tmp.unlink()
    tmp.mkdir()
    for name, text in files.items():
        (tmp / name).write_text(text)


def test_atomic_path_replaces_a_whole_folder_and_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "best"
    with atomic_path(target) as tmp:
        _folder(tmp, {"a": "old", "b": "old"})
    with pytest.raises(OSError, match="disk full"):
        with atomic_path(target) as tmp:
            _folder(tmp, {"a": "half"})
            raise OSError("disk full")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best"]  # no temporary folder left
    assert {p.name: p.read_text() for p in target.iterdir()} == {"a": "old", "b": "old"}
    with atomic_path(target) as tmp:  # onto a non-empty folder (os.replace alone refuses)
        _folder(tmp, {"a": "new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best"]
    assert {p.name: p.read_text() for p in target.iterdir()} == {"a": "new"}


def test_a_killed_writers_temporary_folder_is_cleared_by_the_next_write(tmp_path):
    stale = tmp_path / ".best.abc123.tmp"  # what a SIGKILLed folder write leaves behind
    stale.mkdir()
    (stale / "adapter_config.json").write_text("{")
    with atomic_path(tmp_path / "best") as tmp:
        _folder(tmp, {"a": "new"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best"]


def test_job_seed_is_stable_and_depends_on_every_part():
    a = job_seed(1, "cmcboot_simulate", setting="n1000", chunk="0")
    assert a == job_seed(1, "cmcboot_simulate", chunk="0", setting="n1000")  # order of wildcards is irrelevant
    others = {job_seed(2, "cmcboot_simulate", setting="n1000", chunk="0"),
              job_seed(1, "cmcboot_simulate", setting="n1000", chunk="1"),
              job_seed(1, "other", setting="n1000", chunk="0")}
    assert a not in others and len(others) == 3
    assert 0 <= a < 2**63
    with pytest.raises(ValueError, match="integer"):
        job_seed("7")


def test_json_converts_numpy_and_rejects_nothing_silently(tmp_path):
    np = pytest.importorskip("numpy")
    write_json(tmp_path / "m.json", {"x": np.float32(0.5), "v": np.arange(3), "nan": float("nan")})
    assert read_json(tmp_path / "m.json") == {"x": 0.5, "v": [0, 1, 2], "nan": None}


def test_provenance_block(tmp_path):
    write_metrics(tmp_path / "m.json", {"a": 1}, config={"n": 3}, seed=7, wall_time_s=1.23456, scale="smoke")
    m = read_json(tmp_path / "m.json")
    prov = m["provenance"]
    assert prov["config_hash"] == config_hash({"n": 3}) != config_hash({"n": 4})
    assert prov["seed"] == 7 and prov["wall_time_s"] == 1.235 and prov["scale"] == "smoke"
    assert "numpy" in prov["packages"] and "commit" in prov["git"]
    assert "wall_time_s" not in strip_volatile(m)["provenance"]


def test_figure_pdf_bytes_are_deterministic(tmp_path):
    import matplotlib.pyplot as plt

    from repro.figures.style import save

    def draw(path):
        table = pd.DataFrame({"x": [1, 2, 3], "y": [0.1, 0.5, 0.9], "method": ["a", "a", "a"]})
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot(table.x, table.y, label="a")
        ax.set_title("α coverage")  # a non-ASCII glyph exercises font embedding
        ax.legend()
        save(fig, table, path)

    draw(tmp_path / "one.pdf")
    draw(tmp_path / "two.pdf")
    one, two = (tmp_path / "one.pdf").read_bytes(), (tmp_path / "two.pdf").read_bytes()
    assert one[:5] == b"%PDF-" and b"CreationDate" not in one
    # the title is part of the metadata; compare everything else
    assert one.replace(b"(one)", b"(xxx)") == two.replace(b"(two)", b"(xxx)")
    assert (tmp_path / "one.csv").read_text().splitlines()[0] == "x,y,method"


def test_a_killed_writers_temporary_file_is_cleared_by_the_next_write(tmp_path):
    target = tmp_path / "m.json"
    stale = tmp_path / ".m.abc123.json.tmp.json"  # what a SIGKILLed atomic write leaves behind
    stale.write_text("{half")
    write_json(target, {"a": 1})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


def test_mean_se_matches_the_closed_form_and_gives_a_lone_unit_no_bar():
    from repro.figures.style import mean_se

    df = pd.DataFrame({"method": ["a", "a", "a", "b"], "seed": [0, 1, 2, 0], "score": [1.0, 2.0, 3.0, 5.0]})
    out = mean_se(df, ["method"], "score", name="score").set_index("method")
    assert list(out.columns) == ["score", "se", "n_seeds"]
    assert out.loc["a", "score"] == pytest.approx(2.0)
    assert out.loc["a", "se"] == pytest.approx(1.0 / 3 ** 0.5)  # sample s.d. 1 over sqrt(3) units
    assert (out.loc["b", "score"], out.loc["b", "n_seeds"]) == (5.0, 1)
    assert np.isnan(out.loc["b", "se"])  # one unit has no standard error (not 0): drawn without a bar
