"""The workflow's configuration: presets merged under the user's settings, and the one converter
from a block to a frozen config dataclass.

Each paper (and shared stage) keeps its settings in ``workflow/presets/<key>.yaml``: one block named
by its key, with a preset per scale. :func:`with_presets` merges those files *beneath* what the user
gave (``config.yaml``, ``--configfile``, ``--config``), key by key as Snakemake merges config files,
so a user's value always wins and a paper's preset never has to be copied to change one setting.
:func:`block_scale` is the one place a block's scale is decided (its own ``scale:`` over the global
one): the rules choose a preset with it and a job stamps it into its metrics.


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
import copy
import typing
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["block_scale", "from_dict", "known_keys", "load_presets", "merge", "preset_error",
           "rule_block", "with_presets", "workflow_config"]

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


def merge(base: dict, override: Mapping) -> dict:
    """``base`` updated in place by ``override``: mappings merge key by key, anything else replaces.

    The same rule as Snakemake's own merge of config files and ``--config`` values.
    """
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def load_presets(presets_dir: str | Path) -> dict[str, Any]:
    """Every block of ``presets_dir/<key>.yaml``, as ``{key: block}``; each file holds one block named ``key``."""
    import yaml

    presets = {}
    for path in sorted(Path(presets_dir).glob("*.yaml")):
        with open(path, encoding="utf-8") as fh:
            doc = yaml.safe_load(fh)
        if not isinstance(doc, dict) or list(doc) != [path.stem]:
            raise ValueError(f"{path}: a preset file holds exactly one block named after the file ({path.stem}:), "
                             f"found {list(doc) if isinstance(doc, dict) else type(doc).__name__}")
        presets[path.stem] = doc[path.stem]
    return presets


def with_presets(config: MutableMapping[str, Any], presets_dir: str | Path) -> None:
    """Fill ``config`` in place: the presets of ``presets_dir`` beneath the values it already holds."""
    merged = merge(load_presets(presets_dir), config)
    config.clear()
    config.update(merged)


def workflow_config(repo: str | Path, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The configuration the workflow in ``repo`` sees: presets, then ``config.yaml``, then ``overrides``.

    For notebooks and tests; the workflow itself gets the same through :func:`with_presets`.
    """
    import yaml

    repo = Path(repo)
    with open(repo / "config.yaml", encoding="utf-8") as fh:
        config = merge(yaml.safe_load(fh) or {}, overrides or {})
    with_presets(config, repo / "workflow" / "presets")
    return config


def block_scale(config: Mapping[str, Any], key: str | None) -> str:
    """The scale of block ``key``: its own ``scale:`` where it sets one, else the global scale."""
    block = config.get(key) if key else None
    return (block or {}).get("scale", config["scale"]) if isinstance(block, Mapping) else config["scale"]


def rule_block(config: Mapping[str, Any], rule: str) -> str | None:
    """The block a rule belongs to: rules are named ``<key>_<step>``; ``None`` for a rule of no block."""
    key = rule.split("_", 1)[0]
    return key if isinstance(config.get(key), Mapping) else None
