"""Task (i) of MCPO: the planted answers, distractors and pi*, the exact metrics, and training toward pi*."""

import itertools
import math

import numpy as np
import pytest
import torch

from repro.papers.mcpo.experiment import TrainConfig, aggregate, alpha_key, evaluate, run_seed, train_policy
from repro.papers.mcpo.synth import TaskConfig, make_task, sequence_logp

CFG = TaskConfig(n_prompts=6, length=3, vocab=5, hard_frac=0.5)
EV = dict(ks=[4], mode_mass=0.05, cover_mass=0.01)


def test_planted_answers_distractors_and_reference_modes():
    task = make_task(CFG, seed=3)
    assert int(task.hard.sum()) == 3
    for x in range(CFG.n_prompts):
        answers, d = task.responses[task.answers[x]], task.responses[task.distractor[x]]
        assert task.reward[x, task.answers[x]].tolist() == list(CFG.rewards)
        assert int(task.correct[x].sum()) == len(CFG.rewards)
        assert (answers != d).all()                                 # the distractor shares no token position
        assert not task.correct[x, task.distractor[x]]


def test_the_reference_leans_to_the_distractor_on_hard_prompts_and_to_the_best_answer_on_easy_ones():
    """Per position, the reference's top token is the planted one in most cases.

    Bonus 1.5 (hard) / 1.0 (easy) against the largest of 4 other N(0, 0.5^2) logits: the planted token
    wins 94% / 79% of positions (simulated); over 20 seeds x 3 prompts x 3 positions each,
    0.85 / 0.65 lie more than 4 s.e. below.
    """
    hits = {True: [], False: []}
    for seed in range(20):
        task = make_task(CFG, seed=seed)
        for x in range(CFG.n_prompts):
            planted = task.responses[task.distractor[x] if task.hard[x] else task.answers[x, 0]]
            hits[bool(task.hard[x])].extend((task.ref_logits[x].argmax(-1) == planted).tolist())
    assert np.mean(hits[True]) > 0.85 and np.mean(hits[False]) > 0.65


def test_target_is_the_reward_tilted_reference_by_brute_force():
    task = make_task(CFG, seed=4)
    ref = torch.softmax(task.ref_logits, -1).numpy()
    for x in (0, 5):
        unnorm = {}
        for y in itertools.product(range(CFG.vocab), repeat=CFG.length):
            n = int(np.ravel_multi_index(y, (CFG.vocab,) * CFG.length))
            tilt = math.exp(task.reward[x, n].item() / CFG.beta)
            unnorm[n] = math.prod(ref[x, t, y[t]] for t in range(CFG.length)) * tilt
        z = sum(unnorm.values())
        got = task.target_logp[x].exp()
        assert all(abs(got[n].item() - p / z) < 1e-12 for n, p in unnorm.items())


def test_oracle_and_a_one_answer_policy_have_their_closed_form_metrics():
    task = make_task(CFG, seed=5)
    oracle = evaluate(task, task.target_logp, **EV)
    assert oracle["kl_reverse"] == pytest.approx(0.0, abs=1e-12) and oracle["coverage"] == 1.0
    # all mass on the best answer: pass@1 = pass@k = 1, reward = 1, coverage = share of modes that are c_1
    logp = torch.full_like(task.ref_logp, -1e4)
    logp[torch.arange(CFG.n_prompts), task.answers[:, 0]] = 0.0
    one = evaluate(task, logp, **EV)
    assert one["pass1"] == pytest.approx(1.0) and one["pass4"] == pytest.approx(1.0)
    assert one["reward"] == pytest.approx(CFG.rewards[0])
    modes = task.target_logp.exp() >= 0.05
    assert one["coverage"] == pytest.approx(1 / modes.sum().item() * CFG.n_prompts)


def test_training_moves_every_alpha_toward_the_target_and_is_deterministic():
    task = make_task(CFG, seed=6)
    floor = evaluate(task, task.ref_logp, **EV)["kl_reverse"]
    train = TrainConfig(steps=40)
    for method, alpha in (("mcpo", 0.0), ("mcpo", 1.0), ("rloo", None)):
        logits = train_policy(task, method, alpha, train, seed=11)
        assert evaluate(task, sequence_logp(logits, task.responses), **EV)["kl_reverse"] < 0.7 * floor, method
    again = train_policy(task, "mcpo", 0.5, train, seed=11)
    assert torch.equal(again, train_policy(task, "mcpo", 0.5, train, seed=11))


def test_aggregate_writes_paired_per_seed_samples():
    cfg = {"task": {"n_prompts": 4, "vocab": 4}, "train": {"steps": 3}, "alphas": [0.0, 1.0], "ks": [4],
           "mode_mass": 0.05, "cover_mass": 0.01}
    runs = {s: run_seed(cfg, 100 + s, 200 + s) for s in range(2)}
    metrics, tidy = aggregate(runs, {"alphas": cfg["alphas"], "ks": [4], "claim_k": 4})
    unit = metrics["passk"][alpha_key(1.0)]["per_unit"]
    assert unit["unit"] == "seed" and unit["ids"] == ["seed0", "seed1"]
    assert set(tidy.method) == {"alpha0", "alpha1", "rloo", "pi_star", "pi_ref"}
    with pytest.raises(ValueError, match="claim_k"):
        aggregate(runs, {"alphas": cfg["alphas"], "ks": [4], "claim_k": 8})


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="rewards"):
        TaskConfig(vocab=3, rewards=(1.0, 0.5, 0.2))
    with pytest.raises(ValueError, match="beta"):
        TaskConfig(beta=0.0)
    with pytest.raises(ValueError, match="method"):
        train_policy(make_task(CFG, 0), "ppo", 0.0, TrainConfig(steps=1), seed=0)
    assert alpha_key(-0.5) == "alpham0p5" and alpha_key(0.25) == "alpha0p25" and alpha_key(1) == "alpha1"
