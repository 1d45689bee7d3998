"""What a command imports (issue 24): a plain ``wddmsim run`` does not import what only other commands, other
options or a terminal use, and no command imports rich's emoji table (decision 0241).

Checked in a fresh interpreter: this test process has imported everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys

_CHILD = """
import contextlib, io, json, sys
from wddmsim.cli import main
at_start = set(sys.modules)
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(["run", "default", "--frames", "1", "--seed", "1"])
    except SystemExit as done:
        assert not done.code, done.code
print(json.dumps({"start": sorted(at_start), "run": sorted(set(sys.modules) - at_start)}))
"""

NOT_AT_START = {"rich.progress", "rich._emoji_codes", "wddmsim.scenarios.tour", "wddmsim.scenarios.residency"}
"""Used by one command or option each: imported when it runs."""
NOT_IN_A_PLAIN_RUN = {
    "rich._emoji_codes",  # the consoles print ``:x:`` as written
    "rich.progress",  # the bar is drawn on a terminal only
    "csv",  # frames.csv: --out only
    "wddmsim.viz.outputs",  # the --out writers
    "wddmsim.scenarios.replay",
    "wddmsim.scenarios.tour",
    "wddmsim.scenarios.residency",
}


def test_a_plain_run_imports_nothing_only_other_commands_options_or_a_terminal_need() -> None:
    done = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    modules = json.loads(done.stdout.splitlines()[-1])
    start, run = set(modules["start"]), set(modules["run"])
    assert "wddmsim.cli" in start and "wddmsim.scenarios.runner" in run, "the child ran the command"
    assert start & NOT_AT_START == set()
    assert run & NOT_IN_A_PLAIN_RUN == set()
