"""Write reports/artifact_evaluation.{md,html} from the claim files, metrics and benchmarks."""
from repro.aereport import collect, load_papers, write_report
from repro.jobs import Job

job = Job.from_snakemake(snakemake)
entries = collect(
    load_papers(snakemake.input.papers),
    built=snakemake.params.built,
    claims_dir=snakemake.params.claims_dir,
    schema_path=snakemake.input.schema,
    results_dir="results",
    benchmarks_dir="benchmarks",
)
write_report(entries, scale=job.scale, markdown_path=snakemake.output.markdown, html_path=snakemake.output.html,
             reports_dir="reports")
