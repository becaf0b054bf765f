"""Fetch the user's leaderboard dump (a local path or a checksummed URL), validate it before it lands, and write its
sha256 sidecar, which every job that reads the dump checks."""
from pathlib import Path

from repro.data.fetch import fetch_url
from repro.data.sidecar import write_sidecar
from repro.jobs import Job
from repro.papers.modellens.real import read_real

job = Job.from_snakemake(snakemake)
url = job.cfg["url"]
if "://" not in url:
    source = Path(url).expanduser().resolve()
    if not source.is_file():
        raise FileNotFoundError(f"modellens.remote.url: {url} is not a file")
    url = source.as_uri()
# into <dump>.part (a cut transfer resumes there on the next run); a malformed dump is an error here,
# and nothing lands where later rules read
fetch_url(url, snakemake.output.dump, sha256=job.cfg["sha256"], check=read_real)
write_sidecar(snakemake.output.dump)
