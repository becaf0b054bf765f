"""The reference definitions of grokcap: the paper's public code's model, epoch
accounting, running train-mode T_mem and uniform random-label data, each pinned by a closed form or a
planted case (repro.methods.grokking, variant "reference"; repro.papers.grokcap.synth)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
import torch.nn as nn

from repro.methods.grokking import (GrokConfig, GrokTransformer, bits_memorised, count_parameters,
                                    reference_parameter_count, rotary, run_epochs)
from repro.papers.grokcap.experiment import run_grokcap
from repro.papers.grokcap.synth import (label_entropy_bits, modular_table, n_equiv, reference_random_data,
                                         seed_dataset, task_data)


# ----------------------------------------------------------------------------------------------
# The model: parameter count, dropout placement, positions
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("d, p", [(8, 23), (12, 47), (32, 47), (20, 97)])
def test_reference_parameter_count_is_32d2_plus_linear_term(d, p):
    """Depth 2, one head: 32 d^2 + (2 (p + 2) + 5) d, as read off the reference's modules
    (embedding and unembedding (p + 2) d each, final norm d; per block wq, wk, wv, wo 4 d^2, SwiGLU
    12 d^2, two norms 2 d). Our earlier variant adds the 4 d of its learned positions."""
    V = p + 2
    ref = count_parameters(GrokTransformer(V, d, 2, 1, 0.2, variant="reference"))
    assert ref == 32 * d * d + (2 * (p + 2) + 5) * d == reference_parameter_count(d, p)
    assert count_parameters(GrokTransformer(V, d, 2, 1, 0.2, variant="ours")) == ref + 4 * d


def test_reference_with_several_heads_adds_its_second_projection():
    # with heads > 1 the reference's attention keeps a Linear(d, d) with bias after wo: d^2 + d per block
    d, p = 16, 23
    model = GrokTransformer(p + 2, d, 2, 4, 0.2, variant="reference")
    assert count_parameters(model) == reference_parameter_count(d, p, heads=4) == 32 * d * d + (2 * (p + 2) + 5) * d + 2 * (d * d + d)


def _train_vs_eval(model: nn.Module, x: torch.Tensor) -> float:
    """Largest gap between a train-mode (dropout on) and an eval-mode forward pass."""
    model.train()
    with torch.no_grad():
        a = model(x)
        model.eval()
        b = model(x)
    return float((a - b).abs().max())


def _model_and_input(variant: str, seed: int = 0):
    torch.manual_seed(seed)
    model = GrokTransformer(25, 16, 2, 1, dropout=0.5, variant=variant)
    x = torch.randint(0, 25, (64, 4))
    return model, x


def test_reference_dropout_acts_only_inside_the_feed_forward_block():
    # zero every feed-forward path (w2 = 0 in each block): what is left (embeddings, attention,
    # residual stream, read-out) must be deterministic in train mode, so no dropout sits there
    model, x = _model_and_input("reference")
    with torch.no_grad():
        for block in model.blocks:
            block.mlp.w2.weight.zero_()
    assert _train_vs_eval(model, x) == 0.0
    # the same surgery on our earlier variant leaves its attention-output dropout: the check can fail
    ours, x = _model_and_input("ours")
    with torch.no_grad():
        for block in ours.blocks:
            block.mlp.w2.weight.zero_()
    assert _train_vs_eval(ours, x) > 1e-3


def test_reference_dropout_masks_the_feed_forward_hidden_layer_before_w2():
    # zero every other path (attention off): dropout still acts, and it acts on w2's input, the
    # hidden layer silu(w1 x) * w3 x: a fraction of about 0.5 of its entries is zeroed and the
    # rest scaled by 1 / (1 - 0.5); with 64 x 4 x 64 = 16,384 entries, the zeroed fraction has sd
    # 0.004, so 0.45 to 0.55 holds at > 10 sd
    model, x = _model_and_input("reference")
    with torch.no_grad():
        for block in model.blocks:
            block.attn.proj.weight.zero_()
    assert _train_vs_eval(model, x) > 1e-3
    mlp = model.blocks[0].mlp
    seen = {}
    mlp.w2.register_forward_hook(lambda m, inp, out: seen.__setitem__("h", inp[0].detach()))
    model.train()
    torch.manual_seed(1)
    with torch.no_grad():
        h_in = model.blocks[0].norm2(model.tok(x))  # block 0's feed-forward input (attention is zero)
        hidden = torch.nn.functional.silu(mlp.w1(h_in)) * mlp.w3(h_in)
        mlp(h_in)
    dropped = seen["h"] == 0
    assert 0.45 < dropped.float().mean().item() < 0.55
    assert torch.allclose(seen["h"][~dropped], 2.0 * hidden[~dropped], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("heads", [1, 4])
def test_reference_rope_call_leaves_attention_scores_unchanged(heads):
    """The reference rotates q and k of shape (B, heads, T, hs) as though axis 1 were the sequence:
    by the head index, equally for q and k, so q . k is unchanged; at one head it is the identity.
    Our reference model therefore carries no position embedding."""
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, heads, 4, 8, generator=g, dtype=torch.float64), torch.randn(2, heads, 4, 8, generator=g,
                                                                                      dtype=torch.float64)
    by_head = torch.arange(heads)[:, None]                       # (heads, 1): the reference's "positions"
    qr, kr = rotary(q, by_head), rotary(k, by_head)
    assert torch.allclose(qr @ kr.transpose(-1, -2), q @ k.transpose(-1, -2), atol=1e-12)
    if heads == 1:
        assert torch.equal(qr, q)
    # rotary itself is RoPE: by true positions the scores change and depend on the offset only
    pos = torch.arange(4)
    s0 = rotary(q, pos) @ rotary(k, pos).transpose(-1, -2)
    s3 = rotary(q, pos + 3) @ rotary(k, pos + 3).transpose(-1, -2)
    assert torch.allclose(s0, s3, atol=1e-10) and not torch.allclose(s0, q @ k.transpose(-1, -2), atol=1e-3)


# ----------------------------------------------------------------------------------------------
# The measurement: epochs with the ragged batch, running train-mode accuracy
# ----------------------------------------------------------------------------------------------

class _Planted(nn.Module):
    """Answers ``x[:, 0]`` (the label) except in the train-mode forward calls listed in ``wrong``;
    always right in eval mode. Forward calls are numbered 1, 2, ... in training order."""

    def __init__(self, n_tokens: int, wrong: set[int]) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(()))  # something for the optimiser to update
        self.n_tokens, self.wrong, self.calls = n_tokens, wrong, 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        answer = x[:, 0]
        if self.training:
            self.calls += 1
            if self.calls in self.wrong:
                answer = (answer + 1) % self.n_tokens
        return 10.0 * nn.functional.one_hot(answer, self.n_tokens).float() + 0.0 * self.w


def test_t_mem_is_the_first_epoch_of_running_train_mode_accuracy_above_threshold():
    # 10 examples in batches of 4: 4 + 4 + 2, three steps per epoch (the ragged batch kept).
    # Planted: epoch 1 wrong throughout (calls 1-3); epoch 2 wrong on its second, full batch only
    # (call 5): running accuracy 6 / 10 = 0.6, though two of its three batches were right
    # (an unweighted mean of batch accuracies would give 0.67); epoch 3 right throughout.
    # At threshold 0.65: T_mem = epoch 3 = step 9. An eval-mode rule would give epoch 1.
    x = torch.arange(10)[:, None].repeat(1, 4) % 7
    y = x[:, 0].clone()
    model = _Planted(7, wrong={1, 2, 3, 5})
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(0)
    out = run_epochs(model, opt, x, y, batch_size=4, max_epochs=10, threshold=0.65, stop="train")
    accs = [c[2] for c in out["curve"]]
    assert accs == pytest.approx([0.0, 0.6, 1.0])
    assert out["t_train"] == 3 and out["epochs"] == 3 and out["steps"] == 9 and out["steps_per_epoch"] == 3
    # the modular rule: validation (eval mode, always right here) is >= 0.65 from epoch 1, and the
    # run stops at the first epoch where both accuracies are, epoch 3 again
    model = _Planted(7, wrong={1, 2, 3, 5})
    out = run_epochs(model, torch.optim.SGD(model.parameters(), lr=0.1), x, y, batch_size=4, max_epochs=10,
                     threshold=0.65, stop="both", x_val=x, y_val=y)
    assert out["t_val"] == 1 and out["t_train"] == 3 and out["epochs"] == 3


def test_reference_run_counts_epochs_and_steps_and_caps_whole_epochs():
    # p = 7 division: 42 pairs, 21 train; batch 8 gives 3 steps per epoch (8 + 8 + 5), and a step
    # cap of 20 allows 6 whole epochs (18 steps); nothing reaches 99% that fast, so both censored
    data = seed_dataset(p=7, operation="div", train_fraction=0.5, seed=0)
    cfg = {"p": 7, "operation": "div", "batch_size": 8, "max_steps": 20, "dropout": 0.2}
    out = run_grokcap(cfg, task="modular", width=8, replicate=0, data=data, seed=1)
    assert out["time_unit"] == "epoch" and out["steps_per_epoch"] == 3
    assert out["max_epochs"] == out["cap"] == 6 and out["epochs"] == 6 and out["steps"] == 18
    assert [c["step"] for c in out["curve"]] == [3 * e for e in range(1, 7)]


# ----------------------------------------------------------------------------------------------
# The random-label data: n_equiv fresh samples, n log2(p + 2) bits
# ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("p, operation, fraction", [(47, "div", 0.5), (23, "add", 0.5), (97, "div", 0.3)])
def test_n_equiv_is_floor_of_fraction_of_table(p, operation, fraction):
    size = p * (p - 1) if operation == "div" else p * p
    assert n_equiv(p, operation, fraction) == math.floor(fraction * size) == len(modular_table(p, operation)) * fraction // 1


def test_uniform_random_label_data_carry_n_log2_p_plus_2_bits():
    p = 139
    data = reference_random_data(p, "div", 0.5, seed=3)
    n = n_equiv(p, "div", 0.5)
    assert len(data) == n == 9591 and data.n_tokens == p + 2
    # every position and the label range over all p + 2 tokens (no fixed operator or '=' token)
    for col in range(4):
        assert set(np.unique(data.x[:, col])) == set(range(p + 2))
    assert set(np.unique(data.y)) == set(range(p + 2))
    # plug-in entropy of n uniform draws over 141 classes: biased low by (K - 1) / (2 n ln 2) = 0.011
    # bits, sd about sqrt((K - 1) / 2) / (n ln 2) = 0.001 bits; so within 0.03 of log2(p + 2)
    assert label_entropy_bits(data.y) == pytest.approx(math.log2(p + 2), abs=0.03)
    # a model that has memorised every label holds all n log2(p + 2) bits (Morris et al.), and the
    # random-label run counts the data's bits over the p + 2 classes
    y = torch.as_tensor(data.y)
    sure = torch.full((n, p + 2), -60.0)
    sure[torch.arange(n), y] = 60.0
    assert bits_memorised(sure, y, p + 2) == pytest.approx(n * math.log2(p + 2), rel=1e-9)


def test_random_run_of_the_preset_uses_the_reference_data():
    p = 11
    arrays = seed_dataset(p=p, operation="div", train_fraction=0.5, seed=4)
    assert int(arrays["random_classes"]) == p + 2
    rand, _ = task_data("random", arrays)
    train, _ = task_data("modular", arrays)
    assert len(rand) == len(train) == n_equiv(p, "div", 0.5) and not np.array_equal(rand.x, train.x)
    out = run_grokcap({"p": p, "max_steps": 3}, task="random", width=8, replicate=0, data=arrays, seed=0)
    assert out["dataset_bits"] == pytest.approx(n_equiv(p, "div", 0.5) * math.log2(p + 2))
    assert out["P"] == 32 * 64 + (2 * (p + 2) + 5) * 8


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="variant"):
        GrokTransformer(9, 8, 1, 1, variant="nanogpt")
    data = seed_dataset(p=7, operation="add", train_fraction=0.5, seed=0)
    with pytest.raises(ValueError, match="variant"):
        run_grokcap({"p": 7, "variant": "nanogpt"}, task="modular", width=8, replicate=0, data=data, seed=0)
    with pytest.raises(ValueError, match="labels"):
        seed_dataset(p=7, operation="add", train_fraction=0.5, seed=0, labels="shuffle")
    assert GrokConfig().variant == "reference"
