"""Download and unpack the archives of a real image-caption dataset (Karpathy JSON + images); write the sha256
sidecars of the JSON and of the image folder, which the features job checks."""
from pathlib import Path

from repro.data.karpathy import fetch_dataset
from repro.data.sidecar import write_sidecar
from repro.jobs import Job
from repro.papers.mdadd.grid import remote_archives

job = Job.from_snakemake(snakemake)
out = snakemake.output
where = f"mdadd.{job.scale}.data.archives"
fetch_dataset(remote_archives(job.cfg, f"mdadd.{job.scale}.data"), Path(out.json).parent, [out.json, out.images],
              where=where)
# Snakemake marks the time of a directory() output with an empty .snakemake_timestamp inside it once the job
# has ended; made now, so that the folder's sha256 recorded next still holds after Snakemake sets its time
(Path(out.images) / ".snakemake_timestamp").touch()
for fetched in (out.json, out.images):
    write_sidecar(fetched)
