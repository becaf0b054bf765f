"""Task (i) of MCPO: a small-vocabulary sequence task with several correct answers and an exact pi*.

Each prompt x has responses y in {0..V-1}^L (all V^L enumerated, so every metric is exact). Planted:

- ``n_correct`` correct answers c_1..c_M with rewards ``rewards`` (1.0, 0.8, 0.6 by default: several
  valid answers of different reward); every other response earns 0;
- a reference policy pi_ref that factorises over positions (logits: Gaussian noise of sd
  ``ref_noise``), with a bonus on the tokens of c_1 on "easy" prompts (the reference already leans
  to the best answer) and on the tokens of a wrong "distractor" answer d on "hard" prompts (the
  reference's dominant mode is wrong; d differs from every correct answer in every position);
- the target pi*(y|x) proportional to pi_ref(y|x) exp(r(x, y) / beta), computed exactly.

The policy class is the same factorised one (one softmax per position), so pi* (a joint over whole
sequences) lies outside it: how a fit spends its mass between pi*'s modes is decided by the
divergence, which is what the alpha dial controls. On easy prompts a mode-seeking fit concentrates on
c_1 (pass@1 near 1); on hard prompts it can stay in the distractor's basin, while a mode-covering fit
keeps mass on every correct answer (pass@k). The oracle is pi* itself, the floor pi_ref.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

__all__ = ["TaskConfig", "Task", "make_task", "sequence_logp"]


@dataclass(frozen=True)
class TaskConfig:
    n_prompts: int = 16          # prompts per task instance (one instance per seed)
    length: int = 3              # L tokens per response
    vocab: int = 6               # V tokens
    rewards: tuple[float, ...] = (1.0, 0.8, 0.6)   # reward of each correct answer (their count is M)
    hard_frac: float = 0.5       # share of prompts whose reference leans to a wrong distractor
    ref_noise: float = 0.5       # sd of the reference logits
    easy_bonus: float = 1.0      # logit bonus of c_1's tokens on easy prompts
    hard_bonus: float = 1.5      # logit bonus of the distractor's tokens on hard prompts
    beta: float = 0.2            # KL coefficient of the target pi* (E1)

    def __post_init__(self):
        if self.vocab < 2 or self.length < 1 or self.n_prompts < 1:
            raise ValueError(f"task: need vocab >= 2, length >= 1, n_prompts >= 1; got {self}")
        if not 1 <= len(self.rewards) < self.vocab:
            raise ValueError(f"task: rewards names 1 to vocab - 1 correct answers; got {len(self.rewards)}")
        if not 0 <= self.hard_frac <= 1 or not self.beta > 0:
            raise ValueError(f"task: hard_frac in [0, 1] and beta > 0; got {self.hard_frac}, {self.beta}")


@dataclass
class Task:
    cfg: TaskConfig
    responses: torch.Tensor      # (N, L) every response, N = V^L, row n is n in base V
    ref_logits: torch.Tensor     # (P, L, V) the factorised reference
    reward: torch.Tensor         # (P, N)
    correct: torch.Tensor        # (P, N) bool
    hard: torch.Tensor           # (P,) bool
    answers: torch.Tensor = field(repr=False)   # (P, M) response index of each correct answer
    distractor: torch.Tensor = field(repr=False)  # (P,)

    @property
    def ref_logp(self) -> torch.Tensor:
        return sequence_logp(self.ref_logits, self.responses)              # (P, N)

    @property
    def log_target(self) -> torch.Tensor:
        """Unnormalised log pi* = log pi_ref + r / beta (P, N)."""
        return self.ref_logp + self.reward / self.cfg.beta

    @property
    def target_logp(self) -> torch.Tensor:
        lt = self.log_target
        return lt - torch.logsumexp(lt, 1, keepdim=True)


def sequence_logp(logits: torch.Tensor, responses: torch.Tensor) -> torch.Tensor:
    """log pi(y|x) of every response under factorised logits (P, L, V) -> (P, N)."""
    lsm = torch.log_softmax(logits, -1)                                  # (P, L, V)
    pos = torch.arange(responses.shape[1])
    return lsm[:, pos, responses].sum(-1)                                # (P, N, L) -> (P, N)


def _index(tokens: np.ndarray, vocab: int) -> int:
    return int(sum(int(t) * vocab ** (len(tokens) - 1 - i) for i, t in enumerate(tokens)))


def make_task(cfg: TaskConfig, seed: int) -> Task:
    """One task instance: prompts, reference, correct answers and distractors, from ``seed``."""
    rng = np.random.default_rng(seed)
    p, length, v, m = cfg.n_prompts, cfg.length, cfg.vocab, len(cfg.rewards)
    responses = torch.tensor(np.stack(np.unravel_index(np.arange(v ** length), (v,) * length), 1))
    logits = rng.normal(0.0, cfg.ref_noise, size=(p, length, v))
    hard = np.zeros(p, bool)
    hard[rng.permutation(p)[: int(round(cfg.hard_frac * p))]] = True
    reward = np.zeros((p, v ** length))
    answers, distractors = np.zeros((p, m), int), np.zeros(p, int)
    for x in range(p):
        # per position M + 1 distinct tokens: d and the answers differ from each other in every position
        toks = np.stack([rng.permutation(v)[: m + 1] for _ in range(length)], 1)   # (M + 1, L)
        d, correct = toks[0], toks[1:]
        for j in range(m):
            answers[x, j] = _index(correct[j], v)
            reward[x, answers[x, j]] = cfg.rewards[j]
        distractors[x] = _index(d, v)
        bonus_tokens, bonus = (d, cfg.hard_bonus) if hard[x] else (correct[0], cfg.easy_bonus)
        logits[x, np.arange(length), bonus_tokens] += bonus
    return Task(cfg=cfg, responses=responses, ref_logits=torch.tensor(logits), reward=torch.tensor(reward),
                correct=torch.tensor(reward > 0), hard=torch.tensor(hard), answers=torch.tensor(answers),
                distractor=torch.tensor(distractors))
