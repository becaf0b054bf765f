"""The reference's training curricula for the opinion game (flipbagels/OpiniMARL, ``train.py``).

Read in the search index (its ``make_train_ppo``, ``utils/schedulars.py`` and the ``NetworkBinary``
environment); written here from those definitions. Every schedule is a function of the PPO update
count ``k`` of ``K`` in all (the reference's ``train_state.update_step`` of ``NUM_UPDATES``), with
``f = clip(k / K, 0, 1)``:

- C1 informed share (the reference's ``prob_of_signal``): alpha > 0: exponential from 1 to the final
  share p (``1 - uninformed_share``) over the whole training, ``1 * (p / 1) ** f``; alpha = 0:
  exponential from 1 to ``zero_eps`` (1e-2) over the first ``zero_switch`` (95%) of training, then
  linear from 1e-2 to 0 over the last 5% (its ``exponential_linear_schedule``). Evaluation uses the
  final share (0 at alpha = 0), as the reference's ``eval.py``.
- C2 tie dropping (its ``percolation_prob``): each directed tie i -> j of the graph is kept
  independently with probability q(k) at every episode reset (a Bernoulli mask on the adjacency, per
  game), the rest dropped for the episode, both from what the agents see and from the conformity
  mean. q follows a clipped sigmoid from ``tie_keep_init`` to 1:
  ``clip(q0 + (1 - q0) * a / (1 + exp(-b (f - c))), q0, 1)`` with a = 1.05, b = 24, c = 7/30, so q
  stays near q0 for the first ~10% of training, is half way at f = 7/30 and reaches 1 at f = 0.358
  (a = 1.05 lets the clip reach 1). Evaluation keeps every tie.
- C3 truth bonus, alpha = 0 only, in the training reward only: r' = (1 - w) r + w * truth_i, with
  truth_i the truth term of G3 (+0.1 / -0.2 / 0 for waiting, its ``aux_reward``) and w linear from
  0.05 to 0 over the first half of training (``total_counts = NUM_UPDATES / 2``), 0 after. The
  environment's reward, and so every evaluation, is unchanged.
- C4 the learning rate anneals linearly from ``lr`` to 0 over every optimiser step (optax's
  ``linear_schedule`` over ``NUM_MINIBATCHES * UPDATE_EPOCHS * NUM_UPDATES``): step s of S uses
  ``lr * (1 - s / S)`` (:func:`repro.rl.ppo.annealed_lr`, shared).

Timing (as the reference): the environment resets the next episode inside the last step of the
previous one, with the schedules at the update count then current, so iteration k >= 1 plays games
drawn with C1 / C2 at k - 1, and iteration 0 plays the reference's first reset (informed share 1, keep
probability q0); C3 is applied at k (``_env_step`` reads the current count).

Deviations (named): the value of ``PERCOLATION_PROB_INIT`` (q0) and the on/off flag ``ANNEAL_LR``
live in the reference's ``config/`` folder, which the index does not hold: q0 = 0.5 is ours (each tie
kept with probability one half at the start), ``anneal_lr`` defaults on. The reference's rollouts
(``TRAINING_INTERVAL`` steps) need not align with episodes; ours are one episode per game.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Curriculum", "linear_schedule", "exponential_schedule", "exponential_linear_schedule",
           "sigmoid_schedule", "CurriculumStep"]


def _frac(count: float, total: float) -> float:
    return min(max(count / total, 0.0), 1.0) if total > 0 else 1.0


def linear_schedule(count: float, total: float, init: float, final: float) -> float:
    """init + (final - init) * clip(count / total, 0, 1)."""
    return init + (final - init) * _frac(count, total)


def exponential_schedule(count: float, total: float, init: float, final: float) -> float:
    """init * (final / init) ** clip(count / total, 0, 1) (geometric interpolation; final > 0)."""
    return init * (final / init) ** _frac(count, total)


def exponential_linear_schedule(count: float, total: float, init: float, final: float, eps: float,
                                switch: float) -> float:
    """Exponential init -> eps over the first ``switch`` of ``total``, then linear eps -> final (reaches 0 exactly)."""
    t_exp = switch * total
    if _frac(count, total) < switch:
        return exponential_schedule(count, t_exp, init, eps)
    return linear_schedule(count - t_exp, total - t_exp, eps, final)


def sigmoid_schedule(count: float, total: float, init: float, final: float, a: float, b: float, c: float) -> float:
    """clip(init + (final - init) * a / (1 + exp(-b (f - c))), init, final), f = clip(count / total, 0, 1)."""
    ramp = a / (1 + math.exp(-b * (_frac(count, total) - c)))
    return min(max(init + (final - init) * ramp, init), final)


@dataclass(frozen=True)
class CurriculumStep:
    """What one PPO iteration's games use: informed share (None: the game's own rule), tie keep probability,
    truth-bonus weight of the training reward."""

    informed_share: float | None
    keep_prob: float
    truth_bonus: float


@dataclass(frozen=True)
class Curriculum:
    """C1-C3 (module docstring); defaults are the reference's values except ``tie_keep_init`` (not in the index)."""

    enabled: bool = True
    """train with C1-C3 (off: every game at the final informed share, every tie kept, no bonus)"""
    zero_eps: float = 0.01
    """C1 at alpha = 0: the informed share the exponential part reaches (reference 1e-2)"""
    zero_switch: float = 0.95
    """C1 at alpha = 0: share of training spent on the exponential part (reference 0.95)"""
    tie_keep_init: float = 0.5
    """C2: probability of keeping each tie at the start (reference PERCOLATION_PROB_INIT, value not in the index)"""
    tie_ramp: tuple[float, float, float] = (1.05, 24.0, 7 / 30)
    """C2: the sigmoid's (a, b, c) (reference 1.05, 24, 7/30)"""
    truth_bonus: float = 0.05
    """C3: initial weight of the truth term in the alpha = 0 training reward (reference 0.05)"""
    truth_bonus_span: float = 0.5
    """C3: share of training over which the weight falls linearly to 0 (reference 1/2)"""

    def __post_init__(self) -> None:
        def bad(key: str, want: str, got: object) -> None:
            raise ValueError(f"opinion curriculum: {key} must be {want}, got {got!r}")

        if not 0 < self.zero_eps < 1:
            bad("zero_eps", "in (0, 1)", self.zero_eps)
        if not 0 < self.zero_switch <= 1:
            bad("zero_switch", "in (0, 1]", self.zero_switch)
        if not 0 <= self.tie_keep_init <= 1:
            bad("tie_keep_init", "in [0, 1]", self.tie_keep_init)
        if len(self.tie_ramp) != 3 or self.tie_ramp[0] < 1 or self.tie_ramp[1] <= 0 or not 0 <= self.tie_ramp[2] <= 1:
            bad("tie_ramp", "(a >= 1, b > 0, c in [0, 1])", self.tie_ramp)
        if not 0 <= self.truth_bonus <= 1:
            bad("truth_bonus", "in [0, 1]", self.truth_bonus)
        if not 0 < self.truth_bonus_span <= 1:
            bad("truth_bonus_span", "in (0, 1]", self.truth_bonus_span)
        object.__setattr__(self, "tie_ramp", tuple(float(x) for x in self.tie_ramp))

    # -- the closed forms, at update count k of K ----------------------------------------------
    def informed_share(self, k: float, total: float, alpha: float, final: float) -> float:
        """C1: the share of informed agents (``final`` = 1 - uninformed_share; ignored at alpha = 0)."""
        if math.isclose(alpha, 0.0, abs_tol=1e-8):
            return exponential_linear_schedule(k, total, 1.0, 0.0, self.zero_eps, self.zero_switch)
        return exponential_schedule(k, total, 1.0, final) if final > 0 else 0.0

    def keep_prob(self, k: float, total: float) -> float:
        """C2: the probability of keeping each tie."""
        return sigmoid_schedule(k, total, self.tie_keep_init, 1.0, *self.tie_ramp)

    def bonus(self, k: float, total: float, alpha: float) -> float:
        """C3: the truth term's weight in the training reward (0 unless alpha = 0)."""
        if not math.isclose(alpha, 0.0, abs_tol=1e-8):
            return 0.0
        return max(linear_schedule(k, self.truth_bonus_span * total, self.truth_bonus, 0.0), 0.0)

    def at(self, it: int, iterations: int, alpha: float, final_informed: float) -> CurriculumStep:
        """The settings of PPO iteration ``it`` (0-based) of ``iterations``, with the reference's reset timing."""
        if not self.enabled:
            return CurriculumStep(None, 1.0, 0.0)
        if it == 0:  # the reference's first reset: reset_params = (1.0, PERCOLATION_PROB_INIT)
            informed, keep = 1.0, self.tie_keep_init
        else:  # later resets happen inside the previous iteration's last step
            informed = self.informed_share(it - 1, iterations, alpha, final_informed)
            keep = self.keep_prob(it - 1, iterations)
        return CurriculumStep(informed, keep, self.bonus(it, iterations, alpha))
