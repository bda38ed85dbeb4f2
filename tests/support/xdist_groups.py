"""``--dist loadgroup`` that honours the xdist_group marks again (tests/conftest.py calls these).

pytest-xdist 3.8 groups a test by appending ``@group`` to its node id in the worker
(``item._nodeid = ...``), but pytest 9.2 keeps the node id elsewhere (``item._id``, a NodeId), so the
suffix is lost and every test became its own work unit: the tests of a module with a module-scoped
fixture ran on both workers and built it on each (the portable FMUs, 145 s, twice), and the Ray
tests ran beside each other. Here the workers write each grouped test's group to a file and the
controller's scheduler reads it; node ids stay as pytest makes them.

The scheduler also hands out the work units with the most ``slow`` tests first (then the larger
ones, then the later collected): in collection order the whole-scenario runs of tests/runs/ came
last, and a worker could be left alone with a 4-minute test while the other had finished.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

ENV = "MARINE_COSIM_XDIST_GROUPS"


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def _wants_groups(config) -> bool:
    """The controller of a ``-n N --dist loadgroup`` run."""
    if _is_worker(config):
        return False
    try:
        return config.getvalue("dist") == "loadgroup" and bool(config.getvalue("numprocesses"))
    except ValueError:          # pytest-xdist not installed
        return False


def configure(config) -> None:
    """Controller: a folder the workers (started later, with this environment) write their groups to."""
    if _wants_groups(config):
        folder = tempfile.mkdtemp(prefix="marine_cosim_xdist_groups_")
        config._xdist_groups_folder = folder
        os.environ[ENV] = folder


def unconfigure(config) -> None:
    folder = getattr(config, "_xdist_groups_folder", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
        if os.environ.get(ENV) == folder:
            del os.environ[ENV]


def group_of(item) -> str | None:
    """The group xdist would give the item: its xdist_group names, sorted and joined by '_'."""
    names = set()
    for mark in item.iter_markers("xdist_group"):
        names.add(str(mark.args[0] if mark.args else mark.kwargs.get("name", "default")))
    return "_".join(sorted(names)) if names else None


def record(config, items) -> None:
    """Worker, after every mark is added: node id -> group of the grouped tests, for the controller."""
    folder = os.environ.get(ENV)
    if not folder or not _is_worker(config) or not Path(folder).is_dir():
        return
    groups = {item.nodeid: g for item in items if (g := group_of(item))}
    slow = [item.nodeid for item in items if item.get_closest_marker("slow")]
    target = Path(folder) / f"{config.workerinput['workerid']}.json"
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps({"groups": groups, "slow": slow}))
    tmp.replace(target)


def make_scheduler(config, log):
    """Controller: LoadGroupScheduling whose scope of a test is its group as the workers recorded it."""
    if not _wants_groups(config):
        return None
    from xdist.scheduler import LoadGroupScheduling

    folder = Path(config._xdist_groups_folder)

    class RecordedGroupScheduling(LoadGroupScheduling):
        _groups: dict[str, str] | None = None
        _slow: set[str] = set()
        _ordered = False

        def _load(self) -> None:
            # first called by schedule(), once every worker has sent its collection (the files are
            # written before it, in pytest_collection_modifyitems)
            groups: dict[str, str] = {}
            slow: set[str] = set()
            for path in sorted(folder.glob("*.json")):
                found = json.loads(path.read_text())
                groups.update(found["groups"])
                slow.update(found["slow"])
            self._groups, self._slow = groups, slow

        def _split_scope(self, nodeid: str) -> str:
            if self._groups is None:
                self._load()
            group = self._groups.get(nodeid)
            return group if group is not None else super()._split_scope(nodeid)

        def _assign_work_unit(self, node) -> None:
            if not self._ordered:
                # before the first unit goes out: most slow tests first, then the most tests, then the
                # later collected (tests/runs/, whole scenarios, is collected last and runs longest)
                self._ordered = True
                weight = {scope: (sum(n in self._slow for n in ids), len(ids), k)
                          for k, (scope, ids) in enumerate(self.workqueue.items())}
                order = sorted(self.workqueue, key=lambda scope: weight[scope], reverse=True)
                for scope in order:
                    self.workqueue.move_to_end(scope)
            super()._assign_work_unit(node)

    return RecordedGroupScheduling(config, log)
