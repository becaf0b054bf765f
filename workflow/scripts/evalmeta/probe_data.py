"""evalmeta_probe_data: fresh held-out documents of each corpus (a seed of their own, training duplicates
dropped) and the knowledge statement pairs, for the probe of the tuned adapters."""

from repro.io import read_json, write_json
from repro.jobs import Job
from repro.papers.evalmeta.probe import probe_documents, statement_pairs

job = Job.from_snakemake(snakemake)
training = read_json(snakemake.input.data)["corpora"]
docs = probe_documents(job.cfg["corpus"], job.cfg["probe"]["docs_per_trait"], job.seed_for("evalmeta-probe-docs"),
                       training)
write_json(snakemake.output.data, {"documents": docs, "pairs": statement_pairs()})
