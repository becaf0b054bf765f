"""The one converter from a config.yaml block to a frozen config dataclass.

Every method and stage keeps its settings in a ``@dataclass(frozen=True)`` and builds it with
:func:`from_dict`, which is strict: a key the dataclass does not know is a ``ValueError`` naming
its full path (``tmevolve.small.model.dropuot``) and the keys it could have been, never silently
dropped. Dataclass-typed fields are converted recursively, so a nested block is checked too.
The JSON schemas in ``workflow/schemas/`` check the same presets before any job runs; this check
guards library calls from notebooks and tests, which no schema sees.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

__all__ = ["from_dict", "known_keys", "preset_error"]

C = TypeVar("C")


def known_keys(cls: type) -> list[str]:
    """The keys a block for ``cls`` may hold (its init fields)."""
    return [f.name for f in dataclasses.fields(cls) if f.init]


def from_dict(cls: type[C], cfg: Mapping[str, Any] | None, where: str = "config", /, **overrides: Any) -> C:
    """``cls(**cfg, **overrides)``, refusing unknown keys; ``where`` names the block in errors.

    Parameters
    ----------
    cls : a dataclass type.
    cfg : the block from config.yaml (``None`` or empty gives the defaults).
    where : the block's path, e.g. ``"tmevolve.small.model"``; errors name ``<where>.<key>``.
    overrides : values set by the caller (e.g. a wildcard), checked like the block's own keys.
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    if cfg is not None and not isinstance(cfg, Mapping):
        raise ValueError(f"{where}: expected a mapping of settings, got {type(cfg).__name__}")
    values = {**(cfg or {}), **overrides}
    known = known_keys(cls)
    unknown = [k for k in values if k not in known]
    if unknown:
        hints = [f"{where}.{k}" + (f" (did you mean {close[0]!r}?)" if (close := difflib.get_close_matches(k, known, 1))
                                   else "") for k in unknown]
        raise ValueError(f"unknown config key {', '.join(hints)}; {where} takes: {', '.join(known)}")
    try:
        hints = typing.get_type_hints(cls)
    except NameError:  # a class defined in a function, with string annotations: use what resolves
        hints = {f.name: f.type for f in dataclasses.fields(cls)}
    for name, value in list(values.items()):
        sub = hints.get(name)
        if dataclasses.is_dataclass(sub) and isinstance(value, Mapping):
            values[name] = from_dict(sub, value, f"{where}.{name}")
    return cls(**values)


def preset_error(preset: Any, schema_path: str, where: str) -> str:
    """The first JSON-schema error of ``preset`` as one line naming its full path from ``where``.

    ``"tmevolve.small.model.dropuot: unknown key; tmevolve.small.model takes: ..."`` for a misspelt
    key, else ``"<where>.<path>: <jsonschema message>"``. Used by the workflow's config check.
    """
    import jsonschema
    import yaml

    with open(schema_path, encoding="utf-8") as fh:
        schema = yaml.safe_load(fh)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(preset),
                    key=lambda e: (e.validator != "additionalProperties", list(e.absolute_path)))
    if not errors:
        return f"{where}: invalid"
    err = errors[0]
    at = ".".join([where, *map(str, err.absolute_path)])
    if err.validator == "additionalProperties" and isinstance(err.instance, Mapping):
        import re

        allowed = list(err.schema.get("properties", {}))
        patterns = list(err.schema.get("patternProperties", {}))
        extra = [k for k in err.instance if k not in allowed and not any(re.search(p, k) for p in patterns)]
        return (f"{', '.join(f'{at}.{k}' for k in extra)}: unknown key; {at} takes: "
                f"{', '.join(allowed) or 'no keys'}")
    return f"{at}: {err.message}"
