"""Download and unpack the archives of a real image-caption dataset (Karpathy JSON + images)."""
from pathlib import Path

from repro.data.karpathy import fetch_archive
from repro.jobs import Job

job = Job.from_snakemake(snakemake)
root = Path(snakemake.output.json).parent
for archive in job.cfg["archives"]:
    fetch_archive(archive["url"], root / "archives" / Path(archive["url"]).name, sha256=archive.get("sha256"),
                  extract_to=root)
if not Path(snakemake.output.json).is_file():
    raise ValueError(f"the archives did not contain {snakemake.output.json}")
