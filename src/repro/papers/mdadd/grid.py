"""What ``workflow/rules/mdadd.smk`` needs at parse time (pure Python: no numpy, no torch).

A distillation job receives only the blocks of the preset its method reads, so that editing one
method's hyper-parameters (``distill.lors``) reruns that method's jobs and no other.
"""

from __future__ import annotations

__all__ = ["DISTILL_BLOCKS", "USES_STUDENT", "distill_params"]

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
