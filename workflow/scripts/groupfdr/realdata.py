"""Table 2: which series' lags predict the target, on a real long-format table."""
from repro.data.grouped_tables import load_grouped_table
from repro.tables import save_table
from repro.jobs import Job
from repro.papers.groupfdr.experiment import real_data_table

job = Job.from_snakemake(snakemake)
cfg = job.cfg
design = load_grouped_table(snakemake.input.table, target=cfg["target"], lags=cfg["lags"])
table = real_data_table(design, cfg["methods"], cfg["qs"], n_draws=cfg["n_draws"], seed=job.seed,
                        method_options=cfg.get("method_options"))
save_table(table, snakemake.output.csv,
           title=f"groupfdr on {snakemake.input.table}: lags 1..{cfg['lags']} of each series as groups, target {cfg['target']}")
