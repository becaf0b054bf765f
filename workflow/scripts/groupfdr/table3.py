"""Table 3: null sign balance, FDR and power of the mirrors on the symmetry grid (issue 18)."""
from repro.figures.style import save_csv, save_table
from repro.io import read_json
from repro.jobs import Job
from repro.papers.groupfdr.symmetry import table3

job = Job.from_snakemake(snakemake)  # noqa: F821
rows = [row for path in snakemake.input.runs for row in read_json(path)["summary"]]  # noqa: F821
import pandas as pd  # noqa: E402

save_csv(pd.DataFrame(rows), snakemake.output.long)  # noqa: F821
save_table(table3(rows), snakemake.output.csv,  # noqa: F821
           title="groupfdr: null sign symmetry, FDR and power of the mirrors (Eq. 2.5 threshold; mean +- s.e. "
                 "over replicates; (+ - -) / se: mean per-replicate difference of positive and negative null "
                 "statistics in standard errors)")
