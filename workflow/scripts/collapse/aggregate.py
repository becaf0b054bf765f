"""collapse_aggregate: survival over the injection grid, LLC and nullity per extinction, curvature vs weight;
and the neural part's per-seed changes and VaDE's loss prediction (metrics["neural"])."""

from repro.tables import save_csv
from repro.io import read_json
from repro.jobs import Job
from repro.papers.collapse.experiment import summarise
from repro.papers.collapse.neural import neural_generations_table, summarise_neural

job = Job.from_snakemake(snakemake)
records = [read_json(path) for path in snakemake.input.runs]
metrics, generations = summarise(records, survival_level=job.cfg["survival_level"])
neural = [read_json(path) for path in snakemake.input.neural]
metrics["neural"] = summarise_neural(neural) if neural else None
save_csv(generations, snakemake.output.generations)
save_csv(neural_generations_table(neural), snakemake.output.neural)
job.write_metrics(snakemake.output.metrics, metrics)
