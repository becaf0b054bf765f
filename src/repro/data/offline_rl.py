"""Loaders of offline-RL datasets a user has locally: D4RL HDF5 files and Minari dataset folders.

Both return flat transitions in the D4RL field names used across this project (``observations``,
``actions``, ``rewards``, ``next_observations``, ``terminals``, ``episode``), so a planner trained on
our generated maze data trains on them unchanged.

- D4RL (Fu et al. 2020, arXiv 2004.07219): one HDF5 file with flat arrays ``observations``,
  ``actions``, ``rewards``, ``terminals`` and ``timeouts`` (``next_observations`` where present). An
  episode ends at a terminal or a timeout; without ``next_observations`` the next observation is
  the following row, so the last row of every episode (whose successor is unknown) is dropped, as
  ``d4rl.qlearning_dataset`` does.
- Minari (Farama; ``main_data.hdf5`` in the dataset folder, under ``data/``): one group per episode
  ``episode_<id>`` with ``observations`` (T + 1 rows), ``actions``, ``rewards``, ``terminations`` and
  ``truncations`` (T rows). Dictionary observations are not supported (an error names the episode).

Nothing is downloaded here: the Minari and D4RL packages fetch from the network, these read files.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["load_d4rl_hdf5", "load_minari", "load_offline"]

_D4RL_REQUIRED = ("observations", "actions", "rewards", "terminals")


def load_d4rl_hdf5(path: str | Path) -> dict[str, np.ndarray]:
    """Flat transitions of a D4RL HDF5 file."""
    from repro.io import open_h5

    path = Path(path)
    with open_h5(path) as f:  # a damaged file: a ValueError naming it
        missing = [k for k in _D4RL_REQUIRED if k not in f]
        if missing:
            raise ValueError(f"{path}: not a D4RL dataset, missing {missing}")
        d = {k: np.asarray(f[k]) for k in (*_D4RL_REQUIRED, "timeouts", "next_observations") if k in f}
    n = len(d["observations"])
    if any(len(v) != n for v in d.values()):
        raise ValueError(f"{path}: D4RL arrays differ in length {({k: len(v) for k, v in d.items()})}")
    terminals = d["terminals"].astype(bool)
    timeouts = d.get("timeouts", np.zeros(n, bool)).astype(bool)
    ends = terminals | timeouts
    episode = np.concatenate([[0], np.cumsum(ends[:-1])]).astype(int)
    if "next_observations" in d:
        keep = np.ones(n, bool)
        nxt = d["next_observations"]
    else:  # the successor is the next row, within the same episode, unless the episode ended by termination
        keep = np.zeros(n, bool)
        keep[:-1] = ~timeouts[:-1] & ((episode[1:] == episode[:-1]) | terminals[:-1])
        nxt = np.concatenate([d["observations"][1:], d["observations"][-1:]])
    return {"observations": d["observations"][keep].astype(float), "actions": d["actions"][keep].astype(float),
            "rewards": d["rewards"][keep].astype(float), "next_observations": nxt[keep].astype(float),
            "terminals": terminals[keep].astype(float), "episode": episode[keep]}


def load_minari(folder: str | Path) -> dict[str, np.ndarray]:
    """Flat transitions of a local Minari dataset folder (``<folder>/data/main_data.hdf5``)."""
    from repro.io import open_h5

    folder = Path(folder)
    path = folder / "data" / "main_data.hdf5"
    if not path.exists():
        raise ValueError(f"{folder}: not a Minari dataset folder (no data/main_data.hdf5)")
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("observations", "actions", "rewards", "next_observations",
                                                          "terminals", "episode")}
    with open_h5(path) as f:  # a damaged file: a ValueError naming it
        names = sorted((k for k in f if k.startswith("episode_")), key=lambda k: int(k.split("_")[1]))
        if not names:
            raise ValueError(f"{path}: no episode_<id> groups")
        for name in names:
            g = f[name]
            missing = [k for k in ("observations", "actions", "rewards", "terminations") if k not in g]
            if missing:
                raise ValueError(f"{path}: {name} lacks {missing}")
            if not hasattr(g["observations"], "shape"):
                raise ValueError(f"{path}: {name} has dictionary observations (not supported)")
            obs, act = np.asarray(g["observations"], float), np.asarray(g["actions"], float)
            T = len(act)
            if len(obs) != T + 1:
                raise ValueError(f"{path}: {name} has {len(obs)} observations for {T} actions (expected T + 1)")
            parts["observations"].append(obs[:-1])
            parts["next_observations"].append(obs[1:])
            parts["actions"].append(act.reshape(T, -1))
            parts["rewards"].append(np.asarray(g["rewards"], float))
            parts["terminals"].append(np.asarray(g["terminations"], float))
            parts["episode"].append(np.full(T, int(name.split("_")[1])))
    return {k: np.concatenate(v) for k, v in parts.items()}


def load_offline(path: str | Path) -> dict[str, np.ndarray]:
    """A D4RL ``.hdf5``/``.h5`` file or a Minari folder, chosen by what ``path`` is."""
    path = Path(path)
    if path.is_dir():
        return load_minari(path)
    if path.suffix in (".hdf5", ".h5"):
        return load_d4rl_hdf5(path)
    raise ValueError(f"{path}: expected a D4RL .hdf5 file or a Minari dataset folder")
