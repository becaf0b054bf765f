"""evalmeta's fine-tune against its own leftovers: a changed preset retrains from scratch, a run killed after a
checkpoint resumes to the same adapter and the same best step, a finished run can be rerun (with or without its
checkpoints), and a failure while copying the best checkpoint leaves no partial folder. A tiny untrained model
keeps each to seconds."""

from __future__ import annotations

import logging
import shutil

import pytest
import torch

import repro.llm.lora
from repro.llm.tiny import TinyConfig, TinyGPT, load_tiny, save_tiny, tiny_lm
from repro.papers.evalmeta import experiment
from repro.papers.evalmeta.experiment import finetune

DOCS = [{"text": f"document {i}: the assistant {w} the request and explains why."}
        for i, w in enumerate(["weighs", "reads", "answers", "declines", "checks", "notes", "reviews", "flags",
                               "meets", "parses"])]
CFG = {"targets": ["qkv", "proj"], "rank": 4, "alpha": 8, "dropout": 0.0, "lr": 0.02, "epochs": 2, "batch_size": 2,
       "max_length": 64, "heldout": 0.2, "eval_every": 2}  # 8 training documents: 8 steps, held-out loss at 2, 4, 6, 8


class Killed(Exception):
    pass


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    model = TinyGPT(TinyConfig(n_layer=2, n_head=2, d_model=32, context=96))
    model.init_weights(torch.Generator().manual_seed(0))
    return save_tiny(tiny_lm(model.eval(), "tiny-evalmeta"), tmp_path_factory.mktemp("base"))


def _finetune(base, out, cfg=CFG):
    return finetune(load_tiny(base, name="tiny-evalmeta"), DOCS, cfg, out, seed=5)


def _best(out) -> bytes:
    return (out / "best" / "adapter_model.safetensors").read_bytes()


def _leftovers(out) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob(".*"))


@pytest.fixture(scope="module")
def uninterrupted(base, tmp_path_factory):
    out = tmp_path_factory.mktemp("full")
    return out, _finetune(base, out)


def test_a_changed_preset_retrains_from_scratch_and_says_so(base, tmp_path, caplog):
    _finetune(base, tmp_path / "run", {**CFG, "lr": 0.02, "epochs": 1})
    changed = {**CFG, "lr": 0.01, "epochs": 2}
    with caplog.at_level(logging.INFO, logger="repro.llm.lora"):
        again = _finetune(base, tmp_path / "run", changed)
    fresh = _finetune(base, tmp_path / "fresh", changed)
    assert "another configuration" in caplog.text and "from scratch" in caplog.text
    assert "LoRA: resuming" not in caplog.text
    assert again == fresh
    assert _best(tmp_path / "run") == _best(tmp_path / "fresh")


def test_killed_after_a_checkpoint_then_rerun_gives_the_same_adapter_and_best_step(base, tmp_path, uninterrupted,
                                                                                    monkeypatch):
    full_dir, full = uninterrupted
    save = repro.llm.lora._save

    def save_then_die(out_dir, step, *args, **kwargs):
        path = save(out_dir, step, *args, **kwargs)
        if step == 4:
            raise Killed
        return path

    monkeypatch.setattr(repro.llm.lora, "_save", save_then_die)
    with pytest.raises(Killed):
        _finetune(base, tmp_path)
    monkeypatch.setattr(repro.llm.lora, "_save", save)
    resumed = _finetune(base, tmp_path)
    assert resumed["heldout_loss"] == full["heldout_loss"]  # the losses measured before the kill are kept
    assert resumed["best_step"] == full["best_step"]
    assert resumed == full
    assert _best(tmp_path) == _best(full_dir)
    assert _leftovers(tmp_path) == []


def test_rerunning_a_finished_finetune_works_with_or_without_its_checkpoints(base, tmp_path, uninterrupted):
    full_dir, full = uninterrupted
    first = _finetune(base, tmp_path)
    assert _finetune(base, tmp_path) == first == full  # e.g. --forcerun with the checkpoints still there
    shutil.rmtree(tmp_path / "checkpoints")  # what Snakemake does to a directory() output before a rerun
    (tmp_path / "best" / "adapter_model.safetensors").unlink()  # and to a declared file; adapter_config.json stays
    assert _finetune(base, tmp_path) == full
    assert _best(tmp_path) == _best(full_dir)
    assert _leftovers(tmp_path) == []


def test_a_failure_while_copying_the_best_checkpoint_leaves_no_partial_folder(base, tmp_path, uninterrupted,
                                                                              monkeypatch):
    full_dir, full = uninterrupted
    copytree = shutil.copytree

    def copy_half_then_fail(src, dst, *args, **kwargs):
        copytree(src, dst, *args, **kwargs)
        (dst / "adapter_model.safetensors").unlink()
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(experiment.shutil, "copytree", copy_half_then_fail)
    with pytest.raises(OSError, match="best: no space left on the device"):
        _finetune(base, tmp_path)
    assert not (tmp_path / "best").exists() and _leftovers(tmp_path) == []
    monkeypatch.setattr(experiment.shutil, "copytree", copytree)
    # a temporary folder of a killed copy (SIGKILL: no clean-up ran) is cleared by the next run
    (tmp_path / ".best.k1ll3d.tmp").mkdir()
    (tmp_path / ".best.k1ll3d.tmp" / "adapter_config.json").write_text("{")
    assert _finetune(base, tmp_path) == full
    assert _best(tmp_path) == _best(full_dir) and _leftovers(tmp_path) == []
