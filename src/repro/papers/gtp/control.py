"""GTP on gymnasium's control tasks: Pendulum-v1 and MountainCarContinuous-v0 (classic control), and
MuJoCo's HalfCheetah-v5 and Hopper-v5 at short horizons.

The same pipeline as the maze (:mod:`repro.papers.gtp.experiment`): an offline dataset per (task,
seed) saved once with its sha256, a world model (dynamics ensemble, dense reward regression, TD
value) and the diffusion prior fitted on it, then receding-horizon control in the true environment
by every method at the same planning compute (``N x I`` candidate-sequence evaluations under the
learned model per decision).

Actions are stored and planned in ``[-1, 1]`` and scaled to the task's box (Pendulum's torque is
``2 a``). Episodes last ``length`` steps (Pendulum's own 200; MountainCarContinuous is cut from 999
to ``length`` to bound the planning compute; reaching the goal ends it, as in gymnasium).

Behaviour data (choices the spec leaves open; the spec asks for "random and partly trained
policies"): a share ``random_frac`` of episodes from a temporally correlated random policy
(AR(1), coefficient ``persistence``); the rest from a scripted controller (the "partly trained"
stand-in: no policy is trained here) with Gaussian noise ``noise`` on its actions and, per
episode, a probability drawn uniformly from ``[0, max_eps]`` of replacing an action by a random
one. The scripted controllers are classic textbook ones:

- Pendulum (``theta_dot' = 15 sin theta + 3 u`` per unit time, so ``E = theta_dot^2 / 2 + 15 cos theta``
  has ``dE/dt = 3 u theta_dot``): energy pumping ``u = 2 clip((15 - E) sign(theta_dot) / 2)`` towards the
  energy of rest at the top, a PD law ``u = -(10 theta + 2 theta_dot)`` when ``cos theta > 0.9``.
- MountainCar: push in the direction of the velocity (full throttle).

Methods: ``gtp``, ``mppi``, ``cem`` as on the maze (gtp with its warm start); ``diffusion_policy`` the
state-conditioned prior executed directly (these tasks are defined by their reward and have no goal state
to condition on, unlike the maze's goal-conditioned policy), as Diffusion Policy's authors execute a policy:
``plan.policy_execute`` actions of each sampled window open loop, then a new window (8 of the prior's 10 at
small, 8 of 16 at paper; :mod:`repro.papers.gtp.experiment`); ``expert`` (the scripted
controller without noise: a reference, not an optimum; these tasks have no exact optimum here);
``random`` (uniform actions, the floor); ``td3bc``, the model-free offline baseline (TD3+BC,
:mod:`repro.rl.td3bc`) trained on the same dataset, one actor forward pass per decision (it plans
nothing, so the planners' equal-compute budget does not apply to it).

MuJoCo tasks (the preset's ``mujoco`` block; ``mujoco`` 3.2.7's wheel, gymnasium's v5 environments):
no scripted controller exists, so the behaviour data are the replay buffer of an online TD3 agent
(:func:`repro.rl.td3bc.fit_td3_online`, :func:`behaviour_data`): ``start_steps`` uniform random actions,
then the learning actor with exploration noise, one update per step, for ``env_steps`` steps in
episodes cut at ``length`` (D4RL's "medium-replay" construction: a random policy and a sequence of
partly trained ones). The method ``expert`` is that agent's final actor without noise (a reference,
not an optimum). Short horizons: training and evaluation episodes last ``length`` steps (200 at
small; the environments' own limit is 1,000). Deviations: TD3 starts learning after 1,000 random steps
(the reference 25,000) and runs 10^3-10^4 steps instead of D4RL's 10^6; the learned world model
predicts no termination, so Hopper's fall is seen by the planners only through the TD value and the
learned reward's healthy bonus. The TD value and TD3+BC use discount 0.95 on the MuJoCo tasks at small
(as the classic-control block), with 10,000 TD3+BC steps, both chosen from TD3+BC's training
diagnostics on seed 0 (Table 4), never from a return: at 0.99 its Q on Hopper had not levelled by
20,000 steps.

The return of an episode is the undiscounted sum of the environment's rewards.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from repro.claims import sample
from repro.config import from_dict
from repro.papers.gtp.data import DatasetConfig
from repro.papers.gtp.experiment import Controller, PlanConfig
from repro.papers.gtp.grid import SCRIPTED_TASKS
from repro.rl.diffusion_prior import ActionDiffusion
from repro.rl.td3bc import TD3BCPolicy
from repro.rl.world_model import WorldModel

__all__ = ["TASKS", "METHODS", "ControlDataConfig", "BehaviourConfig", "make_env",
           "expert_action", "collect", "behaviour_data", "run_episodes",
           "evaluate_task", "aggregate_control", "control_table"]

log = logging.getLogger(__name__)

TASKS = {"pendulum": ("Pendulum-v1", 2.0), "mountaincar": ("MountainCarContinuous-v0", 1.0),
         "halfcheetah": ("HalfCheetah-v5", 1.0), "hopper": ("Hopper-v5", 1.0)}
"""task key -> (gymnasium id, action scale: env action = scale * a for a in [-1, 1])"""
METHODS = ("gtp", "mppi", "cem", "diffusion_policy", "td3bc", "expert", "random")


@dataclass(frozen=True)
class ControlDataConfig(DatasetConfig):
    """The maze dataset's fields (``noise`` on the scripted controller's actions, in [-1, 1] units;
    ``length`` is also the evaluation episode length) and one more."""

    max_eps: float = 0.5
    """per-episode probability of a random action is drawn from U(0, max_eps)"""


@dataclass(frozen=True)
class BehaviourConfig:
    """The online TD3 agent whose replay buffer is a MuJoCo task's dataset (:func:`behaviour_data`)."""

    env_steps: int = 6000
    """environment steps (the dataset's transitions)"""
    start_steps: int = 1000
    """uniform random actions before the actor acts and learns"""
    length: int = 200
    """steps per episode (also the evaluation episode length)"""
    explore: float = 0.1
    """sd of TD3's Gaussian exploration noise"""
    hidden: int = 256
    """width of TD3's actor and critics"""
    gamma: float = 0.99
    """TD3's discount"""


def _task(task: str) -> tuple[str, float]:
    if task not in TASKS:
        raise ValueError(f"gtp control: unknown task {task!r}; choose from {sorted(TASKS)}")
    return TASKS[task]


def make_env(task: str):
    """The gymnasium environment of ``task`` (imported here: gymnasium is needed only by these rules)."""
    import gymnasium as gym

    env_id, _ = _task(task)
    return gym.make(env_id).unwrapped  # no TimeLimit: episodes are cut at `length` by the caller


def expert_action(task: str, obs: np.ndarray) -> np.ndarray:
    """The scripted controller for a batch of observations (E, S), actions in [-1, 1]: (E, 1)."""
    _task(task)
    if task not in SCRIPTED_TASKS:
        raise ValueError(f"gtp control: {task!r} has no scripted controller; its expert is the behaviour agent")
    obs = np.atleast_2d(obs)
    if task == "pendulum":
        theta, theta_dot = np.arctan2(obs[:, 1], obs[:, 0]), obs[:, 2]
        energy = 0.5 * theta_dot**2 + 15.0 * np.cos(theta)  # 15 = 3 g / (2 l): at rest at the top
        pump = np.clip(0.5 * (15.0 - energy) * np.where(theta_dot >= 0, 1.0, -1.0), -1, 1)
        pd_ = np.clip(-(10.0 * theta + 2.0 * theta_dot) / 2.0, -1, 1)
        a = np.where(obs[:, 0] > 0.9, pd_, pump)
    else:
        a = np.where(obs[:, 1] >= 0, 1.0, -1.0)
    return a[:, None]


def collect(task: str, cfg: ControlDataConfig, seed: int) -> dict[str, np.ndarray]:
    """Behaviour episodes of ``task`` as flat transitions in the maze dataset's format (actions in [-1, 1])."""
    _, scale = _task(task)
    if task not in SCRIPTED_TASKS:
        raise ValueError(f"gtp control: {task!r} has no scripted behaviour; its data come from behaviour_data()")
    if not 0 <= cfg.random_frac <= 1 or not 0 <= cfg.max_eps <= 1:
        raise ValueError(f"gtp control dataset: random_frac and max_eps must lie in [0, 1]; got {cfg}")
    rng = np.random.default_rng(seed)
    env = make_env(task)
    fields = {k: [] for k in ("observations", "actions", "rewards", "next_observations", "terminals", "episode")}
    for e in range(cfg.episodes):
        obs, _ = env.reset(seed=int(rng.integers(2**31)))
        is_random, eps = rng.random() < cfg.random_frac, rng.uniform(0, cfg.max_eps)
        a_prev = rng.uniform(-1, 1)
        for _ in range(cfg.length):
            a_rand = float(np.clip(cfg.persistence * a_prev + np.sqrt(1 - cfg.persistence**2) * 1.5 * rng.uniform(-1, 1),
                                   -1, 1))
            if is_random or rng.random() < eps:
                a = a_rand
            else:
                a = float(np.clip(expert_action(task, obs)[0, 0] + cfg.noise * rng.standard_normal(), -1, 1))
            nxt, r, term, _, _ = env.step(np.array([scale * a], dtype=np.float32))
            for k, v in (("observations", obs), ("actions", [a]), ("rewards", r), ("next_observations", nxt),
                         ("terminals", float(term)), ("episode", e)):
                fields[k].append(v)
            obs, a_prev = nxt, a
            if term:
                break
    env.close()
    out = {k: np.asarray(v, dtype=np.int64 if k == "episode" else np.float64) for k, v in fields.items()}
    return out


def behaviour_data(task: str, cfg: BehaviourConfig, seed: int
                   ) -> tuple[dict[str, np.ndarray], TD3BCPolicy, list[dict[str, float]]]:
    """A task's dataset from an online TD3 agent: its replay buffer (the dataset's fields), its final
    actor (the ``expert`` reference) and its per-episode learning curve."""
    from repro.rl.td3bc import TD3BCConfig, fit_td3_online

    _, scale = _task(task)
    env = make_env(task)
    try:
        policy, _, data, history = fit_td3_online(
            env, TD3BCConfig(hidden=cfg.hidden, gamma=cfg.gamma, normalize=False), seed, env_steps=cfg.env_steps,
            start_steps=cfg.start_steps, explore=cfg.explore, length=cfg.length, action_scale=scale, progress_every=10)
    finally:
        env.close()
    return data, policy, history


def run_episodes(method: str, task: str, reset_seeds: list[int], length: int, *, wm: WorldModel | None,
                 prior: ActionDiffusion | None, plan: PlanConfig, seed: int,
                 policy: TD3BCPolicy | None = None, explore: float = 0.0, record: bool = False,
                 expert=None) -> dict[str, Any]:
    """Receding-horizon control of one episode per reset seed (planned as a batch); per-episode return.

    ``expert``: the reference controller of ``expert`` (observations (E, S) -> actions (E, A)); default
    the task's scripted controller.

    ``explore``: TD3's exploration noise on the td3bc actor (online collection). ``record``: also return
    the transitions (``"transitions"``, the dataset's fields, episode-major, ``episode`` = index of the
    reset seed), in the order they happened within each episode."""
    if method not in METHODS:
        raise ValueError(f"gtp control: unknown method {method!r}; choose from {METHODS}")
    _, scale = _task(task)
    envs = [make_env(task) for _ in reset_seeds]
    obs = np.stack([env.reset(seed=s)[0] for env, s in zip(envs, reset_seeds)])
    E, A = len(envs), int(envs[0].action_space.shape[0])
    act = Controller(method, expert or (lambda o: expert_action(task, o)), wm=wm, prior=prior, plan=plan, seed=seed,
                     n_problems=E, action_dim=A, policy=policy, explore=explore)
    ret, done, steps = np.zeros(E), np.zeros(E, bool), np.zeros(E, int)
    trans: list[list[tuple]] = [[] for _ in range(E)]
    for _ in range(length):
        if done.all():
            break
        a = act(obs)
        for i, env in enumerate(envs):
            if done[i]:
                continue
            before, ai = obs[i].copy(), np.array(a[i], dtype=np.float64)
            obs[i], r, term, _, _ = env.step((scale * ai).astype(np.float32))
            if record:
                trans[i].append((before, ai, r, obs[i].copy(), float(term), i))
            ret[i] += r
            steps[i] += 1
            done[i] = term
    for env in envs:
        env.close()
    out: dict[str, Any] = {"ret": ret, "steps": steps, **act.per_decision()}
    if record:
        rows = [t for ep in trans for t in ep]
        out["transitions"] = {k: np.asarray([t[j] for t in rows], dtype=np.int64 if k == "episode" else np.float64)
                              for j, k in enumerate(("observations", "actions", "rewards", "next_observations",
                                                     "terminals", "episode"))}
    return out


def evaluate_task(wm: WorldModel, prior: ActionDiffusion, task: str, cfg: dict, start_seed: int,
                  method_seed: int, policy: TD3BCPolicy | None = None,
                  behaviour: TD3BCPolicy | None = None) -> dict[str, Any]:
    """Every method on the same reset seeds (drawn from ``start_seed``): per-episode rows (``policy``: the
    task and seed's TD3+BC actor, needed when ``td3bc`` is among the methods; ``behaviour``: the TD3
    agent that collected a MuJoCo task's data, its ``expert``)."""
    if "expert" in cfg["methods"] and task not in SCRIPTED_TASKS and behaviour is None:
        raise ValueError(f"gtp control: method 'expert' on {task!r} needs the behaviour agent (none was given)")
    expert = None if behaviour is None else behaviour.act
    rng = np.random.default_rng(start_seed)
    reset_seeds = [int(s) for s in rng.integers(2**31, size=cfg["episodes"])]
    plan = from_dict(PlanConfig, cfg.get("plan"), "gtp.control.plan")
    rows = []
    for method in cfg["methods"]:
        out = run_episodes(method, task, reset_seeds, cfg["length"], wm=wm, prior=prior, plan=plan, seed=method_seed,
                           policy=policy, expert=expert)
        log.info("%s %s: mean return %.2f", task, method, out["ret"].mean())
        rows += [{"task": task, "method": method, "episode": e, "ret": float(out["ret"][e]), "steps": int(out["steps"][e]),
                  "evals": float(out["evals_per_decision"]), "denoiser": float(out["denoiser_per_decision"])}
                 for e in range(len(reset_seeds))]
    return {"task": task, "rows": rows}


def aggregate_control(runs: dict[tuple[str, int], dict]) -> tuple[dict, pd.DataFrame]:
    """``metrics["control"]``: per task and method the per-seed mean return (paired by seed); tidy table."""
    eps = pd.concat([pd.DataFrame(r["rows"]).assign(seed=s) for (_, s), r in sorted(runs.items())], ignore_index=True)
    tidy = (eps.groupby(["task", "method", "seed"])
            .agg(ret=("ret", "mean"), steps=("steps", "mean"), evals=("evals", "mean"), denoiser=("denoiser", "mean"),
                 episodes=("ret", "size")).reset_index())
    metrics: dict[str, Any] = {}
    for task, g in tidy.groupby("task"):
        seeds = sorted(g.seed.unique())
        metrics[task] = {"return": {m: sample(gm.set_index("seed").ret.reindex(seeds).values, [f"seed{s}" for s in seeds],
                                              "seed")
                                    for m, gm in g.groupby("method")}}
    return metrics, tidy


def control_table(tidy: pd.DataFrame) -> pd.DataFrame:
    """Return (mean +- s.e. over seeds) per task and method, with planning compute per decision.

    Over one seed the s.e. is undefined: NaN, which the table prints as missing (never 0, which reads as exact)."""
    g = tidy.groupby(["task", "method"])
    out = pd.DataFrame({"return": g.ret.mean(), "return_se": g.ret.std(ddof=1) / np.sqrt(g.ret.count()),
                        "model_evals_per_decision": g.evals.mean(), "denoiser_calls_per_decision": g.denoiser.mean(),
                        "seeds": g.ret.count()}).reset_index()
    order = {m: i for i, m in enumerate(METHODS)}
    return out.sort_values(["task", "method"], key=lambda s: s.map(order) if s.name == "method" else s
                           ).reset_index(drop=True)
