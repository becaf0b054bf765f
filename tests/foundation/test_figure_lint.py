"""The figure lint fails a small figure that breaks each of its rules and passes a clean one; the style's
helpers (legend outside, panel letters, not-built panel, palettes, mean_se, save) do what the lint expects."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from repro.figures import lint
from tests.conftest import REPO
from repro.figures.style import (COLUMN_WIDTH, OURS, TEXT_WIDTH, Palette, interval_err, legend, lint_on_save,
                                 mean_se, n_text, se_err, new_figure, not_built, panel_letters, save, subplots)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def rules(fig) -> set[str]:
    return {p.rule for p in lint.check(fig)}


def clean_figure():
    fig, axes = subplots(1, 2, width="text", height=2.0)
    x = np.arange(5)
    for ax in axes:
        ax.plot(x, x ** 2, marker="o", color="#0072B2", label="baseline")
        ax.plot(x, x ** 1.5, color=OURS, label="ours")
        ax.set_xlabel("x")
        ax.set_title("a panel")
    axes[0].set_ylabel("y")
    panel_letters(axes)
    legend(fig, where="below")
    return fig


def test_a_clean_figure_passes():
    assert lint.check(clean_figure()) == []


def test_a_legend_on_the_bars_fails():
    fig, ax = subplots(width="column", height=2.0)
    ax.bar(np.arange(4), [1.0, 0.9, 1.0, 1.0], color="#0072B2", label="method")
    ax.legend(loc="upper center")
    assert "legend-overlap" in rules(fig)


def test_a_legend_on_a_line_fails_and_one_outside_passes():
    fig, ax = subplots(width="column", height=2.0)
    x = np.linspace(0, 1, 50)
    ax.plot(x, x, label="diagonal")
    ax.legend(loc="center")
    assert "legend-overlap" in rules(fig)
    ax.get_legend().remove()
    legend(ax)
    assert lint.check(fig) == []


def test_a_legend_on_points_and_images_fails():
    fig, (a, b) = subplots(1, 2, width="text", height=2.0)
    a.scatter([0.5], [0.5], s=30, label="point")
    a.set_xlim(0, 1)
    a.set_ylim(0, 1)
    a.legend(loc="center")
    b.imshow(np.arange(16.0).reshape(4, 4))
    b.plot([], [], label="nothing")
    b.legend(loc="center")
    messages = [p.message for p in lint.check(fig) if p.rule == "legend-overlap"]
    assert any("PathCollection" in m for m in messages) and any("AxesImage" in m for m in messages)


def test_a_legend_over_empty_space_inside_the_axes_passes():
    fig, ax = subplots(width="column", height=2.0)
    ax.plot([0, 1], [0, 0.1], label="low line")
    ax.set_ylim(0, 1)
    ax.legend(loc="upper right")
    assert "legend-overlap" not in rules(fig)


def test_text_off_the_canvas_fails():
    fig, ax = subplots(width="column", height=2.0)
    ax.plot([0, 1], [0, 1])
    ax.text(1.6, 0.5, "a label far to the right", transform=ax.transAxes)
    assert "text-outside" in rules(fig)


def test_rotated_labels_of_a_figure_without_layout_leave_the_canvas():
    fig = plt.figure(figsize=(TEXT_WIDTH, 1.5), layout="none")
    ax = fig.add_axes((0.1, 0.05, 0.85, 0.9))
    ax.bar(range(3), [1, 2, 3])
    ax.set_xticks(range(3), ["a long category name"] * 3, rotation=60)
    assert "text-outside" in rules(fig)


def test_a_long_label_running_into_the_next_panel_fails():
    fig, axes = subplots(1, 3, width="text", height=2.0)
    for ax in axes:
        ax.plot([0, 1], [0, 1])
        ax.set_xlabel("a label far longer than the panel it belongs to, into the next")
    assert "text-overlap" in rules(fig)


def test_rotated_tick_labels_that_only_share_a_bounding_box_pass():
    fig, ax = subplots(width="column", height=2.4)
    names = [f"intervention_{i}" for i in range(8)]
    ax.bar(range(8), np.arange(8.0))
    ax.set_xticks(range(8), names, rotation=45, ha="right", rotation_mode="anchor")
    fig.draw_without_rendering()
    a, b = (t.get_window_extent() for t in ax.get_xticklabels()[:2])
    assert a.overlaps(b)  # the boxes overlap; the rotated texts do not
    assert lint.check(fig) == []


def test_repeated_panel_letters_fail():
    fig, axes = subplots(1, 2, width="text", height=2.0)
    for ax in axes:
        ax.plot([0, 1], [0, 1])
        ax.set_title("(a) the same letter twice")
    assert "panel-letters" in rules(fig)
    panel_letters(axes)
    assert "panel-letters" not in rules(fig)
    assert [ax.get_title("left") for ax in axes] == ["(a) (a) the same letter twice", "(b) (a) the same letter twice"]


def test_small_fonts_at_the_printed_width_fail():
    fig, ax = subplots(width="column", height=2.0)
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("tiny", fontsize=5)
    assert "font-size" in rules(fig)


def test_a_wide_figure_shrunk_to_the_text_width_has_small_fonts():
    fig, ax = plt.subplots(figsize=(9.6, 3.0), layout="constrained")
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("8 pt on 9.6 in is 4.6 pt on 5.5 in", fontsize=8)
    assert {"width", "font-size"} <= rules(fig)


def test_empty_axes_fail_unless_they_say_why():
    fig, (a, b) = subplots(1, 2, width="text", height=2.0)
    a.plot([0, 1], [0, 1])
    b.set_title("nothing here")
    assert "empty-axes" in rules(fig)
    not_built(b, "the smoke preset runs no replicate that loses a component")
    assert lint.check(fig) == []
    assert "not built at this scale" in b.texts[0].get_text()


def test_axes_whose_data_are_all_missing_are_empty():
    fig, ax = subplots(width="column", height=2.0)
    ax.plot([0, 1, 2], [np.nan, np.nan, np.nan], marker="o")
    ax.bar([0, 1], [np.nan, np.nan])
    assert "empty-axes" in rules(fig)


def test_one_label_in_two_colours_across_a_papers_figures_fails():
    figs = {}
    for name, colour in (("fig1", "#0072B2"), ("fig2", "#009E73")):
        fig, ax = subplots(width="column", height=2.0)
        ax.plot([0, 1], [0, 1], color=colour, label="fvt")
        legend(ax)
        figs[name] = fig
    problems = lint.check_colours(figs)
    assert [p.rule for p in problems] == ["colour"] and "fvt" in problems[0].message
    figs["fig2"].axes[0].lines[0].set_color("#0072B2")
    figs["fig2"].axes[0].get_legend().remove()
    legend(figs["fig2"].axes[0])
    assert lint.check_colours(figs) == []


def test_save_runs_the_lint_when_asked(tmp_path):
    fig, ax = subplots(width="column", height=2.0)
    ax.bar([0, 1], [1, 1], label="bars")
    ax.legend(loc="center")
    lint_on_save(True)
    try:
        with pytest.raises(ValueError, match="legend-overlap"):
            save(fig, pd.DataFrame({"x": [0, 1]}), tmp_path / "bad.pdf")
        assert not (tmp_path / "bad.pdf").exists() and not (tmp_path / "bad.csv").exists()
        save(clean_figure(), pd.DataFrame({"x": [0, 1]}), tmp_path / "good.pdf")
    finally:
        lint_on_save(None)
    assert (tmp_path / "good.pdf").read_bytes()[:5] == b"%PDF-"


def test_saved_pdfs_are_cropped_and_deterministic(tmp_path):
    for name in ("one", "two"):
        save(clean_figure(), pd.DataFrame({"x": [1]}), tmp_path / f"{name}.pdf")
    one, two = (tmp_path / "one.pdf").read_bytes(), (tmp_path / "two.pdf").read_bytes()
    assert one.replace(b"(one)", b"(xxx)") == two.replace(b"(two)", b"(xxx)") and b"CreationDate" not in one
    box = [float(v) for v in one.split(b"/MediaBox [")[1].split(b"]")[0].split()]
    assert box[2] <= TEXT_WIDTH * 72 + 1  # the tight box never grows a constrained figure


def test_palette_reserves_ours_and_refuses_unknown_names():
    colours = Palette("demo", {"baseline": "#0072B2"}, ours="mine")
    assert colours("mine") == OURS and colours("baseline") == "#0072B2"
    with pytest.raises(ValueError, match="no colour for 'fvt'"):
        colours("fvt")
    with pytest.raises(ValueError, match="means ours"):
        Palette("demo", {"fvt": OURS}, ours="mine")


def test_mean_se_gives_a_lone_unit_no_standard_error():
    df = pd.DataFrame({"m": ["a", "a", "b"], "v": [1.0, 3.0, 5.0]})
    out = mean_se(df, ["m"], "v").set_index("m")
    assert out.loc["a", "se"] == pytest.approx(1.0) and np.isnan(out.loc["b", "se"])


def test_interval_err_keeps_missing_values_and_refuses_a_centre_outside():
    err = interval_err([0.5, np.nan], [0.4, np.nan], [0.7, np.nan])
    assert err[:, 0] == pytest.approx([0.1, 0.2]) and np.isnan(err[:, 1]).all()
    with pytest.raises(ValueError, match="does not hold"):
        interval_err([0.5], [0.6], [0.7])


def test_figure_helpers_draw_at_the_printed_widths():
    assert subplots(width="column")[0].get_figwidth() == COLUMN_WIDTH
    assert new_figure("text", 2.0).get_figwidth() == TEXT_WIDTH
    with pytest.raises(ValueError):
        new_figure("page")


def test_the_saved_pdf_does_not_depend_on_whether_the_lint_ran(tmp_path, monkeypatch):
    """The lint lays the figure out to measure it; save() lays it out once either way, so a build with
    the lint (the tests) and one without (a user, a cluster) write the same bytes (cmcboot's Fig. 1 did
    not, before: the constrained layout moves artists at each pass)."""
    from repro.papers.cmcboot.figures import fig1
    from repro.figures.style import save

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764633600")
    table = pd.read_csv(REPO / "tests/data/figures/cmcboot_fig1.csv")
    written = {}
    for on in (False, True):
        lint_on_save(on)
        try:
            fig, plotted = fig1(table, episode_length=50)
            (tmp_path / str(on)).mkdir()
            save(fig, plotted, tmp_path / str(on) / "cmcboot_fig1.pdf")
        finally:
            lint_on_save(None)
        written[on] = (tmp_path / str(on) / "cmcboot_fig1.pdf").read_bytes()
    assert written[False] == written[True]


def bars_figure(yerr, *, legend_title: str | None = None):
    fig, ax = subplots(width="column", height=2.0)
    ax.errorbar([0, 1, 2], [1.0, 2.0, 1.5], yerr=yerr, marker="o", color="#0072B2", label="method")
    legend(ax, title=legend_title)
    return fig


def test_error_bars_without_n_fail_and_n_in_the_legend_title_passes():
    assert lint.uncertainty(bars_figure([0.1, 0.2, 0.1])) == lint.DRAWN
    assert "uncertainty-n" in rules(bars_figure([0.1, 0.2, 0.1]))
    assert "uncertainty-n" in rules(bars_figure([0.1, 0.2, 0.1], legend_title="mean ± s.e."))
    assert lint.check(bars_figure([0.1, 0.2, 0.1], legend_title="mean ± s.e., n = 5 seeds")) == []


def test_bars_whose_every_error_is_missing_do_not_count():
    fig = bars_figure([np.nan, np.nan, np.nan])  # each point over one unit: mean_se gives no s.e.
    assert lint.uncertainty(fig) == lint.MISSING
    assert lint.check(fig) == []
    assert lint.uncertainty(bars_figure([np.nan, 0.2, np.nan])) == lint.DRAWN


def test_bands_and_bar_errors_count_and_a_panel_title_or_label_gives_n():
    fig, (a, b) = subplots(1, 2, width="text", height=2.0)
    x = np.arange(4.0)
    a.plot(x, x, color="#0072B2")
    a.fill_between(x, x - 0.2, x + 0.2, color="#0072B2", alpha=0.2)
    b.bar([0, 1], [1.0, 2.0], yerr=[0.1, 0.1], color="#009E73")
    assert lint.uncertainty(fig) == lint.DRAWN and "uncertainty-n" in rules(fig)
    a.set_title("95% interval, n=12 prompts")
    assert "uncertainty-n" not in rules(fig)

    fig, ax = subplots(width="column", height=2.0)
    ax.errorbar([0, 1], [1.0, 2.0], yerr=[0.1, 0.1], color=OURS, label="TMEvolve (n = 3-5)")
    legend(ax)
    assert "uncertainty-n" not in rules(fig)


def test_a_figure_without_intervals_needs_no_n():
    fig = clean_figure()
    assert lint.uncertainty(fig) == lint.NONE and lint.check(fig) == []
    fig, ax = subplots(width="column", height=2.0)
    ax.errorbar([0, 1], [1.0, 2.0], yerr=[0.1, 0.1])
    not_built(ax, "no seed finished")  # what is removed is not drawn
    assert lint.uncertainty(fig) == lint.NONE


def test_save_records_the_uncertainty_in_the_pdf_deterministically(tmp_path):
    save(bars_figure([0.1, 0.2, 0.1], legend_title="n = 5 seeds"), pd.DataFrame({"x": [1]}), tmp_path / "a.pdf")
    save(bars_figure([0.1, 0.2, 0.1], legend_title="n = 5 seeds"), pd.DataFrame({"x": [1]}), tmp_path / "b.pdf")
    save(bars_figure([np.nan] * 3), pd.DataFrame({"x": [1]}), tmp_path / "c.pdf")
    save(clean_figure(), pd.DataFrame({"x": [1]}), tmp_path / "d.pdf")
    assert [lint.recorded_uncertainty(tmp_path / f"{s}.pdf") for s in "abcd"] == [lint.DRAWN, lint.DRAWN,
                                                                                 lint.MISSING, lint.NONE]
    a, b = ((tmp_path / f"{s}.pdf").read_bytes() for s in "ab")
    assert a.replace(b"(a)", b"(x)") == b.replace(b"(b)", b"(x)")


def test_captions_say_what_the_intervals_are_exactly_where_a_figure_draws_them(tmp_path):
    reports, captions = tmp_path / "reports", tmp_path / "report"
    reports.mkdir()
    captions.mkdir()
    figures = {"p_fig1": bars_figure([0.1, 0.2, 0.1], legend_title="n = 5 seeds"), "p_fig2": clean_figure(),
               "p_fig3": bars_figure([np.nan] * 3, legend_title="n = 1 seed")}
    for stem, fig in figures.items():
        save(fig, pd.DataFrame({"x": [1]}), reports / f"{stem}.pdf")
    (captions / "p_fig1.rst").write_text("Score per method against the budget.\n")
    (captions / "p_fig2.rst").write_text("Loss curves. Error bars: s.e. over seeds (n in the legend).\n")
    (captions / "p_fig3.rst").write_text("Score. Error bars: s.e. over seeds (n in the legend).\n")
    problems = lint.check_captions(reports, captions)
    assert {p.rule for p in problems} == {"caption-uncertainty"}
    assert sorted(p.message.split()[0] for p in problems) == ["p_fig1.pdf", "p_fig2.pdf"]

    (captions / "p_fig1.rst").write_text("Score per method against the budget. Bands: 95% bootstrap interval over "
                                         "prompts (n in the legend).\n")
    (captions / "p_fig2.rst").write_text("Loss curves; the error bars: none.\n")  # not a sentence of its own
    (captions / "p_fig3.rst").write_text("Score.\n")  # every bar missing at this scale: either caption holds
    assert lint.check_captions(reports, captions) == []

    (captions / "p_fig2.rst").unlink()
    (reports / "stray.pdf").write_bytes((reports / "p_fig2.pdf").read_bytes().replace(b"/Keywords", b"/Kxywords"))
    messages = [p.message for p in lint.check_captions(reports, captions)]
    assert any("p_fig2.pdf has no caption" in m for m in messages)
    assert any("stray.pdf records no uncertainty" in m for m in messages)


def test_n_text_gives_the_count_or_its_range_and_matches_the_lint():
    df = pd.DataFrame({"m": ["a", "a", "a", "b"], "v": [1.0, 2.0, 3.0, 4.0]})
    counts = mean_se(df, ["m"], "v").n_seeds
    assert n_text(counts, "seed") == "n = 1-3 seeds"
    assert n_text([5, 5, np.nan], "seed") == "n = 5 seeds" and n_text(1, "seed") == "n = 1 seed"
    assert n_text(12, "prompt pair", "prompt pairs") == "n = 12 prompt pairs" and n_text([4]) == "n = 4"
    assert all(lint.N_TEXT.search(n_text(c, "seed")) for c in (1, 5, [3, 5]))
    with pytest.raises(ValueError):
        n_text([np.nan])
    with pytest.raises(ValueError):
        n_text([2.5])


def test_se_err_keeps_a_rate_inside_its_bounds_and_a_lone_unit_without_a_bar():
    err = se_err([0.05, 0.5, 0.98, 0.4], [0.1, 0.1, 0.1, np.nan], bounds=(0, 1))
    assert err[:, 0] == pytest.approx([0.05, 0.1]) and err[:, 1] == pytest.approx([0.1, 0.1])
    assert err[:, 2] == pytest.approx([0.1, 0.02]) and np.isnan(err[:, 3]).all()
    assert se_err([1.0], [0.5])[:, 0] == pytest.approx([0.5, 0.5])  # unbounded by default


def test_a_panel_of_a_subfigure_says_why_it_is_empty_wrapped_to_its_width():
    """not_built wraps its text to the panel's printed width in a subfigure as in a figure (a subfigure's
    ``figure`` is the root figure: it has the width), and the lint accepts the panel."""
    from repro.figures.style import NOT_BUILT_GID, new_figure

    fig = new_figure("text", 3.0)
    top, bottom = fig.subfigures(2, 1)
    top.subplots().plot([0, 1], [0, 1])
    wide, narrow = bottom.subplots(1, 2, gridspec_kw={"width_ratios": [3, 1]})
    wide.plot([0, 1], [1, 0])
    not_built(narrow, "no claim's metric in this build, so nothing to draw here")
    (text,) = [t for t in narrow.texts if t.get_gid() == NOT_BUILT_GID]
    assert "\n" in text.get_text() and lint.check(fig) == []


def test_a_grid_of_more_than_26_panels_is_lettered_on_after_z():
    """immunize's Fig. 1 at small has 39 panels (six model-and-mode rows of six settings, three relearning panels):
    its letters go on from (z) to (aa), (ab), ..."""
    from repro.figures.style import panel_letter, panel_letters

    assert [panel_letter(i) for i in (0, 25, 26, 27, 51, 52, 701, 702)] == ["a", "z", "aa", "ab", "az", "ba", "zz", "aaa"]
    fig, axes = subplots(3, 10, width="text", height=4.0, squeeze=False)
    panel_letters(axes.flat)
    letters = [ax.get_title(loc="left") for ax in axes.flat]
    assert letters[25:28] == ["(z)", "(aa)", "(ab)"] and len(set(letters)) == 30
