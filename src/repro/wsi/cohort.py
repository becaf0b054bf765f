"""Cohorts of slides: which slides a cohort has, where each lives, and fetching remote ones.

Two kinds of cohort (config.yaml ``wsi.<scale>``):

- ``synthetic`` (the embedded default): ``synthetic.n_slides`` slides ``S0000, S0001, ...`` drawn by
  :mod:`repro.wsi.synth` into ``resources/wsi/synthetic/slides/{slide}.tiff``. The slide list
  is fixed by the preset, so the workflow's DAG is known before anything runs.
- a remote cohort named ``remote.cohort``, listed in the CSV ``remote.manifest`` (a path relative to
  the checkout), one row per slide with columns ``slide_id``, ``url`` and optionally ``filename``
  (its extension is kept; default ``{slide_id}.svs``), ``sha256``, ``md5`` and the label columns
  of the cohort manifest (``survival_months, event, subtype, subtype_name, gene_expr``). For TCGA,
  ``url`` is ``https://api.gdc.cancer.gov/data/{file_id}`` and ``md5`` the GDC file's md5sum; for slides
  on this machine, ``url`` is a ``file:///absolute/path`` (the slide is copied in and checked the same way).
  Slides are downloaded by :func:`fetch_slide` through :func:`repro.data.fetch.fetch_url`
  (resume, checksum, atomic rename: a mismatch leaves nothing at the destination). A row without
  ``sha256`` or ``md5`` is refused when the workflow plans the cohort (:func:`cohort_slides`), before
  anything is downloaded, unless the config opts out (``remote.allow_unverified: true``).

Which of the two a job reads is the ``{cohort}`` of the file asked for (``results/wsi/{cohort}/...``): the
block's ``source`` key does not choose between them.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

__all__ = ["SYNTHETIC", "LABEL_COLUMNS", "slide_ids", "read_remote_manifest", "cohort_slides", "check_verifiable", "slide_path",
           "fetch_slide", "write_remote_labels"]

log = logging.getLogger(__name__)

SYNTHETIC = "synthetic"
LABEL_COLUMNS = ("survival_months", "event", "subtype", "subtype_name", "gene_expr")
SLIDE_EXTENSIONS = (".svs", ".tif", ".tiff", ".ndpi", ".mrxs", ".scn", ".bif", ".vms", ".vmu", ".svslide")


def slide_ids(n_slides: int) -> list[str]:
    """The fixed slide ids of a synthetic cohort: ``S0000``, ``S0001``, ..."""
    return [f"S{i:04d}" for i in range(int(n_slides))]


def read_remote_manifest(path: str | os.PathLike):
    """The remote manifest as a DataFrame indexed by ``slide_id`` (validated)."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"wsi remote manifest {path} does not exist")
    df = pd.read_csv(path, dtype={"slide_id": str, "sha256": str, "md5": str, "filename": str})
    missing = {"slide_id", "url"} - set(df.columns)
    if missing:
        raise ValueError(f"wsi remote manifest {path}: missing columns {sorted(missing)}")
    if df.slide_id.duplicated().any():
        raise ValueError(f"wsi remote manifest {path}: duplicated slide_id {sorted(df.slide_id[df.slide_id.duplicated()])}")
    if "filename" not in df:
        df["filename"] = df.slide_id + ".svs"
    df["filename"] = df.filename.fillna(df.slide_id + ".svs")
    bad = [f for f in df.filename if Path(f).suffix.lower() not in SLIDE_EXTENSIONS]
    if bad:
        raise ValueError(f"wsi remote manifest {path}: unsupported slide extensions {bad[:5]}; known {SLIDE_EXTENSIONS}")
    return df.set_index("slide_id", drop=False)


def _remote(cfg: dict[str, Any], cohort: str, repo: str | os.PathLike) -> Path:
    remote = cfg.get("remote") or {}
    if cohort != remote.get("cohort") or not remote.get("manifest"):
        raise ValueError(f"wsi cohort {cohort!r} is neither 'synthetic' nor the configured remote cohort "
                         f"{remote.get('cohort')!r} (set wsi.<scale>.remote.cohort and .manifest)")
    return Path(repo) / remote["manifest"]


def cohort_slides(cfg: dict[str, Any], cohort: str, repo: str | os.PathLike = ".") -> list[str]:
    """The slide ids of ``cohort`` under the ``wsi`` preset ``cfg``.

    A remote cohort's rows without a checksum are refused here (:func:`check_verifiable`), where the
    workflow plans the cohort's jobs, so that no slide is downloaded before a later one is refused.
    """
    if cohort == SYNTHETIC:
        return slide_ids(cfg["synthetic"]["n_slides"])
    manifest = _remote(cfg, cohort, repo)
    df = read_remote_manifest(manifest)
    check_verifiable(manifest, df, allow_unverified=bool((cfg.get("remote") or {}).get("allow_unverified")))
    return list(df.slide_id)


def check_verifiable(manifest: str | os.PathLike, df: Any, *, allow_unverified: bool = False) -> list[str]:
    """The slides of ``df`` (a :func:`read_remote_manifest` frame) with neither ``sha256`` nor ``md5``.

    Unless ``allow_unverified`` (the config key ``wsi.<scale>.remote.allow_unverified``), any such slide is a
    ``ValueError`` naming the manifest and the slides (the first few) and how to give their digests.
    """
    unverified = [slide for slide, row in df.iterrows() if not _digest(row, "sha256") and not _digest(row, "md5")]
    if unverified and not allow_unverified:
        many = len(unverified) > 1
        shown = ", ".join(repr(s) for s in unverified[:5]) + (f" and {len(unverified) - 5} more" if len(unverified) > 5 else "")
        raise ValueError(
            f"wsi remote manifest {manifest}: "
            + (f"{len(unverified)} slides have no sha256 or md5 ({shown}), so their downloads cannot" if many else
               f"slide {shown} has no sha256 or md5, so its download cannot")
            + " be checked; add a sha256 column with each slide's digest (sha256sum of the file; for a GDC file, an "
            "md5 column with its md5sum), or set wsi.<scale>.remote.allow_unverified: true in your config to accept "
            "unverified slides")
    return unverified


def slide_path(cfg: dict[str, Any], cohort: str, slide: str, repo: str | os.PathLike = ".") -> str:
    """Where the raw slide lives, relative to the working directory."""
    if cohort == SYNTHETIC:
        return f"resources/wsi/{SYNTHETIC}/slides/{slide}.tiff"
    df = read_remote_manifest(_remote(cfg, cohort, repo))
    if slide not in df.index:
        raise ValueError(f"slide {slide!r} is not in the manifest of cohort {cohort!r}")
    return f"resources/wsi/{cohort}/slides/{slide}{Path(df.loc[slide, 'filename']).suffix}"


def _digest(row: Any, column: str) -> str | None:
    """The manifest's ``column`` digest of one row; None where the column is absent or the cell empty."""
    value = row.get(column)
    return (value.strip() or None) if isinstance(value, str) else None


def fetch_slide(manifest: str | os.PathLike, slide: str, dest: str | os.PathLike, *, allow_unverified: bool = False,
                **kwargs: Any) -> Path:
    """Download one slide of a remote manifest to ``dest``, checked against the manifest's sha256 (or md5).

    Parameters
    ----------
    manifest : path
        The remote manifest (:func:`read_remote_manifest`).
    slide : str
        Its ``slide_id``.
    dest : path
        The slide's final path: it appears only once the whole file is there and its checksum matches.
    allow_unverified : bool
        The config key ``wsi.<scale>.remote.allow_unverified``. A row with neither ``sha256`` nor ``md5`` is a
        ``ValueError`` naming the manifest and the slide, raised before anything is downloaded, unless this is
        true: then the slide is fetched unverified and a warning names it.
    kwargs
        ``retries``, ``timeout``, ``backoff`` of :func:`repro.data.fetch.fetch_url`.
    """
    from repro.data.fetch import fetch_url

    df = read_remote_manifest(manifest)
    row = df.loc[slide]
    sha, md5 = _digest(row, "sha256"), _digest(row, "md5")
    if check_verifiable(manifest, df.loc[[slide]], allow_unverified=allow_unverified):
        log.warning("wsi remote manifest %s: slide %r has no sha256 or md5; fetched unverified because "
                    "wsi.<scale>.remote.allow_unverified is true", manifest, slide)
    return fetch_url(str(row["url"]), Path(dest), sha256=sha, md5=md5, **kwargs)


def write_remote_labels(manifest: str | os.PathLike, out_csv: str | os.PathLike) -> None:
    """The cohort manifest (labels) of a remote cohort; absent label columns are left empty."""
    from repro.io import atomic_path

    df = read_remote_manifest(manifest).reset_index(drop=True)
    for col in LABEL_COLUMNS:
        if col not in df:
            log.warning("remote manifest %s has no %r column: left empty", manifest, col)
            df[col] = float("nan")
    cols = ["slide_id", *LABEL_COLUMNS] + [c for c in df.columns if c not in ("slide_id", *LABEL_COLUMNS, "url")]
    with atomic_path(out_csv) as tmp:
        df[cols].to_csv(tmp, index=False)
