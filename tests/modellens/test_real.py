"""source: remote without the workflow: a dump of a synthetic leaderboard read back through the real path
(held-out records as truth), the name heuristics, refused dumps, the ablation switches and the ablation table."""

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

import repro.methods.modellens as mlm
from repro.io import read_json, write_json
from repro.papers.modellens.experiment import SPLITS, ablation_table, evaluate_truth, hashed_text_embedding
from repro.papers.modellens.real import _family, _size, prepare_real, read_real, real_split
from repro.papers.modellens.synth import LeaderboardConfig, leaderboard_dump, simulate_leaderboard

FRACS = {"unseen_model_frac": 0.25, "unseen_dataset_frac": 0.25, "heldout_record_frac": 0.15}


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    lb = simulate_leaderboard(LeaderboardConfig(n_models=60, n_datasets=12), 4)
    path = tmp_path_factory.mktemp("dump") / "dump.csv"
    leaderboard_dump(lb).to_csv(path, index=False)
    return lb, read_real(path)


def test_dump_values_turned_higher_is_better_follow_the_planted_quality(planted):
    lb, real = planted
    assert len(real.records) == len(lb.records)
    m_of = {n: i for i, n in enumerate(lb.models.model)}
    q = lb.quality[[m_of[n] for n in real.models.model.iloc[real.records.m]], real.groups.d.iloc[real.records.g]]
    rho = {real.groups.group.iloc[g]: spearmanr(part.value, q[part.index]).statistic
           for g, part in real.records.groupby("g") if len(part) >= 5}
    # within each (dataset, metric) group the values order the models as the truth does (a wrong direction
    # would give about -0.9; record noise and clipping at q = 0.999 keep it below 1)
    assert min(rho.values()) > 0.8 and np.mean(list(rho.values())) > 0.9, rho


def test_split_evaluates_only_held_out_records(planted):
    _, real = planted
    cfg = {"real": FRACS, "ks": [10]}
    split, problem, pairs, _ = prepare_real(real, cfg, 7, hashed_text_embedding)
    train = {(int(m), g) for g, ms, _ in problem.train for m in ms}
    assert not problem.model_seen.all() and problem.model_seen.any()
    assert all(problem.model_seen[m] for m, _ in train)                  # cold models never train
    held = {(int(m), int(g)): v for m, g, v, s in zip(real.records.m, real.records.g, real.records.value, split)
            if s != "train"}
    n = 0
    for s in SPLITS:
        for g, ms, q in pairs[s]:
            for m, v in zip(ms, q):
                assert (int(m), g) not in train and held[(int(m), g)] == v
                assert problem.model_seen[m] == s.startswith("seen")
                n += 1
    assert n > 0 and {s for s in SPLITS if pairs[s]} == set(SPLITS)


def test_splits_differ_by_seed_and_repeat_for_one(planted):
    _, real = planted
    a, b, c = real_split(real, FRACS, 3), real_split(real, FRACS, 3), real_split(real, FRACS, 4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])


def test_metadata_from_names():
    assert _family("meta-llama/Llama-2-7b-hf") == "meta-llama" and _family("qwen2-7b-instruct") == "qwen2"
    assert _size("meta-llama/Llama-2-7b-hf") == 7.0 and _size("Qwen2.5-1.5B-Instruct") == 1.5
    assert np.isnan(_size("gpt2")) and np.isnan(_size("bert-base"))


@pytest.mark.parametrize("text, message", [
    ("model,dataset,metric,value\na,d,accuracy,0.1\na,d,accuracy,0.2\nb,e,accuracy,0.3\nc,e,accuracy,0.3\n"
     "e,e,accuracy,0.3\n", "has more than one value"),
    ("model,dataset,metric,value\na,d,accuracy,0.1\nb,d,accuracy,0.2\n", "at least 4 models and 2 datasets"),
    ("model,dataset,metric,value,size_b\na,d,accuracy,0.1,big\n", "has size_b 'big'"),
    ("model,dataset,metric,value\n,d,accuracy,0.1\n", "row 2 has no model"),
])
def test_bad_dumps_are_refused_by_name(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_real(path)


@pytest.fixture(scope="module")
def problem(planted):
    _, real = planted
    return prepare_real(real, {"real": FRACS, "ks": [10]}, 2, hashed_text_embedding)[1]


def test_no_text_ablation_ignores_the_text(problem):
    cfg = mlm.ModelLensConfig(steps=20, use_text=False)
    a = mlm.predict_modellens(*mlm.train_modellens(problem, cfg, 0)[:2])
    shuffled = type(problem)(**{**problem.__dict__, "model_text": np.random.default_rng(0).random(problem.model_text.shape),
                                "group_text": np.random.default_rng(1).random(problem.group_text.shape)})
    b = mlm.predict_modellens(*mlm.train_modellens(shuffled, cfg, 0)[:2])
    c = mlm.predict_modellens(*mlm.train_modellens(shuffled, mlm.ModelLensConfig(steps=20), 0)[:2])
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(b, c)                           # with text, the (shuffled) text changes the scores


def test_no_prior_ablation_leaves_the_prior_head_untrained(problem):
    cfg = mlm.ModelLensConfig(steps=10, use_prior=False)
    torch.manual_seed(0)
    fresh = mlm.ModelLensNet(cfg, problem.n_models, problem.n_groups, int(problem.group_metric.max()) + 1,
                             int(problem.model_family.max()) + 1, problem.model_text.shape[1])
    trained = mlm.train_modellens(problem, cfg, 0)[0]
    torch.testing.assert_close(trained.prior_head.weight, fresh.prior_head.weight, rtol=0, atol=0)
    with_prior = mlm.train_modellens(problem, mlm.ModelLensConfig(steps=10), 0)[0]
    assert not torch.equal(with_prior.prior_head.weight, fresh.prior_head.weight)


def test_ablation_table_pairs_by_seed():
    def run(ds, val):
        return {"data_seed": ds, "method_seed": ds + 1, "metrics": {"modellens": {"unseen_unseen": {"ndcg@10": val, "tau_top": val}}}}

    runs = {0: run(10, 0.8), 1: run(11, 0.6)}
    abl = {s: {"data_seed": r["data_seed"], "method_seed": r["method_seed"],
               "metrics": {"no_text": {"unseen_unseen": {"ndcg@10": v, "tau_top": v}}}} for s, (r, v) in
           enumerate(zip(runs.values(), (0.7, 0.4)))}
    table = ablation_table(runs, abl, 10)
    row = table[(table.variant == "no_text") & (table.metric == "ndcg@10")].iloc[0]
    assert row["diff"] == pytest.approx(-0.15) and row["mean"] == pytest.approx(0.55)
    abl[1]["method_seed"] = 99
    with pytest.raises(ValueError, match="another method seed"):
        ablation_table(runs, abl, 10)


def test_ablation_table_leaves_out_a_seed_without_a_value_read_back_from_its_json(tmp_path):
    """NDCG@10 of a split whose groups all have fewer than 10 candidates is undefined (NaN, evaluate_truth), null in
    the seed's JSON: the NDCG@10 rows are over the other seeds, paired, with n_seeds saying how many; tau_top,
    defined everywhere, keeps every seed."""
    rng = np.random.default_rng(0)
    runs, abl = {}, {}
    for s, n_candidates in enumerate((12, 5, 12)):  # seed 1: groups of 5 candidates, no NDCG@10
        truth = [rng.normal(size=n_candidates) for _ in range(4)]
        full = evaluate_truth([(q, q + 0.3 * rng.normal(size=q.size)) for q in truth], [10])
        text = evaluate_truth([(q, q + 1.0 * rng.normal(size=q.size)) for q in truth], [10])
        runs[s] = {"data_seed": s, "method_seed": s + 10, "metrics": {"modellens": {"unseen_unseen": full}}}
        abl[s] = {"data_seed": s, "method_seed": s + 10, "metrics": {"no_text": {"unseen_unseen": text}}}
    assert np.isnan(runs[1]["metrics"]["modellens"]["unseen_unseen"]["ndcg@10"])
    write_json(tmp_path / "runs.json", {"runs": runs, "ablations": abl})
    back = read_json(tmp_path / "runs.json")
    table = ablation_table(*({int(s): r for s, r in back[k].items()} for k in ("runs", "ablations")), 10)
    ndcg = table[table.metric == "ndcg@10"].set_index("variant")
    value = {(m, s): (runs if m == "modellens" else abl)[s]["metrics"][m]["unseen_unseen"]["ndcg@10"]
             for m in ("modellens", "no_text") for s in (0, 2)}
    assert ndcg.loc["full", "n_seeds"] == ndcg.loc["no_text", "n_seeds"] == 2
    assert ndcg.loc["full", "mean"] == pytest.approx((value["modellens", 0] + value["modellens", 2]) / 2)
    assert ndcg.loc["no_text", "diff"] == pytest.approx(
        np.mean([value["no_text", s] - value["modellens", s] for s in (0, 2)]))
    assert (table[table.metric == "tau_top"].n_seeds == 3).all()
