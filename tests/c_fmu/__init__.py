"""A plain-C FMI 2.0 co-simulation FMU (Oscillator) that stands in for a third-party FMU."""
from .build import FmuBuildError, build_oscillator_fmu

__all__ = ["FmuBuildError", "build_oscillator_fmu"]
