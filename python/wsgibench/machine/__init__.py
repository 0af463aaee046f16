"""The machine under the benchmark: processes, cgroups and CPUs, the sampler, doctor, metadata, venvs."""
