"""opinion_fetch: download the user's edge list (checksummed URL) and validate it before it lands."""
import logging

from repro.data.fetch import fetch_url
from repro.io import atomic_path
from repro.jobs import Job
from repro.papers.opinion.graphs import load_edge_list

job = Job.from_snakemake(snakemake)
with atomic_path(snakemake.output.edges) as tmp:
    fetch_url(job.cfg["url"], tmp, sha256=job.cfg["sha256"])
    graph = load_edge_list(tmp)  # a malformed edge list is an error here, and nothing lands where training reads
logging.getLogger("opinion_fetch").info("edge list %s: %d nodes, %d directed edges", job.cfg["url"], graph.n,
                                        len(graph.src))
