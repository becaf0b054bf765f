"""The remote loader: an image folder (one subfolder per class) or .npz, fetched over HTTP with a
sha256, read back pixel for pixel, split by class into tasks; a wrong checksum stops with a clear
error and leaves no file; the DAG runs every method on a remote sequence served from localhost."""

import hashlib

import numpy as np
import pytest
import yaml

from repro.data import fixtures
from repro.data.fetch import FetchError
from repro.data.image_folder import fetch_image_set, read_image_folder, read_npz
from repro.papers.m2le.synth import make_sequence

N_CLASSES, PER_CLASS, SIZE = 14, 6, 6


def colour(k):
    """The planted colour of class k (distinct per class, exact in 8 bits)."""
    return np.array([(37 * k) % 256, (91 * k + 20) % 256, (53 * k + 100) % 256], dtype=np.uint8)


def planted(k, j):
    """Image j of class k: the class's colour with a stripe on row j % 5 (rows 0..4, never row 5)."""
    img = np.broadcast_to(colour(k), (SIZE, SIZE, 3)).copy()
    img[j % (SIZE - 1)] = 255 - img[j % (SIZE - 1)]
    return img


@pytest.fixture
def image_folder(tmp_path):
    return fixtures.image_folder(tmp_path / "bench", N_CLASSES, PER_CLASS, SIZE, draw=planted)


@pytest.fixture
def archive(image_folder, tmp_path):
    return fixtures.tar_gz(image_folder, tmp_path / "serve" / "bench.tar.gz")


@pytest.fixture
def server(archive):
    """A local HTTP server over the archive's folder; yields its base URL."""
    with fixtures.serve_folder(archive.parent) as url:
        yield url


def sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_image_folder_is_read_pixel_for_pixel(image_folder):
    images = read_image_folder(image_folder, SIZE)
    assert images.classes == [f"class{k:02d}" for k in range(N_CLASSES)]
    assert images.x.shape == (N_CLASSES * PER_CLASS, SIZE, SIZE, 3)
    for k in range(N_CLASSES):
        rows = images.x[images.y == k]
        assert len(rows) == PER_CLASS
        # row 5 of image j != 5 keeps the planted colour exactly (no resize at the native size)
        np.testing.assert_allclose(rows[0, 5, 0], colour(k) / 255.0, atol=1e-6)


def test_fetch_over_http_checks_the_checksum_and_writes_one_npz(server, archive, tmp_path):
    dest = tmp_path / "out" / "remote.npz"
    dest.parent.mkdir()
    fetch_image_set(f"{server}/bench.tar.gz", sha(archive), dest, size=SIZE)
    got, direct = read_npz(dest), read_image_folder(archive.parent.parent / "bench", SIZE)
    np.testing.assert_array_equal(got.y, direct.y)
    np.testing.assert_allclose(got.x, direct.x)
    assert got.classes == direct.classes
    assert sorted(p.name for p in dest.parent.iterdir()) == ["remote.npz"]  # no archive, no unpacked folder left


def test_a_checksum_mismatch_is_a_clear_error_and_leaves_nothing(server, tmp_path):
    dest = tmp_path / "out" / "remote.npz"
    dest.parent.mkdir()
    with pytest.raises(FetchError, match="sha256 mismatch: expected 0{64}"):
        fetch_image_set(f"{server}/bench.tar.gz", "0" * 64, dest, size=SIZE)
    assert list(dest.parent.iterdir()) == []


def test_a_missing_checksum_is_refused(server, tmp_path):
    with pytest.raises(ValueError, match="sha256 is required"):
        fetch_image_set(f"{server}/bench.tar.gz", None, tmp_path / "remote.npz", size=SIZE)
    assert not (tmp_path / "remote.npz").exists()


def test_npz_by_file_url(tmp_path):
    src = tmp_path / "set.npz"
    x = np.arange(4 * 3 * 3, dtype=np.uint8).reshape(4, 3, 3)
    np.savez(src, x=x, y=np.array([0, 1, 1, 0]))
    fetch_image_set(src.as_uri(), sha(src), tmp_path / "remote.npz", size=3)
    got = read_npz(tmp_path / "remote.npz")
    np.testing.assert_allclose(got.x[..., 0], x / 255.0)
    assert got.classes == ["0", "1"]


def test_bad_inputs_name_what_is_wrong(tmp_path, image_folder):
    (image_folder / "empty_class").mkdir()
    with pytest.raises(ValueError, match="'empty_class' holds no images"):
        read_image_folder(image_folder, SIZE)
    (image_folder / "empty_class" / "broken.png").write_bytes(b"not a png")
    with pytest.raises(ValueError, match="cannot read image .*broken.png"):
        read_image_folder(image_folder, SIZE)
    np.savez(tmp_path / "noy.npz", x=np.zeros((2, 3)))
    with pytest.raises(ValueError, match="missing array.* y"):
        read_npz(tmp_path / "noy.npz")
    np.savez(tmp_path / "floaty.npz", x=np.zeros((2, 3)), y=np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="y must be a 1-d integer array"):
        read_npz(tmp_path / "floaty.npz")


def test_remote_sequence_splits_classes_into_disjoint_tasks(image_folder, tmp_path):
    from repro.data.image_folder import write_npz

    write_npz(read_image_folder(image_folder, SIZE), tmp_path / "r.npz")
    seq = make_sequence("remote", 2, seed=3, path=tmp_path / "r.npz", classes_per_task=2, test_frac=0.5)
    assert seq.n_features == SIZE * SIZE * 3
    assert len(seq.base.y_train) + len(seq.base.y_test) == 10 * PER_CLASS
    # the planted colour of each image says its class: tasks and base share no class
    def class_of(x_rows):
        return {tuple(np.round(r.reshape(SIZE, SIZE, 3)[5, 0].numpy(), 4)) for r in x_rows}
    pools = [class_of(t.x_train) | class_of(t.x_test) for t in (seq.base, *seq.tasks)]
    assert [len(p) for p in pools] == [10, 2, 2]
    assert not (pools[0] & pools[1]) and not (pools[0] & pools[2]) and not (pools[1] & pools[2])
    assert all(t.classes == (0, 1) for t in seq.tasks)
    with pytest.raises(ValueError, match="need 16 classes; the set has 14"):
        make_sequence("remote", 3, seed=3, path=tmp_path / "r.npz", classes_per_task=2)


@pytest.mark.slow
def test_dag_runs_a_remote_sequence_and_a_bad_checksum_stops_it(server, archive, tmp_path, workflow_run):
    from tests.conftest import REPO

    def overlay(checksum):
        block = {"smoke": {"sequences": {"remote": {"n_tasks": 2, "classes_per_task": 2, "image_size": SIZE,
                                                    "url": f"{server}/bench.tar.gz", "sha256": checksum}}}}
        path = tmp_path / f"overlay_{checksum[:4]}.yaml"
        path.write_text(yaml.safe_dump({"m2le": block}))
        return ("--configfile", str(REPO / "config.yaml"), str(path))

    bad = tmp_path / "bad"
    proc = workflow_run(bad, "results/m2le/data/remote.npz", *overlay("f" * 64), check=False)
    assert proc.returncode != 0 and "sha256 mismatch" in proc.stdout + proc.stderr
    assert not (bad / "results/m2le/data").exists() or not any((bad / "results/m2le/data").iterdir())

    good = tmp_path / "good"
    workflow_run(good, "results/m2le/runs/remote/seed0.json", *overlay(sha(archive)))
    import json

    run = json.loads((good / "results/m2le/runs/remote/seed0.json").read_text())
    from repro.data.sidecar import verify

    assert verify(good / "results/m2le/data/remote.npz")  # its sidecar, checked by m2le_pretrain and m2le_run
    assert run["n_tasks"] == 2 and set(run["methods"]) == {"seq", "fixed", "pm", "olora", "ewc", "him", "m2le", "joint"}
