"""mcpo tests: one BLAS thread (small matrices; oversubscribed threads spin on a shared machine)."""

import pytest


@pytest.fixture(autouse=True)
def _one_blas_thread():
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield
