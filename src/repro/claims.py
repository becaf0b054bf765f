"""Claims: what a paper states, checked with an interval against what this rebuild measured.

A claim file (``workflow/claims/<key>.yaml``, schema ``workflow/schemas/claims.schema.yaml``)
lists claims. Each names a metric by its dotted path in ``results/<key>/metrics.json`` and a check::

    check: {op: ">", rhs: survival.abmil, unit: fold_seed, level: 0.95}

``op`` is ``>``, ``>=``, ``<``, ``<=``, ``within`` (with ``tol``: ``|quantity - rhs| <= tol``, equivalence),
``outside`` (with ``tol``: ``|quantity - rhs| > tol``, "differs" in either direction, its complement) or
``noninferior`` ("matches": with ``margin`` and its ``margin_source``, PASS when the interval's lower end
is above ``rhs - margin``, FAIL when its upper end is below it; ``better: lower`` mirrors it);
``rhs`` is a number or another metric's path; ``unit`` says what one independent observation is
(``fold_seed``, ``seed``, ``replicate``, ``item``, ...; ``none`` only for an exact, deterministic
quantity such as the agreement of two gradient implementations); ``statistic`` is ``mean``
(default; the mean difference of paired units when ``rhs`` is a metric) or ``slope`` (of the values
on the sample's ``x``); ``each: true`` checks every entry of a mapping of samples (one per
setting) and needs all of them.

What a metric holds (:func:`as_evidence`):

- a number, or a mapping with a ``mean`` and no units: a summary without its units. Checked exactly when ``unit: none``; otherwise the check
  is INCONCLUSIVE, because nothing says how noisy it is;
- a sample ``{"unit": "fold_seed", "ids": [...], "values": [...]}`` (``"x": [...]`` for a slope), or
  any mapping that holds one under ``per_unit``: the checker bootstraps the compared quantity over
  units, resampling paired samples (same ids) together (:mod:`repro.stats.intervals`). A unit whose
  value is undefined (a rate with no denominator: ``null``) is left out, of both sides of a paired
  comparison; the verdict reads the defined units only and its note says how many were left out. Units that
  share a source of randomness (the student initialisations of one distilled set) carry a
  ``"cluster": [...]`` label each; the checker then resamples whole clusters (the mean of each
  cluster is one observation), and the clusters count as the units. The folds of a repeated k-fold
  cross-validation overlap in their training sets: such a sample carries
  ``"cv": {"test_over_train": n_test / n_train}``, and the interval of its mean (or paired mean
  difference) is widened by Nadeau and Bengio's correction (:func:`repro.stats.intervals.cv_corrected`);
- a rate ``{"unit": "replicate", "successes": k, "trials": n}``: a Wilson interval;
- an interval ``{"unit": ..., "estimate": e, "low": l, "high": h, "level": 0.95, "n": n, "method": ...}``
  computed by the paper's own code (a fit's profile interval), used as it is;
- an estimate whose interval the paper's code could not form, with the reason
  (``{"unit": ..., "estimate": e, "n": n, "undecided": why}``, written by :func:`undecided`): INCONCLUSIVE
  with that reason.

A claim file may also list ``diagnostics``: quantities that are not claims of the paper but say
why a verdict came out as it did (did the adapters absorb the corpus behind a FAIL?). Each names a
metric (in ``metrics.json`` or in another JSON file of ``results/<key>/``, ``file:``), its unit, an
optional ``rhs`` to subtract, and a ``reading`` written before the numbers were seen (what each
outcome would mean). :func:`measure` gives each its interval, by the same bootstrap as a claim, and no
verdict.

The verdict (:func:`verdict`) compares the interval of the compared quantity with the claimed side:
PASS when it lies wholly there, FAIL when it lies wholly on the other side, INCONCLUSIVE when it
straddles the boundary; NOT RUN when there is no metrics file or the metric is absent. A check is
never adjusted to make a claim pass: a FAIL is a finding, and so is an INCONCLUSIVE. Metrics from a
partial build (``--config partial=true``; ``partial.missing_runs`` in the file) mark every verdict
with the runs left out.

What a verdict is evidence of is the claim's ``kind`` (a file-level default, overridden per claim,
optionally one per scale): ``reproduction`` (the paper's experiment with its own components, scaled
down), ``substitute`` (with its named ``substitutes``, ``{paper, here}`` each: a FAIL is "not reproduced
with these substitutes") or ``code_check`` (holds by construction of our testbed or is an identity of
the model: it verifies our code and is counted apart). A claim with a ``ceiling`` (a bounded metric)
whose compared side sits within ``headroom`` of the bound is UNDECIDABLE rather than FAIL or
INCONCLUSIVE. An INCONCLUSIVE verdict says what would decide it (:func:`units_to_decide`): the units at
which the observed effect's interval would clear the threshold, from the observed spread.

A figure that draws a claim's quantity draws the interval the verdict is decided on: a paper's aggregate
step writes :func:`interval_rows` (each setting's interval from :func:`check_settings`, the code the
verdict runs, with its bounds, level, units and kind) into the table the figure reads.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, NamedTuple

import jsonschema
import numpy as np
import yaml

from repro.seeding import job_seed
from repro.stats.intervals import STATISTICS, Interval, bootstrap_interval, cv_corrected, min_units, wilson_interval

__all__ = ["Claim", "ClaimFile", "ClaimResult", "Diagnostic", "DiagnosticResult", "Sample", "Substitute",
           "load_claims", "load_diagnostics", "load_claim_file", "read_claim_file", "measure", "lookup_metric",
           "put_sample", "as_evidence", "claim_interval", "sample", "rate", "interval", "undecided", "require_paired",
           "verdict", "units_to_decide", "evaluate", "check_settings", "interval_rows",
           "SettingCheck", "INTERVAL_COLUMNS", "PASS", "FAIL", "INCONCLUSIVE", "UNDECIDABLE", "NOT_RUN", "STATUSES",
           "KINDS", "REPRODUCTION", "SUBSTITUTE", "CODE_CHECK"]

PASS, FAIL, INCONCLUSIVE, UNDECIDABLE, NOT_RUN = "PASS", "FAIL", "INCONCLUSIVE", "UNDECIDABLE", "NOT RUN"
STATUSES = (PASS, FAIL, INCONCLUSIVE, UNDECIDABLE, NOT_RUN)
SCALES = ("smoke", "small", "paper")
REPRODUCTION, SUBSTITUTE, CODE_CHECK = "reproduction", "substitute", "code_check"
KINDS = (REPRODUCTION, SUBSTITUTE, CODE_CHECK)
#: An INCONCLUSIVE whose interval would need more than this many times the units to clear the threshold
#: shows no effect at this precision (the estimate sits on the threshold).
NO_EFFECT_FACTOR = 100

#: Decimal tolerances are not exact in binary (0.97 - 0.95 > 0.02): allow for rounding only.
_FLOAT_SLACK = 1e-12


@dataclass(frozen=True)
class Substitute:
    """What the paper used, what this rebuild uses in its place, and at which scales."""

    paper: str
    here: str
    scales: tuple[str, ...] = SCALES

    def __str__(self) -> str:
        return f"{self.here} (in place of {self.paper})"


@dataclass(frozen=True)
class Claim:
    paper: str
    id: str
    claim: str
    source: str
    metric: str
    op: str
    rhs: float | str
    scale: str
    unit: str
    tol: float | None = None
    statistic: str = "mean"
    level: float = 0.95
    paired: bool = True
    each: bool = False
    paper_value: Any = None
    note: str | None = None
    kind: str | Mapping[str, str] = REPRODUCTION
    """one of :data:`KINDS`, or one per scale"""
    kind_reason: str = ""
    kind_own: bool = False
    """the kind is the claim's own (else the file's default)"""
    substitutes: tuple[Substitute, ...] = ()
    margin: float | None = None
    margin_source: str | None = None
    better: str = "higher"
    floor: str | None = None
    ceiling: Mapping[str, Any] | None = None

    def kind_at(self, scale: str | None) -> str:
        """The claim's kind for a build at ``scale`` (its own scale when the build's is unknown)."""
        if isinstance(self.kind, str):
            return self.kind
        return self.kind[scale if scale in SCALES else self.scale]

    def substitutes_at(self, scale: str | None) -> tuple[Substitute, ...]:
        scale = scale if scale in SCALES else self.scale
        return tuple(s for s in self.substitutes if scale in s.scales)

    def describe_check(self) -> str:
        lhs = self.metric if self.statistic == "mean" else f"{self.statistic}({self.metric})"
        if self.op == "within":
            rel = f"|{lhs} - {self.rhs}| <= {self.tol}"
        elif self.op == "outside":
            rel = f"|{lhs} - {self.rhs}| > {self.tol}"
        elif self.op == "noninferior":
            sign, rel_op = ("-", ">") if self.better == "higher" else ("+", "<")
            rel = f"{lhs} {rel_op} {self.rhs} {sign} {self.margin:g} (non-inferiority; margin: {self.margin_source})"
        else:
            rel = f"{lhs} {self.op} {self.rhs}"
        unit = "exact" if self.unit == "none" else f"over {self.unit}, {self.level:.0%}"
        return f"{rel}{' for each' if self.each else ''} ({unit})"


@dataclass(frozen=True)
class ClaimFile:
    """A claim file: what the rebuild is, the default kind and why, its claims and diagnostics."""

    paper: str
    title: str
    rebuild: str
    claims: tuple[Claim, ...]
    diagnostics: tuple["Diagnostic", ...]
    kind: str | Mapping[str, str] | None = None
    kind_reason: str = ""


@dataclass(frozen=True)
class Diagnostic:
    """A measured quantity that explains verdicts, with its interval but no verdict (not a paper claim)."""

    paper: str
    id: str
    question: str
    metric: str
    unit: str
    reading: str
    file: str = "metrics.json"
    rhs: float | str = 0.0
    statistic: str = "mean"
    level: float = 0.95
    paired: bool = True

    def describe(self) -> str:
        lhs = self.metric if self.statistic == "mean" else f"{self.statistic}({self.metric})"
        rel = lhs if self.rhs == 0 else f"{lhs} - {self.rhs}"
        return f"{rel} ({'' if self.file == 'metrics.json' else self.file + ', '}over {self.unit}, {self.level:.0%})"


@dataclass(frozen=True)
class DiagnosticResult:
    diagnostic: Diagnostic
    interval: Interval | None = None
    reason: str = ""
    """why there is no interval; beside one, the units it leaves out as undefined"""


@dataclass(frozen=True)
class Sample:
    """Per-unit values of one metric: ``ids`` name the units (e.g. ``fold0_seed1``)."""

    unit: str
    ids: tuple[str, ...]
    values: np.ndarray
    x: np.ndarray | None = None
    cluster: tuple[str, ...] | None = None
    cv: float | None = None  # n_test / n_train of the cross-validation folds the units are
    undefined: tuple[str, ...] = ()
    """units whose value is undefined (null in metrics.json), left out of ``ids`` and ``values``"""


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    status: str
    interval: Interval | None = None
    reason: str = ""
    measured_scale: str | None = None
    note: str = field(default="")
    """what qualifies the verdict: measured below the claim's scale, or from a partial build"""
    units_needed: int | None = None
    """INCONCLUSIVE: the units at which the observed effect's interval would clear the threshold"""
    units_have: int | None = None
    to_decide: str = ""
    """INCONCLUSIVE: what would decide it (units needed, or why no number of units would)"""

    @property
    def measured(self) -> float | None:
        return None if self.interval is None else self.interval.estimate

    @property
    def kind(self) -> str:
        """The claim's kind for the build that produced this result."""
        return self.claim.kind_at(self.measured_scale)

    @property
    def substitutes(self) -> tuple[Substitute, ...]:
        return self.claim.substitutes_at(self.measured_scale) if self.kind == SUBSTITUTE else ()


def sample(values, ids, unit: str, x=None, cluster=None, cv: float | None = None) -> dict[str, Any]:
    """The metrics.json form of per-unit values (what a paper's aggregate step writes).

    ``cluster`` labels units that are not independent of each other (one label per value): the
    checker then bootstraps clusters, not units. ``cv``: the units are the folds of a (repeated)
    cross-validation, with ``n_test / n_train`` this ratio; the checker widens their interval for
    the overlap of the training sets. A value that is undefined for its unit (a rate with no
    denominator) is ``None`` or NaN, written ``null``: the checker leaves that unit out and says so.
    """
    values, ids = [float("nan") if v is None else v for v in values], [str(i) for i in ids]
    cluster = None if cluster is None else [str(c) for c in cluster]
    if len(values) != len(ids) or any(v is not None and len(list(v)) != len(values) for v in (x, cluster)):
        raise ValueError(f"a sample needs one id (and x, cluster) per value; got {len(values)} values, {len(ids)} ids")
    out = {"unit": unit, "ids": ids, "values": [float(v) for v in values]}
    if x is not None:
        out["x"] = [float(v) for v in x]
    if cluster is not None:
        out["cluster"] = cluster
    if cv is not None:
        if not cv > 0:
            raise ValueError(f"cv is n_test / n_train of the folds, a positive number; got {cv}")
        out["cv"] = {"test_over_train": float(cv)}
    return out


def rate(successes: int, trials: int, unit: str) -> dict[str, Any]:
    """The metrics.json form of a count of successes (the checker gives it a Wilson interval)."""
    successes, trials = int(successes), int(trials)
    if not 0 <= successes <= trials:
        raise ValueError(f"a rate needs 0 <= successes <= trials; got {successes} of {trials}")
    return {"unit": unit, "successes": successes, "trials": trials}


def interval(estimate: float, low: float, high: float, n: int, unit: str, level: float = 0.95,
             method: str = "") -> dict[str, Any] | None:
    """The metrics.json form of an interval computed upstream (a fit's Wald interval, say).

    ``None`` when any bound is missing or not finite: the checker then reports the claim NOT RUN
    rather than judging a number without its uncertainty.
    """
    values = (estimate, low, high)
    if any(v is None or not math.isfinite(float(v)) for v in values):
        return None
    if not low <= estimate <= high:
        raise ValueError(f"an interval needs low <= estimate <= high; got {low}, {estimate}, {high}")
    return {"unit": unit, "estimate": float(estimate), "low": float(low), "high": float(high),
            "level": float(level), "n": int(n), "method": method}


def undecided(estimate: float, n: int, unit: str, why: str) -> dict[str, Any]:
    """The metrics.json form of an estimate without an interval, and why (too few units, say).

    The checker reports it INCONCLUSIVE with ``why``: the quantity was measured, the evidence cannot
    decide. (A quantity that could not be measured at all is ``None``: NOT RUN.)
    """
    return {"unit": unit, "estimate": float(estimate), "n": int(n), "undecided": str(why)}


def require_paired(seeds: Mapping[str, Mapping[Any, Any]], what: str, *, same_units: bool = True) -> None:
    """Every method saw the same units with the same seeds, or a ``ValueError`` naming the odd ones.

    ``seeds`` maps a method (baseline, ablation) to ``{unit id: seed}``, the seed being whatever
    fixes that unit's randomness (data, initialisation, order). A paired comparison is only a
    comparison of methods when these agree; a method trained with other seeds (an old result file,
    a seed rule that hashed the method name) makes it a comparison of seeds. With
    ``same_units=False`` methods may cover different units (one that runs only at small sizes),
    but a unit they share must carry the same seed.
    """
    if not seeds:
        return
    ref = next(iter(seeds))
    for method, units in seeds.items():
        shared = units.keys() & seeds[ref].keys()
        clash = sorted((str(u) for u in shared if units[u] != seeds[ref][u]))
        missing = sorted(str(u) for u in units.keys() ^ seeds[ref].keys()) if same_units else []
        if clash or missing:
            detail = (f"other seeds on units {clash[:3]}" if clash else "") + \
                     ("; " if clash and missing else "") + (f"other units {missing[:3]}" if missing else "")
            raise ValueError(f"{what}: {method!r} is not paired with {ref!r} ({detail}); the seed of a "
                             "unit must derive from the unit, never from the method: rebuild the odd method's results")


def load_claims(path: str | Path, schema_path: str | Path) -> list[Claim]:
    """Read and validate a claim file; a typo or a missing field is a ``ValueError`` naming the claim."""
    return load_claim_file(path, schema_path)[0]


def load_diagnostics(path: str | Path, schema_path: str | Path) -> list[Diagnostic]:
    """The ``diagnostics`` of a claim file (none: an empty list), validated as :func:`load_claims` does."""
    return load_claim_file(path, schema_path)[1]


def load_claim_file(path: str | Path, schema_path: str | Path) -> tuple[list[Claim], list[Diagnostic]]:
    """A claim file's claims and diagnostics, read and validated once."""
    doc = read_claim_file(path, schema_path)
    return list(doc.claims), list(doc.diagnostics)


def _substitutes(items: list[dict] | None) -> tuple[Substitute, ...]:
    return tuple(Substitute(paper=s["paper"], here=s["here"], scales=tuple(s.get("scales", SCALES)))
                 for s in items or ())


def read_claim_file(path: str | Path, schema_path: str | Path) -> ClaimFile:
    """A claim file with what the rebuild is and its default kind, validated (a ``ValueError`` names
    the claim): every claim has a kind (its own or the file's) with its reason, and a substitute claim
    names what it stands in for at each scale where it is one."""
    path = Path(path)
    doc = _load_claim_file(path, schema_path)
    file_subs = _substitutes(doc.get("substitutes"))
    claims, seen = [], set()
    for item in doc["claims"]:
        if item["id"] in seen:
            raise ValueError(f"{path}: duplicate claim id {item['id']!r}")
        seen.add(item["id"])
        check = item["check"]
        if check["op"] in ("within", "outside") and ("tol" not in check or not isinstance(check["rhs"], (int, float))):
            raise ValueError(f"{path}: claim {item['id']!r}: '{check['op']}' needs a numeric rhs and a tol")
        if check["op"] == "outside" and not check["tol"] > 0:
            raise ValueError(f"{path}: claim {item['id']!r}: 'outside' needs a positive tol (the smallest difference "
                             "that counts; with 0 no interval could ever FAIL it)")
        if "ceiling" in item and check["op"] not in (">", ">=", "<", "<="):
            raise ValueError(f"{path}: claim {item['id']!r}: a ceiling needs a one-sided check (>, >=, <, <=)")
        own = "kind" in item
        kind = item["kind"] if own else doc["kind"]
        subs = _substitutes(item["substitutes"]) if "substitutes" in item else file_subs
        claim = Claim(paper=doc["paper"], id=item["id"], claim=item["claim"], source=item["source"],
                      metric=item["metric"], op=check["op"], rhs=check["rhs"], tol=check.get("tol"),
                      unit=check["unit"], statistic=check.get("statistic", "mean"),
                      level=check.get("level", 0.95), paired=check.get("paired", True),
                      each=check.get("each", False), scale=item["scale"],
                      paper_value=item.get("paper_value"), note=item.get("note"),
                      kind=kind, kind_reason=item["kind_reason"] if own else doc["kind_reason"], kind_own=own,
                      substitutes=subs, margin=check.get("margin"), margin_source=check.get("margin_source"),
                      better=check.get("better", "higher"), floor=item.get("floor"), ceiling=item.get("ceiling"))
        for scale in SCALES:
            if claim.kind_at(scale) == SUBSTITUTE and not claim.substitutes_at(scale):
                raise ValueError(f"{path}: claim {item['id']!r} is a substitute at scale {scale} but names no "
                                 "substitution there: say what it stands in for (substitutes: [{paper: ..., here: ...}], "
                                 "the claim's or the file's)")
        claims.append(claim)
    diagnostics = []
    for d in doc.get("diagnostics", []):
        if d["id"] in seen:  # one namespace: key.id in the report and on the command line
            raise ValueError(f"{path}: duplicate diagnostic id {d['id']!r} (diagnostics and claims share their ids' namespace)")
        seen.add(d["id"])
        diagnostics.append(Diagnostic(paper=doc["paper"], id=d["id"], question=d["question"], metric=d["metric"],
                                      unit=d["unit"], reading=d["reading"], file=d.get("file", "metrics.json"),
                                      rhs=d.get("rhs", 0.0), statistic=d.get("statistic", "mean"),
                                      level=d.get("level", 0.95), paired=d.get("paired", True)))
    return ClaimFile(paper=doc["paper"], title=doc["title"], rebuild=" ".join(doc["rebuild"].split()),
                     claims=tuple(claims), diagnostics=tuple(diagnostics), kind=doc.get("kind"),
                     kind_reason=doc.get("kind_reason", ""))


def _load_claim_file(path: Path, schema_path: str | Path) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    with open(schema_path, encoding="utf-8") as fh:
        schema = yaml.safe_load(fh)
    # Claims missing a unit are the error a migration makes most: name the claim, not its index.
    for item in (doc or {}).get("claims", []) if isinstance(doc, dict) else []:
        if isinstance(item, dict) and isinstance(item.get("check"), dict) and "unit" not in item["check"]:
            kind = "a comparison" if isinstance(item["check"].get("rhs"), str) else "a check"
            raise ValueError(f"{path}: claim {item.get('id')!r} is {kind} without a unit: say what one "
                             f"observation is (check.unit: fold_seed, seed, replicate, item, ...; none if exact)")
    try:
        jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    except jsonschema.ValidationError as err:
        parts = list(err.absolute_path)
        where = "/".join(str(p) for p in parts) or "<root>"
        if len(parts) > 1 and parts[0] == "claims" and isinstance(parts[1], int):
            where = f"claim {doc['claims'][parts[1]].get('id')!r} ({where})"
        if len(parts) > 1 and parts[0] == "diagnostics" and isinstance(parts[1], int):
            where = f"diagnostic {doc['diagnostics'][parts[1]].get('id')!r} ({where})"
        raise ValueError(f"{path}: invalid claim file at {where}: {err.message}") from None
    if doc["paper"] != path.stem:
        raise ValueError(f"{path}: 'paper: {doc['paper']}' does not match the file name")
    return doc


class MetricMissing(KeyError):
    pass


def lookup_metric(metrics: Mapping[str, Any], dotted: str) -> Any:
    """The node at ``dotted`` (``a.b.c``) in ``metrics``; raises :class:`MetricMissing`.

    A key may itself hold dots (a model named ``smollm2-t0.7``, a setting ``alpha0.25``): a run of
    parts joined by dots is a key too, the shortest run first, and a run that leaves the rest of the
    path unresolved is given up for a longer one (``alpha0.25`` beside ``alpha0``).
    """
    node = _lookup(metrics, dotted.split("."))
    if node is _ABSENT:
        raise MetricMissing(dotted)
    if node is None:
        raise MetricMissing(f"{dotted} (null: not defined in this run)")
    return node


_ABSENT = object()


def _lookup(node: Any, parts: list[str]) -> Any:
    if not parts:
        return node
    if isinstance(node, list):
        ok = parts[0].isdigit() and int(parts[0]) < len(node)
        return _lookup(node[int(parts[0])], parts[1:]) if ok else _ABSENT
    if not isinstance(node, Mapping):
        return _ABSENT
    for j in range(1, len(parts) + 1):
        key = ".".join(parts[:j])
        if key in node:
            found = _lookup(node[key], parts[j:])
            if found is not _ABSENT:
                return found
    return _ABSENT


def put_sample(metrics: dict[str, Any], path: tuple[str, ...], values, ids, unit: str) -> None:
    """Store ``sample(values, ids, unit)`` at the nested ``path`` of ``metrics``, creating the mappings on
    the way (where :func:`lookup_metric` finds it as ``".".join(path)``)."""
    node = metrics
    for part in path[:-1]:
        node = node.setdefault(part, {})
    node[path[-1]] = sample(values, ids, unit)


def as_evidence(node: Any, where: str) -> float | Sample | Interval:
    """A metrics node as a number, a :class:`Sample`, or a ready :class:`Interval` (rates included)."""
    if isinstance(node, bool):
        raise MetricMissing(f"{where} (a boolean, not a number)")
    if isinstance(node, (int, float)):
        return float(node)
    if isinstance(node, Mapping) and "per_unit" in node:
        return as_evidence(node["per_unit"], f"{where}.per_unit")
    if isinstance(node, Mapping) and isinstance(node.get("mean"), (int, float)) and "values" not in node:
        return float(node["mean"])  # a summary (mean +- sd) without the units behind it
    if isinstance(node, Mapping) and "values" in node:
        values = np.asarray(node["values"], dtype=float)
        ids = tuple(str(i) for i in node.get("ids", range(len(values))))
        x = np.asarray(node["x"], dtype=float) if "x" in node else None
        cluster = tuple(str(c) for c in node["cluster"]) if "cluster" in node else None
        if len(ids) != len(values) or any(v is not None and len(v) != len(values) for v in (x, cluster)):
            raise ValueError(f"{where}: a sample needs one id (and x, cluster) per value")
        cv = float(node["cv"]["test_over_train"]) if "cv" in node else None
        defined = ~np.isnan(values)  # null: undefined for that unit (a rate with no denominator)
        if not defined.any():
            raise Undecidable(f"{where}: no unit has a defined value" +
                              (f" ({len(values)} undefined)" if len(values) else " (no units)"))
        keep = np.flatnonzero(defined)
        return Sample(unit=str(node.get("unit", "")), ids=tuple(ids[i] for i in keep), values=values[keep],
                      x=None if x is None else x[keep], cluster=None if cluster is None else tuple(cluster[i] for i in keep),
                      cv=cv, undefined=tuple(ids[i] for i in np.flatnonzero(~defined)))
    if isinstance(node, Mapping) and {"successes", "trials"} <= set(node):
        return wilson_interval(int(node["successes"]), int(node["trials"]))  # level replaced in _interval
    if isinstance(node, Mapping) and "undecided" in node:
        raise Undecidable(f"{where}: {node['undecided']} (estimate {float(node['estimate']):.4g}, n={node.get('n')})")
    if isinstance(node, Mapping) and {"estimate", "low", "high", "level"} <= set(node):
        return Interval(float(node["estimate"]), float(node["low"]), float(node["high"]), float(node["level"]),
                        int(node.get("n", 0)), str(node.get("method", "given")))
    raise MetricMissing(f"{where} (not a number, sample, rate or interval: {str(node)[:80]})")


def verdict(interval: Interval, op: str, rhs: float, tol: float | None = None, *, margin: float | None = None,
            better: str = "higher") -> str:
    """PASS / FAIL / INCONCLUSIVE: where ``interval`` lies with respect to the claimed side of ``rhs``.

    ``within`` (equivalence): PASS when the interval lies wholly in ``rhs +- tol``, FAIL when wholly
    outside it; ``outside`` ("differs", either direction) is its mirror: PASS when the interval lies
    wholly outside the band, FAIL when wholly inside it.
    ``noninferior`` ("matches" within ``margin``): with ``better`` higher, PASS when the lower end is
    above ``rhs - margin`` and FAIL when the upper end is below it; with ``better`` lower, PASS when the
    upper end is below ``rhs + margin`` and FAIL when the lower end is above it.
    """
    lo, hi = interval.low, interval.high
    if any(math.isnan(v) for v in (lo, hi, rhs)):
        return INCONCLUSIVE
    if op in ("within", "outside"):
        a, b = rhs - tol - _FLOAT_SLACK, rhs + tol + _FLOAT_SLACK
        inside, outside = a <= lo and hi <= b, hi < a or lo > b
        if op == "outside":
            inside, outside = outside, inside
        return PASS if inside else FAIL if outside else INCONCLUSIVE
    if op == "noninferior":
        if margin is None or not margin > 0:
            raise ValueError("a non-inferiority check needs a positive margin")
        if better == "higher":
            edge = rhs - margin
            return PASS if lo > edge else FAIL if hi < edge else INCONCLUSIVE
        edge = rhs + margin
        return PASS if hi < edge else FAIL if lo > edge else INCONCLUSIVE
    strict = op in (">", "<")
    if op in (">", ">="):
        holds, fails = (lo > rhs if strict else lo >= rhs), (hi <= rhs if strict else hi < rhs)
    else:
        holds, fails = (hi < rhs if strict else hi <= rhs), (lo >= rhs if strict else lo > rhs)
    return PASS if holds else FAIL if fails else INCONCLUSIVE


def _edges(claim: Claim, threshold: float) -> tuple[list[float], bool]:
    """The edge(s) an interval must clear for ``claim`` at ``threshold``, and whether a value above the
    (single) edge is on the claimed side; ``within`` and ``outside`` give their band's two edges."""
    if claim.op in ("within", "outside"):
        return [threshold - claim.tol, threshold + claim.tol], True
    if claim.op == "noninferior":
        return ([threshold - claim.margin], True) if claim.better == "higher" else ([threshold + claim.margin], False)
    return [threshold], claim.op in (">", ">=")


def _quantile(n: int, level: float, bootstrap: bool) -> float:
    """The multiple of the standard error that a ``level`` interval over ``n`` units spans on each side:
    the expanded percentile bootstrap's ``sqrt(n / (n - 1)) t_{n-1}`` (:mod:`repro.stats.intervals`),
    else the normal quantile (Wilson, or an interval computed upstream)."""
    from scipy import stats

    if bootstrap and n >= 2:
        return math.sqrt(n / (n - 1)) * float(stats.t.ppf(1 - (1 - level) / 2, n - 1))
    return float(stats.norm.ppf(1 - (1 - level) / 2))


def _solve_units(sigma: float, delta: float, level: float, bootstrap: bool, cv: float | None) -> int | None:
    """The fewest units whose interval half-width ``q(n) sigma sqrt(1/n + cv)`` is below ``delta``;
    ``None`` when no number would do (the overlap of cross-validation folds bounds the half-width)."""
    r = cv or 0.0
    n_min = min_units(level)

    def half(n: int) -> float:
        return _quantile(n, level, bootstrap) * sigma * math.sqrt(1 / n + r)

    if sigma == 0:
        return n_min
    if r and _quantile(10 ** 9, level, bootstrap) * sigma * math.sqrt(r) >= delta:
        return None
    lo, hi = n_min, n_min
    while half(hi) > delta:
        lo, hi = hi, hi * 2
        if hi > 10 ** 9:
            return None
    while lo < hi:  # the half-width falls with n: the first n that clears
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if half(mid) > delta else (lo, mid)
    return hi


def units_to_decide(claim: Claim, interval: Interval | None, threshold: float, *, cv: float | None = None,
                    values: np.ndarray | None = None, clustered: bool = False) -> tuple[int | None, str]:
    """For an INCONCLUSIVE check: the number of units at which the observed effect's interval would
    clear the threshold, and the sentence that says so.

    The spread per unit comes from the interval (its half-width towards the threshold, divided by the
    interval's quantile at its n) or, where too few units gave no interval, from the per-unit
    ``values`` of the compared quantity. The effect is assumed to stay as observed, so at the predicted
    number a true effect of that size clears about half the time (the estimate scatters about it).
    "No effect visible" when the estimate sits on the threshold (more than
    :data:`NO_EFFECT_FACTOR` times the units would be needed). Folds of a cross-validation
    (``cv`` = n_test / n_train) cannot shrink the interval below the overlap's floor: no number of
    folds decides then, only a larger data set.
    """
    if interval is not None:
        est, n, level = interval.estimate, interval.n, interval.level
        bootstrap = "bootstrap" in interval.method
    elif values is not None and len(values) >= 2:
        est, n, level, bootstrap = float(np.mean(values)), len(values), claim.level, True
        sigma_values = float(np.std(values, ddof=1))
    else:
        return None, ""
    edges, above_claimed = _edges(claim, threshold)
    clustered = clustered or (interval is not None and "clusters" in interval.method)
    what = f"clusters of {claim.unit}" if clustered else claim.unit
    needs = []
    band = claim.op in ("within", "outside")
    if band and edges[0] < est < edges[1]:
        targets = [(est - edges[0], -1), (edges[1] - est, +1)]  # both ends inside the band
        side = "PASS" if claim.op == "within" else "FAIL"
    else:
        edge = min(edges, key=lambda e: abs(est - e))
        targets = [(abs(est - edge), +1 if edge > est else -1)]  # the end towards the edge must clear it
        side = ("FAIL" if claim.op == "within" else "PASS") if band else \
            "PASS" if (est > edge) == above_claimed else "FAIL"
    for delta, direction in targets:
        if delta <= _FLOAT_SLACK * max(1.0, abs(est)):
            return None, f"no effect visible: the estimate {est:.4g} sits on the threshold"
        if interval is not None:
            h = (interval.high - est) if direction > 0 else (est - interval.low)
            if not h > 0:
                return None, ""
            sigma = h / (_quantile(n, level, bootstrap) * math.sqrt(1 / n + (cv or 0.0)))
        else:
            sigma = sigma_values
        need = _solve_units(sigma, delta, level, bootstrap, cv)
        if need is None:
            if cv:
                return None, (f"no number of folds decides: the folds' overlap (n_test / n_train = {cv:.3g}) keeps "
                              f"the interval wider than the effect ({est:.3g}); a larger data set would")
            return None, "no effect visible at any number of units"
        needs.append(need)
    need = max(needs)
    if need > NO_EFFECT_FACTOR * n:
        return None, (f"no effect visible: the estimate {est:.4g} sits on the threshold (its interval would clear it "
                      f"only at more than {NO_EFFECT_FACTOR}x these n = {n}, unit: {what})")
    return need, (f"would decide ({side} side) at about n = {need} (unit: {what}; now n = {n}), if the effect stays "
                  "as observed")


def _ceiling(claim: Claim, metrics: Mapping[str, Any], rhs_path: float | str, status: str,
             reason: str) -> tuple[str, str]:
    """UNDECIDABLE in place of FAIL or INCONCLUSIVE when the compared side sits at the metric's bound."""
    if claim.ceiling is None or status not in (FAIL, INCONCLUSIVE):
        return status, reason
    try:
        node = float(rhs_path) if not isinstance(rhs_path, str) else as_evidence(lookup_metric(metrics, rhs_path), rhs_path)
    except (MetricMissing, Undecidable):
        return status, reason
    level = node if isinstance(node, float) else node.estimate if isinstance(node, Interval) else float(np.mean(node.values))
    bound, headroom = float(claim.ceiling["bound"]), float(claim.ceiling["headroom"])
    room = bound - level if claim.op in (">", ">=") else level - bound
    if room >= headroom:
        return status, reason
    why = (f"ceiling: {claim.ceiling['reason']} (the compared side is at {level:.4g}, within {headroom:g} of the "
           f"bound {bound:g}; would have been {status})")
    return UNDECIDABLE, why + (f"; {reason}" if reason else "")


class Undecidable(ValueError):
    """The metric exists but cannot give an interval for this check (the reason says why)."""


class _TooFew(Undecidable):
    """Too few units for an interval; carries the per-unit compared quantity (for the units needed), and
    the compared quantity's estimate and units (what a figure draws without an interval)."""

    def __init__(self, message: str, values: np.ndarray | None, threshold: float = 0.0, clustered: bool = False,
                 estimate: float | None = None, n: int | None = None):
        super().__init__(message)
        self.values, self.threshold, self.clustered = values, threshold, clustered
        self.estimate, self.n = estimate, n


def _interval(claim: Claim, lhs: float | Sample | Interval, rhs: float | Sample | Interval, level: float,
              seed: int) -> tuple[Interval, float]:
    """The interval of the compared quantity, and the threshold the claim compares it with."""
    interval, threshold = _interval_of(claim, lhs, rhs, level, seed)
    if any(isinstance(ev, Sample) and ev.cluster is not None for ev in (lhs, rhs)):
        interval = replace(interval, method=f"{interval.method} over clusters of {claim.unit}")
    return interval, threshold


def _interval_of(claim: Claim, lhs: float | Sample | Interval, rhs: float | Sample | Interval, level: float,
                 seed: int) -> tuple[Interval, float]:
    if claim.unit == "none":
        if not isinstance(lhs, float) or not isinstance(rhs, float):
            raise Undecidable("unit 'none' is for exact numbers; this metric holds per-unit values: give its unit")
        return Interval(lhs - rhs, lhs - rhs, lhs - rhs, level, 1, "exact"), 0.0
    if isinstance(lhs, float):
        raise Undecidable(f"{claim.metric} holds a summary only ({lhs:.4g}), no per-unit values over "
                          f"{claim.unit}: the evidence cannot decide")
    for side, ev in (("metric", lhs), ("rhs", rhs)):
        if isinstance(ev, Sample) and ev.unit != claim.unit:
            raise Undecidable(f"the {side}'s units are {ev.unit!r}, the claim's are {claim.unit!r}")
    if isinstance(lhs, Interval):  # a rate (Wilson) or an interval the paper's code computed
        if lhs.method == "Wilson":
            lhs = wilson_interval(round(lhs.estimate * lhs.n), lhs.n, level=level)
        elif abs(lhs.level - level) > 1e-9:
            raise Undecidable(f"{claim.metric} gives a {lhs.level:.0%} interval; the check asks {level:.0%}")
        if not isinstance(rhs, float):
            raise Undecidable("a rate or a ready interval can be compared with a number only")
        return lhs, rhs
    if claim.paired and isinstance(rhs, Sample):
        lhs, rhs = _aligned(lhs, rhs)
    cv = [ev.cv for ev in (lhs, rhs) if isinstance(ev, Sample) and ev.cv is not None]
    if cv:  # folds of a cross-validation: the bootstrap over folds, widened for their overlap
        if claim.statistic != "mean" or (isinstance(rhs, Sample) and not claim.paired) or \
                any(isinstance(ev, Sample) and ev.cluster is not None for ev in (lhs, rhs)):
            raise Undecidable(f"{claim.metric}: the overlap of cross-validation folds is corrected for the mean of "
                              f"one sample or of paired differences only")
        interval, threshold = _bootstrap(claim, lhs, rhs, level, seed)
        return cv_corrected(interval, max(cv)), threshold
    return _bootstrap(claim, _cluster_means(lhs, claim), _cluster_means(rhs, claim) if isinstance(rhs, Sample) else rhs,
                      level, seed)


def _bootstrap(claim: Claim, lhs: Sample, rhs: float | Sample, level: float, seed: int) -> tuple[Interval, float]:
    """The bootstrap interval of the compared quantity over units (clusters already averaged)."""
    n_units = min(lhs.values.size, rhs.values.size) if isinstance(rhs, Sample) else lhs.values.size
    if n_units < min_units(level):
        what = "clusters of units" if lhs.cluster is not None else "units"
        values, threshold = None, 0.0
        if claim.statistic == "mean" and isinstance(rhs, float):
            values, threshold = lhs.values, rhs
        elif claim.statistic == "mean" and isinstance(rhs, Sample) and claim.paired and rhs.values.size == lhs.values.size:
            values = lhs.values - rhs.values
        if values is not None:
            estimate = float(np.mean(values))
        elif claim.statistic == "mean" and isinstance(rhs, Sample):  # unpaired: the difference of the means
            estimate = float(lhs.values.mean() - rhs.values.mean())
        elif claim.statistic == "slope" and lhs.x is not None and isinstance(rhs, float) and lhs.values.size >= 2:
            threshold = rhs
            estimate = float(STATISTICS["slope"](lhs.values, lhs.x, np.arange(lhs.values.size)))
        else:
            estimate = None
        # one unit (one cluster: one distillation seed) still has its estimate, which a figure draws without a bar
        why = f"one unit only: no interval ({claim.metric})" if lhs.values.size < 2 else \
            (f"{n_units} {what} cannot give a {level:.4g} interval without assuming a distribution "
             f"(at least {min_units(level)} are needed): the evidence at this scale cannot decide")
        raise _TooFew(why, values, threshold, lhs.cluster is not None, estimate, n_units)
    if claim.statistic == "slope":
        if lhs.x is None:
            raise Undecidable(f"{claim.metric} has no x values for a slope")
        if not isinstance(rhs, float):
            raise Undecidable("a slope is compared with a number")
        return bootstrap_interval(lhs.values, lhs.x, statistic="slope", level=level, seed=seed), rhs
    if isinstance(rhs, float):
        return bootstrap_interval(lhs.values, level=level, seed=seed), rhs
    if not isinstance(rhs, Sample):
        raise Undecidable(f"cannot compare per-unit values with a {type(rhs).__name__}")
    if not claim.paired:
        return bootstrap_interval(lhs.values, rhs.values, paired=False, level=level, seed=seed), 0.0
    return bootstrap_interval(lhs.values, rhs.values, level=level, seed=seed), 0.0


def _aligned(lhs: Sample, rhs: Sample) -> tuple[Sample, Sample]:
    """``rhs`` reordered to ``lhs``'s units (a paired comparison), or Undecidable if they differ; a unit undefined
    on one side is left out of both."""
    if set(lhs.ids) | set(lhs.undefined) != set(rhs.ids) | set(rhs.undefined):
        raise Undecidable(f"paired samples cover different units ({len(lhs.ids) + len(lhs.undefined)} vs "
                          f"{len(rhs.ids) + len(rhs.undefined)}; e.g. "
                          f"{sorted((set(lhs.ids) | set(lhs.undefined)) ^ (set(rhs.ids) | set(rhs.undefined)))[:3]})")
    lhs, rhs = _without(lhs, rhs.undefined), _without(rhs, lhs.undefined)
    if not lhs.ids:
        raise Undecidable(f"no unit is defined on both sides of the pair ({len(lhs.undefined)} undefined)")
    if set(lhs.ids) != set(rhs.ids) or len(lhs.ids) != len(rhs.ids):
        raise Undecidable(f"paired samples cover different units ({len(lhs.ids)} vs {len(rhs.ids)}; "
                          f"e.g. {sorted(set(lhs.ids) ^ set(rhs.ids))[:3]})")
    order = [{u: i for i, u in enumerate(rhs.ids)}[u] for u in lhs.ids]
    cluster = None if rhs.cluster is None else tuple(rhs.cluster[i] for i in order)
    if lhs.cluster is not None and cluster is not None and cluster != lhs.cluster:
        raise Undecidable("paired samples group their units into different clusters")
    cluster = lhs.cluster or cluster
    rhs = Sample(rhs.unit, lhs.ids, rhs.values[order], None if rhs.x is None else rhs.x[order], cluster, rhs.cv,
                 rhs.undefined)
    return Sample(lhs.unit, lhs.ids, lhs.values, lhs.x, cluster, lhs.cv, lhs.undefined), rhs


def _without(ev: Sample, undefined: tuple[str, ...]) -> Sample:
    """``ev`` less the units in ``undefined`` (those undefined on the other side of a pair), which join its own."""
    drop = set(undefined) & set(ev.ids)
    if not drop:
        return ev
    keep = [i for i, u in enumerate(ev.ids) if u not in drop]
    return Sample(ev.unit, tuple(ev.ids[i] for i in keep), ev.values[keep], None if ev.x is None else ev.x[keep],
                  None if ev.cluster is None else tuple(ev.cluster[i] for i in keep), ev.cv,
                  ev.undefined + tuple(u for u in ev.ids if u in drop))


def _cluster_means(ev: Sample, claim: Claim) -> Sample:
    """One value per cluster (the mean of its units) when the units are clustered; else ``ev``.

    Resampling clusters of equal size with their units is the same as resampling cluster means; a
    paired comparison takes both sides' means over the same units, so their difference is the
    cluster's mean paired difference.
    """
    if ev.cluster is None:
        return ev
    if claim.statistic != "mean":
        raise Undecidable(f"{claim.metric}: a {claim.statistic} over clustered units is not supported")
    labels = sorted(set(ev.cluster))
    keys = np.asarray(ev.cluster)
    means = np.array([ev.values[keys == c].mean() for c in labels])
    return Sample(ev.unit, tuple(labels), means, None, tuple(labels), ev.cv, ev.undefined)


def _evidence_interval(check: Claim | Diagnostic, metrics: Mapping[str, Any], metric: str, rhs_path: float | str,
                       level: float, seed: int) -> tuple[Interval, float]:
    """The interval of ``metric`` compared with ``rhs_path`` (a number or a metric) and the threshold;
    raises :class:`MetricMissing` (a path absent) or :class:`Undecidable` (no interval possible)."""
    lhs_node = lookup_metric(metrics, metric)
    rhs_node = None if not isinstance(rhs_path, str) else lookup_metric(metrics, rhs_path)
    lhs = as_evidence(lhs_node, metric)
    rhs = float(rhs_path) if rhs_node is None else as_evidence(rhs_node, rhs_path)
    return _interval(check, lhs, rhs, level, seed)


class SettingCheck(NamedTuple):
    """The verdict of one check (one setting of an ``each`` claim), and what would decide it; its first
    three fields are the (status, interval, reason) of a check. ``threshold`` is what the interval is
    compared with (0 for a paired difference) and ``level`` the level it is taken at (Bonferroni's
    for a setting of an ``each`` claim); both ``None`` where the metric gave no quantity to compare."""

    status: str
    interval: Interval | None = None
    reason: str = ""
    units_needed: int | None = None
    to_decide: str = ""
    units_have: int | None = None
    threshold: float | None = None
    level: float | None = None
    estimate: float | None = None
    """the compared quantity where the units gave it but no interval (too few); else the interval's"""
    note: str = ""
    """the units left out because their value is undefined (:func:`_undefined_note`)"""


def _samples(metrics: Mapping[str, Any], *paths: float | str):
    """The per-unit samples at ``paths`` (numbers, absent metrics and other evidence skipped)."""
    for path in paths:
        if isinstance(path, str):
            try:
                ev = as_evidence(lookup_metric(metrics, path), path)
            except (MetricMissing, Undecidable, ValueError):
                continue
            if isinstance(ev, Sample):
                yield ev


def _undefined_note(metrics: Mapping[str, Any], *paths: float | str) -> str:
    """Which units the samples at ``paths`` leave out as undefined (null values), of how many; "" if none."""
    undefined, units = set(), set()
    for ev in _samples(metrics, *paths):
        undefined |= set(ev.undefined)
        units |= set(ev.ids) | set(ev.undefined)
    if not undefined:
        return ""
    natural = sorted(undefined, key=lambda u: [int(p) if p.isdigit() else p for p in re.split(r"(\d+)", u)])
    shown = ", ".join(natural[:5]) + (", ..." if len(natural) > 5 else "")
    return f"undefined for {len(undefined)} of {len(units)} units ({shown}), left out: the interval is over the defined ones"


def _cv_of(metrics: Mapping[str, Any], *paths: float | str) -> float | None:
    """n_test / n_train of the cross-validation folds the compared samples are, if they are."""
    return next((ev.cv for ev in _samples(metrics, *paths) if ev.cv is not None), None)


def _check_one(claim: Claim, metrics: Mapping[str, Any], metric: str, rhs_path: float | str, level: float,
               seed: int) -> SettingCheck:
    return _check_defined(claim, metrics, metric, rhs_path, level, seed)._replace(
        note=_undefined_note(metrics, metric, rhs_path))


def _check_defined(claim: Claim, metrics: Mapping[str, Any], metric: str, rhs_path: float | str, level: float,
                   seed: int) -> SettingCheck:
    try:
        interval, threshold = _evidence_interval(claim, metrics, metric, rhs_path, level, seed)
    except _TooFew as few:
        status, reason = _ceiling(claim, metrics, rhs_path, INCONCLUSIVE, str(few))
        need, text = (None, "") if status != INCONCLUSIVE else units_to_decide(
            replace(claim, level=level), None, few.threshold, cv=_cv_of(metrics, metric, rhs_path), values=few.values,
            clustered=few.clustered)
        return SettingCheck(status, None, reason, need, text, few.n, few.threshold, level, few.estimate)
    except Undecidable as why:
        status, reason = _ceiling(claim, metrics, rhs_path, INCONCLUSIVE, str(why))
        return SettingCheck(status, None, reason, level=level)
    status = verdict(interval, claim.op, threshold, claim.tol, margin=claim.margin, better=claim.better)
    status, reason = _ceiling(claim, metrics, rhs_path, status, "")
    if status != INCONCLUSIVE:
        return SettingCheck(status, interval, reason, threshold=threshold, level=level)
    need, text = units_to_decide(claim, interval, threshold, cv=_cv_of(metrics, metric, rhs_path))
    return SettingCheck(status, interval, reason, need, text, threshold=threshold, level=level)


def claim_interval(claim: Claim, metrics: Mapping[str, Any], metric: str | None = None,
                   rhs: float | str | None = None) -> tuple[Interval | None, str]:
    """The interval the checker decides ``claim`` on, and ""; or (None, why) where it forms none.

    With ``metric`` (and ``rhs``, else the claim's), the interval it would form for that metric checked as
    the claim is: the same unit, level, statistic, pairing and resampling seed. For a figure that draws a
    claim's quantity, or the same quantity in other settings, with the interval the claim is decided on
    (a number ``rhs``: the interval of the metric itself; a metric: of the paired difference).
    """
    if claim.each:
        raise ValueError(f"{claim.paper}.{claim.id}: an 'each' claim has one interval per setting; name its metric")
    metric = claim.metric if metric is None else metric
    rhs = claim.rhs if rhs is None else rhs
    try:
        part = _check_one(claim, metrics, metric, rhs, claim.level, job_seed(0, "claim", claim.paper, claim.id))
    except MetricMissing as missing:
        return None, f"metric {missing.args[0]} absent"
    return part.interval, "" if part.interval is not None else part.reason


def check_settings(claim: Claim, metrics: Mapping[str, Any]) -> dict[str, SettingCheck]:
    """Each setting's check of ``claim`` on ``metrics``, exactly as its verdict takes it: for an ``each``
    claim one per entry of the metric's mapping (keyed by the entry's name), its interval at the
    Bonferroni level of the family; else one, keyed ``""``.

    The interval a figure draws for a claim's quantity comes from here (:func:`interval_rows`), so
    that the figure and the artifact-evaluation verdict show one interval. Raises
    :class:`MetricMissing` when the metric (or an ``each`` claim's mapping) is absent.
    """
    seed = job_seed(0, "claim", claim.paper, claim.id)
    if not claim.each:
        return {"": _check_one(claim, metrics, claim.metric, claim.rhs, claim.level, seed)}
    group = lookup_metric(metrics, claim.metric)
    if not isinstance(group, Mapping) or not group:
        raise MetricMissing(f"{claim.metric} (each: a mapping of samples, one per setting)")
    # Bonferroni: the family of len(group) intervals holds jointly at the claim's level.
    level = 1 - (1 - claim.level) / len(group)
    parts = {}
    for name in group:
        rhs = claim.rhs if not isinstance(claim.rhs, str) else f"{claim.rhs}.{name}"
        parts[name] = _check_one(claim, metrics, f"{claim.metric}.{name}", rhs, level, seed)
    return parts


def _check(claim: Claim, metrics: Mapping[str, Any]) -> SettingCheck:
    parts = check_settings(claim, metrics)
    if not claim.each:
        return parts[""]
    level = next(iter(parts.values())).level
    statuses = [p.status for p in parts.values()]
    status = FAIL if FAIL in statuses else PASS if all(s == PASS for s in statuses) else \
        UNDECIDABLE if UNDECIDABLE in statuses else INCONCLUSIVE
    worst = next(name for name, p in parts.items() if p.status == status) if status != PASS else \
        min(parts, key=lambda k: _margin(parts[k].interval, claim))
    detail = "; ".join(f"{name}: {p.status}" + (f" {p.interval}" if p.interval else f" ({p.reason})" if p.reason else "")
                       for name, p in parts.items())
    need, text = None, ""
    if status == INCONCLUSIVE:  # every setting still open must clear: the slowest one decides
        open_ = {name: p for name, p in parts.items() if p.status == INCONCLUSIVE}
        stuck = [name for name, p in open_.items() if p.units_needed is None]
        if stuck:
            text = "; ".join(f"{name}: {open_[name].to_decide or 'no estimate of the units needed'}" for name in stuck)
        else:
            slowest = max(open_, key=lambda k: open_[k].units_needed)
            need, text = open_[slowest].units_needed, f"{open_[slowest].to_decide} (the slowest setting: {slowest})"
    have = parts[worst].units_have if parts[worst].interval is None else parts[worst].interval.n
    note = "; ".join(f"{name}: {p.note}" for name, p in parts.items() if p.note)
    return SettingCheck(status, parts[worst].interval,
                        f"each of {len(parts)} (Bonferroni, {level:.3g} each; shown: {worst}): {detail}",
                        need, text, have, parts[worst].threshold, level, note=note)


#: The columns of :func:`interval_rows`, in order.
INTERVAL_COLUMNS = ("claim", "setting", "estimate", "low", "high", "level", "n", "op", "threshold", "tol", "interval",
                    "status")


def interval_rows(claims: list[Claim], metrics: Mapping[str, Any], ids: list[str] | None = None) -> list[dict[str, Any]]:
    """The interval each claim (of ``ids``, default all) is decided on, one row per setting, for the table
    a figure reads: the figure draws the claim's quantity with the interval its verdict takes.

    Columns :data:`INTERVAL_COLUMNS`: ``setting`` is the entry of an ``each`` claim ("" otherwise);
    ``estimate``, ``low`` and ``high`` the compared quantity and its interval at ``level`` over ``n``
    units (bounds NaN where the evidence gives none, with why in ``interval``; the estimate too where
    there is none), ``op`` the claimed relation to ``threshold`` (0 for a paired difference) with
    ``tol`` the half-width of a ``within``/``outside`` band or a non-inferiority margin (else NaN),
    ``interval`` what kind of interval it is (method, units, pairing, Bonferroni), ``status`` the
    setting's verdict. A claim whose metric is absent gives no rows.
    """
    by_id = {c.id: c for c in claims}
    unknown = sorted(set(ids or ()) - set(by_id))
    if unknown:
        raise ValueError(f"interval_rows: no claim {unknown} (known: {', '.join(by_id)})")
    rows = []
    for cid in ids if ids is not None else list(by_id):
        claim = by_id[cid]
        try:
            parts = check_settings(claim, metrics)
        except MetricMissing:
            continue
        for name, part in parts.items():
            iv = part.interval
            estimate = iv.estimate if iv is not None else part.estimate
            tol = claim.tol if claim.op in ("within", "outside") else claim.margin if claim.op == "noninferior" else None
            rows.append({"claim": cid, "setting": name, "estimate": math.nan if estimate is None else estimate,
                         "low": math.nan if iv is None else iv.low, "high": math.nan if iv is None else iv.high,
                         "level": part.level if iv is None else iv.level,
                         "n": part.units_have if iv is None else iv.n, "op": claim.op,
                         "threshold": math.nan if part.threshold is None else part.threshold,
                         "tol": math.nan if tol is None else float(tol),
                         "interval": _interval_kind(claim, part, len(parts)), "status": part.status})
    return rows


def _interval_kind(claim: Claim, part: SettingCheck, settings: int) -> str:
    """What kind of interval a setting's check takes, in words (or why it has none)."""
    if part.interval is None:
        return f"none: {part.reason}"
    iv = part.interval
    if iv.method == "exact":
        return "exact (no interval)"
    # a metric on the right that held per-unit values: the interval is of the difference (threshold 0)
    paired = isinstance(claim.rhs, str) and iv.method.startswith("bootstrap mean") and part.threshold == 0.0
    what = f"{iv.method}{(', paired' if claim.paired else ', unpaired') + ' difference' if paired else ''}"
    family = f", Bonferroni over {settings} settings" if claim.each else ""
    return f"{100 * iv.level:.4g}% {what} over {iv.n} {claim.unit} units{family}"


def _margin(interval: Interval | None, claim: Claim) -> float:
    if interval is None:
        return -math.inf
    higher = claim.op in (">", ">=") or (claim.op == "noninferior" and claim.better == "higher")
    return interval.low if higher else -interval.high


def evaluate(claims: list[Claim], metrics_path: str | Path | None) -> list[ClaimResult]:
    """Check each claim against the metrics file (``None`` or absent: every claim is NOT RUN)."""
    if metrics_path is None or not Path(metrics_path).exists():
        return [ClaimResult(c, NOT_RUN, reason="no metrics yet: the paper's targets have not been built")
                for c in claims]
    with open(metrics_path, encoding="utf-8") as fh:
        metrics = json.load(fh)
    measured_scale = (metrics.get("provenance") or {}).get("scale")
    partial = _partial_note(metrics)
    results = []
    for c in claims:
        try:
            part = _check(c, metrics)
        except MetricMissing as missing:
            results.append(ClaimResult(c, NOT_RUN, reason=f"metric {missing.args[0]} absent from {metrics_path}"
                                       + (f" ({partial})" if partial else ""), measured_scale=measured_scale))
            continue
        notes = [n for n in (partial, part.note) if n]
        if measured_scale in SCALES and SCALES.index(measured_scale) < SCALES.index(c.scale):
            notes.append(f"measured at scale {measured_scale}; the claim is expected to hold from scale {c.scale}")
        have = part.interval.n if part.interval is not None else part.units_have
        results.append(ClaimResult(c, part.status, interval=part.interval, reason=part.reason,
                                   measured_scale=measured_scale, note="; ".join(notes),
                                   units_needed=part.units_needed, units_have=have, to_decide=part.to_decide))
    return results


def measure(diagnostics: list[Diagnostic], results_dir: str | Path | None) -> list[DiagnosticResult]:
    """Each diagnostic's interval from the JSON files in ``results_dir`` (``results/<key>``), no verdict.

    ``results_dir`` ``None`` or a file absent: the diagnostic is reported as not measured, with why.
    """
    out, loaded = [], {}
    for d in diagnostics:
        path = None if results_dir is None else Path(results_dir) / d.file
        if path is None or not path.exists():
            out.append(DiagnosticResult(d, reason=f"not measured: {d.file} not built"))
            continue
        if path not in loaded:
            with open(path, encoding="utf-8") as fh:
                loaded[path] = json.load(fh)
        seed = job_seed(0, "diagnostic", d.paper, d.id)
        try:
            interval, threshold = _evidence_interval(d, loaded[path], d.metric, d.rhs, d.level, seed)
        except MetricMissing as missing:
            out.append(DiagnosticResult(d, reason=f"not measured: {missing.args[0]} absent from {d.file}"))
            continue
        except Undecidable as why:
            out.append(DiagnosticResult(d, reason=str(why)))
            continue
        if threshold:  # a number to subtract: the interval of (metric - rhs)
            interval = replace(interval, estimate=interval.estimate - threshold, low=interval.low - threshold,
                               high=interval.high - threshold)
        out.append(DiagnosticResult(d, interval=interval, reason=_undefined_note(loaded[path], d.metric, d.rhs)))
    return out


def _partial_note(metrics: dict) -> str:
    """What a partial aggregate (``--config partial=true``) left out, as a note for every verdict, or ""."""
    missing = (metrics.get("partial") or {}).get("missing_runs") or []
    if not missing:
        return ""
    total = metrics["partial"].get("n_runs")
    shown = ", ".join(missing[:3]) + (", ..." if len(missing) > 3 else "")
    return f"partial build: {len(missing)}{f' of {total}' if total else ''} runs not built ({shown})"


def main(argv: list[str] | None = None) -> int:
    """``python -m repro.claims KEY [...]``: each claim's verdict from ``results/KEY/metrics.json``.

    The quick check after a rebuild, without building the whole artifact-evaluation report. Exit
    status 0 whatever the verdicts (a FAIL is a finding, not an error); 2 on a bad claim file.
    """
    import argparse

    parser = argparse.ArgumentParser(prog="python -m repro.claims", description=main.__doc__.splitlines()[0])
    parser.add_argument("keys", nargs="*", help="paper keys (workflow/claims/KEY.yaml)")
    parser.add_argument("--results", default="results", help="folder holding KEY/metrics.json (default: results)")
    parser.add_argument("--repo", default=".", help="repository root (default: the current folder)")
    parser.add_argument("--stale", action="store_true",
                        help="list the papers whose inputs changed since the published report (exit 1 if any)")
    parser.add_argument("--published", default="docs/results", help="the published report's folder (with --stale)")
    parser.add_argument("--mark", action="store_true", help="with --stale: rewrite the published page's banner")
    args = parser.parse_args(argv)
    repo = Path(args.repo)
    if args.stale:
        return _stale_main(repo, Path(args.published), mark=args.mark)
    if not args.keys:
        parser.error("name at least one paper key, or --stale")
    for key in args.keys:
        try:
            claims, diagnostics = load_claim_file(repo / f"workflow/claims/{key}.yaml",
                                                  repo / "workflow/schemas/claims.schema.yaml")
        except (OSError, ValueError) as err:
            print(f"{key}: {err}")
            return 2
        metrics = Path(args.results) / key / "metrics.json"
        for r in evaluate(claims, metrics if metrics.exists() else None):
            shown = str(r.interval) if r.interval is not None else "-"
            line = f"{key}.{r.claim.id}: {r.status}  ({r.kind})  {shown}  {r.reason}".rstrip()
            line += f"; to decide: {r.to_decide}" if r.to_decide else ""
            print(line + (f" [{r.note}]" if r.note else ""))
        for m in measure(diagnostics, Path(args.results) / key):
            shown = str(m.interval) if m.interval is not None else "-"
            print(f"{key}.{m.diagnostic.id}: diagnostic  {shown}  {m.reason}".rstrip())
    return 0


def _stale_main(repo: Path, published: Path, *, mark: bool) -> int:
    """``--stale``: the papers whose inputs changed since the published report, and what changed."""
    from repro.staleness import mark as mark_page
    from repro.staleness import built_at, read_build, stale

    folder = published if published.is_absolute() else repo / published
    try:
        build = read_build(folder)
    except FileNotFoundError as err:
        print(err)
        return 2
    found = stale({k: p["fingerprint"] for k, p in build["papers"].items()}, repo)
    for key, diffs in sorted(found.items()):
        print(f"{key}: stale ({len(diffs)} inputs differ from commit {built_at(build, key)[:12]}): " + "; ".join(diffs))
    if not found:
        print("current: no published paper's inputs changed since the commit it was built from")
    if mark and mark_page(folder, repo):
        print(f"{folder / 'README.md'}: banner rewritten")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
