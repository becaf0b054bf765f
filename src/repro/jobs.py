"""The few lines every pipeline script shares: logging, the job seed, threads, timing, metrics.

A script is thin::

    from repro.jobs import Job
    job = Job.from_snakemake(snakemake)
    result = some_method(job.cfg, seed=job.seed)
    job.write_metrics(snakemake.output.metrics, result)

Seeds reach the library one way, from the job: ``job.seed`` is this job's own stream (global seed,
rule and every wildcard); ``job.seed_for(*parts, **unit)`` is a stream shared by every job that
names the same parts, e.g. ``job.seed_for("data", fold=wc.fold)`` gives each method the same data
for the same fold, so that methods are compared on paired units. Scripts never call
:func:`repro.seeding.job_seed` or pass the global seed to the library.

:meth:`Job.from_snakemake` reads Snakemake's script object by duck typing (``log``, ``config``,
``rule``, ``wildcards``, ``threads``, ``params``); this module never imports snakemake.
"""

from __future__ import annotations

import logging
import os
import resource
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from threadpoolctl import threadpool_limits

from repro.config import block_scale, rule_block
from repro.logs import setup_job_logging
from repro.provenance import write_metrics
from repro.seeding import job_seed, wildcards_dict

__all__ = ["Job", "limit_threads"]

log = logging.getLogger(__name__)


@dataclass
class Job:
    rule: str
    seed: int
    scale: str
    global_seed: int = 0
    threads: int = 1
    cfg: dict[str, Any] = field(default_factory=dict)
    wildcards: dict[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.perf_counter)

    @classmethod
    def from_snakemake(cls, smk: Any) -> "Job":
        setup_job_logging(smk.log[0] if len(smk.log) else None)
        params = dict(smk.params.items()) if hasattr(smk.params, "items") else {}
        wildcards = wildcards_dict(smk.wildcards)
        threads = int(getattr(smk, "threads", 1) or 1)
        job = cls(rule=smk.rule, seed=job_seed(smk.config["seed"], smk.rule, **wildcards),
                  scale=block_scale(smk.config, rule_block(smk.config, smk.rule)), global_seed=int(smk.config["seed"]), threads=threads,
                  cfg=params.get("cfg", {}), wildcards=wildcards)
        job.limit_threads()
        log.info("job %s wildcards=%s seed=%d scale=%s threads=%d", job.rule, wildcards, job.seed, job.scale, threads)
        return job

    def seed_for(self, *parts: Any, **unit: Any) -> int:
        """A seed shared by every job that names the same ``parts`` and ``unit`` (for pairing).

        ``job.seed_for("mdadd-eval")`` is one stream for all of a rule's jobs;
        ``job.seed_for("groupfdr_data", setting=s, chunk=c)`` one per unit, whatever the method.
        """
        return job_seed(self.global_seed, *parts, **unit)

    def limit_threads(self) -> None:
        """Keep numerical libraries within the job's ``threads`` (a cluster node is shared): :func:`limit_threads`."""
        limit_threads(self.threads)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    @staticmethod
    def cpu_time() -> float:
        """CPU-seconds of this process since it started (every thread, and the children it waited for).

        Exact where Snakemake's ``benchmark:`` files are not: they keep the last of polls taken every
        30 s after a job's first 15 s, so a long job loses the CPU it spent after that poll.
        """
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

    def write_metrics(self, path: str | os.PathLike, metrics: dict[str, Any]) -> None:
        """Write ``metrics`` with the provenance block (config hash of this job's preset)."""
        write_metrics(path, metrics, config={"rule": self.rule, "cfg": self.cfg, "wildcards": self.wildcards},
                      seed=self.seed, wall_time_s=self.elapsed, scale=self.scale, cpu_time_s=self.cpu_time())
        log.info("wrote %s after %.1f s", path, self.elapsed)


def limit_threads(n: int) -> None:
    """Keep numerical libraries (BLAS, OpenMP, torch) of this process and its children within ``n`` threads.

    The environment variables reach child processes and libraries loaded later; BLAS and OpenMP pools
    already loaded (numpy's OpenBLAS is, by the time a job starts) read them only at load, so those are
    limited through ``threadpoolctl``; torch reads ``OMP_NUM_THREADS`` only when first imported.
    """
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(n)
    threadpool_limits(limits=n)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(n)
