"""opinion_baselines: every scripted baseline on each seed's evaluation games (the agents' games)."""
from repro.config import from_dict
from repro.jobs import Job
from repro.papers.opinion.experiment import TrainConfig, evaluate_baselines

job = Job.from_snakemake(snakemake)
wc = snakemake.wildcards
cfg = from_dict(TrainConfig, job.cfg["train"], f"opinion.{job.scale}.train")
records = [{**res, "family": wc.family, "alpha": float(wc.alpha), "method": name, "seed": int(s)}
           for s in job.cfg["seeds"]
           for name, res in evaluate_baselines(job.cfg["baselines"], cfg, wc.family, float(wc.alpha),
                                               eval_seed=job.seed_for("opinion_eval", family=wc.family, seed=str(s)),
                                               graph_seed=job.seed_for("opinion_graph", seed=str(s))).items()]
job.write_metrics(snakemake.output.records, {"records": records})
