"""Table 2: return per control task and method, with planning compute per decision."""

from repro.tables import save_table
from repro.papers.gtp.control import control_table
from repro.tableio import read_csv

save_table(control_table(read_csv(snakemake.input.tidy)), snakemake.output.csv,
           title="gtp: control return per task and method (mean +- s.e. over seeds)")
