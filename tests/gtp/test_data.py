"""The offline dataset: relabelled sparse rewards are right, the checksum guards the file, and the
world model and prior train on it."""

import numpy as np
import pytest

from repro.data.sidecar import write_sidecar
from repro.papers.gtp.data import DatasetConfig, collect, load_dataset, save_dataset
from repro.papers.gtp.experiment import sequence_windows
from repro.papers.gtp.maze import Maze, move


@pytest.fixture(scope="module")
def data():
    return collect(Maze.named("umaze"), DatasetConfig(episodes=40, length=50), seed=0)


def test_transitions_follow_the_maze_and_rewards_mark_the_goal(data):
    maze = Maze.named("umaze")
    np.testing.assert_allclose(move(maze, data["observations"], data["actions"]), data["next_observations"])
    np.testing.assert_array_equal(data["rewards"], maze.in_goal(data["next_observations"]).astype(float))
    assert not maze.in_goal(data["observations"]).any()
    assert data["rewards"].sum() > 0  # the behaviour visits the goal


def test_windows_stay_within_episodes(data):
    x0, cond = sequence_windows(data, 5)
    assert x0.shape[1] == 10 and len(x0) == len(cond)


def test_checksum_mismatch_names_the_file(tmp_path, data):
    path = tmp_path / "d.npz"
    save_dataset(data, path)
    again = load_dataset(path)
    np.testing.assert_array_equal(again["actions"], data["actions"])
    raw = bytearray(path.read_bytes())
    raw[-10] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"d\.npz: sha256 is [0-9a-f]{64} but .*d\.npz\.sha256 records"):
        load_dataset(path)
    (tmp_path / "d.npz.sha256").unlink()  # a dataset without its sidecar cannot be trusted either
    with pytest.raises(FileNotFoundError, match=r"d\.npz: its checksum file .* is missing"):
        load_dataset(path)


def test_sidecar_is_the_projects_one_sha256sum_line(tmp_path, data):
    """The dataset's sidecar is repro.data.sidecar's: one ``sha256sum`` line naming the file."""
    import hashlib

    from repro.data.sidecar import read_sidecar

    path = tmp_path / "d.npz"
    digest = save_dataset(data, path)
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest() == read_sidecar(path)
    assert (tmp_path / "d.npz.sha256").read_text() == f"{digest}  d.npz\n"


def test_missing_field_is_named(tmp_path, data):
    path = tmp_path / "bad.npz"
    np.savez(path, observations=data["observations"])
    write_sidecar(path)
    with pytest.raises(ValueError, match="missing fields"):
        load_dataset(path)
