"""MCPO task (ii): a language model + LoRA on templated arithmetic with several valid answer forms.

Each prompt asks for a sum after three shots, one per form ("2 plus 3 is five.\\n1 plus 6 is = 7.\\n4
plus 4 is 8.\\n7 plus 5 is"). Its responses are a finite
candidate set: the correct sum and one wrong sum (off by one, side drawn per prompt), each written in
``forms`` ways (" 12", " twelve", " = 12"); reward 1 for the correct sum in any form, 0 otherwise.
The policy is the language model restricted to the candidate set, pi(y|x) = p_LM(y|x) / sum_c
p_LM(c|x) (every metric is then exact, and sampling from it is exact); its trainable part is a LoRA
adapter (:func:`repro.llm.lora.add_adapter`), the reference pi_ref the same model without it.

Planted truth (closed form): pi*(y|x) = pi_ref(y|x) exp(r / beta) / Z over the candidates. Every valid
form has the same reward, so pi*'s form distribution among correct answers is the reference's own,
pi*(form | correct) = pi_ref(form | correct): a fit that matches pi* keeps the reference's forms in
the reference's proportions while moving mass from the wrong sum to the right one. Measured per
policy on held-out prompts (averaged over prompts): accuracy (pass@1, mass on the correct sum),
pass@k = 1 - (1 - pass@1)^k, the entropy of its form distribution among correct answers and its
total-variation distance to pi*'s (the planted one), mode coverage (share of pi*'s modes, candidates
with pi* >= ``mode_mass``, given at least ``cover_mass``), and KL(pi || pi*), KL(pi* || pi).

Training: per round, ``prompts_per_step`` training prompts, K candidates sampled per prompt from the
current policy (the behaviour policy mu), then ``epochs`` Adam updates of the adapter with MCPO's
grouped self-normalised, baseline-centred estimator (:func:`repro.rl.alpha_divergence.mcpo_loss`,
the code of task (i)) or the reverse-KL baseline (RLOO on the KL-penalised reward,
:func:`repro.rl.alpha_divergence.reverse_kl_pg_loss`, reused without importance correction).

Deviations and choices the paper leaves open: responses are scored candidates, not free generations
(the response space is the candidate set, so pi* is exact); two sums x three forms per prompt; a
prompt template without the chat template; one LoRA adapter per method, fresh from the same seed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from repro.llm.lora import LoraConfig, add_adapter
from repro.rl.alpha_divergence import alpha_divergence, log_tilted_target, mcpo_loss, reverse_kl_pg_loss
from repro.seeding import make_rng

__all__ = ["ArithConfig", "ArithTrain", "FORMS", "number_word", "make_prompts", "candidate_logp", "round_diagnostic",
           "train_arith",
           "evaluate_arith", "tiny_corpus", "fit_methods", "model_loader", "run_arith_seed"]

log = logging.getLogger(__name__)

_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = {2: "twenty", 3: "thirty", 4: "forty", 5: "fifty", 6: "sixty", 7: "seventy", 8: "eighty", 9: "ninety"}

#: Answer forms: a template of the number n and its English word w.
FORMS = {"digits": " {n}", "word": " {w}", "equals": " = {n}"}


def number_word(n: int) -> str:
    """English word of 0 <= n < 100 ("twenty-one")."""
    if not 0 <= n < 100:
        raise ValueError(f"number_word: {n} is outside 0..99")
    if n < 20:
        return _ONES[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens] + ("" if ones == 0 else "-" + _ONES[ones])


@dataclass(frozen=True)
class ArithConfig:
    n_train: int = 32            # training prompts per seed
    n_eval: int = 32             # held-out prompts per seed
    max_operand: int = 9         # operands drawn from 1..max_operand
    forms: tuple[str, ...] = ("digits", "word", "equals")
    beta: float = 0.2            # KL coefficient of pi*
    # three shots, one per form (SmolLM2-135M's reference then spreads its mass over the forms)
    template: str = "2 plus 3 is five.\n1 plus 6 is = 7.\n4 plus 4 is 8.\n{a} plus {b} is"


@dataclass(frozen=True)
class ArithTrain:
    steps: int = 20              # sampling rounds
    prompts_per_step: int = 4
    group: int = 8               # K candidates sampled per prompt (the estimator's group)
    epochs: int = 2              # Adam updates per round
    lr: float = 2e-3             # Adam learning rate on the adapter
    rank: int = 8
    lora_alpha: float = 16.0
    targets: tuple[str, ...] = ("q_proj", "v_proj")


def make_prompts(cfg: ArithConfig, seed: int) -> dict[str, Any]:
    """Prompts, candidates (per prompt: sums x forms, row-major), rewards and forms; train and eval splits."""
    bad = [f for f in cfg.forms if f not in FORMS]
    if bad or len(cfg.forms) < 2:
        raise ValueError(f"arithmetic.task.forms: need >= 2 of {sorted(FORMS)}; got {list(cfg.forms)}")
    if cfg.max_operand < 2 or 2 * cfg.max_operand + 1 >= 100:
        raise ValueError(f"arithmetic.task.max_operand must be in 2..49; got {cfg.max_operand}")
    rng = make_rng(seed)
    n = cfg.n_train + cfg.n_eval
    a, b = rng.integers(1, cfg.max_operand + 1, size=(2, n))
    side = rng.choice([-1, 1], size=n)
    prompts, cands, reward = [], [], []
    for i in range(n):
        s = int(a[i] + b[i])
        prompts.append(cfg.template.format(a=int(a[i]), b=int(b[i])))
        row, rew = [], []
        for value, r in ((s, 1.0), (s + int(side[i]), 0.0)):
            for f in cfg.forms:
                row.append(FORMS[f].format(n=value, w=number_word(value)))
                rew.append(r)
        cands.append(row)
        reward.append(rew)
    return {"prompts": prompts, "candidates": cands, "reward": torch.tensor(reward, dtype=torch.float64),
            "n_train": cfg.n_train, "forms": list(cfg.forms)}


def candidate_logp(lm, prompts: list[str], candidates: list[list[str]], *, grad: bool,
                   batch_prompts: int = 8) -> torch.Tensor:
    """log pi(y|x) over each prompt's candidates (P, C): the model's sequence log-probabilities, renormalised.

    Without ``grad`` the prompts go through the model ``batch_prompts`` at a time (memory stays
    bounded at any number of prompts); with it, in one batch (the graph of one training round).
    The sequence log-probabilities come from :meth:`repro.llm.torchlm.TorchLM.candidate_logprobs` (each
    prompt one packed row, its tokens once and then every candidate's: 1 / C of the prompt's cost).
    """
    seq = lm.candidate_logprobs(prompts, candidates, grad=grad, batch_size=len(prompts) if grad else batch_prompts)
    return seq - torch.logsumexp(seq, 1, keepdim=True)


@torch.no_grad()
def round_diagnostic(logp: torch.Tensor, target_logp: torch.Tensor, reward: torch.Tensor) -> dict[str, float]:
    """KL(pi || pi*) and expected reward of a policy log pi (P, C) against the normalised log pi* (P, C),
    averaged over the prompts: the optimiser's distance to its own target, exact over the candidates."""
    pi = logp.exp()
    return {"kl_reverse": alpha_divergence(target_logp, logp, 0.0).mean().item(),
            "reward": (pi * reward).sum(1).mean().item()}


def train_arith(lm, data: dict[str, Any], ref_logp: torch.Tensor, method: str, alpha: float | None,
                cfg: ArithTrain, beta: float, seed: int, on_round=None) -> list[dict[str, float]]:
    """Train a fresh LoRA adapter on ``lm`` (in place) with ``method`` "mcpo" (at ``alpha``) or "rloo".

    Returns the training trace: per round, :func:`round_diagnostic` of the policy before the round's
    update on the round's own prompts (free: the behaviour policy's log-probabilities are computed
    anyway; an unbiased estimate of the training prompts' mean, the prompts being drawn uniformly).
    ``on_round(lm, round)``, if given, is called after each round's updates (returns a dict merged into
    that round's entry; e.g. the same diagnostic on every training prompt, at the cost of a forward pass).
    """
    if method not in ("mcpo", "rloo"):
        raise ValueError(f"method must be 'mcpo' or 'rloo'; got {method!r}")
    _, params = add_adapter(lm, LoraConfig(targets=tuple(cfg.targets), rank=cfg.rank, alpha=cfg.lora_alpha), seed)
    opt = torch.optim.Adam(params, lr=cfg.lr)
    gen = torch.Generator().manual_seed(seed)
    n_train = data["n_train"]
    reward, log_target = data["reward"], log_tilted_target(ref_logp, data["reward"], beta)
    log_target_norm = log_target - torch.logsumexp(log_target, 1, keepdim=True)
    trace: list[dict[str, float]] = []
    lm.module.train()
    try:
        for step in range(cfg.steps):
            idx = torch.randperm(n_train, generator=gen)[:cfg.prompts_per_step]
            prompts = [data["prompts"][i] for i in idx]
            cands = [data["candidates"][i] for i in idx]
            rows = idx[:, None]
            for epoch in range(cfg.epochs):
                logp_all = candidate_logp(lm, prompts, cands, grad=True)                  # (B, C)
                if epoch == 0:  # the behaviour policy mu is the policy before this round's updates
                    ys = torch.multinomial(logp_all.detach().exp(), cfg.group, replacement=True, generator=gen)
                    behaviour = logp_all.detach().gather(1, ys)                           # (B, K)
                    trace.append({"round": step, **round_diagnostic(logp_all.detach(), log_target_norm[idx],
                                                                     reward[idx])})
                logp = logp_all.gather(1, ys)
                if method == "mcpo":
                    loss = mcpo_loss(logp, behaviour, log_target[rows, ys], alpha)
                else:
                    loss = reverse_kl_pg_loss(logp, ref_logp[rows, ys], reward[rows, ys], beta)
                opt.zero_grad()
                loss.backward()
                opt.step()
            if on_round is not None:
                lm.module.eval()
                trace[-1].update(on_round(lm, step))
                lm.module.train()
    finally:
        lm.module.eval()
    return trace


@torch.no_grad()
def evaluate_arith(logp: torch.Tensor, target_logp: torch.Tensor, reward: torch.Tensor, n_forms: int,
                   ks: list[int], mode_mass: float, cover_mass: float) -> dict[str, float]:
    """Exact metrics of a policy log pi (P, C) on candidates laid out as (sum, form), row-major."""
    pi, star = logp.exp(), target_logp.exp()
    correct = reward > 0
    pass1 = (pi * correct).sum(1)                                                    # (P,)
    forms = (pi * correct).reshape(len(pi), -1, n_forms).sum(1) / pass1[:, None]      # (P, F) given correct
    forms_star = (star * correct).reshape(len(pi), -1, n_forms).sum(1)
    forms_star = forms_star / forms_star.sum(1, keepdim=True)
    modes = star >= mode_mass
    out = {"pass1": pass1.mean().item(),
           "form_entropy": (-(forms * forms.clamp_min(1e-300).log()).sum(1)).mean().item(),
           "form_tv": (0.5 * (forms - forms_star).abs().sum(1)).mean().item(),
           "coverage": (((pi >= cover_mass) & modes).sum() / modes.sum()).item(),
           "kl_reverse": alpha_divergence(target_logp, logp, 0.0).mean().item(),
           "kl_forward": alpha_divergence(target_logp, logp, 1.0).mean().item()}
    for k in ks:
        out[f"pass{k}"] = (1 - (1 - pass1) ** k).mean().item()
    return out


def tiny_corpus(cfg: ArithConfig, shares: list[float], n_docs: int, seed: int) -> list[str]:
    """Documents "<the prompt's shots>a plus b is <answer>." whose answer form is drawn with
    probabilities ``shares`` (planted).

    Each document is a task prompt (``cfg.template``, shots included) followed by its answer, so a
    tiny model trained on them is a reference whose form distribution after exactly that prompt is
    known (about ``shares``; on bare lines without the shots a tiny model puts nearly all its mass on
    digits after the shots). The sums are correct, so the forms, not the arithmetic, are what it
    learns in a few steps.
    """
    if len(shares) != len(cfg.forms) or min(shares) < 0 or not np.isclose(sum(shares), 1.0):
        raise ValueError(f"arithmetic.model.form_shares must be {len(cfg.forms)} probabilities summing to 1; "
                         f"got {shares}")
    rng = make_rng(seed)
    a, b = rng.integers(1, cfg.max_operand + 1, size=(2, n_docs))
    f = rng.choice(len(cfg.forms), size=n_docs, p=shares)
    return [cfg.template.format(a=int(x), b=int(y)) + FORMS[cfg.forms[k]].format(n=x + y, w=number_word(int(x + y))) + "."
            for x, y, k in zip(a, b, f)]


def fit_methods(load_model, data: dict[str, Any], ref_logp: torch.Tensor, cfg: dict[str, Any], train: ArithTrain,
                beta: float, train_seed: int, alpha_key, metrics, *, rloo_default: bool,
                label: str) -> tuple[dict[str, dict[str, float]], dict[str, list[dict[str, float]]]]:
    """A fresh adapter per alpha of ``cfg["alphas"]`` (and RLOO if ``cfg["reverse_kl_baseline"]``, default
    ``rloo_default``), each trained from the same seed on ``data`` and scored by ``metrics``; with each
    method's training trace (:func:`train_arith`)."""
    runs = [("mcpo", float(a)) for a in cfg["alphas"]]
    if cfg.get("reverse_kl_baseline", rloo_default):
        runs.append(("rloo", None))
    out, traces = {}, {}
    for method, alpha in runs:
        lm = load_model()
        key = alpha_key(alpha) if method == "mcpo" else "rloo"
        traces[key] = train_arith(lm, data, ref_logp, method, alpha, train, beta, train_seed)
        out[key] = metrics(candidate_logp(lm, data["prompts"], data["candidates"], grad=False))
        log.info("%s %s: %s; training-prompt KL(pi || pi*) per round %s", label, key, out[key],
                 [round(t["kl_reverse"], 3) for t in traces[key]])
    return out, traces


def model_loader(model: dict[str, Any], folder, tiny_name: str):
    """``load()`` returning a fresh copy of the base model per call: the tiny model trained here (in
    ``folder``) or a pretrained repro.llm model cached beside it."""
    import repro.llm
    from repro.llm.tiny import load_tiny

    def load():
        if model["kind"] == "tiny":
            return load_tiny(folder, name=tiny_name)
        return repro.llm.load(model["name"], root=folder.parent)

    return load


def run_arith_seed(load_model, cfg: dict[str, Any], data_seed: int, train_seed: int,
                   alpha_key) -> dict[str, Any]:
    """Every alpha, the reverse-KL baseline, the oracle pi* and the floor pi_ref on one seed's prompts.

    ``load_model()`` returns a fresh copy of the reference model (each method trains its own adapter).
    Metrics are on the held-out prompts; the same on the training prompts carry the prefix ``train_``.
    """
    task = ArithConfig(**{k: (tuple(v) if k == "forms" else v) for k, v in cfg["task"].items()})
    train = ArithTrain(**{k: (tuple(v) if k == "targets" else v) for k, v in cfg["train"].items()})
    data = make_prompts(task, data_seed)
    lm = load_model()
    ref_logp = candidate_logp(lm, data["prompts"], data["candidates"], grad=False)
    target = log_tilted_target(ref_logp, data["reward"], task.beta)
    target = target - torch.logsumexp(target, 1, keepdim=True)
    splits = {"": slice(data["n_train"], None), "train_": slice(0, data["n_train"])}
    ev = dict(n_forms=len(task.forms), ks=cfg["ks"], mode_mass=cfg["mode_mass"], cover_mass=cfg["cover_mass"])

    def metrics(logp: torch.Tensor) -> dict[str, float]:
        out = {}
        for prefix, part in splits.items():
            m = evaluate_arith(logp[part], target[part], data["reward"][part], **ev)
            out.update({prefix + k: v for k, v in m.items()})
        return out

    fits, traces = fit_methods(load_model, data, ref_logp, cfg, train, task.beta, train_seed, alpha_key, metrics,
                               rloo_default=True, label="arithmetic")
    methods = {"pi_star": metrics(target), "pi_ref": metrics(ref_logp), **fits}
    return {"data_seed": data_seed, "train_seed": train_seed, "alphas": [float(a) for a in cfg["alphas"]],
            "forms": data["forms"], "methods": methods, "train_trace": traces}
