"""The diagonal empirical Fisher by a plain loop over examples (the reference ``fisher_diag`` is tested against)."""

import torch
import torch.nn.functional as F

from repro.nn.lora_backbone import local_labels


def fisher_by_loop(model, x, y, classes) -> list[torch.Tensor]:
    """Mean over examples of the squared gradient of each one's cross-entropy w.r.t. each adapted dense weight."""
    out = [torch.zeros_like(w) for w in model.weights()]
    for i in range(len(y)):
        ws = [w.detach().requires_grad_(True) for w in model.weights()]
        loss = F.cross_entropy(model.forward_with(ws, x[i:i + 1])[:, list(classes)], local_labels(y[i:i + 1], classes))
        for acc, g in zip(out, torch.autograd.grad(loss, ws)):
            acc += g ** 2 / len(y)
    return [o.detach() for o in out]
