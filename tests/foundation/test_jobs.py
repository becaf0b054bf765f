"""A job's ``threads`` bound the BLAS pool numpy has already loaded, not only later ones."""
import os

import numpy as np  # noqa: F401  (loads OpenBLAS before the job starts, as every script does)
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
