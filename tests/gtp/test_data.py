"""The offline dataset: relabelled sparse rewards are right, the checksum guards the file, and the
world model and prior train on it."""

import numpy as np
import pytest

from repro.data.sidecar import write_sidecar
from repro.papers.gtp.data import DatasetConfig, collect, load_dataset, save_dataset
from repro.papers.gtp.experiment import sequence_windows, window_starts
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


def test_window_starts_by_hand():
    """Episodes 0 (rows 0-3, a gap after row 1: row 2 does not start where row 1 ended) and 1 (rows 4-6). Runs of 2:
    rows 0 (0 -> 1), 2 (2 -> 3), 4, 5; of 3: row 4 only; of 1: every row; of 4: none."""
    obs = np.array([[0.0], [1.0], [5.0], [6.0], [10.0], [11.0], [12.0]])
    data = {"observations": obs, "next_observations": obs + 1.0, "episode": np.array([0, 0, 0, 0, 1, 1, 1])}
    assert window_starts(data, 2).tolist() == [0, 2, 4, 5]
    assert window_starts(data, 3).tolist() == [4]
    assert window_starts(data, 1).tolist() == list(range(7))
    with pytest.raises(ValueError, match="no episode holds 4"):
        window_starts(data, 4)


def test_window_starts_is_the_per_row_definition(data):
    """The vectorised starts equal the per-row check they replaced (``np.allclose`` of each run's links), on the
    behaviour data, whose rows inside the goal are dropped (gaps within an episode)."""
    ep, obs, nxt = data["episode"], data["observations"], data["next_observations"]
    for h in (1, 2, 5, 12):
        by_row = [i for i in range(len(ep) - h + 1) if ep[i] == ep[i + h - 1] and np.allclose(obs[i + 1:i + h], nxt[i:i + h - 1])]
        assert window_starts(data, h).tolist() == by_row


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
