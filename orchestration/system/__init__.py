"""The system layer: what a co-simulation is made of, read from and written to system files.

* :mod:`.model`: :class:`~.model.System`, :class:`~.model.Component`, :class:`~.model.Connection`;
* :mod:`.files`: :func:`~.files.load_system` / :func:`~.files.save_system` by file kind;
* :mod:`.ssp` (SSP 1.0 .ssd/.ssp) and :mod:`.osp` (OspSystemStructure.xml): readers and writers;
* :mod:`.fmu_info` (variables, types, units of an FMU) and :mod:`.units` (SI exponents, conversions);
* :mod:`.backend_choice`: where the file asks the system to run (the ``mc:Backend`` annotation);
* :mod:`.validation`: every check of a system against its FMUs before a run; :mod:`.graphs`.

Nothing here runs an FMU.
"""
