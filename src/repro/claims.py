"""Claims: what a paper states, checked against what this rebuild measured.

A claim file (``workflow/claims/<key>.yaml``, schema ``workflow/schemas/claims.schema.yaml``)
lists claims; each names a metric by its dotted path in ``results/<key>/metrics.json`` and a
check: ``metric op rhs`` where ``rhs`` is a number or another metric's path, or
``|metric - rhs| <= tol`` for ``op: within``. :func:`evaluate` gives each claim a status:

- ``PASS`` / ``FAIL``: the metric exists and the check holds / does not;
- ``NOT RUN``: there is no metrics file yet, or the metric is absent (the reason says which).

A check is never adjusted to make a claim pass: a FAIL is a finding.
"""

from __future__ import annotations

import json
import math
import operator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import yaml

__all__ = ["Claim", "ClaimResult", "load_claims", "lookup_metric", "evaluate", "PASS", "FAIL", "NOT_RUN"]

PASS, FAIL, NOT_RUN = "PASS", "FAIL", "NOT RUN"
SCALES = ("smoke", "small", "paper")

#: Decimal tolerances are not exact in binary (0.97 - 0.95 > 0.02): allow for rounding only.
_FLOAT_SLACK = 1e-12

_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}


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
    tol: float | None = None
    paper_value: Any = None
    note: str | None = None

    def describe_check(self) -> str:
        if self.op == "within":
            return f"|{self.metric} - {self.rhs}| <= {self.tol}"
        return f"{self.metric} {self.op} {self.rhs}"


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    status: str
    measured: float | None = None
    rhs_value: float | None = None
    reason: str = ""
    measured_scale: str | None = None
    scale_note: str = field(default="")


def load_claims(path: str | Path, schema_path: str | Path) -> list[Claim]:
    """Read and validate a claim file; a typo or a missing field is a ``ValueError`` naming the file."""
    path = Path(path)
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh)
    with open(schema_path, encoding="utf-8") as fh:
        schema = yaml.safe_load(fh)
    try:
        jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    except jsonschema.ValidationError as err:
        where = "/".join(str(p) for p in err.absolute_path) or "<root>"
        raise ValueError(f"{path}: invalid claim file at {where}: {err.message}") from None
    if doc["paper"] != path.stem:
        raise ValueError(f"{path}: 'paper: {doc['paper']}' does not match the file name")
    claims = []
    seen = set()
    for item in doc["claims"]:
        if item["id"] in seen:
            raise ValueError(f"{path}: duplicate claim id {item['id']!r}")
        seen.add(item["id"])
        check = item["check"]
        if check["op"] == "within" and ("tol" not in check or not isinstance(check["rhs"], (int, float))):
            raise ValueError(f"{path}: claim {item['id']!r}: 'within' needs a numeric rhs and a tol")
        claims.append(Claim(paper=doc["paper"], id=item["id"], claim=item["claim"], source=item["source"],
                            metric=item["metric"], op=check["op"], rhs=check["rhs"], tol=check.get("tol"),
                            scale=item["scale"], paper_value=item.get("paper_value"), note=item.get("note")))
    return claims


class MetricMissing(KeyError):
    pass


def lookup_metric(metrics: dict[str, Any], dotted: str) -> float:
    """The number at ``dotted`` (``a.b.c``) in ``metrics``; raises :class:`MetricMissing`."""
    node: Any = metrics
    for part in dotted.split("."):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise MetricMissing(dotted)
    if isinstance(node, bool) or not isinstance(node, (int, float)) or node is None:
        raise MetricMissing(f"{dotted} (not a number: {node!r})")
    return float(node)


def evaluate(claims: list[Claim], metrics_path: str | Path | None) -> list[ClaimResult]:
    """Check each claim against the metrics file (``None`` or absent: every claim is NOT RUN)."""
    if metrics_path is None or not Path(metrics_path).exists():
        return [ClaimResult(c, NOT_RUN, reason="no metrics yet: the paper's targets have not been built")
                for c in claims]
    with open(metrics_path, encoding="utf-8") as fh:
        metrics = json.load(fh)
    measured_scale = (metrics.get("provenance") or {}).get("scale")
    results = []
    for c in claims:
        try:
            value = lookup_metric(metrics, c.metric)
            rhs = float(c.rhs) if isinstance(c.rhs, (int, float)) else lookup_metric(metrics, c.rhs)
        except MetricMissing as missing:
            results.append(ClaimResult(c, NOT_RUN, reason=f"metric {missing.args[0]} absent from {metrics_path}",
                                       measured_scale=measured_scale))
            continue
        if math.isnan(value) or math.isnan(rhs):
            ok = False
        elif c.op == "within":
            ok = abs(value - rhs) <= c.tol + _FLOAT_SLACK
        else:
            ok = _OPS[c.op](value, rhs)
        note = ""
        if measured_scale in SCALES and SCALES.index(measured_scale) < SCALES.index(c.scale):
            note = f"measured at scale {measured_scale}; the claim is expected to hold from scale {c.scale}"
        results.append(ClaimResult(c, PASS if ok else FAIL, measured=value, rhs_value=rhs,
                                   measured_scale=measured_scale, scale_note=note))
    return results
