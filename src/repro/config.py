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

import copy
import dataclasses
import difflib
import re
import typing
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

__all__ = ["block_scale", "coerce_to_schema", "coerce_workflow_config", "from_dict", "known_keys", "load_presets",
           "load_yaml_file", "merge", "preset_error", "rule_block", "schema_error", "unknown_top_level_keys",
           "with_presets", "workflow_config"]

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
    return schema_error(preset, schema_path, where) or f"{where}: invalid"


def schema_error(instance: Any, schema_path: str | Path, where: str) -> str | None:
    """The first JSON-schema error of ``instance`` as one line naming its path from ``where``; None if valid."""
    import jsonschema

    schema = _load_schema(schema_path)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(instance),
                    key=lambda e: (e.validator != "additionalProperties", list(e.absolute_path)))
    if not errors:
        return None
    err = errors[0]
    at = ".".join([where, *map(str, err.absolute_path)])
    if err.validator == "additionalProperties" and isinstance(err.instance, Mapping):
        allowed = list(err.schema.get("properties", {}))
        patterns = list(err.schema.get("patternProperties", {}))
        extra = [k for k in err.instance if k not in allowed and not any(re.search(p, k) for p in patterns)]
        return (f"{', '.join(f'{at}.{k}' for k in extra)}: unknown key; {at} takes: "
                f"{', '.join(allowed) or 'no keys'}")
    return f"{at}: {err.message}"


def _load_schema(path: str | Path) -> dict[str, Any]:
    import yaml

    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def load_yaml_file(path: str | Path) -> Any:
    """The YAML document in ``path``; a syntax error is a ValueError naming the file, line and column.

    Snakemake's own message for a config file that does not parse names neither, so the Snakefile
    reads ``config.yaml`` with this first.
    """
    import yaml

    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    try:
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        context = ""
        if err.context and err.context_mark is not None and err.context_mark is not mark:
            context = f" ({err.context} at line {err.context_mark.line + 1}, column {err.context_mark.column + 1})"
        raise ValueError(f"{path}{where}: {err.problem or err.context}{context}: not valid YAML") from None
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not valid YAML: {err}") from None


def unknown_top_level_keys(config: Mapping[str, Any], global_keys: Sequence[str], blocks: Sequence[str]) -> str | None:
    """A one-line error for the top-level keys of ``config`` that are neither global keys nor blocks; None if none.

    Each names the key it most likely meant (``unknown key 'scal' (did you mean 'scale'?)``).
    """
    known = [*global_keys, *blocks]
    unknown = [key for key in config if key not in known]
    if not unknown:
        return None
    named = []
    for key in unknown:
        close = difflib.get_close_matches(str(key), known, 1)
        named.append(f"unknown key {key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return (f"config: {'; '.join(named)}; the global keys are {', '.join(global_keys)}, and a block is named "
            f"after a stage or paper of workflow/papers.yaml: {', '.join(blocks)}")


_TRUE, _FALSE = ("true", "yes", "on"), ("false", "no", "off")
_NULL = ("null", "~")
_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")


def _allowed_types(schema: Mapping[str, Any], root: Mapping[str, Any]) -> set[str] | None:
    """The JSON types a value may take at ``schema`` (None: any), across $ref, allOf, anyOf and oneOf."""
    schema = _resolve(schema, root)
    types: set[str] | None = None
    if "type" in schema:
        types = {schema["type"]} if isinstance(schema["type"], str) else set(schema["type"])
    elif "enum" in schema or "const" in schema:
        values = schema.get("enum", [schema.get("const")])
        types = {_json_type(v) for v in values}
    for branch in schema.get("anyOf", []) + schema.get("oneOf", []):
        sub = _allowed_types(branch, root)
        if sub is None:
            return None
        types = (types or set()) | sub
    for branch in schema.get("allOf", []):
        sub = _allowed_types(branch, root)
        if sub is not None:
            types = sub if types is None else types & sub
    return types


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else "array" if isinstance(value, list) else "object"


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` with a local ``$ref`` (``#/$defs/name``) merged in."""
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part]
    return {**_resolve(node, root), **{k: v for k, v in schema.items() if k != "$ref"}}


def _scalar(text: str, schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    """``text`` read as the number, boolean or null the schema asks for where it takes no string; else unchanged."""
    types = _allowed_types(schema, root)
    if types is None or "string" in types:
        return text
    enum = _resolve(schema, root).get("enum")
    candidates = []
    word = text.strip()
    if "null" in types and word in _NULL + ("Null", "NULL"):
        candidates.append(None)
    if "boolean" in types and word.lower() in _TRUE + _FALSE:
        candidates.append(word.lower() in _TRUE)
    if types & {"integer", "number"} and _INT.fullmatch(word):
        candidates.append(int(word))
    elif "number" in types and _FLOAT.fullmatch(word):
        candidates.append(float(word.lower().replace(".inf", "inf").replace(".nan", "nan")))
    for value in candidates:
        if enum is None or value in enum:
            return value
    return text


def coerce_to_schema(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """``value`` with each string converted where ``schema`` takes no string but a number, boolean or null.

    Snakemake reads ``--config key=value`` itself: ``True``/``False`` and plain numbers at the top
    level, but a dict literal (``"driftbench={'smoke': {'repetitions': 3}}"``) and a word like
    ``false`` arrive with every scalar a string. Where the schema leaves no doubt (the value may not
    be a string, and the text reads as one of the types it may be: ``3``, ``0.5``, ``1e-3``,
    ``false``, ``no``, ``null``) the value is converted; anything else is left for the schema check
    to refuse by name. Values from YAML files are typed already and pass through unchanged.
    """
    root = schema if root is None else root
    schema = _resolve(schema, root)
    for branch in schema.get("allOf", []):
        value = coerce_to_schema(value, branch, root)
    if isinstance(value, str):
        return _scalar(value, schema, root)
    if isinstance(value, dict):
        props, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
        extra = schema.get("additionalProperties")
        for key, item in value.items():
            if key in props:
                sub = props[key]
            else:
                sub = next((p for pattern, p in patterns.items() if re.search(pattern, str(key))), None)
                if sub is None and isinstance(extra, Mapping):
                    sub = extra
            if isinstance(sub, Mapping):
                value[key] = coerce_to_schema(item, sub, root)
        return value
    if isinstance(value, list):
        prefix, items = schema.get("prefixItems", []), schema.get("items")
        for i, item in enumerate(value):
            sub = prefix[i] if i < len(prefix) else items
            if isinstance(sub, Mapping):
                value[i] = coerce_to_schema(item, sub, root)
        return value
    return value


def coerce_workflow_config(config: MutableMapping[str, Any], schemas_dir: str | Path,
                           scales: Sequence[str] = ("smoke", "small", "paper")) -> None:
    """Convert, in place, what Snakemake's ``--config`` left as strings: the global keys by
    ``config.schema.yaml``, each block's presets by ``<key>.schema.yaml`` (see :func:`coerce_to_schema`)."""
    schemas_dir = Path(schemas_dir)
    coerce_to_schema(config, _load_schema(schemas_dir / "config.schema.yaml"))
    for key, block in config.items():
        path = schemas_dir / f"{key}.schema.yaml"
        if not isinstance(block, dict) or not path.exists():
            continue
        schema = _load_schema(path)
        for scale in scales:
            if isinstance(block.get(scale), dict):
                coerce_to_schema(block[scale], schema)


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
    presets = {}
    for path in sorted(Path(presets_dir).glob("*.yaml")):
        doc = load_yaml_file(path)  # a syntax error names the file, line and column
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
    repo = Path(repo)
    config = merge(load_yaml_file(repo / "config.yaml") or {}, overrides or {})
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
