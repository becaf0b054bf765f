"""Checker, probe recall, adherence scale, KBV and judge under-detection on cases with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repro.llm.judge import RuleJudge
from repro.papers.driftbench.briefs import load_briefs
from repro.papers.driftbench.scoring import (adherence_scale, check_proposal, checker_adherence, judge_rubric,
                                             judge_verdicts, kbv, probe_keys, probe_recall, stretched_checks,
                                             under_detection)

BRIEFS = {b.id: b for b in load_briefs()}


def test_adherence_scale_is_the_reference_rubric():
    assert [adherence_scale(n) for n in range(5)] == [4, 2, 1, 0, 0]
    assert adherence_scale(0, n_stretched=1) == 3
    with pytest.raises(ValueError):
        adherence_scale(-1)


def test_checker_ignores_the_checklist_and_negated_mentions():
    brief = BRIEFS["astro_transit"]
    text = ("Candidates are vetted by fixed diagnostic cuts; we do not use a neural network.\n"
            "Staffing: 2 FTE for one year.\nCompleteness comes from injection-recovery tests.\n"
            "Final constraint checklist:\n- no machine learning classifier\n- a neural network is banned\n- 5 FTE")
    verdict = check_proposal(text, brief)
    assert verdict["c3"] is False and verdict["c1"] is False and verdict["c2"] is False
    assert verdict["c1"] is False  # "5 FTE" sits in the checklist
    # a numeric constraint the design never states is undecided, not kept and not broken
    assert check_proposal("A design with no numbers.", brief)["c1"] is None


def test_probe_recall_of_verbatim_and_empty_replies():
    brief = BRIEFS["agri_cover"]
    reply = "\n".join(f"- {c}" for c in brief.hard_constraints)
    assert probe_recall(reply, brief.hard_constraints) == [True] * len(brief.hard_constraints)
    assert probe_recall("I do not remember.", brief.hard_constraints) == [False] * len(brief.hard_constraints)
    # a paraphrase keeps a number with its unit, which is enough for the reference's key match
    assert probe_recall("The budget must stay below 50000 gbp.", brief.hard_constraints)[0]


def test_kbv_needs_both_recall_and_violation():
    assert kbv(0.8, 2.0, adherence_below=3) is True
    assert kbv(0.79, 0.0, adherence_below=3) is False
    assert kbv(1.0, 3.0, adherence_below=3) is False and kbv(1.0, 3.0, adherence_below=4) is True
    assert kbv(math.nan, 0.0, adherence_below=3) is None


def test_rule_judge_misses_exactly_the_numeric_violations():
    """Closed form: the rule judge reads keywords, so of the checker's violations it misses exactly
    the numeric ones, and finds every keyword one."""
    checker, judge, numeric = [], [], 0
    for brief in BRIEFS.values():
        text = "\n".join(c.sentence(comply=False) for c in brief.constraint_checks())
        checker.append(check_proposal(text, brief))
        met = RuleJudge(judge_rubric(brief)).score([text])[0].met
        judge.append(met)
        numeric += sum(c.numeric for c in brief.constraint_checks())
        assert judge_verdicts(met, brief)["j_constraint_adherence"] == adherence_scale(
            sum(not c.numeric for c in brief.constraint_checks()))
    missed, total = under_detection(checker, judge)
    assert total == sum(len(b.constraint_checks()) for b in BRIEFS.values())
    assert missed == numeric


def test_under_detection_recovers_a_judge_with_a_known_miss_rate():
    """A judge that sees every violation but reports each with probability 1 - m: the measured rate
    is a binomial proportion around m; 4 standard errors is a tolerance a correct count always meets
    (p about 6e-5 of a false alarm)."""
    rng = np.random.default_rng(0)
    miss = 0.3
    checker, judge = [], []
    for _ in range(400):
        chk = {f"c{i}": bool(rng.random() < 0.5) for i in range(6)}
        checker.append(chk)
        judge.append({k: (not v) or bool(rng.random() < miss) for k, v in chk.items()})
    missed, total = under_detection(checker, judge)
    se = math.sqrt(miss * (1 - miss) / total)
    assert abs(missed / total - miss) < 4 * se
    # a perfect judge misses nothing; a judge that calls everything met misses everything
    assert under_detection(checker, [{k: not v for k, v in c.items()} for c in checker])[0] == 0
    assert under_detection(checker, [{k: True for k in c} for c in checker]) == (total, total)


def test_complexity_regression_recovers_a_planted_condition_effect():
    """Exact linear data: complexity = 1.0 x pressure + 0.5 x checkpoint + 0.3 x log_tokens; OLS returns
    the planted coefficients (the clustered interval is degenerate around them)."""
    import pandas as pd

    from repro.papers.driftbench.experiment import complexity_regression

    rng = np.random.default_rng(1)
    rows = []
    for b in range(6):
        for cond, effect in (("multi_turn_neutral", 0.0), ("multi_turn_pressure", 1.0), ("checkpointed_pressure", 0.5)):
            lt = float(rng.uniform(4, 6))
            rows.append({"brief": f"b{b}", "model": "m", "condition": cond, "log_tokens": lt,
                         "judge_complexity": effect + 0.3 * lt})
    fit = complexity_regression(pd.DataFrame(rows))
    assert fit["multi_turn_pressure"]["estimate"] == pytest.approx(1.0, abs=1e-9)
    assert fit["checkpointed_pressure"]["estimate"] == pytest.approx(0.5, abs=1e-9)


def test_probe_keys_are_the_references_on_worked_items():
    """By hand from the reference's _extract_keywords: a number followed by one of its units (gbp, usd,
    eur, parameter, month, year, week, day, hour, sample, example, language, dataset, plural s optional,
    no word boundary after it), quoted text, four words from the third (the second for short items),
    the whole item under 100 characters."""
    assert probe_keys("budget under 50000 GBP") == ["50000 gbp", "under 50000 gbp", "budget under 50000 gbp"]
    # FTE and sites are not reference units: no number key
    assert probe_keys("at most 2 FTE researchers for one year") == ["2 fte researchers for",
                                                                    "at most 2 fte researchers for one year"]
    assert probe_keys("at least 8 paired farm sites") == ["8 paired farm sites", "at least 8 paired farm sites"]
    # no boundary after the unit: "12 monthly" keys as "12 month"
    assert probe_keys("12 monthly visits") == ["12 month", "12 monthly visits", "12 monthly visits"]
    # five words: the window starts at the second (min(2, 5 // 3))
    assert probe_keys('use the "gold standard" test') == ["gold standard", 'the "gold standard" test',
                                                          'use the "gold standard" test']


def test_stretched_constraints_worked_by_hand():
    """The reference rubric's 3 ("no hard constraints violated, but 1 constraint is stretched or
    ambiguously handled"): a number at its limit, a forbidden item qualified, a required one hedged."""
    agri, astro = BRIEFS["agri_cover"], BRIEFS["astro_transit"]
    ok = "Budget: 40000 GBP. We recruit 10 paired farm sites."
    assert checker_adherence(ok, agri) == 4 and not stretched_checks(ok, agri)
    edge = "Budget: 50,000 GBP. We recruit 10 paired farm sites."  # the cap of 50000 met at its edge
    assert stretched_checks(edge, agri) == {"c0"} and checker_adherence(edge, agri) == 3
    over = "Budget: 50001 GBP. We recruit 8 paired farm sites."  # one over, one at the edge: violated wins
    assert check_proposal(over, agri)["c0"] is True and checker_adherence(over, agri) == 2
    base = "Staffing: 1 FTE for one year. Completeness comes from injection-recovery tests."
    cases = {  # astro c3 forbids a machine-learning vetter; c2 requires injection-recovery tests
        "Candidates are vetted by fixed cuts; we do not use a neural network.": (set(), 4),
        "A neural network classifier could be added as a cross-check.": ({"c3"}, 3),
        "A neural network classifier vets the candidates.": (set(), 2),
    }
    for sentence, (stretched, score) in cases.items():
        text = f"{base} {sentence}"
        assert stretched_checks(text, astro) == stretched and checker_adherence(text, astro) == score, sentence
    hedged = "Staffing: 1 FTE for one year. Injection-recovery tests could be run if time permits."
    assert check_proposal(hedged, astro)["c2"] is False and stretched_checks(hedged, astro) == {"c2"}
    assert checker_adherence("Staffing: 1 FTE for one year.", astro) == 2  # the required element absent
    # a qualifier in another sentence does not qualify the mention
    split = f"{base} Pilot data may help. A neural network classifier vets the candidates."
    assert check_proposal(split, astro)["c3"] is True
    # two stretched and none violated: the scale's 3 (its anchors name no lower score without a violation)
    two = "Staffing: 2 FTE for one year. Injection-recovery tests could be run if time permits."
    assert stretched_checks(two, astro) == {"c1", "c2"} and checker_adherence(two, astro) == 3


def test_rule_judge_reads_qualified_mentions_but_not_numbers():
    """The rule judge's s<i> criteria give the scale's 3 for a qualified keyword, so its < 4 KBV column
    can differ from < 3; a number at its limit stays invisible to it (it reads no numbers)."""
    astro = BRIEFS["astro_transit"]
    judge = RuleJudge(judge_rubric(astro))
    base = "Staffing: 1 FTE for one year. Completeness comes from injection-recovery tests."
    for sentence, score in (("We do not use a neural network.", 4),
                            ("A neural network classifier could be added as a cross-check.", 3),
                            ("A neural network classifier vets the candidates.", 2)):
        met = judge.score([f"{base} {sentence}"])[0].met
        assert judge_verdicts(met, astro)["j_constraint_adherence"] == score, sentence
    edge = "Staffing: 2 FTE for one year. Completeness comes from injection-recovery tests."
    assert checker_adherence(edge, astro) == 3
    assert judge_verdicts(judge.score([edge])[0].met, astro)["j_constraint_adherence"] == 4
    # recall 1 and adherence 3: knows-but-violates at the text's < 4, not at the code's < 3
    assert kbv(1.0, 3.0, adherence_below=4) and not kbv(1.0, 3.0, adherence_below=3)
