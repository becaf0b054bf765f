"""D4RL and Minari files written here load into the same transitions as the maze data they hold."""

import h5py
import numpy as np
import pytest

from repro.data.offline_rl import load_offline
from repro.papers.gtp.data import DatasetConfig, collect
from repro.papers.gtp.maze import Maze


@pytest.fixture(scope="module")
def episodes():
    """Three maze episodes (T = 6) with their T + 1 observations."""
    d = collect(Maze.named("room"), DatasetConfig(episodes=3, length=6, random_frac=1.0), seed=3)
    out = []
    for e in np.unique(d["episode"]):
        m = d["episode"] == e
        obs = np.concatenate([d["observations"][m], d["next_observations"][m][-1:]])
        out.append((obs, d["actions"][m], d["rewards"][m]))
    return out


def test_minari_folder_round_trip(tmp_path, episodes):
    (tmp_path / "data").mkdir()
    with h5py.File(tmp_path / "data/main_data.hdf5", "w") as f:
        for i, (obs, act, rew) in enumerate(episodes):
            g = f.create_group(f"episode_{i}")
            g["observations"], g["actions"], g["rewards"] = obs, act, rew
            g["terminations"], g["truncations"] = np.zeros(len(act), bool), np.eye(len(act), dtype=bool)[-1]
    d = load_offline(tmp_path)
    np.testing.assert_allclose(d["next_observations"], np.concatenate([o[1:] for o, _, _ in episodes]))
    np.testing.assert_array_equal(d["episode"], np.repeat(np.arange(3), [len(a) for _, a, _ in episodes]))


def test_d4rl_file_drops_the_unknown_successor_at_timeouts(tmp_path, episodes):
    obs = np.concatenate([o[:-1] for o, _, _ in episodes])
    act = np.concatenate([a for _, a, _ in episodes])
    timeouts = np.concatenate([np.eye(len(a), dtype=bool)[-1] for _, a, _ in episodes])
    with h5py.File(tmp_path / "d.hdf5", "w") as f:
        f["observations"], f["actions"], f["rewards"] = obs, act, np.zeros(len(act))
        f["terminals"], f["timeouts"] = np.zeros(len(act), bool), timeouts
    d = load_offline(tmp_path / "d.hdf5")
    assert len(d["actions"]) == len(act) - 3  # one unknown successor per episode
    want = np.concatenate([o[1:-1] for o, _, _ in episodes])
    np.testing.assert_allclose(d["next_observations"], want)


def test_malformed_files_are_named(tmp_path):
    with h5py.File(tmp_path / "x.hdf5", "w") as f:
        f["observations"] = np.zeros((3, 2))
    with pytest.raises(ValueError, match="x.hdf5: not a D4RL dataset"):
        load_offline(tmp_path / "x.hdf5")
    with pytest.raises(ValueError, match="not a Minari"):
        load_offline(tmp_path)
