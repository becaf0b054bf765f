"""Write statsmodels' macrodata as a long (time, group, value) CSV: the format of a user's own table."""
from repro.data.grouped_tables import macrodata_frame
from repro.io import atomic_path
from repro.jobs import Job

job = Job.from_snakemake(snakemake)
with atomic_path(snakemake.output.csv) as tmp:
    macrodata_frame().to_csv(tmp, index=False, float_format="%.10g")
