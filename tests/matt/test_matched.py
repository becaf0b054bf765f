"""The paper's comparison (MATT, AIM only, against FOCUS + next-token training at equal CPU time) against
cases worked by hand: the step count that matches compute, one next-token step of the new rows, the
arms' starts and lengths, and the aggregate's per-item, per-seed and CPU-ratio numbers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from repro.methods.tokenizer_transfer import aim
from repro.methods.tokenizer_transfer.ntp import NextTokenTrainer
from repro.papers.matt import tokens
from repro.papers.matt.corpus import build_data
from repro.papers.matt.experiment import Source, heldout_texts, initial_rows, run_method
from repro.papers.matt.matched import calibrate, ntp_steps, run_arm, summarise_matched


def test_ntp_steps_scale_the_aim_steps_by_the_ratio_of_median_step_costs():
    # medians: AIM (1, 2, 3) -> 2 s, NTP (0.4, 0.5, 0.5, 0.6) -> 0.5 s: 16 AIM steps cost 32 s = 64 NTP steps
    assert ntp_steps(16, [2.0, 1.0, 3.0], [0.5, 0.4, 0.6, 0.5]) == 64
    # a median, not a mean: one slow AIM step (a busy machine) does not move it
    assert ntp_steps(16, [2.0, 2.0, 30.0], [0.5, 0.5, 0.5]) == 64
    assert ntp_steps(4, [1.0], [3.0]) == 1  # 4 / 3 = 1.33 rounds to 1
    assert ntp_steps(5, [1.0], [2.0]) == 2  # 2.5 rounds half to even
    assert ntp_steps(2, [1.0], [10.0]) == 1  # 0.2, but never no training at all
    with pytest.raises(ValueError, match="no timed step"):
        ntp_steps(4, [], [1.0])
    with pytest.raises(ValueError, match="no CPU time"):
        ntp_steps(4, [1.0], [0.0])


def _tiny_net(vocab: int, seed: int = 1):
    from repro.llm.tiny import TinyConfig, TinyGPT

    model = TinyGPT(TinyConfig(n_layer=2, n_head=2, d_model=16, context=32, vocab_size=vocab))
    model.init_weights(torch.Generator().manual_seed(seed))
    return aim.TinyNet(model)


def test_a_next_token_step_is_adamw_on_the_new_rows_only():
    # Adam's first step, bias-corrected, no weight decay: new -= lr * g / (|g| + eps), g the gradient of the
    # mean cross-entropy of tokens 1..T given 0..T-1; the source rows and the network do not move
    net = _tiny_net(40)
    W = net.source_embeddings.detach()
    W_src, start = W[:30], W[30:].clone()
    batch = torch.tensor([[0, 31, 5, 33, 7, 39], [2, 30, 30, 11, 35, 1]])
    trainer = NextTokenTrainer(net, W_src, start, lr=0.01)
    p = start.clone().requires_grad_(True)
    logp = net.logits(batch[:, :-1], torch.cat([W_src, p])).log_softmax(-1)  # (2, 5, 40)
    nll = -logp.gather(-1, batch[:, 1:, None]).mean()  # the cross-entropy written out
    nll.backward()
    loss = trainer.step(batch)
    assert loss == pytest.approx(nll.item(), rel=1e-6)
    torch.testing.assert_close(trainer.rows, start - 0.01 * p.grad / (p.grad.abs() + 1e-8), rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(W_src, W[:30])
    assert all(not q.requires_grad for q in net.model.parameters())


@pytest.fixture(scope="module")
def tiny_source():
    """A tiny untrained GPT on a byte-level BPE, its vocabulary extended on the bigram-chain Ukrainian."""
    data = build_data({"n_train": 40, "n_heldout": 3, "n_mc": 4, "n_gen": 2, "english_chars": 4000}, seed=0)
    src_tok = tokens.train_source_tokenizer(data["english"], 300)
    tgt_tok = tokens.extend_tokenizer(src_tok, data["ukrainian_train"], 40)
    from repro.llm.tiny import TinyConfig, TinyGPT

    model = TinyGPT(TinyConfig(n_layer=2, n_head=2, d_model=16, context=48, vocab_size=src_tok.get_vocab_size()))
    model.init_weights(torch.Generator().manual_seed(0))
    src = Source(aim.TinyNet(model), src_tok, tgt_tok)
    data["heldout"] = heldout_texts(src, data["ukrainian_heldout"], 48)
    cfg = {
        "context": 48,
        "batch_size": 2,
        "max_new_tokens": 4,
        "lr": 0.003,
        "aux_dim": 8,
        "budgets": [0],
        "aim": {"n_layers": 1, "steps": 2, "lr": 0.001, "batch_size": 2, "n_rows": 8},
        "matched": {"aim_steps": 3, "calibration_steps": 2},
    }
    return src, data, cfg


def test_the_ntp_arm_is_the_variants_focus_run_stopped_at_the_same_step(tiny_source):
    # two implementations agree: the arm's next-token training from FOCUS, 3 steps, and the token-budget
    # variant's FOCUS run evaluated at 3 batches' worth of tokens, with the same seed (the same batches);
    # so the arm's untimed first step, on a throwaway copy, leaks into nothing it returns
    src, data, cfg = tiny_source
    arm = run_arm(src, "focus_ntp", data, cfg, {"aim_steps": 3, "ntp_steps": 3}, seed=7)
    budget = 3 * cfg["batch_size"] * cfg["context"]
    variant = run_method(src, "focus", data, {**cfg, "budgets": [budget]}, seed=7)
    assert arm["steps"] == 3 and len(arm["loss"]) == 3 and arm["tokens"] == budget
    assert arm["loss"] == variant["lm_loss"]
    last = variant["checkpoints"][-1]
    for task in ("mc", "gen", "bpc"):
        assert arm[task] == last[task]
    assert arm["train_cpu_s"] > 0


def test_the_matt_arm_is_focus_then_aim_alone_and_is_deterministic(tiny_source):
    src, data, cfg = tiny_source
    one = run_arm(src, "matt", data, cfg, {"aim_steps": 3, "ntp_steps": 5}, seed=7)
    two = run_arm(src, "matt", data, cfg, {"aim_steps": 3, "ntp_steps": 5}, seed=7)
    assert one["steps"] == 3 and len(one["loss"]) == 3
    assert {k: v for k, v in one.items() if k != "train_cpu_s"} == {k: v for k, v in two.items() if k != "train_cpu_s"}
    # the same rows as the AIM warm-up from FOCUS called directly (no next-token step after it, and
    # nothing of the arm's untimed first step)
    focus = torch.tensor(initial_rows(src, "focus", data["ukrainian_train"], cfg["aux_dim"]), dtype=src.W_src.dtype)
    from repro.papers.matt.experiment import aim_rows, evaluate
    from repro.seeding import torch_generator

    rows = aim_rows(src, data["ukrainian_train"][:8], cfg["context"])
    new, losses, _ = aim.warm_up(
        src.net, src.W_src, focus, rows, n_layers=1, steps=3, lr=0.001, batch_size=2, generator=torch_generator(8)
    )
    assert losses == one["loss"]
    direct = evaluate(src.net, torch.cat([src.W_src, new]), src.tgt_tok, src.bos, data, 48, 4)
    assert direct["bpc"] == one["bpc"]
    with pytest.raises(ValueError, match="unknown matt arm"):
        run_arm(src, "focus", data, cfg, {"aim_steps": 1, "ntp_steps": 1}, seed=7)


def test_calibration_times_each_objective_and_derives_the_ntp_steps_from_its_medians(tiny_source):
    src, data, cfg = tiny_source
    cal = calibrate(src, data, cfg, seed=3)
    assert len(cal["aim_step_cpu_s"]) == len(cal["ntp_step_cpu_s"]) == 2  # the untimed first step left out
    assert cal["aim_steps"] == 3
    assert cal["ntp_steps"] == ntp_steps(3, cal["aim_step_cpu_s"], cal["ntp_step_cpu_s"])
    assert cal["aim_step_median_s"] == pytest.approx(np.median(cal["aim_step_cpu_s"]))


def test_summary_of_the_arms_worked_by_hand():
    source = {"mc": [1.0, 1.0, 0.0, 1.0], "gen": [1.0, 0.0], "bpc": [2.0, 4.0]}  # means 0.75, 0.5, 3.0

    def run(unit, mc, gen, bpc, cpu, arm, steps):
        return {
            "unit": unit,
            "seed": 100 + unit,
            "arm": arm,
            "steps": steps,
            "tokens": steps * 10,
            "train_cpu_s": cpu,
            "loss": [],
            "mc": mc,
            "gen": gen,
            "bpc": bpc,
        }

    runs = {
        "matt": [
            run(0, [1, 0, 0, 1], [1, 0], [3.0, 5.0], 10.0, "matt", 4),
            run(1, [1, 1, 0, 1], [0, 0], [4.0, 4.0], 12.0, "matt", 4),
        ],
        "focus_ntp": [
            run(1, [0, 1, 0, 1], [1, 1], [6.0, 6.0], 9.0, "focus_ntp", 2),
            run(0, [0, 0, 0, 1], [0, 0], [2.0, 2.0], 11.0, "focus_ntp", 2),
        ],
    }
    block, table = summarise_matched(source, runs, {"ntp_steps": 2})
    # per item, mean over the two units
    assert block["score"]["mc"]["matt"]["values"] == [1.0, 0.5, 0.0, 1.0]
    assert block["score"]["bpc"]["focus_ntp"]["values"] == [4.0, 4.0]
    assert block["score"]["bpc"]["matt"]["ids"] == ["bpc0", "bpc1"]
    # recovery per unit: mc 0.5 / 0.75 and 0.75 / 0.75; bpc 3 / 4 and 3 / 4; gen 0.5 / 0.5 and 0 / 0.5
    np.testing.assert_allclose(block["recovery"]["mc"]["matt"]["values"], [2 / 3, 1.0])
    np.testing.assert_allclose(block["recovery"]["bpc"]["matt"]["values"], [0.75, 0.75])
    np.testing.assert_allclose(block["recovery"]["gen"]["focus_ntp"]["values"], [0.0, 2.0])
    assert block["recovery"]["mc"]["matt"]["unit"] == "seed"
    # focus_ntp's training CPU over matt's, paired by unit: 11 / 10 and 9 / 12
    np.testing.assert_allclose(block["cpu_ratio_ntp_over_aim"]["values"], [1.1, 0.75])
    assert block["steps"] == {"matt": 4, "focus_ntp": 2} and block["calibration"] == {"ntp_steps": 2}
    row = {r["arm"]: r for r in table}["focus_ntp"]
    assert row["train_cpu_s"] == 10.0 and row["bpc"] == 4.0 and row["recovery_bpc"] == 0.75
    assert math.isclose(row["recovery_mc"], 0.375 / 0.75)  # items (0, 0.5, 0, 1) average 0.375


def test_summary_refuses_arms_trained_with_other_seeds():
    base = {"arm": "matt", "steps": 1, "tokens": 1, "train_cpu_s": 1.0, "loss": [], "mc": [1], "gen": [1], "bpc": [1.0]}
    runs = {"matt": [{**base, "unit": 0, "seed": 1}], "focus_ntp": [{**base, "arm": "focus_ntp", "unit": 0, "seed": 2}]}
    with pytest.raises(ValueError, match="not paired"):
        summarise_matched({"mc": [1], "gen": [1], "bpc": [1.0]}, runs, {})
