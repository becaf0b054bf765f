# LLM stage, shared by the LM papers (evalmeta, driftbench, matt, toolgap, incrimination,
# mcpo): dequantise the GGUF models that ship inside PyPI packages into safetensors folders once, so
# that every later job loads one in about a second (repro.llm.load(name) finds resources/llm/<name>/, after checking
# the folder against the sha256 that the cache job writes beside it, resources/llm/<name>.sha256).
# A paper's rule lists rules.llm_cache's output for its model as an input; config.yaml's `llm:`
# block says which backend (local model or OpenAI-compatible server) the LM papers talk to.
import re

from repro.llm.models import SHIPPED_GGUF

validate_block("llm")


rule llm_cache:
    output:
        model="resources/llm/{model}/model.safetensors",
        config="resources/llm/{model}/config.json",
        manifest="resources/llm/{model}/manifest.json",
        folder_sha256=sidecar("resources/llm/{model}"),
    log:
        logs("llm/cache/{model}"),
    benchmark:
        bench("llm/cache/{model}")
    wildcard_constraints:
        model="|".join(map(re.escape, sorted(SHIPPED_GGUF))),
    conda:
        "../../envs/llm.yaml"
    # Dequantisation is mostly single-threaded; and two OpenMP threads spin-wait each other on a busy node.
    threads: 1
    resources:
        mem_mb=3000,
        runtime=15,
    script:
        "../scripts/llm/cache.py"
