"""Download one slide of a remote cohort (checksum from the manifest, atomic rename; a row without one is refused
unless wsi.<scale>.remote.allow_unverified) and write its sha256 sidecar, which every job that reads the slide checks."""
from repro.data.sidecar import write_sidecar
from repro.jobs import Job
from repro.wsi.cohort import fetch_slide

job = Job.from_snakemake(snakemake)
fetch_slide(snakemake.input.manifest, snakemake.wildcards.slide, snakemake.output.slide,
            allow_unverified=snakemake.params.allow_unverified)
write_sidecar(snakemake.output.slide)
