"""``python -m coalprof ARGS…``: the bundled executable, for environments whose ``bin/`` is not on PATH."""

import os
import subprocess
import sys

from ._cli import find_binary


def main() -> int:
    exe = find_binary()
    if os.name == "posix":
        os.execv(exe, [exe, *sys.argv[1:]])
    return subprocess.call([exe, *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
