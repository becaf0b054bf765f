"""gtp's model files: written as tensors and plain values, read back with weights_only=True (no code in the file
runs); a file holding another object is refused, and a damaged one is named."""

import pytest
import torch

from repro.config import from_dict
from repro.papers.gtp.experiment import load_models, save_models
from repro.rl.diffusion_prior import ActionDiffusion, DiffusionConfig
from repro.rl.world_model import ModelConfig, WorldModel

CFG = {"model": {"members": 2, "hidden": 16, "steps": 5, "value_steps": 5, "n_step": 2},
       "diffusion": {"steps": 4, "hidden": 16, "layers": 2, "train_steps": 5}, "horizon": 3}


def _models():
    torch.manual_seed(0)
    wm = WorldModel(4, 2, from_dict(ModelConfig, CFG["model"], "gtp.model"))
    prior = ActionDiffusion(2 * CFG["horizon"], 4, from_dict(DiffusionConfig, CFG["diffusion"], "gtp.diffusion"))
    return wm, prior


def _same(a: torch.nn.Module, b: torch.nn.Module) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_the_model_file_round_trips_with_weights_only(tmp_path):
    wm, prior = _models()
    path = tmp_path / "seed0.pt"
    save_models(wm, prior, CFG, path)
    blob = torch.load(path, weights_only=True)  # tensors, numbers, strings, lists and dicts only
    assert blob["cfg"] == CFG and blob["dims"] == [4, 2, 6]
    wm2, prior2 = load_models(path)
    assert _same(wm, wm2) and _same(prior, prior2)


class _RunsCode:
    def __reduce__(self):
        return (print, ("this ran while loading",))


def test_a_model_file_holding_an_arbitrary_object_is_refused_by_name(tmp_path, capsys):
    wm, prior = _models()
    path = tmp_path / "seed0.pt"
    torch.save({"cfg": CFG, "world_model": wm.state_dict(), "prior": prior.state_dict(), "dims": [4, 2, 6],
                "extra": _RunsCode()}, path)
    with pytest.raises(ValueError, match=rf"^{path}: holds a print object.*weights_only=True"):
        load_models(path)
    assert "this ran" not in capsys.readouterr().out


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_damaged_model_file_is_named(tmp_path, damage):
    wm, prior = _models()
    path = tmp_path / "seed0.pt"
    save_models(wm, prior, CFG, path)
    raw = path.read_bytes()
    path.write_bytes(raw[:len(raw) // 2] if damage == "truncated" else b"\x00not a torch file" * 20)
    with pytest.raises(ValueError, match=rf"^{path}: not a valid torch file .*delete it to rebuild"):
        load_models(path)
