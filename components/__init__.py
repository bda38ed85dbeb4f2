"""Pure physics of the marine-cosim components: numpy/scipy only, no FMI."""
from __future__ import annotations

import os
import sys


class BundledCopies(list):
    """``__path__`` of a package that several of our FMUs bundle, each with only the modules it needs
    (build_fmus.py).

    An FMI host that loads several of them into one Python process (libcosim, FMPy, our in-process
    master) has one ``sys.modules``: the package is the first FMU's, and that FMU's folder may even be
    deleted when its instance ends. So a submodule is also looked for in the same package folder of
    every other ``sys.path`` entry -- each FMU's ``resources/`` is one -- and is found in the FMU that
    brought it. The package's own folder stays first."""

    def __init__(self, name: str, own) -> None:
        super().__init__(own)
        self._name = name
        self._seen: tuple | None = None

    def __iter__(self):
        entries = tuple(sys.path)
        if entries != self._seen:          # sys.path grows as FMUs load; look again only then
            self._seen = entries
            for entry in entries:
                folder = os.path.join(entry or os.curdir, self._name)
                if folder not in self and os.path.isfile(os.path.join(folder, "__init__.py")):
                    self.append(folder)
        return super().__iter__()


__path__ = BundledCopies(__name__, __path__)
