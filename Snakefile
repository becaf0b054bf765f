# neurips26-repro: rebuild the figures and tables of NeurIPS 2026 papers from raw data.
#   snakemake reports/tmevolve_fig3.pdf            one figure (profiles/default supplies --cores)
#   snakemake --config scale=smoke                 everything, at the smallest scale
#   snakemake reports/artifact_evaluation.md       the claim-by-claim report
from snakemake.utils import min_version, validate

min_version("9")


configfile: "config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/cmcboot.smk"
include: "workflow/rules/wsi.smk"
include: "workflow/rules/tmevolve.smk"
include: "workflow/rules/groupfdr.smk"
include: "workflow/rules/rlqgrad.smk"
include: "workflow/rules/mdadd.smk"
include: "workflow/rules/grokcap.smk"
include: "workflow/rules/aereport.smk"


rule all:
    input:
        all_targets(),
    default_target: True
