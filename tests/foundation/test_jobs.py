"""A job's ``threads`` bound the BLAS pool numpy has already loaded, not only later ones."""
import os

import numpy as np  # loads OpenBLAS before the job starts, as every script does
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from repro.jobs import Job


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_limit_threads_caps_a_loaded_blas_pool():
    if not _blas_threads():
        pytest.skip("numpy has no BLAS pool threadpoolctl can see")
    with threadpool_limits(limits=None):  # restore the caller's pools afterwards
        Job(rule="t", seed=0, scale="smoke", threads=1).limit_threads()
        assert _blas_threads() and all(n == 1 for n in _blas_threads())
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"


def test_a_jobs_metrics_record_its_own_cpu_time(tmp_path):
    """The provenance block holds the job's CPU-seconds (what the benchmark files can undercount),
    and it is volatile: two identical runs compare equal without it."""
    from repro.io import read_json
    from repro.provenance import strip_volatile

    job = Job(rule="t", seed=0, scale="smoke")
    before = job.cpu_time()
    np.linalg.svd(np.random.default_rng(0).normal(size=(300, 300)))  # spend some CPU
    assert job.cpu_time() > before
    job.write_metrics(tmp_path / "m.json", {"a": 1})
    prov = read_json(tmp_path / "m.json")["provenance"]
    assert prov["cpu_time_s"] >= before > 0
    assert "cpu_time_s" not in strip_volatile(read_json(tmp_path / "m.json"))["provenance"]
