"""Download and unpack the archives of a real image-caption dataset (Karpathy JSON + images); write the sha256
sidecars of the JSON and of the image folder, which the features job checks."""
from pathlib import Path

from repro.data.karpathy import fetch_archive
from repro.data.sidecar import write_sidecar
from repro.jobs import Job
from repro.papers.mdadd.grid import remote_archives

job = Job.from_snakemake(snakemake)
root = Path(snakemake.output.json).parent
archives = remote_archives(job.cfg, f"mdadd.{job.scale}.data")
for archive in archives:
    fetch_archive(archive["url"], root / "archives" / Path(archive["url"]).name, sha256=archive["sha256"],
                  extract_to=root)
for unpacked in (snakemake.output.json, snakemake.params.images):
    if not Path(unpacked).exists():
        raise ValueError(f"the archives of mdadd.{job.scale}.data.archives "
                         f"({', '.join(a['url'] for a in archives)}) did not contain {unpacked}")
    write_sidecar(unpacked)
