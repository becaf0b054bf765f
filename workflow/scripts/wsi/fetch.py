"""Download one slide of a remote cohort (checksum from the manifest, atomic rename)."""
from repro.jobs import Job
from repro.wsi.cohort import fetch_slide

job = Job.from_snakemake(snakemake)
fetch_slide(snakemake.input.manifest, snakemake.wildcards.slide, snakemake.output.slide)
