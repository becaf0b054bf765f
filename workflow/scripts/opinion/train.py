"""opinion_train: train one parameter-shared agent (with or without other-play) and score it on the evaluation games."""
from repro.config import from_dict
from repro.data.sidecar import verify_inputs
from repro.io import atomic_path
from repro.jobs import Job
from repro.papers.opinion.experiment import TrainConfig, train_and_evaluate
from repro.papers.opinion.graphs import load_edge_list

job = Job.from_snakemake(snakemake)
verify_inputs(snakemake.input)  # a fetched input is checked against its sidecar first
wc = snakemake.wildcards
cfg = from_dict(TrainConfig, job.cfg, f"opinion.{job.scale}.train")
edges = getattr(snakemake.input, "edges", None)  # source: remote, static family: the fetched graph
# pairing: the graph and the evaluation games depend on the seed unit only; marl and marl_noop share the training seed
weights, record = train_and_evaluate(
    cfg, wc.family, float(wc.alpha), wc.variant,
    seed=job.seed_for("opinion_train", family=wc.family, alpha=wc.alpha, seed=wc.seed),
    graph_seed=job.seed_for("opinion_graph", seed=wc.seed),
    eval_seed=job.seed_for("opinion_eval", family=wc.family, seed=wc.seed),
    extra_graphs={"remote": load_edge_list(edges)} if edges else None)
with atomic_path(snakemake.output.model) as tmp:
    tmp.write_bytes(weights)
job.write_metrics(snakemake.output.record, {**record, "family": wc.family, "alpha": float(wc.alpha),
                                            "method": wc.variant, "seed": int(wc.seed)})
