"""Synthetic image-caption corpus with a shared latent scene (stand-in for Flickr30K / MS-COCO).

Each example is a *scene*: one to ``max_objects`` objects, each with a shape, a colour, a size and
a position on a 3 x 3 grid, over a background tint. The image is the scene rendered as a small RGB
picture (numpy, anti-aliasing by 2x supersampling); each of its ``captions_per_image`` captions is
generated from the same scene with a randomly chosen template, object order and synonym, so the
caption and the image share the latent scene and there is a ground truth of which caption
describes which image (Flickr30K and COCO have 5 captions per image; the count is a parameter).

The corpus is returned as :class:`~repro.data.captions.ImageCaptionCorpus`, the same container
the real loaders (:mod:`repro.data.karpathy`) produce, so the feature extraction and everything downstream is
shared: ``images`` (N, H, W, 3) uint8 (or ``image_paths`` for real data), ``captions`` (list of
str), ``caption_image`` (index of the image each caption describes) and ``split`` per image.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from repro.data.captions import ImageCaptionCorpus

__all__ = ["SceneConfig", "make_scene", "render_scene", "caption_scene",
           "make_corpus", "COLOURS", "SHAPES"]

log = logging.getLogger(__name__)

#: name -> RGB in [0, 1]
COLOURS = {
    "red": (0.86, 0.12, 0.12), "green": (0.13, 0.66, 0.20), "blue": (0.15, 0.30, 0.88),
    "yellow": (0.95, 0.85, 0.10), "purple": (0.55, 0.20, 0.70), "orange": (0.98, 0.55, 0.08),
    "white": (0.97, 0.97, 0.97), "black": (0.05, 0.05, 0.05),
}
SHAPES = ("circle", "square", "triangle", "cross", "ring")
SIZES = {"small": 0.13, "large": 0.24}  # radius as a fraction of the image side
#: grid cell -> (row, col) centre in [0, 1] and the words used for it
POSITIONS = {
    "top left": (0.2, 0.2), "top": (0.2, 0.5), "top right": (0.2, 0.8),
    "left": (0.5, 0.2), "centre": (0.5, 0.5), "right": (0.5, 0.8),
    "bottom left": (0.8, 0.2), "bottom": (0.8, 0.5), "bottom right": (0.8, 0.8),
}
BACKGROUNDS = {"grey": (0.55, 0.55, 0.55), "sand": (0.80, 0.72, 0.55), "sky": (0.62, 0.78, 0.92),
               "grass": (0.45, 0.62, 0.38)}
SHAPE_SYNONYMS = {"circle": ("circle", "disc", "round dot"), "square": ("square", "box", "block"),
                  "triangle": ("triangle", "wedge"), "cross": ("cross", "plus sign"),
                  "ring": ("ring", "hollow circle")}
SIZE_SYNONYMS = {"small": ("small", "little", "tiny"), "large": ("large", "big", "huge")}
TEMPLATES = ("{objs} on a {bg} background.", "A picture of {objs}.", "There is {objs}, the backdrop is {bg}.",
             "An image showing {objs} over {bg}.", "{objs}.")


@dataclass(frozen=True)
class SceneConfig:
    """Parameters of the scene generator."""

    image_size: int = 64
    """Side of the rendered image in pixels."""
    max_objects: int = 3
    """Objects per scene are uniform on 1..max_objects; positions are distinct grid cells."""
    captions_per_image: int = 5
    """Captions per image (Flickr30K and COCO: 5)."""


def make_scene(rng: np.random.Generator, cfg: SceneConfig) -> dict:
    """Draw one latent scene: background and a list of objects (shape, colour, size, position)."""
    n_obj = int(rng.integers(1, cfg.max_objects + 1))
    cells = rng.choice(len(POSITIONS), size=n_obj, replace=False)
    names = list(POSITIONS)
    objects = [{"shape": str(rng.choice(SHAPES)), "colour": str(rng.choice(list(COLOURS))),
                "size": str(rng.choice(list(SIZES))), "position": names[c]} for c in cells]
    return {"background": str(rng.choice(list(BACKGROUNDS))), "objects": objects}


def _shape_mask(shape: str, yy: np.ndarray, xx: np.ndarray, cy: float, cx: float, r: float) -> np.ndarray:
    dy, dx = yy - cy, xx - cx
    if shape == "circle":
        return dy**2 + dx**2 <= r**2
    if shape == "square":
        return (np.abs(dy) <= 0.8 * r) & (np.abs(dx) <= 0.8 * r)
    if shape == "triangle":  # apex up
        return (dy <= 0.8 * r) & (dy >= -r) & (np.abs(dx) <= (dy + r) * 0.6)
    if shape == "cross":
        return ((np.abs(dy) <= 0.3 * r) & (np.abs(dx) <= r)) | ((np.abs(dx) <= 0.3 * r) & (np.abs(dy) <= r))
    if shape == "ring":
        d2 = dy**2 + dx**2
        return (d2 <= r**2) & (d2 >= (0.55 * r) ** 2)
    raise ValueError(f"unknown shape {shape!r}")


def render_scene(scene: dict, image_size: int, rng: np.random.Generator | None = None) -> np.ndarray:
    """Render ``scene`` as an (H, W, 3) uint8 image (2x supersampled, small pixel noise if ``rng``)."""
    s = 2 * image_size
    yy, xx = np.mgrid[0:s, 0:s].astype(np.float32) / s
    img = np.empty((s, s, 3), np.float32)
    img[:] = BACKGROUNDS[scene["background"]]
    for obj in scene["objects"]:
        cy, cx = POSITIONS[obj["position"]]
        mask = _shape_mask(obj["shape"], yy, xx, cy, cx, SIZES[obj["size"]])
        img[mask] = COLOURS[obj["colour"]]
    img = img.reshape(image_size, 2, image_size, 2, 3).mean(axis=(1, 3))
    if rng is not None:
        img = img + rng.normal(0.0, 0.02, img.shape).astype(np.float32)
    return (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)


def caption_scene(scene: dict, rng: np.random.Generator) -> str:
    """One caption of ``scene``: objects in random order, random synonyms and template."""
    parts = []
    for i in rng.permutation(len(scene["objects"])):
        o = scene["objects"][i]
        size = rng.choice(SIZE_SYNONYMS[o["size"]])
        shape = rng.choice(SHAPE_SYNONYMS[o["shape"]])
        where = o["position"] if o["position"] in ("centre",) else f"the {o['position']}"
        prep = "in" if o["position"] in ("centre",) else rng.choice(("at", "in"))
        parts.append(f"a {size} {o['colour']} {shape} {prep} {'the ' if where == 'centre' else ''}{where}")
    objs = parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
    text = str(rng.choice(TEMPLATES)).format(objs=objs, bg=scene["background"])
    return text[0].upper() + text[1:]


def make_corpus(n_train: int, n_test: int, *, seed: int, cfg: SceneConfig = SceneConfig()) -> ImageCaptionCorpus:
    """A corpus of ``n_train + n_test`` rendered scenes, ``cfg.captions_per_image`` captions each.

    Parameters
    ----------
    n_train, n_test : int
        Images in the train and test split (no val split: distillation uses train, evaluation test).
    seed : int
        Seed of the generator; same seed, same corpus.
    cfg : SceneConfig
        Image size, objects per scene, captions per image.
    """
    if n_train < 1 or n_test < 1:
        raise ValueError(f"n_train and n_test must be >= 1, got {n_train}, {n_test}")
    rng = np.random.default_rng(seed)
    n = n_train + n_test
    scenes = [make_scene(rng, cfg) for _ in range(n)]
    images = np.stack([render_scene(sc, cfg.image_size, rng) for sc in scenes])
    captions, owner = [], []
    for i, sc in enumerate(scenes):
        for _ in range(cfg.captions_per_image):
            captions.append(caption_scene(sc, rng))
            owner.append(i)
    split = np.array(["train"] * n_train + ["test"] * n_test)
    log.info("synthetic corpus: %d images (%d train), %d captions, %d px", n, n_train, len(captions), cfg.image_size)
    return ImageCaptionCorpus(captions=captions, caption_image=np.asarray(owner, np.int64), split=split,
                              images=images, scenes=scenes)
