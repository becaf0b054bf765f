"""Fig. 3: one test slide's regions before/after evolution, flux and concept response; every run against the best baseline."""

from repro.claims import load_claims
from repro.figures.style import save
from repro.jobs import Job
from repro.papers.tmevolve.experiment import collect_summaries, slide_thumbnail, survival_points, trace_slide
from repro.papers.tmevolve.figures import build_fig3, fig3_table

job = Job.from_snakemake(snakemake)
patches, facts = trace_slide(
    snakemake.input.dataset,
    snakemake.input.folds,
    snakemake.input.model,
    snakemake.input.concepts,
    fold=job.cfg["figure"]["fold"],
    slide_index=job.cfg["figure"]["slide_index"],
)
cohort = snakemake.params.cohort
summaries = collect_summaries(
    {p: cohort for p in snakemake.input.train}, {snakemake.input.oracles: cohort}, expected=list(snakemake.params.runs)
)
claims = load_claims(snakemake.input.claims, snakemake.input.schema)
points = survival_points(summaries[cohort]["survival"], list(snakemake.params.methods), claims)
thumb = slide_thumbnail(snakemake.params.slides_dir, facts["slide_id"])
save(build_fig3(patches, points, facts, thumb), fig3_table(patches, points), snakemake.output.fig)
