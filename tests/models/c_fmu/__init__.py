"""Plain-C FMI 2.0 co-simulation FMUs that stand in for third-party FMUs: the Oscillator and a
ship with OSP vessel-style names (OsvSeakeeper, for the ship swap)."""
from .build import FmuBuildError, build_oscillator_fmu, build_third_party_ship_fmu

__all__ = ["FmuBuildError", "build_oscillator_fmu", "build_third_party_ship_fmu"]
