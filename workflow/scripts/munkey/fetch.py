"""Fetch the remote regime's image set (image-folder archive or .npz), check its sha256, write one .npz and its sidecar."""
from repro.data.image_folder import fetch_image_set
from repro.data.sidecar import write_sidecar
from repro.jobs import Job

job = Job.from_snakemake(snakemake)
spec = job.cfg["remote"]
fetch_image_set(spec["url"], spec["sha256"], snakemake.output.data, size=spec.get("image_size", 16),
                mode=spec.get("mode", "RGB"))
write_sidecar(snakemake.output.data)  # checked by every job that reads it
