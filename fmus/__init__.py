"""Thin pythonfmu adapters, one per component, plus the shared FMI support they bundle.

An FMU carries these modules under a private package named after their content hash
(build_fmus.stage_sources), so the FMU never shares them with another FMU or with this checkout."""
