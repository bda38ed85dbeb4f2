"""The master: runs a system's FMUs together (libcosim's split into execution, slaves, algorithms,
observers and manipulators).

* :mod:`.execution`: the compiled connection plan, current values and time, stepping the slaves;
* :mod:`.slaves`: one FMU instance behind the small interface the algorithms use (in-process here,
  other backends in orchestration.backends);
* :mod:`.algorithms`: fixed step (Jacobi, Gauss-Seidel, extrapolation), ECCO, error control with
  rollback, iteration of algebraic loops; :func:`~.algorithms.make_algorithm` by name;
* :mod:`.observers`: results (memory, CSV/Parquet/metadata) and checkpoints;
* :mod:`.manipulators`: scenario events and time signals;
* :mod:`.coupling_check`: will explicit coupling of a heavy attachment to a ship diverge?
"""
