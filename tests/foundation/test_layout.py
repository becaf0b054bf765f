"""The house layout holds: shared packages never import a paper, no import cycles, rule files that
cannot leak into each other, closed config schemas, and outputs that honour the umask.

Layout (docs/development.md): methods live in shared packages named for what they do
(``src/repro/methods``, ``nn``, ``rl``, ...); ``src/repro/papers/<key>`` holds one paper's experiment.
``tests/<key>``, ``workflow/rules/<key>.smk``, ``workflow/scripts/<key>``, ``workflow/claims/<key>.yaml``,
``workflow/schemas/<key>.schema.yaml``, ``workflow/presets/<key>.yaml`` and ``docs/papers/<key>.md``
mirror it.
"""

from __future__ import annotations

import ast
import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from repro.config import workflow_config
from tests.conftest import REPO, run_snakemake

SRC = REPO / "src"
PKG = SRC / "repro"
RULES = REPO / "workflow/rules"
PAPERS = yaml.safe_load((REPO / "workflow/papers.yaml").read_text())
BUILT = sorted(p.name for p in (PKG / "papers").glob("*") if (p / "__init__.py").exists())
#: Modules that a rule file must not pull in at parse time (every Snakemake call and cluster job pays).
HEAVY = ("torch", "transformers", "timm", "matplotlib", "pandas", "scipy", "sklearn", "h5py", "openslide")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Every ``repro`` module and the ``repro`` modules it imports (at any depth of the file)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PKG.rglob("*.py")):
        name = _module_name(path)
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names if a.name.startswith("repro")}
            elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("repro") and not node.level:
                found.add(node.module)
        graph[name] = found
    return graph


def _unit(module: str) -> str:
    """The layout unit of a module: ``repro.<package>`` or ``repro.papers.<key>``."""
    parts = module.split(".")
    return ".".join(parts[:3] if parts[1:2] == ["papers"] and len(parts) > 2 else parts[:2])


def test_shared_packages_never_import_a_paper():
    leaks = {m: sorted(i for i in imps if i.startswith("repro.papers"))
             for m, imps in _imports().items() if not m.startswith("repro.papers")}
    assert not {m: i for m, i in leaks.items() if i}, f"shared modules import paper packages: {leaks}"


def test_a_paper_imports_no_other_paper():
    cross = {m: sorted(i for i in imps if i.startswith("repro.papers.") and _unit(i) != _unit(m))
             for m, imps in _imports().items() if m.startswith("repro.papers.")}
    assert not {m: i for m, i in cross.items() if i}, cross


def test_the_package_import_graph_has_no_cycle():
    edges: dict[str, set[str]] = {}
    for module, imps in _imports().items():
        edges.setdefault(_unit(module), set()).update(_unit(i) for i in imps if _unit(i) != _unit(module))
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                pytest.fail("import cycle: " + " -> ".join([*path[path.index(nxt):], nxt]))
            if nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])


def test_every_paper_package_has_its_mirror_files():
    assert BUILT, "no paper package under src/repro/papers"
    keys = {p["key"] for p in PAPERS["papers"]}
    for key in BUILT:
        assert key in keys, f"src/repro/papers/{key} is not a paper of workflow/papers.yaml"
        for mirror in (f"workflow/rules/{key}.smk", f"workflow/scripts/{key}", f"workflow/claims/{key}.yaml",
                       f"workflow/schemas/{key}.schema.yaml", f"workflow/presets/{key}.yaml", f"tests/{key}",
                       f"docs/papers/{key}.md"):
            assert (REPO / mirror).exists(), f"paper {key} lacks {mirror}"
    for stage in PAPERS["stages"]:
        for mirror in (f"workflow/rules/{stage}.smk", f"workflow/schemas/{stage}.schema.yaml",
                       f"workflow/presets/{stage}.yaml", f"src/repro/{stage}", f"docs/stages/{stage}.md"):
            assert (REPO / mirror).exists(), f"stage {stage} lacks {mirror}"


def test_every_paper_is_one_line_of_the_readme_linking_its_page():
    readme = (REPO / "README.md").read_text()
    for paper in PAPERS["papers"]:
        key = paper["key"]
        rows = [line for line in readme.splitlines() if line.startswith("|") and f"`{key}`" in line]
        assert len(rows) == 1 and f"(docs/papers/{key}.md)" in rows[0], f"README's paper table: {key} {rows}"


def _defines_a_torch_module(node: ast.ClassDef) -> bool:
    return any((isinstance(b, ast.Attribute) and b.attr == "Module") or (isinstance(b, ast.Name) and b.id == "Module")
               for b in node.bases)


def test_models_live_in_shared_packages_not_in_a_papers_experiment():
    """Where code lives: a method (a model, estimator, loss, training procedure) lives in a shared package
    named for what it does, from its first user on; ``repro.papers.<key>`` holds the experiment (testbed,
    grid, runs, aggregates, tables, figures). The part a test can see: no ``nn.Module`` is defined in a
    paper's package (docs/development.md, "Where code lives")."""
    found = [f"{path.relative_to(REPO)}:{node.lineno} {node.name}"
             for path in sorted((PKG / "papers").rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(), str(path)))
             if isinstance(node, ast.ClassDef) and _defines_a_torch_module(node)]
    assert not found, f"models defined in paper packages (move them to a shared package): {found}"


def _smk_files() -> list[Path]:
    return [REPO / "Snakefile", *sorted(RULES.glob("*.smk"))]


def test_no_rule_file_sets_a_global_wildcard_constraint():
    """A global constraint applies to every rule of every file: the include order would decide."""
    offenders = [p.name for p in _smk_files() if re.search(r"^wildcard_constraints:", p.read_text(), re.M)]
    assert not offenders, f"global wildcard_constraints in {offenders}; constrain per rule"


def test_rule_files_import_only_light_modules_at_parse_time():
    imports = sorted({line.strip() for p in _smk_files() for line in p.read_text().splitlines()
                      if re.match(r"(from \S+ import |import )", line)})
    code = "\n".join(["import sys", f"sys.path.insert(0, {str(SRC)!r})", *imports,
                      f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"])
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", f"rule files import heavy modules at parse time: {proc.stdout} via {imports}"


def test_every_paper_schema_is_closed_at_every_level():
    """A misspelt key anywhere in a preset is an error, never ignored."""
    def open_objects(node, path):
        if isinstance(node, dict):
            if node.get("type") == "object" and "properties" in node and node.get("additionalProperties") is not False:
                yield path
            for k, v in node.items():
                yield from open_objects(v, f"{path}/{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield from open_objects(v, f"{path}/{i}")

    for schema in sorted((REPO / "workflow/schemas").glob("*.schema.yaml")):
        if schema.name in ("config.schema.yaml", "claims.schema.yaml"):
            continue
        doc = yaml.safe_load(schema.read_text())
        assert doc.get("additionalProperties") is False, f"{schema.name}: top level is open"
        assert not list(open_objects(doc, "")), f"{schema.name}: open objects at {list(open_objects(doc, ''))}"


def _leaves(node, path=()):
    """Paths to every mapping key of a preset (where a typo could hide)."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield (*path, k)
            yield from _leaves(v, (*path, k))


@pytest.mark.parametrize("key", [*PAPERS["stages"], *BUILT])
def test_a_misspelt_key_deep_in_a_preset_is_rejected_with_its_path(tmp_path, key):
    cfg = workflow_config(REPO)
    deepest = max(_leaves(cfg[key]["small"]), key=len)
    node = cfg[key]["small"]
    for part in deepest[:-1]:
        node = node[part]
    node[deepest[-1] + "x"] = node[deepest[-1]]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(cfg))
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(bad), check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert ".".join((key, "small", *deepest[:-1], deepest[-1] + "x")) in out, out[-2000:]


@dataclass(frozen=True)
class Inner:
    lr: float = 1e-3


@dataclass(frozen=True)
class Outer:
    inner: Inner = field(default_factory=Inner)
    epochs: int = 1


def test_library_configs_refuse_unknown_keys_naming_the_path():
    from repro.config import from_dict

    assert from_dict(Outer, {"inner": {"lr": 0.1}, "epochs": 3}, "p.small") == Outer(Inner(0.1), 3)
    with pytest.raises(ValueError, match=r"p\.small\.inner\.lrr.*did you mean 'lr'"):
        from_dict(Outer, {"inner": {"lrr": 0.1}}, "p.small")
    with pytest.raises(ValueError, match=r"p\.small\.epoch\b"):
        from_dict(Outer, {"epoch": 3}, "p.small")


def test_a_block_for_an_unknown_paper_is_rejected(tmp_path):
    cfg = workflow_config(REPO)
    cfg["tmevolv"] = cfg["tmevolve"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(cfg))
    proc = run_snakemake(tmp_path, "-n", "--configfile", str(bad), check=False)
    assert proc.returncode != 0 and "tmevolv" in proc.stdout + proc.stderr


def test_written_outputs_honour_the_umask(tmp_path):
    """Figures and tables on a lab server must be readable by colleagues (umask 022 -> 0644)."""
    import matplotlib.pyplot as plt
    import pandas as pd

    from repro.figures.style import save, save_table

    old = os.umask(0o022)
    try:
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1])
        table = pd.DataFrame({"x": [0, 1], "y": [0, 1]})
        save(fig, table, tmp_path / "fig.pdf")
        save_table(table, tmp_path / "table")
        os.umask(0o077)
        save_table(table, tmp_path / "private")
    finally:
        os.umask(old)
    for name in ("fig.pdf", "fig.csv", "table.csv", "table.md"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o644, name
    assert stat.S_IMODE((tmp_path / "private.md").stat().st_mode) == 0o600
