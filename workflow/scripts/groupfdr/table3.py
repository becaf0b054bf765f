"""Table 3: null sign balance, FDR and power of the mirrors on the symmetry grid."""
import pandas as pd

from repro.tables import save_csv, save_table
from repro.io import read_json
from repro.jobs import Job
from repro.papers.groupfdr.symmetry import table3

job = Job.from_snakemake(snakemake)
rows = [row for path in snakemake.input.runs for row in read_json(path)["summary"]]

save_csv(pd.DataFrame(rows), snakemake.output.long)
save_table(table3(rows), snakemake.output.csv,
           title="groupfdr: null sign symmetry, FDR and power of the mirrors (Eq. 2.5 threshold; mean +- s.e. "
                 "over replicates; (+ - -) / se: mean per-replicate difference of positive and negative null "
                 "statistics in standard errors)")
