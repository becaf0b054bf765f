"""Table 2: return per control task and method, with planning compute per decision."""
import pandas as pd

from repro.tables import save_table
from repro.papers.gtp.control import control_table

save_table(control_table(pd.read_csv(snakemake.input.tidy)), snakemake.output.csv,
           title="gtp: control return per task and method (mean +- s.e. over seeds)")
