"""The shell commands of README.md and docs/*.md, checked without running them.

Every ``marine-cosim`` invocation is matched against the CLI's own argparse parser
(orchestration/cli/main.py: ``build_parser``): the verb exists, every option exists for that verb
(spelt out in full: argparse would accept an abbreviation, a reader copying it should not see one),
values of options and positionals with choices are among them, and a command given in a code block
has its required arguments. Every repository path a documented command names (scenarios/...,
tests/models/..., benchmarks/..., ``python -m`` modules) exists.

Commands are taken from fenced ``bash``/``sh``/``shell``/``console`` blocks, from ``$ `` lines of
other blocks, and from inline code spans that begin with a command. Placeholders (FILE, SHIP.fmu,
<out>, ``...``, HOST:PORT) and optional parts in brackets (``[--stop T]``) are recognised: a
placeholder is never flagged, the options inside brackets are checked like the others.
Nothing is run: the whole module takes well under a second.
"""
from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from orchestration.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Top-level folders of the checkout: a command's path that starts with one of them must exist.
# build/ and results/ are made by the commands themselves, so they are not in the list.
REPO_DIRS = ("benchmarks", "components", "docs", "fmus", "orchestration", "scenarios", "tests")
COMMAND_LANGUAGES = {"bash", "sh", "shell", "console"}
FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
# a code span, which may run over a line break (not over a blank line); ``a `b` c`` spans too
INLINE = re.compile(r"(?<!`)(`+)(?!`)((?:(?!\n\s*\n).)+?)(?<!`)\1(?!`)", re.S)
COMMAND_START = re.compile(r"^(?:\S*/)?(?:marine-cosim|python3?|pytest)(?:\s|$)|^PYTHONPATH=")
ENV_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")
SEPARATORS = {"&&", "||", ";", "|", "do", "done", "then", "fi"}
# options whose value a command writes, so it need not exist beforehand
OUTPUT_OPTIONS = {"--out", "--save", "--json", "--png", "--markdown", "--keep"}
# Known misses in pages this suite's owner does not edit, each with why; remove an entry once the
# page is fixed (the test then fails if the entry is stale).
PENDING: dict[tuple[str, str], str] = {}


@dataclass
class Command:
    page: str
    line: int
    text: str
    tokens: list[str]
    inline: bool                  # an inline code span: may name a verb without its arguments

    def where(self) -> str:
        return f"{self.page}:{self.line}: {self.text}"


@dataclass
class Problems:
    items: list[str] = field(default_factory=list)

    def add(self, command: Command, message: str) -> None:
        self.items.append(f"{command.where()}\n    -> {message}")


# ---------------------------------------------------------------------- extraction

def _tokens(text: str) -> list[str] | None:
    try:
        return shlex.split(text, comments=True)
    except ValueError:            # an unbalanced quote: prose in code, not a command
        return None


def _split(tokens: list[str]) -> list[list[str]]:
    """One token list per simple command of a line (``a && b; c | d``)."""
    out, current = [], []
    for token in tokens:
        if token in SEPARATORS:
            if current:
                out.append(current)
            current = []
        elif token not in ("for", "while", "if") or current:
            current.append(token)
    if current:
        out.append(current)
    # `PYTHONPATH=. python -m ...`: the command is what follows the environment assignments
    out = [t[next((i for i, x in enumerate(t) if not ENV_ASSIGNMENT.match(x)), len(t)):] for t in out]
    return [t for t in out if t]


def _inline_commands(text: str, first_line: int, page: str) -> list[Command]:
    found = []
    for match in INLINE.finditer(text):
        span = " ".join(match.group(2).split())
        if not COMMAND_START.match(span):
            continue
        tokens = _tokens(span)
        if tokens:
            number = first_line + text.count("\n", 0, match.start())
            found += [Command(page, number, span, t, inline=True) for t in _split(tokens)]
    return found


def commands_of(text: str, page: str) -> list[Command]:
    """Every simple command of a Markdown page, with its line."""
    found: list[Command] = []
    fenced, language, pending, start = False, "", "", 0
    prose: list[str] = []                   # the lines since the last fence, for their code spans
    prose_start = 1
    for number, line in enumerate(text.splitlines(), 1):
        fence = FENCE.match(line)
        if fence:
            if not fenced:
                found += _inline_commands("\n".join(prose), prose_start, page)
            fenced, language = (not fenced), fence.group(2).lower()
            pending, prose, prose_start = "", [], number + 1
            continue
        if not fenced:
            prose.append(line)
            continue
        body = line.strip()
        if language not in COMMAND_LANGUAGES and not body.startswith("$ "):
            continue
        if body.startswith("$ "):
            body = body[2:]
        if not pending:
            start = number
        if body.endswith("\\"):                    # continued on the next line
            pending += body[:-1] + " "
            continue
        body, pending = pending + body, ""
        tokens = _tokens(body)
        if tokens:
            found += [Command(page, start, body, t, inline=False) for t in _split(tokens)]
    if not fenced:
        found += _inline_commands("\n".join(prose), prose_start, page)
    return found


def all_commands() -> list[Command]:
    out = []
    for page in PAGES:
        out += commands_of(page.read_text(encoding="utf-8"), str(page.relative_to(ROOT)))
    return out


# ---------------------------------------------------------------------- placeholders and brackets

PLACEHOLDER_WORD = re.compile(r"^[A-Z][A-Z0-9_]*(?:-[A-Z0-9_]+)*$")


def is_placeholder(token: str) -> bool:
    """FILE, SHIP.fmu, COMP.VAR:max, HOST:PORT, <out>, ..., $fmu: stand for what the reader types."""
    if "..." in token or ("<" in token and ">" in token) or token.startswith("$"):
        return True
    first = re.split(r"[.:=|/,]", token.lstrip("[("), maxsplit=1)[0]
    return bool(PLACEHOLDER_WORD.match(first))


def _unbracket(token: str) -> tuple[str, bool]:
    """``[--stop`` -> ``--stop``; ``T]`` -> ``T``; ``position[2]`` stays. The flag: was it optional."""
    optional = False
    while token.startswith("["):             # no argument of ours begins with a bracket
        token, optional = token[1:], True
    while token.endswith("]") and token.count("]") > token.count("["):
        token, optional = token[:-1], True
    return token, optional


# ---------------------------------------------------------------------- the marine-cosim check

def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("marine-cosim has no verbs")


def _takes(action: argparse.Action) -> tuple[int, int | None]:
    """(least, most) values an option takes."""
    nargs = action.nargs
    if nargs is None:
        return 1, 1
    if nargs == "?":
        return 0, 1
    if nargs == "*":
        return 0, None
    if nargs == "+":
        return 1, None
    if isinstance(nargs, int):
        return nargs, nargs
    return 0, 0                               # store_true, version, help


def _check_value(command: Command, what: str, action: argparse.Action, value: str, problems: Problems) -> None:
    if is_placeholder(value):
        return
    for alternative in value.split("|"):    # `--to mat|netcdf`: each alternative must be accepted
        if is_placeholder(alternative):
            continue
        converted: object = alternative
        if action.type in (int, float):
            try:
                converted = action.type(alternative)
            except ValueError:
                problems.add(command, f"{what}: {alternative!r} is no {action.type.__name__}")
                continue
        if action.choices is not None and converted not in action.choices:
            problems.add(command, f"{what}: {alternative!r} is not one of {sorted(map(str, action.choices))}")


def check_marine_cosim(command: Command, parser: argparse.ArgumentParser, problems: Problems) -> None:
    tokens = [t for t in command.tokens[1:] if t != "--debug"]     # --debug is accepted anywhere
    if not tokens or is_placeholder(tokens[0]):
        return
    if tokens[0].endswith(":"):               # `marine-cosim run: warning: ...`: a message it prints
        return
    top = {s: a for a in parser._actions for s in a.option_strings}
    while tokens and tokens[0].startswith("-"):
        if tokens[0] not in top:
            problems.add(command, f"marine-cosim has no option {tokens[0]}")
        tokens = tokens[1:]
    if not tokens:
        return
    verbs = _subparsers(parser)
    verb, *rest = tokens
    if verb not in verbs:
        problems.add(command, f"marine-cosim has no verb {verb!r} (it has {', '.join(verbs)})")
        return
    sub = verbs[verb]
    options = {s: a for a in sub._actions for s in a.option_strings}
    positionals = [a for a in sub._actions if not a.option_strings]
    seen: set[str] = set()
    given_positionals: list[str] = []
    i = 0
    while i < len(rest):
        token, _ = _unbracket(rest[i])
        i += 1
        if not token:
            continue
        if token.startswith("-") and not re.match(r"^-\d", token):
            name, eq, attached = token.partition("=")
            action = options.get(name)
            if action is None:
                close = [s for s in options if s.startswith(name[:4])]
                hint = f" (did you mean {' or '.join(close)}?)" if close else ""
                problems.add(command, f"marine-cosim {verb} has no option {name}{hint}")
                continue
            seen.add(action.dest)
            least, most = _takes(action)
            values = [attached] if eq else []
            while (most is None or len(values) < most) and i < len(rest):
                nxt, _ = _unbracket(rest[i])
                if nxt.startswith("-") and not re.match(r"^-\d", nxt):
                    break
                closes = rest[i].endswith("]") and rest[i].count("]") > rest[i].count("[")
                values.append(nxt)
                i += 1
                if closes:                          # the optional group ends with this value
                    break
            if len(values) < least and not any(is_placeholder(v) for v in values):
                problems.add(command, f"marine-cosim {verb} {name} needs a value")
            for value in values:
                _check_value(command, f"{verb} {name}", action, value, problems)
            continue
        given_positionals.append(token)
    # positionals in order; a trailing one may take several (plot's VARIABLE ...)
    slots = list(positionals)
    for value in given_positionals:
        if not slots:
            if not is_placeholder(value):
                problems.add(command, f"marine-cosim {verb}: unexpected argument {value!r}")
            continue
        action = slots[0]
        _check_value(command, f"{verb} {action.dest}", action, value, problems)
        seen.add(action.dest)
        if action.nargs not in ("*", "+"):
            slots.pop(0)
    if command.inline and not given_positionals:
        return                                  # `marine-cosim validate` in prose names the verb
    for action in sub._actions:
        if action.option_strings and action.required and action.dest not in seen:
            problems.add(command, f"marine-cosim {verb} needs {action.option_strings[0]}")
        if not action.option_strings and action.nargs in (None, "+") and action.dest not in seen:
            if not (verb == "run" and "--resume" in rest):
                problems.add(command, f"marine-cosim {verb} needs its {action.dest.upper()} argument")


def marine_cosim_problems(commands: list[Command]) -> list[str]:
    parser = build_parser()
    problems = Problems()
    for command in commands:
        if Path(command.tokens[0]).name == "marine-cosim":
            check_marine_cosim(command, parser, problems)
    return problems.items


# ---------------------------------------------------------------------- repository paths

def _page_writes(page_text: str) -> set[str]:
    """Files a page has the reader write: a code block whose first line is ``# name.py``."""
    return set(re.findall(r"^```\w*\n#\s*([\w./-]+\.\w+)\s*$", page_text, flags=re.M))


def _module_exists(module: str, root: Path) -> bool:
    path = root.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__main__.py").is_file()


def path_problems(commands: list[Command], root: Path = ROOT, writes: dict[str, set[str]] | None = None) -> list[str]:
    problems = Problems()
    writes = writes or {}
    for command in commands:
        tokens = command.tokens
        program = Path(tokens[0]).name
        previous = ""
        for index, raw in enumerate(tokens):
            token, _ = _unbracket(raw)
            option_value_of = previous
            previous = token
            if option_value_of in OUTPUT_OPTIONS or is_placeholder(token) or any(c in token for c in "*?{"):
                continue
            if option_value_of == "-m" and program.startswith("python"):
                if token.split(".")[0] in REPO_DIRS and not _module_exists(token, root):
                    problems.add(command, f"no module {token} in the checkout (python -m needs "
                                          f"{token.replace('.', '/')}.py or a __main__.py)")
                continue
            path = token.split("::")[0].split("=")[-1]          # pytest node ids, PYTHONPATH=., --x=path
            if "/" in path and path.split("/")[0] in REPO_DIRS:
                if not (root / path).exists():
                    problems.add(command, f"{path} does not exist")
            elif index == 1 and program.startswith("python") and path.endswith(".py") and "/" not in path:
                if not (root / path).exists() and path not in writes.get(command.page, set()):
                    problems.add(command, f"{path} does not exist (nor does the page have the reader write it)")
    return problems.items


def _without_pending(items: list[str]) -> tuple[list[str], set[tuple[str, str]]]:
    left, used = [], set()
    for item in items:
        key = next((k for k in PENDING if item.startswith(k[0] + ":") and k[1] in item), None)
        if key is None:
            left.append(item)
        else:
            used.add(key)
    return left, used


# ---------------------------------------------------------------------- the tests

@pytest.fixture(scope="module")
def commands() -> list[Command]:
    return all_commands()


def test_the_pages_have_commands_to_check(commands):
    # an extraction that finds nothing would pass everything below
    verbs = {c.tokens[1] for c in commands if Path(c.tokens[0]).name == "marine-cosim" and len(c.tokens) > 1}
    assert len([c for c in commands if Path(c.tokens[0]).name == "marine-cosim"]) >= 60
    assert {"run", "sweep", "validate", "info", "plot", "export", "replay", "convert", "build", "simulate",
            "demo", "operability"} <= verbs
    assert any(c.page == "docs/getting_started.md" and not c.inline for c in commands)


def test_every_marine_cosim_command_parses(commands):
    items, _ = _without_pending(marine_cosim_problems(commands))
    assert not items, "documented marine-cosim commands the CLI does not accept:\n" + "\n".join(items)


def test_the_readme_command_list_names_every_verb(commands):
    # README's "The marine-cosim command" block is where a user looks for what the CLI can do
    listed = {c.tokens[1] for c in commands
              if c.page == "README.md" and not c.inline and Path(c.tokens[0]).name == "marine-cosim"
              and len(c.tokens) > 1}
    missing = sorted(set(_subparsers(build_parser())) - listed)
    assert not missing, f"README.md's command block does not show: {missing}"


def _path_problems_of_the_pages(commands: list[Command]) -> list[str]:
    writes = {str(p.relative_to(ROOT)): _page_writes(p.read_text(encoding="utf-8")) for p in PAGES}
    return path_problems(commands, writes=writes)


def test_every_repository_path_of_a_command_exists(commands):
    items, _ = _without_pending(_path_problems_of_the_pages(commands))
    assert not items, "documented commands name paths that are not in the checkout:\n" + "\n".join(items)


def test_every_pending_entry_is_still_needed(commands):
    _, used = _without_pending(marine_cosim_problems(commands) + _path_problems_of_the_pages(commands))
    stale = sorted(set(PENDING) - used)
    assert not stale, f"PENDING entries whose page was fixed (remove them): {stale}"


# ---------------------------------------------------------------------- the checker itself

def _problems_of(markdown: str) -> list[str]:
    commands = commands_of(markdown, "planted.md")
    return marine_cosim_problems(commands) + path_problems(commands)


@pytest.mark.parametrize("markdown, expected", [
    ("```bash\nmarine-cosim run scenarios/hook_release/hook_release.ssd --stpo 3\n```", "has no option --stpo"),
    ("```bash\nmarine-cosim plot results/x --variabels a.b\n```", "plot has no option --variabels"),
    ("```bash\nmarine-cosim simulate build/fmus/Payload.fmu \\\n    --stop 20 --stp 0.01\n```", "--stp"),
    ("Run `marine-cosim valdiate SYSTEM` first.", "no verb 'valdiate'"),
    ("```bash\nmarine-cosim export results/run1 --to xlsx\n```", "'xlsx' is not one of"),
    ("```bash\nmarine-cosim export results/run1\n```", "needs --to"),
    ("```bash\nmarine-cosim convert --to osp\n```", "needs its SYSTEM argument"),
    ("```bash\nmarine-cosim demo offshore_lift|deck_landing|moored_bar\n```", "'moored_bar' is not one of"),
    ("```bash\nmarine-cosim run x.ssd --stop soon\n```", "'soon' is no float"),
    ("```bash\nmarine-cosim run x.ssd [--method jacobi|gauss-seidl] [--out DIR]\n```", "'gauss-seidl'"),
    ("```bash\nmarine-cosim replay results/run1 [--every 0.5] [--gif] [--fsp 10]\n```", "has no option --fsp"),
    ("```bash\nmarine-cosim demo [offshore_lift|moored_barg] [--out DIR]\n```", "'moored_barg' is not one of"),
    ("```bash\nmarine-cosim run scenarios/no_such/lift.ssd\n```", "scenarios/no_such/lift.ssd does not exist"),
    ("```bash\npython -m tests.data.quarter_car.build\n```", "no module tests.data.quarter_car.build"),
    ("```bash\n.venv/bin/python -m pytest tests/test_gone.py -s\n```", "tests/test_gone.py does not exist"),
    ("```bash\nPYTHONPATH=. python -m tests.models.no_such_model\n```", "no module tests.models.no_such_model"),
    ("```text\n$ marine-cosim sweep offshore_lift --gird ship.sea.hs=1,2\n```", "has no option --gird"),
    ("| what | how |\n|---|---|\n| bench | `python benchmarks/no_bench.py --quick` |", "benchmarks/no_bench.py"),
    ("Export with `marine-cosim export RESULTS\n--to xlsx`, then plot.", "'xlsx' is not one of"),
])
def test_a_planted_mistake_is_found(markdown, expected):
    problems = _problems_of(markdown)
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize("markdown", [
    "```bash\nmarine-cosim run SYSTEM [--stop T] [--method jacobi|gauss-seidel] [--out DIR]\n```",
    "```bash\nmarine-cosim info SHIP.fmu\nmarine-cosim info FMU|SYSTEM\n"
    "marine-cosim convert FILE --to osp --out DIR\n```",
    "```bash\nmarine-cosim sweep lift.ssd --grid ship.sea.hs=1,2 --summary COMP.VAR:max [--ray-address HOST:PORT] \\\n"
    "    [--criteria operability.yaml [--scatter site.csv]] [--record-every N]\n```",
    "```bash\nmarine-cosim run --resume results/lift --stop 120   # or further than planned\n```",
    "```bash\nmarine-cosim plot RESULTS [VARIABLE-PREFIX ...]\nmarine-cosim --version\n```",
    "`marine-cosim validate` lists problems; `marine-cosim <verb>: error: <message>` is its last line; "
    "`marine-cosim convert ... --to ssp|ssd`; `marine-cosim export --to netcdf`",
    "```bash\nmarine-cosim simulate build/fmus/Payload.fmu --set \"initial.position[2]=-3\" --out results/drop\n```",
    "```python\n# make_system.py\nprint()\n```\n```bash\npython make_system.py\n```",
    "```bash\nfor fmu in Cable Crane; do\n    python -m tests.fmus.fuzz_fmus /tmp/fmus $fmu --trials 3\ndone\n```",
])
def test_placeholders_and_optional_parts_are_not_flagged(markdown):
    commands = commands_of(markdown, "planted.md")
    assert commands
    writes = {"planted.md": _page_writes(markdown)}
    assert marine_cosim_problems(commands) + path_problems(commands, writes=writes) == []
