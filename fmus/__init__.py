"""Thin pythonfmu adapters, one per component, plus the shared FMI support they bundle."""
from components import BundledCopies

# several of our FMUs in one process share this package: find each one's bundled modules
__path__ = BundledCopies(__name__, __path__)
