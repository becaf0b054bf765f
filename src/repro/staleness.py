"""What a paper's verdicts depend on, and whether a published report is stale.

A published artifact-evaluation report is true of the code it was built from. To say when that stops
being so, each paper's verdicts are tied to the files that can change them:

- its experiment package ``src/repro/papers/<key>/``, its rule file, scripts, preset and claims file;
- the shared stages it reads (``workflow/rules/<stage>.smk``, scripts and preset, when the paper's
  rule file or its own code names the stage's ``resources/<stage>/`` or ``results/<stage>/`` folder);
- every ``repro`` module those Python files import, followed transitively (imports found anywhere in a
  module, a function's lazy import included; a package's ``__init__`` counts for each module under it);
- what judges every paper's claims: :mod:`repro.claims` with its imports, the claims schema, and
  ``config.yaml`` (the global scale and seed).

Left out, because no verdict reads what they make: the code that only draws a paper's figures and
tables under ``reports/`` (its ``figures.py``, and the scripts named ``fig<N>.py``, ``table<N>.py``,
``tables.py`` or ``<name>_table.py``; :func:`is_report_file`), unless code that the verdicts do depend
on imports it; and this module, which :mod:`repro.claims` imports only to answer ``--stale``. A test
checks the premise on the workflow itself: no job upstream of any paper's ``metrics.json`` runs a
report script. A change to a figure therefore leaves the published verdicts current (the published
figures are then older than the code).

:func:`fingerprint` hashes each of those files (sha256 of the bytes, first 16 hex digits);
:func:`stale` compares a published record with the tree and names, per paper, the files added,
removed or changed since; :func:`banner` says so in words at the top of the published page
(``docs/results/README.md``, written by :mod:`repro.publish`) and :func:`mark` rewrites it there. Imports are read with :mod:`ast`, not executed, so nothing is imported and
a module that does not import still has its dependencies read. What this cannot see: data files
that code opens by path (other than the ones listed), and packages outside ``repro`` (their versions
are in each metrics file's provenance block).
"""

from __future__ import annotations

import ast
import hashlib
import re
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from repro.io import atomic_open, read_json

__all__ = ["paper_inputs", "stage_inputs", "fingerprint", "stale", "module_file", "is_report_file", "repro_imports", "adopt_unchanged", "read_build", "banner", "built_at", "mark",
           "BANNER_START", "BANNER_END"]

#: Files that judge every paper's claims, beside repro.claims and its imports.
COMMON_INPUTS = ("config.yaml", "workflow/schemas/claims.schema.yaml")
#: File names of the code that only draws figures and tables (reports/), see :func:`is_report_file`.
REPORT_FILE = re.compile(r"(?:figures|fig\d+|tables?\d*|\w+_table)\.py")

BANNER_START = "<!-- staleness: written by python -m repro.claims --stale --mark -->"
BANNER_END = "<!-- /staleness -->"


def module_file(src: Path, module: str) -> Path | None:
    """The file of ``module`` (dotted, ``repro...``) under ``src``, or None if it is not a repro module."""
    parts = module.split(".")
    if parts[0] != "repro":
        return None
    base = src.joinpath(*parts)
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    return None


def _package_of(src: Path, path: Path) -> str:
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def repro_imports(src: Path, path: Path) -> set[Path]:
    """The repro modules' files that the Python file ``path`` imports (one step, with parent packages)."""
    tree = ast.parse(path.read_bytes(), filename=str(path))
    inside = path.is_relative_to(src)
    here = _package_of(src, path) if inside else ""
    is_package = path.name == "__init__.py"
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if not inside:
                    continue
                anchor = here.split(".") if is_package else here.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            names.add(base)
            # ``from repro.stats import bootstrap`` may name a submodule
            names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    files: set[Path] = set()
    for name in names:
        parts = name.split(".")
        for i in range(1, len(parts) + 1):  # the packages a module's import runs, and the module
            f = module_file(src, ".".join(parts[:i]))
            if f is not None:
                files.add(f)
    return files


def is_report_file(path: str | Path) -> bool:
    """Whether ``path`` is by its name code that only draws figures and tables (``fig2.py``, ``figures.py``)."""
    return REPORT_FILE.fullmatch(Path(path).name) is not None


def _closure(src: Path, roots: Iterable[Path], exclude: Iterable[Path] = ()) -> set[Path]:
    seen: set[Path] = set()
    skip = set(exclude)
    todo = [p for p in roots if p.suffix == ".py"]
    while todo:
        path = todo.pop()
        if path in seen or path in skip:
            continue
        seen.add(path)
        todo.extend(repro_imports(src, path) - seen)
    return seen


def _files_under(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return [p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts]


def _stage_files(repo: Path, stage: str) -> list[Path]:
    files = [repo / f"workflow/rules/{stage}.smk", repo / f"workflow/presets/{stage}.yaml"]
    return [f for f in files if f.is_file()] + _files_under(repo / f"workflow/scripts/{stage}")


def stage_inputs(stage: str, repo: str | Path = ".") -> list[str]:
    """The files (relative to ``repo``, sorted) that what the shared stage ``stage`` builds depends on: its rule
    file, preset and scripts, and the ``repro`` modules those scripts import (followed transitively)."""
    repo = Path(repo).resolve()
    return _with_imports(repo, _stage_files(repo, stage))


def _with_imports(repo: Path, files: list[Path], roots: Iterable[Path] = ()) -> list[str]:
    """``files`` and the ``repro`` modules that their Python files and ``roots`` import (transitively, this module
    left out), relative to ``repo`` and sorted."""
    src = repo / "src"
    modules = _closure(src, [p for p in files if p.suffix == ".py"] + list(roots), exclude=[src / "repro/staleness.py"])
    return sorted({str(p.relative_to(repo)) for p in [*files, *modules]})


def paper_inputs(key: str, repo: str | Path = ".", stages: Iterable[str] = ("wsi", "llm")) -> list[str]:
    """The files (relative to ``repo``, sorted) that ``key``'s verdicts depend on."""
    repo = Path(repo).resolve()
    src = repo / "src"
    rules = repo / f"workflow/rules/{key}.smk"
    if not rules.is_file():
        raise FileNotFoundError(f"{key}: no rule file {rules.relative_to(repo)}: is {key!r} a paper key?")
    own = [rules, *(repo / f for f in (f"workflow/presets/{key}.yaml", f"workflow/claims/{key}.yaml")
                    if (repo / f).is_file())]
    code = _files_under(src / "repro/papers" / key) + _files_under(repo / f"workflow/scripts/{key}")
    own += [p for p in code if not is_report_file(p)]
    # A stage is named by the rule file or by the code that builds the paper's rules (a grid's input paths).
    text = "\n".join(f.read_text(encoding="utf-8", errors="replace") for f in [rules, *code] if f.suffix in (".smk", ".py"))
    for stage in stages:
        if f"resources/{stage}/" in text or f"results/{stage}/" in text:
            own += _stage_files(repo, stage)
    own += [repo / f for f in COMMON_INPUTS if (repo / f).is_file()]
    claims_module = module_file(src, "repro.claims")
    return _with_imports(repo, own, [claims_module] if claims_module else [])


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def fingerprint(key: str, repo: str | Path = ".") -> dict[str, str]:
    """``{path: sha256 prefix}`` of every file :func:`paper_inputs` names."""
    repo = Path(repo).resolve()
    return {rel: _sha((repo / rel).read_bytes()) for rel in paper_inputs(key, repo)}


def stale(published: Mapping[str, Mapping[str, str]], repo: str | Path = ".") -> dict[str, list[str]]:
    """Papers whose inputs differ from ``published`` (``{key: fingerprint}``), each with what differs.

    Each difference reads ``changed <path>``, ``added <path>`` or ``removed <path>``. Papers whose
    inputs are unchanged are left out; a paper whose rule file is gone reads ``removed`` for all.
    """
    out: dict[str, list[str]] = {}
    for key, before in published.items():
        try:
            now = fingerprint(key, repo)
        except FileNotFoundError:
            now = {}
        diffs = [f"changed {p}" for p in sorted(before.keys() & now.keys()) if before[p] != now[p]]
        diffs += [f"added {p}" for p in sorted(now.keys() - before.keys())]
        diffs += [f"removed {p}" for p in sorted(before.keys() - now.keys())]
        if diffs:
            out[key] = diffs
    return out


def adopt_unchanged(key: str, recorded: Mapping[str, str], commit: str, repo: str | Path = ".") -> dict[str, str]:
    """``recorded`` (``key``'s fingerprint as its build at ``commit`` recorded it) with the files that
    :func:`paper_inputs` names now but did not then, where each is the same at ``commit`` as now.

    When what a fingerprint covers grows (a dependency the reading of imports and paths missed before), a paper
    built before stays current if those files are what it was built with; a file that is not (changed since, or
    absent at ``commit``) is left out, so :func:`stale` reports it as added.
    """
    repo = Path(repo).resolve()
    out = dict(recorded)
    for rel, sha in fingerprint(key, repo).items():
        if rel in out:
            continue
        then = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{rel}"], capture_output=True)
        if then.returncode == 0 and _sha(then.stdout) == sha:
            out[rel] = sha
    return dict(sorted(out.items()))


def read_build(results: str | Path) -> dict[str, Any]:
    """The ``build.json`` of a published report folder."""
    path = Path(results) / "build.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no published report (python -m repro.publish BUILD_DIR writes one)")
    return read_json(path)


def banner(build: Mapping[str, Any], repo: str | Path = ".") -> str:
    """The page's first lines: current, or which papers' inputs changed since they were built."""
    found = stale({k: p["fingerprint"] for k, p in build["papers"].items()}, repo)
    if not found:
        text = "**Current**: no published paper's inputs changed since the commit it was built from."
    else:
        lines = [f"**Stale for {len(found)} of {len(build['papers'])} papers**: their inputs changed since the commit "
                 "they were built from, so their verdicts below may no longer hold for the code; rebuild them to check."]
        for key, diffs in sorted(found.items()):
            shown = ", ".join(d.split(" ", 1)[1] for d in diffs[:4]) + (f" and {len(diffs) - 4} more" if len(diffs) > 4 else "")
            lines.append(f"- `{key}` (built at `{built_at(build, key)[:12]}`): {shown}")
        text = "\n".join(lines)
    return f"{BANNER_START}\n{text}\n{BANNER_END}"


def built_at(build: Mapping[str, Any], key: str) -> str:
    """The commit paper ``key`` of a published ``build`` was built from (the build's own, in a record of one commit)."""
    return build["papers"][key].get("commit") or build["commit"]


def mark(results: str | Path, repo: str | Path = ".") -> bool:
    """Rewrite the banner of ``results/README.md``; True if it changed."""
    page = Path(results) / "README.md"
    text = page.read_text(encoding="utf-8")
    start, end = text.find(BANNER_START), text.find(BANNER_END)
    if start < 0 or end < start:
        raise ValueError(f"{page}: no staleness banner between {BANNER_START!r} and {BANNER_END!r}")
    new = text[:start] + banner(read_build(results), repo) + text[end + len(BANNER_END):]
    if new != text:
        with atomic_open(page, "w", encoding="utf-8") as fh:
            fh.write(new)
    return new != text
