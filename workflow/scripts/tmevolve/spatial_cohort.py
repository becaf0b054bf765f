"""The spatial cohort (version 2): bags whose labels are set by the arrangement of the patches, in the WSI contract layout."""
from repro.jobs import Job
from repro.papers.tmevolve.synth import generate_spatial_cohort, write_contract_files

job = Job.from_snakemake(snakemake)
bags, manifest = generate_spatial_cohort(job.cfg["spatial"], seed=job.seed)
write_contract_files(bags, manifest, snakemake.output.manifest, snakemake.output.bags, encoder="type_prototypes",
                     patch_size=job.cfg["spatial"].get("patch_size", 224), cohort="spatial")
