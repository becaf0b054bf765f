"""opinion_fetch: download the user's edge list (checksummed URL), validate it before it lands, and write its sha256
sidecar, which every job that reads the edge list checks."""
import logging

from repro.data.fetch import fetch_url
from repro.data.sidecar import write_sidecar
from repro.jobs import Job
from repro.papers.opinion.graphs import load_edge_list

job = Job.from_snakemake(snakemake)
graphs = []
# into <edges>.part (a cut transfer resumes there on the next run); a malformed edge list is an error
# here, and nothing lands where training reads
fetch_url(job.cfg["url"], snakemake.output.edges, sha256=job.cfg["sha256"],
          check=lambda path: graphs.append(load_edge_list(path)))
write_sidecar(snakemake.output.edges)
logging.getLogger("opinion_fetch").info("edge list %s: %d nodes, %d directed edges", job.cfg["url"], graphs[0].n,
                                        len(graphs[0].src))
