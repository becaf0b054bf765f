"""Every figure builder of every paper passes the figure lint, without a build.

Each builder is called on the table it plots at smoke scale (``tests/data/figures/<key>_<fig>.csv``:
the CSV a smoke build writes beside the PDF, and a few of the inputs the tables are made from), and
the figure it returns must pass :func:`repro.figures.lint.check`; a paper's figures together must
draw each legend label in one colour, and every method a preset names must have a colour in its
paper's palette.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import yaml

from repro.figures import lint
from repro.figures.style import NOT_BUILT_GID, OURS

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "figures"

#: Figure name (``<key>_<fig>``) -> a function that builds it from the smoke tables.
BUILDERS = {}


def builds(name: str):
    def register(fn):
        BUILDERS[name] = fn
        return fn
    return register


def read(name: str) -> pd.DataFrame:
    return pd.read_csv(DATA / f"{name}.csv")


def read_json(name: str) -> dict:
    import json

    return json.loads((DATA / f"{name}.json").read_text())


@builds("cmcboot_fig1")
def _():
    from repro.papers.cmcboot.figures import fig1

    return fig1(read("cmcboot_fig1"), episode_length=50)[0]


@builds("cmcboot_fig2")
def _():
    from repro.papers.cmcboot.figures import fig2

    return fig2(read("cmcboot_fig2"), sample_size=1000)[0]


@builds("collapse_fig1")
def _():
    from repro.papers.collapse.figures import fig1

    return fig1(read("collapse_fig1"))


@builds("collapse_fig2")
def _():
    from repro.papers.collapse.figures import fig2

    return fig2(read("collapse_fig2"))


@builds("collapse_fig3")
def _():
    from repro.papers.collapse.figures import fig3

    return fig3(read("collapse_fig3"), read_json("collapse_metrics"))


@builds("collapse_fig4")
def _():
    from repro.papers.collapse.figures import fig4

    return fig4(read("collapse_fig4"))


@builds("driftbench_fig1")
def _():
    from repro.papers.driftbench.figures import fig1

    return fig1(read("driftbench_fig1"))


@builds("driftbench_fig2")
def _():
    from repro.papers.driftbench.figures import fig2

    return fig2(read("driftbench_fig2"))


@builds("evalmeta_fig1")
def _():
    from repro.papers.evalmeta.figures import fig1

    return fig1(read("evalmeta_fig1"))


@builds("evalmeta_fig2")
def _():
    from repro.papers.evalmeta.figures import fig2

    return fig2(read("evalmeta_fig2"))


@builds("grokcap_fig1")
def _():
    from repro.papers.grokcap.figures import fig1

    return fig1(read("grokcap_fig1"), read_json("grokcap_metrics"))


@builds("grokcap_fig2")
def _():
    from repro.papers.grokcap.figures import fig2

    return fig2(read("grokcap_fig2"))


@builds("grokcap_fig3")
def _():
    from repro.papers.grokcap.figures import fig3

    return fig3(read("grokcap_fig3"), read_json("grokcap_metrics"))


@builds("groupfdr_fig1")
def _():
    from repro.papers.groupfdr.figures import fig1

    return fig1(read("groupfdr_fig1"), 0.1)


@builds("groupfdr_fig2")
def _():
    from repro.papers.groupfdr.figures import fig2, fig2_tables

    groups = read("groupfdr_fig2").sort_values("group")
    stats, curve, tau = fig2_tables(groups.M.to_numpy(), groups.is_true.to_numpy(), 0.1)
    return fig2(stats, curve, tau, 0.1)


@builds("gtp_fig1")
def _():
    from repro.papers.gtp.figures import fig1

    return fig1(read("gtp_fig1"))


@builds("gtp_fig2")
def _():
    from repro.papers.gtp.figures import fig2

    return fig2(read("gtp_fig2"))


@builds("gtp_fig3")
def _():
    from repro.papers.gtp.figures import fig3

    return fig3(read("gtp_fig3"))


@builds("immunize_fig1")
def _():
    from repro.papers.immunize.figures import fig1

    return fig1(read("immunize_fig1"))


@builds("immunize_fig2")
def _():
    from repro.papers.immunize.figures import fig2

    return fig2(read("immunize_fig2"))


@builds("incrimination_fig1")
def _():
    from repro.papers.incrimination.figures import fig1

    return fig1(read("incrimination_fig1"))


@builds("incrimination_fig2")
def _():
    from repro.papers.incrimination.figures import fig2

    return fig2(read("incrimination_fig2"))


@builds("m2le_fig1")
def _():
    from repro.papers.m2le.figures import fig1

    return fig1(read("m2le_fig1"))


@builds("m2le_fig2")
def _():
    from repro.papers.m2le.figures import fig2

    return fig2(read("m2le_fig2"))


@builds("matt_fig1")
def _():
    from repro.papers.matt.figures import fig1

    return fig1(read("matt_fig1"))


@builds("mcpo_fig1")
def _():
    from repro.papers.mcpo.figures import fig1

    return fig1(read("mcpo_fig1"), 8)


@builds("mcpo_fig2")
def _():
    from repro.papers.mcpo.figures import fig2

    return fig2(read("mcpo_fig2"))


@builds("mcpo_fig3")
def _():
    from repro.papers.mcpo.figures import fig3

    return fig3(read("mcpo_fig3"))


@builds("mdadd_fig1")
def _():
    from repro.papers.mdadd.figures import fig1

    return fig1(read("mdadd_fig1"))


@builds("mdadd_fig2")
def _():
    from repro.papers.mdadd.figures import fig2

    return fig2(read("mdadd_fig2"))


@builds("mdadd_fig3")
def _():
    from repro.papers.mdadd.figures import fig3

    return fig3(read("mdadd_fig3"))


@builds("modellens_fig1")
def _():
    from repro.papers.modellens.figures import fig1

    return fig1(read("modellens_fig1"), 10)


@builds("modellens_fig2")
def _():
    from repro.papers.modellens.figures import fig2

    return fig2(read("modellens_fig2"))


@builds("modellens_fig3")
def _():
    from repro.papers.modellens.figures import fig3

    return fig3(read("modellens_fig3"))


@builds("munkey_fig1")
def _():
    from repro.papers.munkey.figures import fig1

    return fig1(read("munkey_fig1"))


@builds("opinion_fig1")
def _():
    from repro.papers.opinion.figures import fig1

    return fig1(read("opinion_fig1"))


@builds("opinion_fig2")
def _():
    from repro.papers.opinion.figures import fig2

    return fig2(read("opinion_fig2"))


def _opinion_fig3_table() -> pd.DataFrame:
    """opinion's Fig. 3 table from the attention blocks of a smoke build's metrics.json, with the claims file."""
    from repro.claims import load_claims
    from repro.papers.opinion.figures import fig3_table

    claims = load_claims(REPO / "workflow/claims/opinion.yaml", REPO / "workflow/schemas/claims.schema.yaml")
    return fig3_table(read_json("opinion_metrics"), claims)


@builds("opinion_fig3")
def _():
    from repro.papers.opinion.figures import fig3

    return fig3(_opinion_fig3_table())


@builds("rlqgrad_fig1")
def _():
    from repro.papers.rlqgrad.figures import fig1

    return fig1(read("rlqgrad_fig1"))


@builds("rlqgrad_fig2")
def _():
    from repro.papers.rlqgrad.figures import fig2

    return fig2(read("rlqgrad_fig2"))


def tmevolve_inputs() -> tuple[pd.DataFrame, pd.DataFrame, dict, tuple]:
    """The patches and points ``fig3_table`` joined, split again, the slide's facts and a thumbnail."""
    from repro.papers.tmevolve.synth import TISSUE_TYPES

    table = read("tmevolve_fig3")
    patch_cols = ["slide_id", "gx", "gy", "truth", "region_q0", "region_final", "response", "flux", "x0", "y0"]
    patches = table[table.panel == "slide"][patch_cols].reset_index(drop=True)
    patches = patches.astype({c: int for c in ("gx", "gy", "truth", "region_q0", "region_final", "x0", "y0")})
    points = table[table.panel == "c_index"][["method", "kind", "mean", "diff", "low", "high", "n", "reference"]]
    facts = {"slide_id": patches.slide_id.iloc[0], "Q": 4, "K": int(patches.region_q0.max()) + 1,
             "ari_q0": 0.12, "ari_final": 0.34, "tissue_types": list(TISSUE_TYPES), "patch_size_level0": 112}
    side = int((patches[["gx", "gy"]].to_numpy().max() + 3) * 112)    # one patch of glass around the grid
    thumbnail = (np.full((64, 64, 3), 230, np.uint8), (side, side))
    return patches, points.reset_index(drop=True), facts, thumbnail


@builds("tmevolve_fig3")
def _():
    from repro.papers.tmevolve.figures import build_fig3

    return build_fig3(*tmevolve_inputs())


@builds("toolgap_fig1")
def _():
    from repro.papers.toolgap.figures import fig1

    return fig1(read("toolgap_fig1"))


@builds("toolgap_fig2")
def _():
    from repro.papers.toolgap.figures import fig2

    return fig2(read("toolgap_fig2"))


@functools.cache
def build(name: str) -> plt.Figure:
    """Each figure once per module (the colour test reads a paper's figures together)."""
    return BUILDERS[name]()


@pytest.fixture(scope="module", autouse=True)
def _figures_kept_for_the_module():
    with plt.rc_context({"figure.max_open_warning": 0}):
        yield
    build.cache_clear()
    plt.close("all")


PAPERS = sorted({name.rsplit("_", 1)[0] for name in BUILDERS})


def _figure_names_of_the_workflow() -> set[str]:
    """``<key>_<fig>`` of every figure a script writes (``save(...)`` of a ``figN`` PDF)."""
    names = set()
    for script in (REPO / "workflow" / "scripts").glob("*/*.py"):
        key = script.parent.name
        text = script.read_text()
        if not re.search(r"^save\(|[^_]save\(", text, re.M):
            continue
        if re.fullmatch(r"fig\d", script.stem):
            names.add(f"{key}_{script.stem}")
        names.update(f"{key}_{m}" for m in re.findall(r"\b(fig\d)\b", text))
    return names


def test_every_figure_of_the_workflow_is_linted_here():
    assert _figure_names_of_the_workflow() == set(BUILDERS)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_figure_passes_the_lint(name):
    problems = lint.check(build(name))
    assert not problems, f"{name}:\n" + "\n".join(map(str, problems))


@pytest.mark.parametrize("paper", PAPERS)
def test_a_papers_figures_draw_each_name_in_one_colour(paper):
    figures = {name: build(name) for name in BUILDERS if name.rsplit("_", 1)[0] == paper}
    problems = lint.check_colours(figures)
    assert not problems, "\n".join(map(str, problems))


def _preset_methods(key: str) -> set[str]:
    """Every method name the paper's presets list (``methods``, ``ablations``, at any depth and scale)."""
    names: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if k in ("methods", "ablations") and isinstance(v, list):
                    names.update(str(m) for m in v)
                else:
                    walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(yaml.safe_load((REPO / "workflow" / "presets" / f"{key}.yaml").read_text()))
    return names


@pytest.mark.parametrize("key", ["groupfdr", "gtp", "immunize", "m2le", "matt", "mdadd", "modellens", "rlqgrad",
                                 "tmevolve"])
def test_every_method_a_preset_names_has_a_colour(key):
    import importlib

    colours = importlib.import_module(f"repro.papers.{key}.figures").COLORS
    missing = sorted(m for m in _preset_methods(key) if m not in colours)
    assert not missing, f"{key}: no colour for {missing}"


def test_ours_is_one_colour_in_every_paper():
    import importlib

    for key in PAPERS:
        colours = importlib.import_module(f"repro.papers.{key}.figures").COLORS
        assert all(colours(m) == OURS for m in colours.ours)
        assert all(colours(m) != OURS for m in colours if m not in colours.ours), key


def test_an_empty_table_draws_the_not_built_panel():
    fig = build("collapse_fig3")
    texts = [t.get_text() for ax in fig.axes for t in ax.texts if t.get_gid() == NOT_BUILT_GID]
    assert texts and texts[0].startswith("not built at this scale")


def test_a_panel_whose_values_are_all_missing_says_why():
    """matt at smoke: the source model completes nothing, so completion recovery is undefined (NaN)."""
    assert read("matt_fig1").recovery_gen.isna().all()
    fig = build("matt_fig1")
    assert any(t.get_gid() == NOT_BUILT_GID for ax in fig.axes for t in ax.texts)


def test_opinion_fig3_draws_no_interval_where_the_claims_form_none():
    """At smoke (2 seeds) the claims form no interval (6 seeds are the fewest at 95%): Fig. 3 draws none either,
    rather than a Student-t interval of its own; the means are correlations."""
    table = _opinion_fig3_table()
    assert (table.n == 2).all() and table[["low", "high"]].isna().all().all()
    assert table.interval.str.contains("at least 6 are needed").all()
    rhos = table[table.policy != "difference"].rho
    assert rhos.between(-1, 1).all()


def test_tmevolve_letters_each_panel_once():
    fig = build("tmevolve_fig3")
    letters = [ax.get_title("left")[:3] for ax in fig.axes if ax.get_title("left")]
    assert letters == [f"({c})" for c in "abcdefg"]


def test_missing_bars_are_not_drawn_as_zero():
    from repro.papers.toolgap.figures import fig1

    table = read("toolgap_fig1")
    table.loc[0, "rate"] = np.nan
    fig = fig1(table)
    heights = [p.get_height() for ax in fig.axes for p in ax.patches]
    assert any(np.isnan(h) for h in heights)


def test_evalmeta_draws_each_phrasings_own_interval_and_marks_a_missing_shift():
    """The shift per column is drawn per phrasing with the aggregate's interval (a pooled interval cannot be
    formed from the per-phrasing bounds: their mean is no interval); a missing shift is "n/a", not a zero bar."""
    from repro.papers.evalmeta.figures import fig1, fig1_table

    table = read("evalmeta_fig1")
    shifts = table.assign(comparison="trait_vs_control", low=table["shift"] - 0.1, high=table["shift"] + 0.2)
    plotted = fig1_table(shifts)
    assert len(plotted) == len(shifts) and (plotted.low == shifts.low).all() and (plotted.high == shifts.high).all()
    plotted.loc[0, ["shift", "low", "high", "n_items"]] = [np.nan, np.nan, np.nan, 0]
    fig = fig1(plotted)
    assert [t.get_text() for ax in fig.axes for t in ax.texts] == ["n/a"]
    assert lint.check(fig) == []


def test_grokcap_capacity_runs_at_their_step_cap_are_drawn_as_lower_bounds():
    from matplotlib.collections import PathCollection

    fig = build("grokcap_fig3")
    assert read("grokcap_fig3").hit_step_cap.all()
    points = [c for c in fig.axes[0].collections if isinstance(c, PathCollection) and len(c.get_offsets())]
    assert points and all(len(c.get_facecolors()) == 0 or c.get_facecolors()[0][3] == 0 for c in points)  # open
    labels = [t.get_text() for lg in fig.legends for t in lg.texts]
    assert any("lower bound" in t and t.startswith("fit") for t in labels)
