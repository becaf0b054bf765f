"""LoRA fine-tuning (Hu et al., ICLR 2022, arXiv:2106.09685) of a local model with ``peft``; resumable.

``finetune_lora(lm, data, cfg, out_dir, seed)`` adds rank-``r`` adapters ``W + (alpha / r) B A`` to
the modules named in ``cfg.targets`` and trains only ``A`` and ``B`` on the next-token loss of
``data``:

- a list of strings: documents; every token after the first is a target (each document ends
  with the end-of-sequence token, so the model learns to stop);
- a list of conversations (lists of ``{"role", "content"}``), rendered with the model's chat
  template; with ``completion_only: true`` only the assistant replies are targets.

Checkpoints are folders ``out_dir/step-000010/`` holding ``adapter_model.safetensors`` +
``adapter_config.json`` (peft's format, so ``PeftModel.from_pretrained`` reads them),
``optimizer.safetensors`` (AdamW moments) and ``state.json`` (step, losses, the records of
``on_checkpoint``, the base model's name and the configuration hash). Each is written whole or not
at all (:func:`repro.io.atomic_path`; a temporary folder left by a killed writer is removed by the
next one).

Calling ``finetune_lora`` again with the same ``out_dir`` resumes from the last checkpoint, and
gives the same adapter, losses and records as an uninterrupted run: the adapter's initialisation
comes from ``(seed, "lora-init")``, the examples of step ``s`` from a permutation per epoch seeded by
``(seed, epoch)``, and dropout (if any) from a stream seeded by ``(seed, step)``, each drawn inside
``torch.random.fork_rng`` so that torch's global generator is left as it was and nothing depends on
what ran before in the process. A checkpoint is resumed only by the configuration that wrote it:
``state.json`` carries a hash of everything that changes the training (the base model's name and
weights, the encoded examples, every field of :class:`LoraConfig`, the seed, and the caller's
``fingerprint``, e.g. the documents its records are measured on). Checkpoints of another
configuration are removed and the run starts from scratch, saying why. A finished run called again
trains nothing: it loads the last adapter and returns its losses and records.

Works on any :class:`repro.llm.torchlm.TorchLM` (the pretrained model or a tiny one); the adapter
is injected into ``lm.module`` in place, so ``lm`` generates with it afterwards.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch.nn import functional as F

from repro.io import atomic_open, atomic_path, read_json
from repro.llm.torchlm import TorchLM
from repro.logs import progress
from repro.provenance import config_hash
from repro.seeding import job_seed, make_rng

__all__ = ["LoraConfig", "LoraResult", "finetune_lora", "add_adapter", "load_lora", "checkpoints", "encode_examples",
           "loss_on", "lm_loss", "run_hash"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LoraConfig:
    """LoRA fine-tuning settings (config.yaml: a paper's ``lora:`` block)."""

    targets: tuple[str, ...] = ("q_proj", "v_proj")
    """module names to adapt (Hu et al. §7.1 adapt W_q and W_v); tiny models: qkv, proj, fc, out"""
    rank: int = 8
    alpha: float = 16.0
    """scale alpha / rank"""
    dropout: float = 0.0
    """dropout on the adapter input"""
    lr: float = 1e-3
    """AdamW learning rate (constant)"""
    weight_decay: float = 0.0
    steps: int = 20
    """total optimiser steps (part of the configuration hash: a checkpoint resumes only a run with the same steps)"""
    batch_size: int = 4
    max_length: int = 256
    """tokens per example (longer ones are cut)"""
    completion_only: bool = False
    """conversations: loss on assistant replies only"""
    save_every: int = 10
    """checkpoint every this many steps (and at the last)"""


@dataclass
class LoraResult:
    lm: TorchLM
    losses: list[float]
    """training loss (mean nats per target token) of every step, resumed ones included"""
    checkpoint: Path
    """the last checkpoint folder"""
    resumed_from: int
    """step the run resumed from (0: a fresh start; ``cfg.steps``: a finished run, loaded)"""
    records: dict[int, Any] = field(default_factory=dict)
    """``on_checkpoint``'s value at every checkpoint step, those before a resume included"""
    config_hash: str = ""
    """the hash of the configuration (see the module docstring) stored in every checkpoint"""


def encode_examples(lm: TorchLM, data: Sequence[str] | Sequence[Sequence[Mapping[str, str]]], *,
                    completion_only: bool, max_length: int) -> list[tuple[list[int], list[bool]]]:
    """Each example as (token ids, per-token "is a target") cut to ``max_length`` tokens."""
    tok = lm.tokenizer
    out = []
    for i, item in enumerate(data):
        if isinstance(item, str):
            ids = tok.encode(item, prompt=True) + [tok.eos_id]
            target = [True] * len(ids)
        else:
            ids, reply = tok.chat_tokens([dict(m) for m in item])
            target = reply if completion_only else [True] * len(ids)
        ids, target = ids[:max_length], target[:max_length]
        if len(ids) < 2 or not any(target[1:]):
            raise ValueError(f"LoRA example {i} has no target token within max_length {max_length}")
        out.append((ids, target))
    return out


def _batch(examples, idx, pad_id):
    width = max(len(examples[i][0]) for i in idx)
    ids = torch.full((len(idx), width), pad_id, dtype=torch.long)
    mask = torch.zeros_like(ids)
    target = torch.zeros_like(ids, dtype=torch.bool)
    for row, i in enumerate(idx):
        e_ids, e_tgt = examples[i]
        ids[row, :len(e_ids)] = torch.tensor(e_ids)
        mask[row, :len(e_ids)] = 1
        target[row, :len(e_ids)] = torch.tensor(e_tgt)
    pos = torch.arange(width).expand(len(idx), width)
    return ids, mask, pos, target


def _step_indices(step: int, batch_size: int, n: int, seed: int) -> list[int]:
    """Examples of ``step``: positions ``step*B .. step*B+B-1`` of the concatenated per-epoch permutations."""
    out = []
    for k in range(step * batch_size, (step + 1) * batch_size):
        epoch, j = divmod(k, n)
        out.append(int(make_rng(job_seed(seed, "lora-epoch", epoch)).permutation(n)[j]))
    return out


def lm_loss(lm: TorchLM, ids, mask, pos, target) -> torch.Tensor:
    """Mean next-token cross-entropy over the target tokens (token t+1 predicted at t)."""
    logits, _ = lm.core.forward(ids, mask, pos)
    weight = (target[:, 1:] & mask[:, 1:].bool()).float()  # (B, T-1)
    nll = F.cross_entropy(logits[:, :-1].float().reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1),
                          reduction="none").view_as(weight)
    return (nll * weight).sum() / weight.sum()


def checkpoints(out_dir: str | os.PathLike) -> list[Path]:
    """Complete checkpoint folders in ``out_dir``, by step."""
    found = [p for p in Path(out_dir).glob("step-*") if re.fullmatch(r"step-\d+", p.name) and (p / "state.json").is_file()]
    return sorted(found, key=lambda p: int(p.name.split("-")[1]))


def _peft_config(cfg: LoraConfig, lm: TorchLM):
    import peft

    names = {n.rsplit(".", 1)[-1] for n, _ in lm.module.named_modules()}
    missing = [t for t in cfg.targets if t not in names]
    if missing:
        raise ValueError(f"LoRA targets {missing} are not modules of {lm.name}; it has e.g. "
                         f"{sorted(n for n in names if n)[:12]}")
    is_hf = hasattr(lm.module, "config") and hasattr(lm.module.config, "model_type")
    return peft.LoraConfig(r=cfg.rank, lora_alpha=cfg.alpha, lora_dropout=cfg.dropout, target_modules=list(cfg.targets),
                           bias="none", task_type="CAUSAL_LM" if is_hf else None)


def _weights_digest(module: torch.nn.Module) -> str:
    """sha256 of every tensor of ``module``'s state (name, dtype, shape and bytes)."""
    h = hashlib.sha256()
    for name, t in sorted(module.state_dict().items()):
        t = t.detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}\n".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy())
    return h.hexdigest()


def _examples_digest(examples: Sequence[tuple[list[int], list[bool]]]) -> str:
    h = hashlib.sha256()
    for ids, target in examples:
        h.update(json.dumps([ids, target], separators=(",", ":")).encode())
        h.update(b"\n")
    return h.hexdigest()


def run_hash(lm: TorchLM, examples: Sequence[tuple[list[int], list[bool]]], cfg: LoraConfig, seed: int,
             fingerprint: Any = None) -> str:
    """The configuration hash of a run: base model (name and weights), encoded examples, every field of
    ``cfg``, the seed and the caller's JSON-able ``fingerprint``. Call it before adapters are added."""
    return config_hash({"base": lm.name, "weights": _weights_digest(lm.module), "examples": _examples_digest(examples),
                        "lora": asdict(cfg), "seed": seed, "fingerprint": fingerprint})


def _read_state(checkpoint: Path) -> dict[str, Any]:
    state = read_json(checkpoint / "state.json")  # a damaged file: a ValueError naming it
    if not isinstance(state, dict):
        raise ValueError(f"{checkpoint / 'state.json'}: not a LoRA checkpoint state (a JSON {type(state).__name__})")
    return state


def _resume_point(out_dir: Path, digest: str, resume: bool) -> tuple[Path, dict[str, Any]] | None:
    """The last checkpoint of this configuration and its state, or None after clearing ``out_dir``'s
    checkpoints of another configuration (or all of them when ``resume`` is False)."""
    found = sorted(p for p in out_dir.glob("step-*") if p.is_dir() and re.fullmatch(r"step-\d+", p.name))
    if not found:
        return None
    done = checkpoints(out_dir)
    if not resume:
        why = "resume=False"
    elif not done:
        why = "no complete checkpoint"
    else:
        try:
            state = _read_state(done[-1])
        except ValueError as e:
            state, why = None, str(e)
        if state is not None:
            if state.get("config_hash") == digest:
                return done[-1], state
            why = (f"{done[-1].name} was written by another configuration (hash {state.get('config_hash')}, "
                   f"this run's is {digest}: base model, data, hyperparameters or seed changed)")
    log.warning("LoRA: not resuming from %s: %s; removing its %d checkpoint(s) and training from scratch",
                out_dir, why, len(found))
    for p in found:
        shutil.rmtree(p)
    return None


def _save(out_dir: Path, step: int, peft_model, opt: torch.optim.Optimizer, losses: list[float], base: str,
          digest: str, records: Mapping[int, Any]) -> Path:
    from safetensors.torch import save_file

    final = out_dir / f"step-{step:06d}"
    state = opt.state_dict()
    tensors = {f"{i}.{k}": v.detach().cpu().contiguous() for i, s in state["state"].items() for k, v in s.items()
               if torch.is_tensor(v)}
    with atomic_path(final) as tmp:  # replaces a folder already there; clears a killed writer's temporary one
        tmp.unlink()
        tmp.mkdir()
        peft_model.save_pretrained(str(tmp))
        save_file(tensors, str(tmp / "optimizer.safetensors"))
        with atomic_open(tmp / "state.json", "w", encoding="utf-8") as fh:
            json.dump({"step": step, "losses": losses, "records": {str(k): v for k, v in sorted(records.items())},
                       "base": base, "config_hash": digest, "param_groups": state["param_groups"]}, fh, indent=1)
    return final


def add_adapter(lm: TorchLM, cfg: LoraConfig, seed: int):
    """Inject fresh LoRA adapters (``cfg``'s targets, rank, alpha) into ``lm.module`` in place.

    The initialisation is drawn from ``(seed, "lora-init")`` inside ``torch.random.fork_rng``; B = 0,
    so the adapted model equals the base one until trained. Returns the peft model and the trainable
    parameters (the adapters only), for a caller that writes its own training loop.
    """
    import peft

    with torch.random.fork_rng(devices=[]):  # peft draws A's initialisation from torch's global generator
        torch.manual_seed(job_seed(seed, "lora-init"))
        peft_model = peft.get_peft_model(lm.module, _peft_config(cfg, lm))
    return peft_model, [p for p in lm.module.parameters() if p.requires_grad]


def finetune_lora(lm: TorchLM, data, cfg: LoraConfig, out_dir: str | os.PathLike, seed: int, *,
                  resume: bool = True, on_step: Callable[[int, float], None] | None = None,
                  on_checkpoint: Callable[[int], Any] | None = None, fingerprint: Any = None) -> LoraResult:
    """Train LoRA adapters on ``lm`` (see the module docstring); returns the adapted model and losses.

    ``on_step(step, loss)`` is called after each optimiser step (1-based step), e.g. to time steps.
    ``on_checkpoint(step)`` is called at each checkpoint step, before the checkpoint is written, with
    the module in eval mode (no adapter dropout), e.g. to measure a held-out loss; its JSON-able value
    is stored in the checkpoint and returned in ``records``, so a resumed run has every record.
    ``fingerprint``: JSON-able things the records depend on beyond the training configuration (the
    held-out documents); part of the configuration hash. ``resume=False`` removes the checkpoints in
    ``out_dir`` and trains from scratch.
    """
    import peft
    from safetensors.torch import load_file

    if cfg.steps < 1 or cfg.batch_size < 1 or cfg.save_every < 1:
        raise ValueError(f"LoRA: steps, batch_size and save_every must be >= 1 (got {cfg.steps}, {cfg.batch_size}, "
                         f"{cfg.save_every})")
    if not data:
        raise ValueError("LoRA: no training examples")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    examples = encode_examples(lm, data, completion_only=cfg.completion_only, max_length=cfg.max_length)
    digest = run_hash(lm, examples, cfg, seed, fingerprint)  # before the adapter changes lm.module
    peft_model, params = add_adapter(lm, cfg, seed)
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    start, losses, records = 0, [], {}
    checkpoint = None
    found = _resume_point(out_dir, digest, resume)
    if found is not None:
        checkpoint, state = found
        peft.set_peft_model_state_dict(peft_model, load_file(str(checkpoint / "adapter_model.safetensors")))
        moments = load_file(str(checkpoint / "optimizer.safetensors"))
        per_param: dict[int, dict[str, Any]] = {}
        for key, value in moments.items():
            i, name = key.split(".", 1)
            per_param.setdefault(int(i), {})[name] = value
        opt.load_state_dict({"state": per_param, "param_groups": state["param_groups"]})
        start, losses = int(state["step"]), list(state["losses"])
        records = {int(k): v for k, v in state.get("records", {}).items()}
        if start >= cfg.steps:
            log.info("LoRA: %s already holds the finished run of this configuration (step %d); loaded it",
                     checkpoint, start)
        else:
            log.info("LoRA: resuming %s from %s (step %d)", lm.name, checkpoint, start)
    pad = lm.tokenizer.pad_id
    lm.module.train()
    try:
        for step in progress(range(start, cfg.steps), desc=f"LoRA {lm.name}", total=cfg.steps - start, unit="step"):
            ids, mask, pos, target = (t.to(lm.device) for t in _batch(examples, _step_indices(
                step, cfg.batch_size, len(examples), seed), pad))
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(job_seed(seed, "lora-dropout", step))  # inside the fork: the global state is restored
                loss = lm_loss(lm, ids, mask, pos, target)
                opt.zero_grad(set_to_none=True)
                loss.backward()
            opt.step()
            losses.append(loss.item())
            if on_step is not None:
                on_step(step + 1, losses[-1])
            if (step + 1) % cfg.save_every == 0 or step + 1 == cfg.steps:
                if on_checkpoint is not None:
                    lm.module.eval()
                    records[step + 1] = on_checkpoint(step + 1)
                    lm.module.train()
                checkpoint = _save(out_dir, step + 1, peft_model, opt, losses, lm.name, digest, records)
    finally:
        lm.module.eval()
    if start < cfg.steps:
        log.info("LoRA %s: steps %d -> %d, loss %.3f -> %.3f", lm.name, start, cfg.steps, losses[0], losses[-1])
    return LoraResult(lm, losses, checkpoint, start, records, digest)


def load_lora(lm: TorchLM, checkpoint: str | os.PathLike) -> TorchLM:
    """Add the adapter saved in ``checkpoint`` to ``lm`` (in place) and return ``lm``."""
    import peft

    checkpoint = Path(checkpoint)
    if not (checkpoint / "adapter_config.json").is_file():
        raise ValueError(f"{checkpoint} holds no LoRA adapter (no adapter_config.json)")
    peft.PeftModel.from_pretrained(lm.module, str(checkpoint))
    lm.module.eval()
    return lm


def loss_on(lm: TorchLM, data, *, completion_only: bool = False, max_length: int = 256,
            batch_size: int = 8) -> float:
    """Mean next-token loss of ``lm`` on ``data`` (documents or conversations), without training."""
    examples = encode_examples(lm, data, completion_only=completion_only, max_length=max_length)
    total, count = 0.0, 0.0
    with torch.inference_mode():
        for k in range(0, len(examples), batch_size):
            idx = list(range(k, min(k + batch_size, len(examples))))
            ids, mask, pos, target = (t.to(lm.device) for t in _batch(examples, idx, lm.tokenizer.pad_id))
            weight = float((target[:, 1:] & mask[:, 1:].bool()).sum())
            total += float(lm_loss(lm, ids, mask, pos, target)) * weight
            count += weight
    return total / count

