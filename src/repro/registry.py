"""Name registries: methods and baselines are registered once and built by name.

The ``{method}`` wildcard of a rule is a registry key, so a new baseline is a decorated factory,
never a new branch in an if-chain (timm's ``register_model`` / ``create_model``)::

    MIL_MODELS = Registry("MIL model")

    @MIL_MODELS.register("abmil")
    def abmil(**cfg): ...

    model = MIL_MODELS.create("abmil", dim=512)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

__all__ = ["Registry"]

F = TypeVar("F", bound=Callable[..., Any])


class Registry(Generic[F]):
    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, F] = {}

    def register(self, name: str) -> Callable[[F], F]:
        def decorator(factory: F) -> F:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} is registered twice")
            self._entries[name] = factory
            return factory

        return decorator

    def get(self, name: str) -> F:
        if name not in self._entries:
            raise ValueError(f"unknown {self.kind} {name!r}; known: {', '.join(sorted(self._entries))}")
        return self._entries[name]

    def create(self, name: str, /, **kwargs: Any) -> Any:
        return self.get(name)(**kwargs)

    def names(self) -> list[str]:
        return sorted(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries
