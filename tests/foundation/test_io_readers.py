"""The readers of the project's intermediates (repro.io): a truncated or garbage file is a ValueError naming the
file and how it is damaged, never a bare JSONDecodeError, BadZipFile, OSError or KeyError from deep inside a
library; a missing file stays a FileNotFoundError; a torch file holding anything but tensors and plain containers
is refused without running its code."""

from __future__ import annotations

import json
import re

import h5py
import numpy as np
import pytest
import torch

from repro.io import load_npz, load_torch, open_h5, read_json, save_torch


def _write_json(path):
    path.write_text(json.dumps({"coverage": [0.95] * 200, "method": "percentile"}))


def _write_npz(path):
    np.savez(path, x=np.arange(4000, dtype=np.int64).reshape(-1, 2), y=np.linspace(0, 1, 300))


def _write_pt(path):
    torch.save({"state": {"w": torch.arange(3000.0)}, "dims": [3, 4], "cfg": {"lr": 0.1}}, path)


def _write_h5(path):
    with h5py.File(path, "w") as f:
        d = f.create_dataset("coords", data=np.arange(4000, dtype=np.int64).reshape(-1, 2))
        d.attrs["patch_size_level0"] = 224


def _read_h5(path):
    with open_h5(path) as f:
        return f["coords"][()], dict(f["coords"].attrs)


FORMATS = {  # suffix: (writer, reader, what the message says)
    ".json": (_write_json, read_json, "not valid JSON"),
    ".npz": (_write_npz, load_npz, "not a valid .npz archive"),
    ".pt": (_write_pt, load_torch, "not a valid torch file"),
    ".h5": (_write_h5, _read_h5, "HDF5 file"),
}


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
@pytest.mark.parametrize("suffix", list(FORMATS))
def test_a_damaged_intermediate_is_a_value_error_naming_the_file(tmp_path, suffix, damage):
    write, read, what = FORMATS[suffix]
    path = tmp_path / "results" / f"x{suffix}"
    path.parent.mkdir()
    write(path)
    read(path)  # the intact file reads
    raw = path.read_bytes()
    path.write_bytes({"truncated": raw[:len(raw) // 2], "garbage": b"\x00garbage\xff" * 50, "empty": b""}[damage])
    with pytest.raises(ValueError) as err:
        read(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: "), msg
    assert what in msg and "delete it to rebuild" in msg, msg


def test_an_h5_file_damaged_inside_is_named(tmp_path):
    path = tmp_path / "patches.h5"
    _write_h5(path)
    raw = bytearray(path.read_bytes())
    raw[800:1600] = b"\xa5" * 800  # the superblock is intact, the object headers are not
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=re.escape(str(path)) + ": .*HDF5 file"):
        _read_h5(path)


@pytest.mark.parametrize("suffix", list(FORMATS))
def test_a_missing_file_stays_file_not_found(tmp_path, suffix):
    with pytest.raises(FileNotFoundError):
        FORMATS[suffix][1](tmp_path / f"absent{suffix}")


def test_load_npz_reads_the_arrays_asked_for_and_names_a_missing_one(tmp_path):
    path = tmp_path / "d.npz"
    _write_npz(path)
    assert set(load_npz(path)) == {"x", "y"}
    assert list(load_npz(path, ["y"])) == ["y"]
    np.testing.assert_array_equal(load_npz(path)["x"], np.arange(4000).reshape(-1, 2))
    with pytest.raises(ValueError, match=re.escape(f"{path}: no array 'z'")):
        load_npz(path, ["y", "z"])


class _RunsCode:
    def __reduce__(self):
        return (print, ("this ran while loading",))


def test_a_torch_file_holding_an_arbitrary_object_is_refused_and_its_code_never_runs(tmp_path, capsys):
    path = tmp_path / "model.pt"
    torch.save({"w": torch.ones(2), "x": _RunsCode()}, path)
    with pytest.raises(ValueError) as err:
        load_torch(path)
    msg = str(err.value)
    assert msg.startswith(f"{path}: ") and "holds a print object" in msg and "weights_only" in msg, msg
    assert "this ran" not in capsys.readouterr().out


def test_save_torch_stores_plain_values_and_refuses_what_would_not_load(tmp_path):
    path = tmp_path / "m.pt"
    blob = {"dims": [np.int64(3), 4], "cfg": {"lr": np.float64(0.1), "sizes": (2, 3)}, "w": torch.ones(2),
            "mu": np.arange(3.0)}
    save_torch(blob, path)
    back = torch.load(path, weights_only=True)
    assert back["dims"] == [3, 4] and type(back["dims"][0]) is int
    assert back["cfg"] == {"lr": 0.1, "sizes": (2, 3)} and type(back["cfg"]["lr"]) is float
    assert torch.equal(back["w"], torch.ones(2)) and torch.equal(back["mu"], torch.arange(3.0, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"m\.pt: .*cfg\.when.*datetime"):
        import datetime

        save_torch({"cfg": {"when": datetime.date(2020, 1, 1)}}, path)
    assert torch.load(path, weights_only=True)["dims"] == [3, 4]  # the old file stays


#: Where a library's own reader may open a file, each with its reason: every other module and script reads the
#: project's intermediates through repro.io (and a job's CSV table through repro.tableio).
OWN_READERS = {
    "torch.load": {"src/repro/io.py": "load_torch itself",
                   "src/repro/data/fetch.py": "load_tensors: a user's weights file (weights_only=True, named)"},
    "np.load": {"src/repro/io.py": "load_npz itself"},
    "h5py.File": {"src/repro/io.py": "open_h5 itself",
                  "src/repro/methods/distill/features.py": "read_features: its own ValueError naming the file"},
    "json.load": {"src/repro/io.py": "read_json itself",
                  "src/repro/data/karpathy.py": "a user's Karpathy split file, its errors named",
                  "src/repro/claims.py": "the checker reads metrics.json itself (a frozen file; damage not named)"},
    "pickle.load": {},
    "pd.read_csv": {"src/repro/tableio.py": "read_csv itself",
                    "src/repro/data/leaderboard.py": "a user's leaderboard dump, its columns checked",
                    "src/repro/data/grouped_tables.py": "a user's grouped table, its columns checked",
                    "src/repro/wsi/cohort.py": "a user's remote-cohort manifest, its columns checked",
                    "src/repro/papers/opinion/graphs.py": "a user's edge list, its columns checked",
                    "src/repro/papers/driftbench/experiment.py": "a release's KBV summary (user data)"},
    "pd.read_parquet": {"src/repro/data/grouped_tables.py": "a user's grouped table",
                        "src/repro/papers/opinion/graphs.py": "a user's edge list"},
}
ALIASES = {"numpy.load": "np.load", "pandas.read_csv": "pd.read_csv", "pandas.read_parquet": "pd.read_parquet",
           "pickle.loads": "pickle.load"}
WRITE_MODES = {"w", "w-", "x"}


def _readers_called(path) -> set[str]:
    """The readers of ``OWN_READERS`` that the module ``path`` calls (h5py.File only when it may read)."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if not isinstance(node.func.value, ast.Name):
            continue
        name = ALIASES.get(f"{node.func.value.id}.{node.func.attr}", f"{node.func.value.id}.{node.func.attr}")
        if name not in OWN_READERS:
            continue
        if name == "h5py.File":
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"),
                                                                None)
            if isinstance(mode, ast.Constant) and mode.value in WRITE_MODES:
                continue
        found.add(name)
    return found


def test_intermediates_are_read_only_through_the_named_readers():
    """A new np.load, torch.load, h5py.File, json.load or pandas reader on a job's output would raise the
    library's own error (a BadZipFile, a KeyError, an UnpicklingError), or read a damaged table as a short one,
    without naming the file: each one outside the readers above is named here."""
    from tests.conftest import REPO
    from tests.foundation.test_tableio import PANDAS_READERS_LEFT

    offenders = []
    for path in sorted([*(REPO / "src/repro").rglob("*.py"), *(REPO / "workflow/scripts").rglob("*.py")]):
        rel = str(path.relative_to(REPO))
        called = _readers_called(path)
        if rel in PANDAS_READERS_LEFT:  # listed with their reason by the CSV reader's own test
            called.discard("pd.read_csv")
        offenders += [f"{rel}: {name}" for name in sorted(called) if rel not in OWN_READERS[name]]
    assert offenders == []
