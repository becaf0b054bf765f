"""The MLP-Mixer backbone: patches, LoRA at B = 0, per-example Fisher, pretraining on a planted task, every method."""

from pathlib import Path

import numpy as np
import pytest
import torch

from repro.methods.immunization.extractors import PatchTransformer
from repro.nn.mixer import MLPMixer, patchify
from repro.papers.m2le.experiment import METHODS, build_sequence, pretrain_backbone, run_method
from repro.nn.lora_backbone import BackboneConfig, LoraMixer, accuracy, fisher_diag, make_backbone, pretrain
from repro.papers.m2le.synth import make_sequence
from tests.m2le.fisher_loop import fisher_by_loop
from repro.config import workflow_config

MIXER = {"kind": "mixer", "dim": 8, "depth": 2, "patch": 2, "token_hidden": 8, "channel_hidden": 16, "rank": 2,
         "lora_alpha": 2.0, "pretrain_epochs": 4}
CFG = {"sequences": {"split_digits": {"n_tasks": 2}}, "backbone": MIXER, "train": {"epochs": 1, "n_fisher": 40}}


def test_patches_are_the_image_blocks_and_match_the_immunize_tokens():
    g = torch.Generator().manual_seed(0)
    img = torch.randn(3, 10, 10, 3, generator=g)  # H x W x C
    tok = patchify(img.reshape(3, -1), 10, 10, 3, 2)
    assert tok.shape == (3, 25, 12)
    for r, c in [(0, 0), (1, 3), (4, 4)]:
        torch.testing.assert_close(tok[:, 5 * r + c], img[:, 2 * r:2 * r + 2, 2 * c:2 * c + 2, :].reshape(3, -1))
    gray = torch.randn(4, 64, generator=g)
    torch.testing.assert_close(patchify(gray, 8, 8, 1, 2), PatchTransformer(64, 1, 4, patch=2).tokens(gray))
    with pytest.raises(ValueError, match="patch 3 must divide the image sides 10 x 10"):
        patchify(img.reshape(3, -1), 10, 10, 3, 3)


def test_lora_at_b_zero_is_the_frozen_mixer_and_b_a_adds_to_each_mixing_weight():
    torch.manual_seed(0)
    model = make_backbone(BackboneConfig(**MIXER), 300, (10, 10, 3))
    assert isinstance(model, LoraMixer) and model.n_adapted == 8  # token 1/2, channel 1/2 of each of 2 blocks
    model.freeze_backbone()
    x = torch.randn(5, 300)
    frozen = model.mixer(patchify(x, 10, 10, 3, 2))  # the mixer with its own weights, no LoRA code involved
    model.reset_lora(torch.Generator().manual_seed(1))
    assert all(float(a.detach().abs().sum()) > 0 for a in model.A)
    torch.testing.assert_close(model(x), frozen)  # float32 round-off only (the sum W + 0 is a new tensor)
    with torch.no_grad():
        model.B[2].normal_()
    layers = model.mixer.mixing_layers()
    expected = model.mixer(patchify(x, 10, 10, 3, 2),
                           [lin.weight + (model.scale * model.B[i] @ model.A[i] if i == 2 else 0) for i, lin in enumerate(layers)])
    torch.testing.assert_close(model(x), expected)
    assert not torch.allclose(model(x), frozen)
    assert [p.requires_grad for p in model.parameters()].count(True) == 16  # only the 8 A and 8 B factors train


def test_fisher_on_the_mixer_matches_a_loop_over_examples():
    seq = build_sequence(CFG, "split_digits", 0)
    state, _ = pretrain_backbone(CFG, seq, 1)
    model = make_backbone(BackboneConfig(**MIXER), seq.n_features, seq.grid)
    model.load_state_dict(state)
    model.reset_lora(torch.Generator().manual_seed(2))
    with torch.no_grad():
        for b in model.B:
            b.normal_(0, 0.1)
    task = seq.tasks[1]
    x, y = task.x_train[:6], task.y_train[:6]
    fast = fisher_diag(model, x, y, task.classes)
    loop = fisher_by_loop(model, x, y, task.classes)
    assert [f.shape for f in fast] == [lin.weight.shape for lin in model.mixer.mixing_layers()]
    for a, b in zip(fast, loop):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-9)


def test_pretraining_learns_a_planted_patch_position_task():
    # class k: a bright 2 x 2 patch at the k-th of 10 fixed patch positions of a noisy 8 x 8 image; no pixel alone
    # tells the class from noise, only where the patch sits (token mixing must carry it to the pooled head)
    rng = np.random.default_rng(0)
    positions = rng.permutation(16)[:10]
    n = 600
    y = rng.integers(0, 10, n)
    img = 0.3 * rng.normal(size=(n, 8, 8))
    for i, k in enumerate(y):
        r, c = divmod(int(positions[k]), 4)
        img[i, 2 * r:2 * r + 2, 2 * c:2 * c + 2] += 1.5
    x, y = torch.as_tensor(img.reshape(n, 64), dtype=torch.float32), torch.as_tensor(y)
    torch.manual_seed(0)
    model = make_backbone(BackboneConfig(**dict(MIXER, pretrain_epochs=15, pretrain_lr=1e-2)), 64, (8, 8, 1))
    before = accuracy(model, x[400:], y[400:], tuple(range(10)))
    pretrain(model, x[:400], y[:400], 0)
    after = accuracy(model, x[400:], y[400:], tuple(range(10)))
    assert before < 0.3 and after > 0.9, (before, after)
    assert not any(p.requires_grad for p in model.backbone_parameters())


def test_every_method_runs_on_the_mixer_and_the_first_task_is_paired():
    seq = build_sequence(CFG, "split_digits", 0)
    state, _ = pretrain_backbone(CFG, seq, 1)
    res = {m: np.asarray(run_method(CFG, seq, state, m, 7)["acc"]) for m in METHODS.names()}
    for m, acc in res.items():
        assert np.all((acc[-1] >= 0) & (acc[-1] <= 1)), m
    for m in ("olora", "ewc", "pm", "him"):
        assert res[m][0, 0] == pytest.approx(res["seq"][0, 0]), m
    blocks = make_sequence("blocks", 2, 0, n_blocks=3, block_dim=4, n_per_task=60)
    assert make_backbone(BackboneConfig(**MIXER), blocks.n_features, blocks.grid, blocks.patch).mixer.n_tokens == 3


def test_bad_backbone_inputs_name_what_is_wrong():
    with pytest.raises(ValueError, match="backbone kind 'vit' is not one of mlp, mixer"):
        BackboneConfig(kind="vit")
    with pytest.raises(ValueError, match="needs the inputs' image grid"):
        make_backbone(BackboneConfig(**MIXER), 64)
    with pytest.raises(ValueError, match="patch 4 must divide the 10 x 10 inputs"):
        make_backbone(BackboneConfig(**dict(MIXER, patch=4)), 300, (10, 10, 3))
    with pytest.raises(ValueError, match=r"need tokens \(N, 4, 2\)"):
        MLPMixer(4, 2, 3, 1, 2, 2, 2)(torch.zeros(1, 3, 2))


def test_a_sequence_may_override_the_preset_backbone_and_blocks_gets_the_mlp():
    from repro.papers.m2le.experiment import backbone_config

    cfg = {"sequences": {"blocks": {"n_tasks": 2, "backbone": {"kind": "mlp", "hidden": 8}}, "split_digits": {"n_tasks": 2}},
           "backbone": MIXER}
    assert backbone_config(cfg, "split_digits") == BackboneConfig(**MIXER)
    assert backbone_config(cfg, "blocks") == BackboneConfig(**{**MIXER, "kind": "mlp", "hidden": 8})
    seq = build_sequence(cfg, "blocks", 0)  # the backbone key is not a sequence argument
    state, _ = pretrain_backbone({**cfg, "backbone": {**MIXER, "pretrain_epochs": 1}}, seq, 1)
    assert "base.0.weight" in state and not any("token1" in k for k in state)  # the MLP's layers, no mixing layer
    from snakemake.utils import validate

    repo = Path(__file__).parents[2]
    for scale in ("smoke", "small", "paper"):  # every preset runs blocks on the MLP, the image sequences on the Mixer
        preset = workflow_config(repo)["m2le"][scale]
        validate(preset, str(repo / "workflow/schemas/m2le.schema.yaml"))  # fills defaults, as the workflow does
        blocks, digits = backbone_config(preset, "blocks"), backbone_config(preset, "split_digits")
        assert blocks.kind == "mlp" and digits.kind == "mixer"
        # the override names the architecture only: LoRA and pretraining stay the preset's (no schema default leaks in)
        assert (blocks.rank, blocks.lora_alpha, blocks.pretrain_epochs) == (digits.rank, digits.lora_alpha,
                                                                             digits.pretrain_epochs)
