"""gtp tests: one BLAS thread (small matrices; oversubscribed threads spin on a shared machine)."""

import pytest


@pytest.fixture(autouse=True)
def _one_thread():
    import torch
    from threadpoolctl import threadpool_limits

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    with threadpool_limits(1):
        yield
    torch.set_num_threads(n)
