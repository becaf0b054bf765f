"""incrimination_testbed: every scripted agent of one planted motive, investigated at each faithfulness and sample size."""

from repro.jobs import Job
from repro.papers.incrimination.experiment import simulate_motive

job = Job.from_snakemake(snakemake)
motive = snakemake.wildcards.motive
job.write_metrics(snakemake.output.runs, {"motive": motive,
                                          **simulate_motive(motive, job.cfg, seed=job.seed_for("incrimination-testbed", motive=motive))})
