"""Measure the cost of the cross-modal second moment: SOCM's Gram form vs the full moment matrix."""
import pandas as pd

from repro.tables import save_csv
from repro.jobs import Job
from repro.methods.distill.mdadd import measure_moment_cost

job = Job.from_snakemake(snakemake)
c = job.cfg
rows = measure_moment_cost(c["dims"], n_real=c["n_real"], n_syn=c["n_syn"], reps=c["reps"], seed=job.seed)
save_csv(pd.DataFrame(rows), snakemake.output.cost)
