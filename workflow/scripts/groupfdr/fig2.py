"""Fig. 2: the mirror statistics of one replicate and the FDP estimate with tau_q."""
from repro.figures.style import save
from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.groupfdr.figures import fig2, fig2_tables

job = Job.from_snakemake(snakemake)
example = read_json(snakemake.input.run)["example"]
groups, curve, tau = fig2_tables(example["stats"], example["is_true"], job.cfg["figure_q"])
save(fig2(groups, curve, tau, job.cfg["figure_q"]), groups, snakemake.output.pdf)
save_csv(curve, snakemake.output.curve)
