"""Table 4: TD3+BC's training diagnostics per task (last window, late changes), mean +- s.e. over seeds."""
from repro.tables import save_table
from repro.io import read_json
from repro.papers.gtp.diagnostics import td3bc_table

save_table(td3bc_table([read_json(p) for p in snakemake.input.diags]), snakemake.output.csv,
           title="gtp: TD3+BC training diagnostics (last window; relative change over the last quarter), "
                 "mean +- s.e. over seeds")
