"""LoRA's resumable state: a checkpoint resumes only the configuration that wrote it, a run killed after a
checkpoint resumes to the same adapter and the same records (e.g. held-out losses), a finished run can be
rerun, and a killed writer's temporary folder is cleared. An untrained tiny model keeps each test to seconds."""

from __future__ import annotations

import dataclasses
import logging

import pytest
import torch

from repro.llm.lora import LoraConfig, checkpoints, finetune_lora, loss_on
from repro.llm.tiny import TinyConfig, TinyGPT, load_tiny, save_tiny, tiny_lm

DATA = ["the dog sat on the rug.", "a red fox ran home.", "bob likes red hats.", "the sun is hot today."]
HELD = ["a cat sat on a mat.", "bob likes blue hats."]
CFG = LoraConfig(targets=("qkv", "fc"), rank=4, alpha=8, dropout=0.1, lr=2e-2, steps=6, batch_size=2, save_every=2)


class Killed(Exception):
    """What a SIGKILL does to the training loop, as far as the files on disk are concerned."""


def _base(folder, seed: int):
    model = TinyGPT(TinyConfig(n_layer=2, n_head=2, d_model=32, context=48))
    model.init_weights(torch.Generator().manual_seed(seed))
    return save_tiny(tiny_lm(model.eval(), "tiny-state"), folder)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return _base(tmp_path_factory.mktemp("base"), 0)


def _lm(base):
    return load_tiny(base, name="tiny-state")


def _adapter(lm) -> dict[str, torch.Tensor]:
    return {k: v.clone() for k, v in lm.module.state_dict().items() if "lora_" in k}


def _same(a, b) -> bool:
    return a.keys() == b.keys() and len(a) > 0 and all(torch.equal(a[k], b[k]) for k in a)


def _run(base, out, cfg=CFG, seed=3, data=DATA, **kw):
    lm = _lm(base)
    return finetune_lora(lm, data, cfg, out, seed, on_checkpoint=lambda step: loss_on(lm, HELD), **kw)


@pytest.mark.parametrize("change", ["lr", "steps", "seed", "data", "base weights"])
def test_a_checkpoint_of_another_configuration_restarts_from_scratch_and_says_why(base, tmp_path, caplog, change):
    first = _run(base, tmp_path / "run")
    cfg, seed, data, weights = CFG, 3, DATA, base
    if change == "lr":
        cfg = dataclasses.replace(CFG, lr=CFG.lr / 2)
    elif change == "steps":  # e.g. epochs 1 -> 2 in a paper's preset
        cfg = dataclasses.replace(CFG, steps=2 * CFG.steps)
    elif change == "seed":
        seed = 4
    elif change == "data":
        data = [*DATA[:-1], "the moon is cold tonight."]
    else:  # same name, other weights
        weights = _base(tmp_path / "other-base", 1)
    with caplog.at_level(logging.INFO, logger="repro.llm.lora"):
        again = _run(weights, tmp_path / "run", cfg=cfg, seed=seed, data=data)
    fresh = _run(weights, tmp_path / "fresh", cfg=cfg, seed=seed, data=data)
    assert again.resumed_from == 0 and "another configuration" in caplog.text and "from scratch" in caplog.text
    assert again.losses == fresh.losses and again.records == fresh.records
    assert _same(_adapter(again.lm), _adapter(fresh.lm))
    assert again.config_hash == fresh.config_hash != first.config_hash
    assert [p.name for p in checkpoints(tmp_path / "run")] == [p.name for p in checkpoints(tmp_path / "fresh")]


def test_killed_after_a_checkpoint_then_resumed_equals_an_uninterrupted_run(base, tmp_path):
    full = _run(base, tmp_path / "full")
    assert sorted(full.records) == [2, 4, 6]

    def kill(step, loss):
        if step == 3:
            raise Killed

    with pytest.raises(Killed):
        _run(base, tmp_path / "part", on_step=kill)
    assert [p.name for p in checkpoints(tmp_path / "part")] == ["step-000002"]
    resumed = _run(base, tmp_path / "part")
    assert resumed.resumed_from == 2
    assert resumed.losses == full.losses  # every step's training loss, resumed ones included
    assert resumed.records == full.records  # the records taken before the kill come back with the checkpoint
    assert _same(_adapter(resumed.lm), _adapter(full.lm))


def test_rerunning_a_finished_run_returns_it_and_resume_false_retrains(base, tmp_path):
    full = _run(base, tmp_path / "run")
    again = _run(base, tmp_path / "run")
    assert again.resumed_from == CFG.steps and again.checkpoint == full.checkpoint
    assert again.losses == full.losses and again.records == full.records
    assert _same(_adapter(again.lm), _adapter(full.lm))  # the finished adapter, loaded
    scratch = _run(base, tmp_path / "run", resume=False)
    assert scratch.resumed_from == 0 and scratch.losses == full.losses and scratch.records == full.records
    assert _same(_adapter(scratch.lm), _adapter(full.lm))


def test_a_killed_writers_temporary_checkpoint_folder_is_cleared(base, tmp_path):
    out = tmp_path / "run"
    stale = out / ".step-000002.x1y2.tmp"  # what a SIGKILL during a checkpoint write leaves
    stale.mkdir(parents=True)
    (stale / "adapter_model.safetensors").write_bytes(b"half")
    _run(base, out)
    assert sorted(p.name for p in out.iterdir()) == ["step-000002", "step-000004", "step-000006"]
