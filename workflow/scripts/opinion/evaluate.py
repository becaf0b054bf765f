"""opinion_evaluate: per-seed effects into metrics.json; the results and attention tables; Table 1."""
from repro.tables import save_csv, save_table
from repro.io import read_json
from repro.jobs import Job
from repro.papers.opinion.experiment import aggregate, table1, training_curves

job = Job.from_snakemake(snakemake)
inp, out = snakemake.input, snakemake.output
records = [read_json(p) for p in inp.agents] + [r for p in inp.baselines for r in read_json(p)["records"]]
metrics, results, attention = aggregate(records, alphas=job.cfg["alphas"], ablation_alphas=job.cfg["ablation_alphas"],
                                        attention_alpha=job.cfg["attention_alpha"])
save_csv(results, out.results)
save_csv(attention, out.attention)
save_table(table1(results), out.table1, title="opinion Table 1: every method per graph family and alpha (means over seeds)")
job.write_metrics(out.metrics, metrics)
curves, summary = training_curves([read_json(p) for p in inp.agents])
save_csv(curves, out.training)
save_table(summary, out.training_table, title="opinion training diagnostics: mean over seeds of the PPO batch's "
           "return, policy entropy and final-step wait share at iteration @i")
