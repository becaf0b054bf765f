"""tmevolve's files: the prepared cohort and the fold weights are written as tensors and plain values and read back
with weights_only=True (no code in the file runs); a file holding another object is refused, and a damaged one
is named."""

import numpy as np
import pandas as pd
import pytest
import torch

from repro.methods.mil_train import load_prepared, make_folds, prepare_cohort, save_prepared
from repro.papers.tmevolve.experiment import save_concepts, save_fold, save_repeat, trace_slide, train_fold
from repro.papers.tmevolve.synth import generate_bags, write_contract_files

CFG = {"epochs": 1, "lr": 2e-3, "weight_decay": 0.0, "model": {"dim": 8, "dropout": 0.0, "attn_hidden": 4},
       "qk": {"survival": {"Q": 1, "K": 3}, "subtype": {"Q": 1, "K": 3}, "gene": {"Q": 1, "K": 3}}}


class _RunsCode:
    def __reduce__(self):
        return (print, ("this ran while loading",))


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    d = tmp_path_factory.mktemp("bags")
    bags, man = generate_bags(10, side=(5, 6), feat_dim=8, seed=3)
    write_contract_files(bags, man, d / "manifest.csv", d / "bags.h5")
    blob = prepare_cohort(str(d / "bags.h5"), str(d / "manifest.csv"), pca_dim=None)
    save_prepared(blob, d / "ds.pt")
    save_concepts(d / "concepts.npz", ["a", "b", "c"], ["a", "b", "c"], np.eye(3, 8, dtype=np.float32))
    return d, blob


def test_the_prepared_cohort_round_trips_with_weights_only(prepared):
    d, blob = prepared
    raw = torch.load(d / "ds.pt", weights_only=True)
    assert raw["tissue_types"] == blob["tissue_types"] and raw["table"] == blob["table"]
    data = load_prepared(str(d / "ds.pt"))
    assert [b.slide_id for b in data.bags] == [s["slide_id"] for s in blob["slides"]]
    for bag, s in zip(data.bags, blob["slides"]):
        assert torch.equal(bag.x, s["x"]) and torch.equal(bag.knn, s["knn"])
    pd.testing.assert_frame_equal(data.table, pd.DataFrame(blob["table"]))


def test_fold_weights_round_trip_with_weights_only_and_trace(prepared, tmp_path):
    d, _ = prepared
    data = load_prepared(str(d / "ds.pt"))
    folds = make_folds(data.table, 2, seed=0)
    folds.to_csv(tmp_path / "folds.csv", index=False)
    result = train_fold("tmevolve", "subtype", data, folds, 0, CFG, concept_emb=np.eye(3, 8, dtype=np.float32),
                        seed=1)
    save_fold(result, str(tmp_path / "fold.pt"), method="tmevolve", task="subtype", fold=0, seed=1)
    save_repeat({"tmevolve": {0: result}}, str(tmp_path / "repeat.pt"), task="subtype", repeat=0, seeds={0: 1})
    for name in ("fold.pt", "repeat.pt"):
        blob = torch.load(tmp_path / name, weights_only=True)
        ckpt = blob["tmevolve"][0] if name == "repeat.pt" else blob
        assert ckpt["state_dict"].keys() == result.state_dict.keys()
        assert all(torch.equal(ckpt["state_dict"][k], v) for k, v in result.state_dict.items())
        assert ckpt["model_cfg"] == result.model_cfg and ckpt["out_dim"] == result.out_dim
        df, facts = trace_slide(str(d / "ds.pt"), str(tmp_path / "folds.csv"), str(tmp_path / name),
                                str(d / "concepts.npz"), fold=0)
        assert len(df) > 0 and facts["Q"] == 1


def test_files_holding_an_arbitrary_object_are_refused_by_name(prepared, tmp_path, capsys):
    d, blob = prepared
    evil = tmp_path / "ds.pt"
    torch.save({**blob, "extra": _RunsCode()}, evil)
    with pytest.raises(ValueError, match=rf"^{evil}: holds a print object.*weights_only=True"):
        load_prepared(str(evil))
    model = tmp_path / "fold.pt"
    torch.save({"state_dict": {}, "model_cfg": {}, "method": _RunsCode(), "in_dim": 8, "out_dim": 3}, model)
    pd.DataFrame({"slide_id": [s["slide_id"] for s in blob["slides"]], "fold": 0}).to_csv(tmp_path / "folds.csv",
                                                                                         index=False)
    with pytest.raises(ValueError, match=rf"^{model}: holds a print object"):
        trace_slide(str(d / "ds.pt"), str(tmp_path / "folds.csv"), str(model), str(d / "concepts.npz"), fold=0)
    assert "this ran" not in capsys.readouterr().out


def test_a_damaged_prepared_cohort_is_named(prepared, tmp_path):
    d, _ = prepared
    path = tmp_path / "ds.pt"
    raw = (d / "ds.pt").read_bytes()
    path.write_bytes(raw[:len(raw) // 3])
    with pytest.raises(ValueError, match=rf"^{path}: not a valid torch file .*delete it to rebuild"):
        load_prepared(str(path))
