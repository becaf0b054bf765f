"""Table 3: the value diagnostic (rank correlation with V*, greedy direction, reward outputs) over seeds."""
from repro.tables import save_table
from repro.io import read_json
from repro.papers.gtp.diagnostics import diagnostic_table

diags = {int(p.rsplit("seed", 1)[1].split(".")[0]): read_json(p) for p in snakemake.input.diags}
save_table(diagnostic_table(diags), snakemake.output.csv,
           title="gtp: learned value vs exact optimal value (Spearman, greedy step closer) and reward model outputs, "
                 "mean +- s.e. over seeds")
