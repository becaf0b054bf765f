"""The diffusion policy's receding horizon in chunks (Diffusion Policy's Tp / Ta): a window of predicted actions is
handed out in order, a new one is drawn after Ta of them (and at an episode's start), Ta = 1 is the old closed-loop
path bit for bit, and every preset's setting fits the windows the prior is trained on."""

import numpy as np
import pytest
import torch

from repro.config import from_dict, workflow_config
from repro.papers.gtp.experiment import Controller, PlanConfig
from repro.papers.gtp.grid import BLOCKS
from repro.rl.diffusion_prior import ActionDiffusion, DiffusionConfig
from repro.rl.planners import ActionChunks
from repro.seeding import torch_generator
from tests.conftest import REPO

E, S, H, A, K = 2, 3, 5, 2, 3


class Recorder:
    """A sampler whose window n (0-based) holds 100 n + 10 k + problem at step k of the window; it records the
    observations it was called with."""

    def __init__(self, horizon: int = H):
        self.horizon, self.seen = horizon, []

    def __call__(self, obs):
        n = len(self.seen)
        self.seen.append(np.array(obs))
        k = np.arange(self.horizon)[None, :, None]
        e = np.arange(len(obs))[:, None, None]
        return np.broadcast_to(100 * n + 10 * k + e, (len(obs), self.horizon, A)).astype(float)


def test_chunks_hand_out_each_window_in_order_and_draw_after_ta_actions():
    sampler = Recorder()
    chunks = ActionChunks(sampler, execute=3)
    got = [chunks(np.full((E, S), t))[:, 0] for t in range(8)]
    # windows drawn at steps 0, 3, 6 from the observations of those steps; steps k = 0, 1, 2 of each
    assert [int(a[0]) for a in got] == [0, 10, 20, 100, 110, 120, 200, 210]
    assert [int(a[1]) for a in got] == [1, 11, 21, 101, 111, 121, 201, 211]
    assert len(sampler.seen) == chunks.drawn == 3
    assert [int(o[0, 0]) for o in sampler.seen] == [0, 3, 6]
    chunks.reset()  # an episode's start: a new window at once, even mid-chunk
    assert int(chunks(np.zeros((E, S)))[0, 0]) == 300 and chunks.drawn == 4
    # Ta = Tp executes whole windows
    whole = ActionChunks(Recorder(), execute=H)
    assert [int(whole(np.zeros((E, S)))[0, 0]) for _ in range(2 * H)] == [10 * k for k in range(H)] + [
        100 + 10 * k for k in range(H)
    ]


def test_chunks_refuse_impossible_settings():
    for bad in (0, -1, 2.0, True):
        with pytest.raises(ValueError, match="execute"):
            ActionChunks(Recorder(), execute=bad)
    with pytest.raises(ValueError, match="Tp >= execute"):
        ActionChunks(Recorder(horizon=2), execute=3)(np.zeros((E, S)))
    with pytest.raises(ValueError, match="policy_execute"):
        PlanConfig(horizon=4, policy_execute=5)
    with pytest.raises(ValueError, match="policy_execute"):
        PlanConfig(horizon=4, policy_execute=0)


def test_open_loop_chunks_on_an_integrator_worked_by_hand():
    """x' = x + a with a sampler that predicts 4 actions of -x/2 from the state it sees. From x = 8:
    Ta = 1 re-plans every step and halves x: 8 4 2 1 0.5; Ta = 2 executes -4 twice, then from 0 predicts zeros:
    8 4 0 0 0; Ta = 4 executes -4 four times open loop and overshoots: 8 4 0 -4 -8."""

    def sample(x):
        return np.repeat(-x[:, None] / 2, 4, axis=1)  # (1, 4, 1)

    want = {1: [8, 4, 2, 1, 0.5], 2: [8, 4, 0, 0, 0], 4: [8, 4, 0, -4, -8]}
    for ta, path in want.items():
        chunks, x = ActionChunks(sample, ta), np.array([[8.0]])
        seen = [8.0]
        for _ in range(4):
            x = x + chunks(x)
            seen.append(float(x[0, 0]))
        assert seen == path, ta


def _prior() -> ActionDiffusion:
    torch.manual_seed(0)
    return ActionDiffusion(H * A, S, DiffusionConfig(steps=K, hidden=8, layers=1)).eval()


def _states(n: int) -> list[np.ndarray]:
    rng = np.random.default_rng(3)
    return [rng.standard_normal((E, S)) for _ in range(n)]


def test_one_action_per_window_is_the_old_closed_loop_path_bit_for_bit():
    """Before chunks the diffusion policy drew one window from the seed's generator at every decision and executed
    its first action; Ta = 1 (the default) must give exactly those actions and compute."""
    prior, states = _prior(), _states(6)
    gen, old = torch_generator(11), []
    for obs in states:  # the old path, written out
        window = prior.sample(torch.as_tensor(obs, dtype=torch.float32), 1, gen)[:, 0].reshape(E, H, A)
        old.append(window[:, 0].numpy())
    for plan in (PlanConfig(horizon=H), PlanConfig(horizon=H, policy_execute=1)):
        act = Controller("diffusion_policy", None, wm=None, prior=prior, plan=plan, seed=11, n_problems=E, action_dim=A)
        new = [act(obs) for obs in states]
        assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(new, old))
        assert act.per_decision() == {"evals_per_decision": 0, "denoiser_per_decision": K}


def test_controller_executes_ta_actions_of_each_window_and_counts_the_denoiser_per_window():
    """Ta = 3 over 7 decisions: windows from the states of decisions 0, 3 and 6 (the generator's first three
    draws), the states in between unread; K denoiser calls per window, 3 K / 7 per decision."""
    prior, states = _prior(), _states(7)
    act = Controller("diffusion_policy", None, wm=None, prior=prior, plan=PlanConfig(horizon=H, policy_execute=3),
                     seed=5, n_problems=E, action_dim=A)
    got = [act(obs) for obs in states]
    gen = torch_generator(5)
    for start in (0, 3, 6):
        window = prior.sample(torch.as_tensor(states[start], dtype=torch.float32), 1, gen)[:, 0].reshape(E, H, A)
        for k in range(min(3, 7 - start)):
            assert np.array_equal(got[start + k], window[:, k].numpy())
    assert act.per_decision()["denoiser_per_decision"] == pytest.approx(3 * K / 7)
    assert act.per_decision()["evals_per_decision"] == 0


def test_every_preset_executes_a_chunk_that_fits_its_window_and_paper_scale_is_the_authors():
    """Every scale and block builds its plan (1 <= Ta <= Tp = horizon) and sets Ta explicitly; at paper scale the
    diffusion policy predicts 16 and executes 8, Diffusion Policy's defaults."""
    presets = workflow_config(REPO)["gtp"]
    for scale in ("smoke", "small", "paper"):
        blocks = {"maze": presets[scale], **{b: presets[scale][b] for b in BLOCKS if b in presets[scale]}}
        for name, block in blocks.items():
            assert "policy_execute" in block["plan"], (scale, name)
            plan = from_dict(PlanConfig, block["plan"], f"gtp.{scale}.{name}.plan")
            if scale == "paper":
                assert (plan.horizon, plan.policy_execute) == (16, 8), name
