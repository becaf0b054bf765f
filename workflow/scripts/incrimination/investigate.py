"""incrimination_investigate: the protocol applied to one agent under investigation in every environment."""

from repro.jobs import Job
from repro.papers.incrimination.experiment import build_agent, investigate_agent

job = Job.from_snakemake(snakemake)
agent = build_agent(job.cfg, device=snakemake.params.device)
# the same environment seeds for every agent: agents are compared on paired episodes
runs = investigate_agent(agent, job.cfg, seed=job.seed_for("incrimination-agent"))
job.write_metrics(snakemake.output.runs, {"agent": job.cfg["agent"]["name"], "runs": runs,
                                          "unparsed": getattr(agent, "unparsed", 0)})
