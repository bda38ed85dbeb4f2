"""Runs: the one run path (:mod:`.run`) and what is built on it -- the Python API (:mod:`.api`), one
FMU alone (:mod:`.single_fmu`), sweeps (:mod:`.sweep`), the reference scenarios (:mod:`.reference`),
the progress display (:mod:`.progress`) and plots (:mod:`.plotting`)."""
