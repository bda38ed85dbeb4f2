"""The ``marine-cosim`` command (:mod:`.main`): user verbs only -- run, sweep, validate, info, plot,
convert, build, simulate, demo."""
