"""Two defects the documented commands ran into (tests/docs/test_docs_commands.py checks the docs):
``plot`` refused ``--variables``, the spelling every other verb uses for choosing variables, and a
command whose output went into a pipe closed early (``marine-cosim info X | head``) ended as an
"internal error ... report it"."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from orchestration.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def _results(tmp_path: Path) -> Path:
    csv = tmp_path / "results.csv"
    rows = "\n".join(f"{0.1 * i},{i},{2 * i},{-i}" for i in range(5))
    csv.write_text("time,payload.position[0],payload.position[1],cable.end_b.tension\n" + rows + "\n")
    return csv


def test_plot_takes_variables_as_positionals_or_with_variables(tmp_path, capsys):
    csv = _results(tmp_path)
    assert main(["plot", str(csv), "payload.position", "--out", str(tmp_path / "a")]) == 0
    assert main(["plot", str(csv), "--variables", "payload.position", "--out", str(tmp_path / "b")]) == 0
    written = capsys.readouterr().out.split()
    # the same selection either way: only the payload's figure, not the cable's
    assert [Path(p).name for p in written] == ["payload.png", "payload.png"], written
    assert main(["plot", str(csv), "payload.position", "--variables", "cable.end_b.tension",
                 "--out", str(tmp_path / "c")]) == 0
    assert sorted(Path(p).name for p in capsys.readouterr().out.split()) == ["cable.png", "payload.png"]


def test_a_reader_closing_the_pipe_is_no_internal_error():
    command = [sys.executable, "-m", "orchestration.cli.main", "info", "adapter:rigid_body"]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()                      # as `| head` does, here before the first line is written
    _, err = proc.communicate(timeout=120)
    assert b"internal error" not in err and b"Traceback" not in err and b"Exception ignored" not in err, err
    assert proc.returncode == 141
