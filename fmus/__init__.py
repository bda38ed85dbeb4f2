"""Thin pythonfmu adapters, one per component, plus the shared FMI support they bundle."""
