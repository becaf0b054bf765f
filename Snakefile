# neurips26-repro: rebuild the figures and tables of NeurIPS 2026 papers from raw data.
#   snakemake reports/tmevolve_fig3.pdf            one figure (profiles/default supplies --cores)
#   snakemake --config scale=smoke                 everything, at the smallest scale
#   snakemake reports/artifact_evaluation.md       the claim-by-claim report
import sys
from pathlib import Path

from snakemake.utils import min_version, validate

min_version("9")

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
from repro.config import load_yaml_file

# Snakemake's message for a config file that does not parse names no line: read it first.
if Path("config.yaml").is_file():
    load_yaml_file("config.yaml")


configfile: "config.yaml"


# The presets (workflow/presets/<key>.yaml) go beneath what config.yaml and the command line set.
include: "workflow/rules/common.smk"


validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


# Shared stages, then every paper of workflow/papers.yaml that has a rule file: adding a paper
# touches only its own files (rules/<key>.smk, its preset, schema, claims, scripts, src/repro/papers/<key>/).
for rules_file in rule_files():

    include: rules_file


rule all:
    default_target: True
    input:
        all_targets(),


# One target per paper: `snakemake paper_tmevolve` builds that paper's figures, tables and metrics.
for paper_key, paper_targets in PAPER_TARGETS.items():

    rule:
        name:
            f"paper_{paper_key}"
        input:
            paper_targets,
