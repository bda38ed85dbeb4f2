"""What a user types and writes, when it is wrong: scenario events with times or values that cannot
be, an output folder that cannot be one, run settings that would do nothing or something else than
asked, and a system file whose own settings (algorithm, options, scenario) run would refuse.

Each: exit status 2 (1 for validate) and one line naming the file, the event or the option, before
an FMU is instantiated; never an internal error, a silent no-op or results from a mistaken input.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from orchestration.cli.main import main
from orchestration.system.model import Component, System
from orchestration.system.ssp import write_ssp

HOOK = 'model: p, variable: "attachment1.force[2]"'


@pytest.fixture
def hook(payload_fmu, tmp_path) -> Path:
    s = System("hook", stop_time=1.0, base_step=0.1)
    s.add_component(Component("p", payload_fmu, {"mass": 1000.0}))
    return write_ssp(s, tmp_path / "hook.ssd")


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "internal error" not in err, err
    return err


SCENARIOS = {
    # YAML reads .nan, nan and true as numbers float() takes: an event that never fires, or fires at 1 s
    "nan time": ("events: [{time: .nan, %s, value: 1.0}]" % HOOK, "events[0]: time nan is not a finite number"),
    "nan time as text": ("events: [{time: nan, %s, value: 1.0}]" % HOOK, "time 'nan' is not a finite number"),
    "infinite time": ("events: [{time: .inf, %s, value: 1.0}]" % HOOK, "time inf is not a finite number"),
    "boolean time": ("events: [{time: true, %s, value: 1.0}]" % HOOK, "time True is not a number"),
    "negative time": ("events: [{time: -1, %s, value: 1.0}]" % HOOK,
                      "events[0]: time -1 s is before the start time of hook (0 s)"),
    "text value": ("events: [{time: 0, %s, value: heavy}]" % HOOK,
                   "events[0]: value for p.attachment1.force[2]: 'heavy' is not a number (Real)"),
    "text bias": ("events: [{time: 0, %s, action: bias, value: x}]" % HOOK, "'x' is not a number (Real)"),
    "boolean for a Real": ("events: [{time: 0, %s, value: true}]" % HOOK, "True is not a number (Real)"),
    "list value": ("events: [{time: 0, %s, value: [1, 2]}]" % HOOK, "value [1, 2] is not one value"),
    "null value": ("events: [{time: 0, %s, value: null}]" % HOOK, "the value is empty (null)"),
    "infinite value": ("events: [{time: 0, %s, value: 1e400}]" % HOOK, "inf is not a finite number"),
    "nan value": ("events: [{time: 0, %s, value: .nan}]" % HOOK, "nan is not a finite number"),
    "list variable": ("events: [{time: 0, model: p, variable: [a], value: 1}]", "variable ['a'] is not a name"),
    "text end": ("end: soon\nevents: []", "end 'soon' is not a number"),
    "nan end": ("end: .nan\nevents: []", "end nan is not a finite number"),
    "key given twice": ("events: [{time: 0, %s, value: 1.0, value: 2.0}]" % HOOK,
                        "key 'value' given twice (first at line 1)"),
}


@pytest.mark.parametrize("case", sorted(SCENARIOS))
def test_scenario_events_that_cannot_be_are_refused_naming_the_event(hook, tmp_path, capsys, case):
    text, message = SCENARIOS[case]
    scenario = tmp_path / "events.yaml"
    scenario.write_text(text)
    out = tmp_path / "out"
    assert main(["run", str(hook), "--quiet", "--scenario", str(scenario), "--out", str(out)]) == 2
    err = one_line_error(capsys)
    assert "events.yaml" in err and message in err, err
    assert not (out / "results.csv").exists()


def test_quoted_numbers_and_yaml_exponents_stay_numbers(hook, tmp_path, capsys):
    """PyYAML reads 1e3 (no dot) as text: such values, and quoted ones, are still taken for a Real."""
    scenario = tmp_path / "events.yaml"
    scenario.write_text(f'events: [{{time: 0, {HOOK}, value: -1e3}}, {{time: 0.5, {HOOK}, value: "-2.5e3"}}]')
    assert main(["run", str(hook), "--quiet", "--scenario", str(scenario), "--out", str(tmp_path / "o")]) == 0


def test_events_after_the_stop_time_are_told_not_refused(hook, tmp_path, capsys):
    """A scenario written for a longer run is run shorter with --stop: allowed, and said."""
    scenario = tmp_path / "events.yaml"
    scenario.write_text(f"events: [{{time: 0, {HOOK}, value: -1.0}}, {{time: 50, {HOOK}, value: -2.0}}]")
    assert main(["run", str(hook), "--stop", "0.5", "--scenario", str(scenario), "--out", str(tmp_path / "o")]) == 0
    assert "1 event(s) after the stop time 0.5 s never happen (at 50 s)" in capsys.readouterr().err


def test_an_output_folder_that_cannot_be_one_is_refused_before_the_run(hook, tmp_path, capsys):
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    assert main(["run", str(hook), "--quiet", "--out", str(a_file)]) == 2
    assert f"result folder {a_file} is a file, not a folder (--out)" in one_line_error(capsys)
    assert main(["run", str(hook), "--quiet", "--out", str(a_file / "sub")]) == 2
    message = one_line_error(capsys)
    assert f"cannot make the result folder {a_file / 'sub'}: " in message and message.endswith("(--out)")


@pytest.mark.parametrize("option, message", [
    (["--checkpoint-every", "0"], "--checkpoint-every must be a positive time in seconds, not 0.0"),
    (["--flush-every", "0"], "flush every 0 steps: a whole number >= 1"),
    (["--flush-every", "-5"], "flush every -5 steps: a whole number >= 1"),
])
def test_run_settings_that_would_do_nothing_are_refused(hook, tmp_path, capsys, option, message):
    assert main(["run", str(hook), "--quiet", "--out", str(tmp_path / "o"), *option]) == 2
    assert message in one_line_error(capsys)


def edit(path: Path, old: str, new: str) -> Path:
    text = path.read_text()
    assert old in text, old
    out = path.with_name("edited.ssd")
    out.write_text(text.replace(old, new))
    return out


@pytest.mark.parametrize("old, new, message", [
    ('mc:Algorithm name="fixed" baseStep="0.1"/>', 'mc:Algorithm name="rk4" baseStep="0.1"/>',
     "edited.ssd: unknown algorithm 'rk4'"),
    ('mc:Algorithm name="fixed" baseStep="0.1"/>',
     'mc:Algorithm name="fixed" baseStep="0.1"><mc:Option name="method" type="String" value="rk4"/></mc:Algorithm>',
     "edited.ssd: unknown fixed-step method 'rk4'"),
])
def test_validate_refuses_the_algorithm_run_refuses(hook, tmp_path, capsys, old, new, message):
    broken = edit(hook, old, new)
    assert main(["validate", str(broken)]) == 1
    assert message in capsys.readouterr().out
    assert main(["run", str(broken), "--quiet", "--out", str(tmp_path / "o")]) == 2
    assert message in one_line_error(capsys)


def test_validate_checks_the_events_of_the_files_own_scenario(hook, tmp_path, capsys):
    (tmp_path / "events.yaml").write_text(f"events: [{{time: 0, {HOOK}, value: heavy}}]")
    with_scenario = edit(hook, '<mc:Algorithm name="fixed" baseStep="0.1"/>',
                         '<mc:Algorithm name="fixed" baseStep="0.1"/><mc:Scenario source="events.yaml"/>')
    assert main(["validate", str(with_scenario)]) == 1
    said = capsys.readouterr().out
    assert "events.yaml: events[0]: value for p.attachment1.force[2]: 'heavy' is not a number (Real)" in said, said
    (tmp_path / "events.yaml").write_text(f"events: [{{time: 0, {HOOK}, value: -1.0}}]")
    assert main(["validate", str(with_scenario)]) == 0


@pytest.mark.parametrize("option, message", [
    (["--ray-address", "127.0.0.1:6379"], "--ray-address needs the ray backend; this run uses 'inprocess'"),
    (["--call-timeout", "5"], "--call-timeout needs a backend with workers"),
    # Ray's own answer is a ValueError from inside ray.init: an internal error before
    (["--backend", "ray", "--ray-address", "nonsense"], "Ray address 'nonsense' is not HOST:PORT"),
    (["--backend", "ray", "--ray-address", "http://head:6379"], "Ray address 'http://head:6379' is not HOST:PORT"),
])
def test_backend_options_the_backend_would_ignore_or_choke_on_are_refused(hook, tmp_path, capsys, option, message):
    assert main(["run", str(hook), "--quiet", "--out", str(tmp_path / "o"), *option]) == 2
    assert message in one_line_error(capsys)


@pytest.mark.parametrize("option, message", [
    (["--stop", "nan"], "hook.ssd: the stop time nan is not a finite number"),
    (["--step", "0"], "hook.ssd: the base step 0.0 is not a positive finite number"),
    (["--variables", "p.nothing"], "recorded variable 'p.nothing': p has no variable 'nothing'"),
    (["--record-every", "0"], "record every 0 steps: a whole number >= 1"),
    (["--backend", "process", "--jobs", "0"], "--jobs 0: a whole number >= 1"),
    (["--jobs", "2"], "--jobs needs the process backend; this sweep uses 'serial'"),
    (["--ray-address", "127.0.0.1:6379"], "--ray-address needs the ray backend; this sweep uses 'serial'"),
])
def test_sweep_settings_every_case_shares_are_checked_once_before_the_cases(hook, tmp_path, capsys, option, message):
    """Before, each case failed alike with the same mistake (exit 1, N failed runs), or --jobs 0 was an
    internal error of the thread pool."""
    argv = ["sweep", str(hook), "--backend", "serial", "--grid", "p.mass=1000,2000", "--quiet",
            "--out", str(tmp_path / "sweep"), *option]
    if "--backend" in option:
        del argv[2:4]
    assert main(argv) == 2
    assert message in one_line_error(capsys)
    assert not (tmp_path / "sweep" / "runs").exists()


def test_a_sweep_folder_that_is_a_file_is_refused(hook, tmp_path, capsys):
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    assert main(["sweep", str(hook), "--backend", "serial", "--grid", "p.mass=1000", "--quiet",
                 "--out", str(a_file)]) == 2
    assert f"sweep folder {a_file} is a file, not a folder (--out)" in one_line_error(capsys)


@pytest.fixture
def results(hook, tmp_path) -> Path:
    out = tmp_path / "results"
    assert main(["run", str(hook), "--quiet", "--out", str(out)]) == 0
    return out


def test_export_into_a_folder_writes_the_file_in_it(results, tmp_path, capsys):
    """Before, --to mat --out FOLDER printed the folder and wrote nothing (scipy's savemat), --to netcdf
    was an internal error."""
    folder = tmp_path / "exports"
    folder.mkdir()
    assert main(["export", str(results), "--to", "mat", "--out", str(folder)]) == 0
    assert (folder / "results.mat").stat().st_size > 0
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    assert main(["export", str(results), "--to", "mat", "--out", str(a_file / "x.mat")]) == 2
    assert f"folder of the export {a_file} is a file, not a folder (--out)" in one_line_error(capsys)


@pytest.mark.parametrize("option, message", [
    (["--every", "nan", "--gif"], "--every nan: the simulated seconds between frames must be a number"),
    (["--fps", "0", "--gif"], "--fps 0: the frames per second of the GIF must be a whole number >= 1"),
])
def test_replay_options_that_cannot_be_are_refused(results, capsys, option, message):
    assert main(["replay", str(results), *option]) == 2
    assert message in one_line_error(capsys)


def test_replay_every_far_below_the_recording_takes_every_point(results, capsys):
    """--every 1e-12 over 1 s asked numpy for 1e12 frame times (memory, then a hang); every
    recorded point is a frame then."""
    assert main(["replay", str(results), "--every", "1e-12"]) == 0
    frames = (results / "replay" / "replay.pvd").read_text().count("<DataSet ")
    assert frames == 11                      # 1 s at 0.1 s: the start and 10 steps


@pytest.mark.parametrize("content", [None, b"not a zip", "zip without modelDescription"])
def test_info_on_a_file_that_is_no_fmu_is_one_line(tmp_path, capsys, content):
    import zipfile

    fmu = tmp_path / "x.fmu"
    if content == "zip without modelDescription":
        with zipfile.ZipFile(fmu, "w") as z:
            z.writestr("foo.txt", "x")
    elif content is not None:
        fmu.write_bytes(content)
    assert main(["info", str(fmu)]) == 2
    err = one_line_error(capsys)
    assert ("FMU file not found" if content is None else "x.fmu: cannot read its modelDescription.xml") in err, err


@pytest.mark.parametrize("kind, sub", [("osp", ""), ("ssd", "x.ssd")])
def test_convert_to_a_path_under_a_file_is_refused(hook, tmp_path, capsys, kind, sub):
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    out = a_file / sub if sub else a_file
    assert main(["convert", str(hook), "--to", kind, "--out", str(out)]) == 2
    assert f"cannot write {out}: folder {a_file} is a file, not a folder (--out)" in one_line_error(capsys)


@pytest.mark.parametrize("option, message", [
    (["--algorithm", "error-control", "--option", "rtol=abc"],
     "hook.ssd with --algorithm error-control rtol=abc: could not convert string to float: 'abc'"),
    (["--algorithm", "ecco", "--option", "refresh=maybe"], "refresh=maybe: 'maybe' is not a boolean"),
    (["--algorithm", "iterative", "--option", "max_iterations=0"], "max_iterations=0: iterative: max_iterations = 0"),
    # an option the algorithm does not read would be ignored without a word
    (["--algorithm", "ecco", "--option", "min_stpe=1e-4"],
     "the ecco algorithm has no option 'min_stpe' (did you mean 'min_step'"),
    (["--rtol", "1e-3"], "the fixed algorithm has no option 'rtol'; its options: extrapolation, method"),
])
def test_algorithm_options_that_cannot_be_name_the_file_and_the_options(hook, tmp_path, capsys, option, message):
    assert main(["run", str(hook), "--quiet", "--out", str(tmp_path / "o"), *option]) == 2
    assert message in one_line_error(capsys)


def test_an_fmu_missing_from_an_ssp_archive_is_not_to_be_built_into_its_cache(hook, tmp_path, capsys):
    """Before, the hint was 'build it with: marine-cosim build --out ~/.cache/marine-cosim/ssp/...',
    the archive's extraction folder, which mends nothing."""
    import zipfile

    from orchestration.system.files import load_system, save_system

    whole = save_system(load_system(hook), "ssp", tmp_path / "whole.ssp")
    broken = tmp_path / "broken.ssp"
    with zipfile.ZipFile(whole) as source, zipfile.ZipFile(broken, "w") as target:
        for item in source.infolist():
            if not item.filename.endswith(".fmu"):
                target.writestr(item, source.read(item))
    assert main(["validate", str(broken)]) == 2
    err = one_line_error(capsys)
    assert "FMU file not found" in err and "the archive broken.ssp does not carry it" in err, err
    assert "marine-cosim build --out" not in err


def test_a_files_options_for_its_own_algorithm_do_not_bind_another_asked_for(hook, tmp_path, capsys):
    """The file's ECCO options are ECCO's: a run with --algorithm fixed is not held to them, a run of
    the file's own algorithm is."""
    ecco = edit(hook, 'mc:Algorithm name="fixed" baseStep="0.1"/>', 'mc:Algorithm name="ecco" baseStep="0.1">'
                '<mc:Option name="min_stpe" type="Real" value="1e-4"/></mc:Algorithm>')
    assert main(["run", str(ecco), "--quiet", "--out", str(tmp_path / "o")]) == 2
    assert "the ecco algorithm has no option 'min_stpe'" in one_line_error(capsys)
    assert main(["run", str(ecco), "--quiet", "--algorithm", "fixed", "--out", str(tmp_path / "o2")]) == 0


@pytest.mark.parametrize("name, content, message", [
    ("empty.csv", "", "empty, not a results CSV"),
    ("no_time.csv", "a,b\n1,2\n", "no 'time' column in its header"),
    ("short_row.csv", "time,x\n0,1\n0.1\n", "line 3: 1 values for the 2 columns of the header"),
    ("text.csv", "time,x\n0,1\n0.1,abc\n", "line 3: column 'x' holds 'abc', not a Real value"),
    ("folder", '{"types": ', "metadata.json: not the metadata of a run"),
])
@pytest.mark.parametrize("command", [["plot"], ["export", "--to", "mat"]])
def test_files_that_are_not_results_are_refused_naming_the_line(tmp_path, capsys, name, content, message, command):
    """plot, export and replay read results with load_results: a file that is not one gave a
    StopIteration, IndexError or JSONDecodeError."""
    path = tmp_path / name
    if name == "folder":
        path.mkdir()
        (path / "metadata.json").write_text(content)
        (path / "results.csv").write_text("time,x\n0,1\n")
    else:
        path.write_text(content)
    assert main([command[0], str(path), *command[1:], "--out", str(tmp_path / "out.file")]) == 2
    assert message in one_line_error(capsys)


@pytest.mark.parametrize("command", [["plot"], ["export", "--to", "mat"], ["export", "--to", "netcdf"], ["replay"]])
def test_a_header_without_rows_is_refused(results, tmp_path, capsys, command):
    """A run that stopped before its first recorded point leaves a header only. Before, export --to
    netcdf took minutes per hundred columns (h5netcdf on a zero-length axis), replay was an internal
    error (np.stack of nothing) and plot wrote empty axes."""
    header = (results / "results.csv").read_text().splitlines()[0]
    folder = tmp_path / "header_only"
    folder.mkdir()
    (folder / "results.csv").write_text(header + "\n")
    (folder / "metadata.json").write_text((results / "metadata.json").read_text())
    assert main([command[0], str(folder), *command[1:]]) == 2
    assert f"{folder}: no rows to {command[0]}" in one_line_error(capsys)


@pytest.mark.parametrize("command", [["plot"], ["export", "--to", "mat"], ["replay"]])
def test_a_parquet_part_that_is_not_parquet_is_refused_naming_it_and_the_csv(results, capsys, command):
    """Before: an internal error (pyarrow's ArrowInvalid) for a part cut short."""
    part = sorted((results / "results.parquet").glob("part-*.parquet"))[0]
    part.write_bytes(part.read_bytes()[:100])
    assert main([command[0], str(results), *command[1:]]) == 2
    err = one_line_error(capsys)
    assert f"{part}: not a readable Parquet part" in err and f"read instead: {results / 'results.csv'}" in err, err


def test_warnings_are_one_line_like_errors(hook, tmp_path, capsys):
    """A warning from the run (here: error control on a system without connections) is one line
    naming the command, not Python's 'file:line: UserWarning:' with the source line."""
    assert main(["run", str(hook), "--quiet", "--algorithm", "error-control", "--out", str(tmp_path / "o")]) == 0
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "warning" in line.lower()]
    assert lines and all(line.startswith("marine-cosim run: warning: ") for line in lines), err
    assert "no connections" in err and "UserWarning" not in err and "warnings.warn" not in err


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_scenario_that_is_no_regular_file_is_refused_not_read(hook, tmp_path, capsys, kind):
    """Before: a FIFO named as the scenario blocked the run for ever, /dev/zero filled the memory."""
    import os

    if kind == "fifo":
        scenario = tmp_path / "events.yaml"
        os.mkfifo(scenario)
    elif kind == "device":
        scenario = Path("/dev/zero")
    else:
        scenario = tmp_path / "events.yaml"
        scenario.mkdir()
    assert main(["run", str(hook), "--quiet", "--scenario", str(scenario), "--out", str(tmp_path / "out")]) == 2
    err = one_line_error(capsys)
    assert f"cannot read scenario {scenario}" in err and ("not a regular file" in err or "a folder" in err), err
