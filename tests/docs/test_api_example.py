"""The Python API example of docs/getting_started.md runs as printed: 10 s of the offshore lift from a
script, its results as a pandas DataFrame with units."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "getting_started.md"


def api_example() -> str:
    text = PAGE.read_text()
    marker = text.index("<!-- tests/docs/test_api_example.py runs this block -->")
    return re.search(r"```python\n(.*?)```", text[marker:], re.S).group(1)


@pytest.mark.slow
def test_the_getting_started_api_example_runs(monkeypatch, capsys):
    from orchestration.runs.reference import MODELS, ensure_fmus

    ensure_fmus(MODELS["offshore_lift"], log=lambda m: None)       # what `marine-cosim build` does
    monkeypatch.chdir(ROOT)                                          # the example's paths are the checkout's
    namespace: dict = {}
    exec(compile(api_example(), str(PAGE), "exec"), namespace)
    df, res = namespace["df"], namespace["res"]
    assert df.index.name == "time" and df.index[-1] == pytest.approx(10.0)
    assert list(df.columns) == ["ship.position[2]", "cable.winch.tension", "payload.position[2]"]
    assert df.attrs["units"] == {"ship.position[2]": "m", "cable.winch.tension": "N", "payload.position[2]": "m",
                                 "time": "s"}
    # the payload hangs in air on the wire at the start: the tension is its weight and the wire's
    assert df["cable.winch.tension"].iloc[0] == pytest.approx(99.05e3, rel=0.01)
    assert res.metadata["run"]["macro_steps"] == 400
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "N" and "x real time" in out
