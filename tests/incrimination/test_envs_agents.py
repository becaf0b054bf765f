"""The environments' interventions change exactly the factor they name; the scripted agents' planted
policy, CoT faithfulness and coupling; the language-model agent on a stub model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from repro.papers.incrimination.agents import (COT_TEMPLATES, EFFECTS, MOTIVES, LMAgent, ScriptedAgent,
                                               concerning_probability)
from repro.papers.incrimination.envs import (CONTROL, ENVIRONMENTS, FACTORS, INTERVENTIONS, environment, render,
                                             state_of)
from repro.papers.incrimination.grid import MOTIVES as GRID_MOTIVES
from repro.papers.incrimination.protocol import PREDICTIONS

CONDITIONS = (CONTROL, *INTERVENTIONS)


def test_six_environments_each_with_five_single_factor_interventions():
    assert len(ENVIRONMENTS) == 6 and len({e.name for e in ENVIRONMENTS}) == 6
    control = state_of(CONTROL)
    assert not any(control.values())
    for factor in INTERVENTIONS:
        changed = [f for f in FACTORS if state_of(factor)[f] != control[f]]
        assert changed == [factor]


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=lambda e: e.name)
def test_an_intervention_changes_exactly_its_own_sentence_of_the_prompt(env):
    base = render(env, state_of(CONTROL)).splitlines()
    for k, factor in enumerate(FACTORS):
        lines = render(env, state_of(factor)).splitlines()
        differ = [i for i, (a, b) in enumerate(zip(base, lines)) if a != b]
        assert len(lines) == len(base) and differ == [1 + k], factor  # line 0 is the task


def test_option_letters_swap_and_unknown_names_are_refused():
    env = environment("reward_hack")
    a, b = render(env, state_of(CONTROL), concerning_label="A"), render(env, state_of(CONTROL), concerning_label="B")
    assert f"A: {env.shortcut}" in a and f"B: {env.shortcut}" in b
    with pytest.raises(ValueError, match="unknown incrimination environment 'nope'"):
        environment("nope")
    with pytest.raises(ValueError, match="unknown condition 'loud'"):
        state_of("loud")


def test_planted_effects_are_the_hypotheses_predictions():
    assert MOTIVES == GRID_MOTIVES
    for motive in MOTIVES:
        assert set(EFFECTS[motive]) == set(PREDICTIONS[motive])


@pytest.mark.parametrize("motive", MOTIVES)
def test_only_the_motives_factors_move_the_planted_policy(motive):
    env = environment("skip_step")
    p0 = concerning_probability(env, motive, state_of(CONTROL))
    assert p0 == pytest.approx(1 / (1 + math.exp(-env.base_logit)))
    for factor in INTERVENTIONS:
        p = concerning_probability(env, motive, state_of(factor))
        assert (p < p0) == (factor in EFFECTS[motive]) and p <= p0


def test_episode_rates_match_the_planted_probability_within_sampling_error():
    env, agent = environment("exceed_budget"), ScriptedAgent("laziness", "benign", 1.0)
    n = 4000
    for cond in (CONTROL, "low_effort"):
        p = concerning_probability(env, "laziness", state_of(cond))
        rate = np.mean([e.concerning for e in agent.run(env, cond, n, seed=3)])
        assert abs(rate - p) < 4 * math.sqrt(p * (1 - p) / n)  # four standard errors


def test_cot_states_the_true_motive_at_the_faithfulness_rate_else_the_decoy():
    env = environment("hide_error")
    texts = {m: {t.format(proper=env.proper, shortcut=env.shortcut).lower() for t in COT_TEMPLATES[m]} for m in MOTIVES}
    n = 3000
    eps = [e for e in ScriptedAgent("strategic", "obedience", 0.3).run(env, CONTROL, n, seed=5) if e.concerning]
    stated = [next(m for m in MOTIVES if e.cot.lower() in texts[m]) for e in eps]
    share = stated.count("strategic") / len(eps)
    assert set(stated) == {"strategic", "obedience"}
    assert abs(share - 0.3) < 4 * math.sqrt(0.3 * 0.7 / len(eps))


def test_draws_are_coupled_across_samples_and_faithfulness():
    env = environment("edit_eval")
    long = ScriptedAgent("confusion", "laziness", 0.5).run(env, "clarified", 50, seed=9)
    short = ScriptedAgent("confusion", "laziness", 0.5).run(env, "clarified", 20, seed=9)
    assert short == long[:20]
    faithful = ScriptedAgent("confusion", "laziness", 1.0).run(env, "clarified", 50, seed=9)
    assert [e.concerning for e in faithful] == [e.concerning for e in long]


def test_bad_agent_settings_are_refused_by_name():
    with pytest.raises(ValueError, match="decoy motive must differ"):
        ScriptedAgent("benign", "benign", 0.5)
    with pytest.raises(ValueError, match="faithfulness must lie in"):
        ScriptedAgent("benign", "laziness", 1.5)
    with pytest.raises(ValueError, match="unknown motive 'greed'"):
        ScriptedAgent("greed", "laziness", 0.5)


class _LetterModel:
    """A stub language model that always prefers option letter ``letter`` (log-odds 2)."""

    name = "stub"

    def __init__(self, letter):
        self.letter = letter

    def render_chat(self, messages):
        return "\n".join(m["content"] for m in messages) + "\nassistant:"

    def generate(self, prompts, **kw):
        return ["I pick my favourite letter. Choice: X"] * len(prompts)

    def logprobs(self, prompts, continuations, **kw):
        return [0.0 if c.strip() == self.letter else -2.0 for c in continuations]


def test_a_letter_bias_is_not_read_as_a_response_to_the_environment():
    from repro.papers.incrimination.protocol import investigate

    agent = LMAgent(_LetterModel("A"), max_new_tokens=8)
    env = environment("forbidden_file")
    eps = {c: agent.run(env, c, 200, seed=11) for c in CONDITIONS}
    # the letter of the concerning option is drawn per episode, so a model that always prefers "A"
    # takes the concerning action about half of the time, in every condition alike
    rates = [np.mean([e.concerning for e in eps[c]]) for c in CONDITIONS]
    assert all(abs(r - 0.5) < 0.15 for r in rates)
    p = [e.p_concerning for e in eps[CONTROL]]
    assert set(np.round(p, 4)) == {round(1 / (1 + math.exp(-2)), 4), round(1 / (1 + math.exp(2)), 4)}
    assert not investigate(eps).supported


def test_smollm2_on_llamacpp_reads_no_cache_and_its_choice_is_its_own_logprobs():
    """With backend: llamacpp (the small preset's, with prompt reuse; the paper preset keeps torch) the SmolLM2
    agent runs from the shipped GGUF file and its job waits for no cached torch copy; the choice probability
    is the model's own: p(concerning) = sigmoid(log p(" A") - log p(" B")) after the CoT and "Choice:", for
    the letter drawn for the episode."""
    pytest.importorskip("llama_cpp")
    from repro.config import workflow_config
    from repro.llm.llamacpp import LlamaCppLM
    from repro.papers.incrimination.experiment import build_agent
    from repro.papers.incrimination.grid import agent_config, agent_input
    from tests.conftest import REPO

    presets = workflow_config(REPO)["incrimination"]
    small = agent_config(presets["small"], "smollm2-135m")["agent"]
    assert small["backend"] == "llamacpp" and small["reuse_prompts"] and agent_input(presets["small"], "smollm2-135m") == []
    assert agent_config(presets["paper"], "smollm2-135m")["agent"]["backend"] == "torch"
    assert agent_input(presets["paper"], "smollm2-135m") != []
    cfg = agent_config(presets["small"], "smollm2-135m")
    cfg["agent"] = {**cfg["agent"], "reuse_prompts": False}  # every prompt read whole: the scores below are exact
    cfg["generation"] = {**cfg["generation"], "max_new_tokens": 8}
    agent = build_agent(cfg)
    try:
        assert isinstance(agent.lm, LlamaCppLM) and not agent.lm.reuse_prompts
        env = environment("forbidden_file")
        eps = agent.run(env, CONTROL, 2, seed=5)
        labels = np.where(np.random.default_rng([5, 0]).random(2) < 0.5, "A", "B")
        prompts = [agent.lm.render_chat(agent._messages(env, CONTROL, str(lab))) for lab in labels]
        scored = [p + e.cot + "\nChoice:" for p, e in zip(prompts, eps)]
        lp_a, lp_b = (np.asarray(agent.lm.logprobs(scored, [c] * 2)) for c in (" A", " B"))
        p_a = 1.0 / (1.0 + np.exp(lp_b - lp_a))
        expected = np.where(labels == "A", p_a, 1.0 - p_a)
        assert np.allclose([e.p_concerning for e in eps], expected, atol=1e-9)
        assert all(0.0 < e.p_concerning < 1.0 for e in eps)
    finally:
        agent.lm.close()


def test_prompt_reuse_is_passed_to_llamacpp_and_refused_elsewhere():
    pytest.importorskip("llama_cpp")
    from repro.config import workflow_config
    from repro.papers.incrimination.experiment import build_agent
    from repro.papers.incrimination.grid import agent_config
    from tests.conftest import REPO

    presets = workflow_config(REPO)["incrimination"]
    cfg = agent_config(presets["small"], "smollm2-135m")
    agent = build_agent(cfg)
    try:
        assert agent.lm.reuse_prompts
    finally:
        agent.lm.close()
    schema = REPO / "workflow/schemas/incrimination.schema.yaml"
    on_torch = {**presets["small"], "agents": [{**cfg["agent"], "backend": "torch"}]}
    from repro.config import schema_error

    assert schema_error(presets["small"], schema, "incrimination.small") is None
    err = schema_error(on_torch, schema, "incrimination.small")
    assert err is not None and err.startswith("incrimination.small.agents.0") and "llamacpp" in err, err
