"""What ``workflow/rules/mdadd.smk`` needs at parse time (pure Python: no numpy, no torch).

A distillation job receives only the blocks of the preset its method reads, so that editing one
method's hyper-parameters (``distill.lors``) reruns that method's jobs and no other.
"""

from __future__ import annotations

import posixpath

__all__ = ["DISTILL_BLOCKS", "USES_STUDENT", "distill_params", "eval_targets", "remote_archives",
           "remote_images"]

#: method -> the blocks of ``distill`` it reads (the methods are registered in repro.methods.distill).
DISTILL_BLOCKS = {
    "random": (), "herding": (), "full": (),
    "covmatch": ("mdadd", "covmatch"),  # the MDA-DD loop with CovMatch's overrides
    "lors": ("lors",),
    "mdadd_noqueue": ("mdadd",), "mdadd": ("mdadd",),
}
#: methods that train students while distilling (they read the ``student`` block).
USES_STUDENT = frozenset({"covmatch", "lors", "mdadd_noqueue", "mdadd"})


def distill_params(method: str, student: dict, distill: dict) -> dict:
    """The ``cfg`` a distillation job of ``method`` passes to ``repro.methods.distill.distill``."""
    if method not in DISTILL_BLOCKS:
        raise ValueError(f"mdadd: unknown distillation method {method!r}; known: {', '.join(DISTILL_BLOCKS)}")
    cfg: dict = {"distill": {block: distill[block] for block in DISTILL_BLOCKS[method] if block in distill}}
    if method in USES_STUDENT:
        cfg["student"] = student
    return cfg


def eval_targets(cfg: dict, dataset: str) -> list[str]:
    """Every evaluation the aggregate reads: each method, size and seed, then the full-data reference."""
    return [f"results/mdadd/eval/{dataset}/{method}/n{n_pairs}_s{seed}.json"
            for method in cfg["methods"] for n_pairs in cfg["n_pairs"] for seed in range(cfg["distill_seeds"])
            ] + [f"results/mdadd/eval/{dataset}/full/nall_s0.json"]


def remote_archives(data: dict, where: str) -> list[dict]:
    """The archives ``source: remote`` downloads (``data["archives"]``, each ``{url, sha256}``).

    ``where`` names the block, e.g. ``mdadd.paper.data``. An empty list, or an archive without its
    sha256, is a ValueError naming the key: every download is checked, and a remote build with
    nothing to download could only fail later, with a misleading "the archives did not contain ...".
    """
    archives = data.get("archives") or []
    if not archives:
        raise ValueError(f"config: mdadd.source is 'remote' but {where}.archives is empty; list the archives to "
                         "download, each {url, sha256} (the Karpathy split JSON and the images, see "
                         "workflow/presets/mdadd.yaml), or use source: local with the files under resources/")
    for k, archive in enumerate(archives):
        if not archive.get("sha256"):
            raise ValueError(f"config: {where}.archives.{k} ({archive.get('url')}) has no sha256; every download "
                             "is checked, so give the sha256 of the file beside its url")
    return archives


def remote_images(data: dict, dataset: str, where: str) -> str:
    """The image folder of ``source: remote`` (``data["images"]``) relative to ``resources/mdadd/<dataset>/``.

    mdadd_fetch unpacks the archives there and records the folder's sha256 beside it; an image folder
    anywhere else is a ValueError naming the key (no job would write it).
    """
    root = f"resources/mdadd/{dataset}"
    images = posixpath.normpath(str(data["images"]))
    if not images.startswith(root + "/"):
        raise ValueError(f"config: {where}.images ({data['images']}) is not under {root}/, where mdadd_fetch unpacks "
                         "the archives of source: remote")
    return posixpath.relpath(images, root)
