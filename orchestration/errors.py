"""The error model: every error a user can cause or fix is a :class:`MarineCosimError`.

Its message is one line that names where the problem is (file and element or key, component and
variable) and, for a misspelt name, the close matches ("did you mean ..."). The command line prints
it as ``marine-cosim <verb>: error: <message>`` and exits with status 2; anything that is not a
``MarineCosimError`` is a bug of ours and is reported as an internal error with the hint to run
again with ``--debug`` for the traceback.

The classes below say which layer found the problem; catch ``MarineCosimError`` to catch them all.
Each also derives from the built-in exception it replaced (ValueError, RuntimeError), so code that
caught those keeps working.
"""
from __future__ import annotations

import difflib
from typing import Iterable


class MarineCosimError(Exception):
    """Base of every user-facing error: a one-line message naming the file, element or key."""


class SystemFileError(MarineCosimError, ValueError):
    """A system file that cannot be read or run: names the file, the element and the value."""


class MissingFmuError(SystemFileError):
    """A system file names an FMU that is not there; ``path`` is where it was looked for (the
    runner builds our own FMUs when they are missing from the checkout's build folder)."""

    def __init__(self, message: str, path=None):
        super().__init__(message)
        self.path = path


class ScenarioError(MarineCosimError, ValueError):
    """A scenario (events) file that cannot be used: names the file, the event and the value."""


class ExecutionError(MarineCosimError, RuntimeError):
    """The co-simulation cannot go on; the message says where and why."""


class SlaveError(MarineCosimError, RuntimeError):
    """An FMU call failed; the message names the instance, the call and the FMU's own log."""


class AlgorithmError(MarineCosimError, ValueError):
    """A master algorithm that cannot run this system with these options (e.g. ECCO without power bonds)."""


class ConvergenceError(ExecutionError):
    """An iteration of the master did not converge; names the input with the largest residual."""


class StepDiscarded(ExecutionError):
    """An FMU discarded a communication step (fmi2Discard, FMI 3.0's discard, fmiDiscard): it could
    not take a step that long. error-control restores the step's start and retries a shorter one;
    the other masters stop with this message."""


#: the status text of a discarded doStep in a SlaveError's message, as every backend passes it on
DISCARD_STATUS = "status 2 (discard)"


class RollbackError(ExecutionError):
    """An FMU cannot go back in time (no state access, or a set_state that does nothing)."""


class BackendError(MarineCosimError, RuntimeError):
    """A backend that cannot be used as asked; the message says why and what to do."""


class CheckpointError(MarineCosimError, RuntimeError):
    """A checkpoint that cannot be written, found or resumed."""


class RunError(MarineCosimError, RuntimeError):
    """A run that cannot start as asked (settings, parameters, missing stop time or step)."""


class SweepError(MarineCosimError, ValueError):
    """A sweep specification that cannot be used."""


class CriteriaError(MarineCosimError, ValueError):
    """An operability criteria file or wave scatter diagram that cannot be used."""


class UsageError(MarineCosimError, ValueError):
    """A command-line value that cannot be used."""


def did_you_mean(name: str, known: Iterable[str], n: int = 3, cutoff: float = 0.6) -> str:
    """``" (did you mean 'a', 'b'?)"`` for the close matches of ``name`` among ``known``, or ""."""
    close = difflib.get_close_matches(name, list(known), n=n, cutoff=cutoff)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def one_line(text: str) -> str:
    """A message on one line: newlines become '; ' and runs of spaces one space."""
    return "; ".join(" ".join(part.split()) for part in str(text).splitlines() if part.strip())
