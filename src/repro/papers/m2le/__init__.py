"""m2le: M²LE, element-wise merging strength for LoRA continual learning (NeurIPS 2026; abstract only).

HIM's merge lives in ``repro.methods.merging``; the backbone with LoRA in ``model``, the task
sequences in ``synth``, the methods and baselines (registry ``experiment.METHODS``) in ``experiment``.
"""
