"""Peak memory of torch code on any device, by watching the tensors it allocates.

:class:`AllocationTracker` is a ``TorchDispatchMode``: every aten op run inside it (forward and
autograd backward) reports its outputs; a tensor whose storage is new (not shared with an input,
not already tracked) counts its storage bytes as allocated until the last tensor that refers to
that storage is freed. ``peak_bytes`` is the largest total of live allocations seen, and
``max_alloc_bytes`` / ``max_alloc_numel`` the largest single one. Tensors that existed before the
block (model parameters, data) are not counted. On CPU torch has no allocator statistics, so this
is how the benchmark and the O(2**n) memory test measure memory.
"""

from __future__ import annotations

import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

__all__ = ["AllocationTracker"]


class AllocationTracker(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.live_bytes = 0
        self.peak_bytes = 0
        self.max_alloc_bytes = 0
        self.max_alloc_numel = 0
        self.n_allocs = 0
        self._sizes: dict[int, int] = {}
        self._refs: dict[int, int] = {}

    def _release(self, key: int) -> None:
        self._refs[key] -= 1
        if self._refs[key] == 0:
            self.live_bytes -= self._sizes.pop(key)
            del self._refs[key]

    def _track(self, t: torch.Tensor, input_keys: set[int]) -> None:
        storage = t.untyped_storage()
        key = storage.data_ptr()
        if key == 0:
            return
        if key not in self._sizes:
            if key in input_keys:  # a view of (or in-place on) a tensor from outside the block
                return
            self._sizes[key] = storage.nbytes()
            self._refs[key] = 0
            self.live_bytes += storage.nbytes()
            self.n_allocs += 1
            self.peak_bytes = max(self.peak_bytes, self.live_bytes)
            if storage.nbytes() > self.max_alloc_bytes:
                self.max_alloc_bytes = storage.nbytes()
                self.max_alloc_numel = t.numel()
        self._refs[key] += 1
        weakref.finalize(t, self._release, key)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = [a for a in tree_flatten((args, kwargs))[0] if isinstance(a, torch.Tensor)]
        input_keys = {a.untyped_storage().data_ptr() for a in inputs}
        for t in tree_flatten(out)[0]:
            if isinstance(t, torch.Tensor):
                self._track(t, input_keys)
        return out

    def summary(self) -> dict[str, float]:
        return {"peak_bytes": self.peak_bytes, "max_alloc_bytes": self.max_alloc_bytes,
                "max_alloc_numel": self.max_alloc_numel, "n_allocs": self.n_allocs}
