"""Finding the bundled ``coalprof`` executable and running it: its output, or a CoalprofError."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from typing import List, Optional, Sequence

_EXE = "coalprof.exe" if sys.platform == "win32" else "coalprof"


class CoalprofError(Exception):
    """coalprof exited with an error: its ``error:`` and ``hint:`` lines and its exit code.

    Exit codes (the README's table): 1 gate failed, 2 usage or configuration, 3 unreadable
    input or a failed tool, 4 no GPU or profiler, 5 nothing matched, 70 internal, 130
    interrupted.
    """

    def __init__(self, command: Sequence[str], exit_code: int, stderr: str):
        self.command = list(command)
        self.exit_code = exit_code
        self.stderr = stderr
        # `error: …` lines, each with the `caused by: …` lines under it.
        self.errors: List[str] = []
        self.hints: List[str] = []
        for line in stderr.splitlines():
            if line.startswith("error: "):
                self.errors.append(line[len("error: "):])
            elif line.lstrip().startswith("caused by: ") and self.errors:
                self.errors[-1] += "\n  " + line.strip()
            elif line.startswith("hint: "):
                self.hints.append(line[len("hint: "):])
        super().__init__(self._text())

    @property
    def error(self) -> str:
        """The first ``error:`` line (without the prefix), or the last line of stderr."""
        if self.errors:
            return self.errors[0]
        lines = [l for l in self.stderr.splitlines() if l.strip()]
        return lines[-1] if lines else "coalprof failed without a message"

    @property
    def hint(self) -> Optional[str]:
        """The first ``hint:`` line (without the prefix), if coalprof knew a fix."""
        return self.hints[0] if self.hints else None

    def _text(self) -> str:
        parts = ["error: " + e for e in self.errors] or ["error: " + self.error]
        parts += ["hint: " + h for h in self.hints]
        parts.append(f"(exit code {self.exit_code}: {' '.join(self.command)})")
        return "\n".join(parts)


def find_binary() -> str:
    """The ``coalprof`` executable this package was installed with.

    pip puts it in the environment's scripts folder (``bin/``, beside ``sys.executable`` in a
    virtual environment), or the user scheme's with ``pip install --user``; failing both, the
    first on ``PATH``.
    """
    candidates = [sysconfig.get_path("scripts")]
    user_scheme = {"posix": "posix_user", "nt": "nt_user"}.get(os.name)
    if user_scheme and user_scheme in sysconfig.get_scheme_names():
        candidates.append(sysconfig.get_path("scripts", user_scheme))
    candidates.append(os.path.dirname(sys.executable))
    for folder in candidates:
        if folder:
            path = os.path.join(folder, _EXE)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    found = shutil.which(_EXE)
    if found:
        return found
    raise FileNotFoundError(
        "the coalprof executable is not installed beside this Python "
        f"({sysconfig.get_path('scripts')}) nor on PATH; reinstall with `pip install coalprof`"
    )


def run(args: Sequence[str], ok_codes: Sequence[int] = (0,), cwd: Optional[str] = None):
    """Run ``coalprof ARGS`` and return ``(stdout, stderr, exit code)``.

    Raises CoalprofError for an exit code outside ``ok_codes``.
    """
    command = [find_binary(), "--color", "never", *[os.fspath(a) for a in args]]
    proc = subprocess.run(command, capture_output=True, cwd=cwd, check=False)
    stdout = proc.stdout.decode("utf-8", errors="replace")
    stderr = proc.stderr.decode("utf-8", errors="replace")
    if proc.returncode not in ok_codes:
        raise CoalprofError(["coalprof", *command[1:]], proc.returncode, stderr)
    return stdout, stderr, proc.returncode


def options(kwargs: dict) -> List[str]:
    """Keyword arguments as coalprof flags: ``per_launch=True`` → ``--per-launch``, ``top=0`` →
    ``--top 0``, a list → the flag once per item; ``None`` and ``False`` are left out."""
    out: List[str] = []
    for key, value in kwargs.items():
        flag = "--" + key.rstrip("_").replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            for item in value:
                out += [flag, os.fspath(item) if isinstance(item, os.PathLike) else str(item)]
        else:
            out += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return out
