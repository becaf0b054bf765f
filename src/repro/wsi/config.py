"""Frozen config dataclasses of the WSI stage built from a config.yaml block, with a clear error."""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["from_dict"]

C = TypeVar("C")


def from_dict(cls: type[C], cfg: dict[str, Any] | None, what: str) -> C:
    """``cls(**cfg)``; an unknown key is a ``ValueError`` naming the block (``what``) and the known keys."""
    cfg = dict(cfg or {})
    known = set(cls.__dataclass_fields__)  # type: ignore[attr-defined]
    unknown = set(cfg) - known
    if unknown:
        raise ValueError(f"config {what}: unknown keys {sorted(unknown)}; known: {sorted(known)}")
    return cls(**cfg)
