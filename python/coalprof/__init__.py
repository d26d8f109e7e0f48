"""coalprof from Python: the bundled ``coalprof`` executable, its JSON as DataFrames.

Each function runs one coalprof command with ``--format json`` and returns a pandas DataFrame
(or a polars one: ``frame="polars"``, or when pandas is not installed) whose columns are the
JSON's (see ``_frames`` for the rule: a row's ``metrics`` become columns of their own). Keyword
arguments are the command's flags (``per_launch=True`` → ``--per-launch``, ``top=0`` →
``--top 0``, a list repeats the flag). The frame's ``.coalprof`` holds the whole JSON document,
the command, its exit code and stderr; in Jupyter the frame shows as coalprof's own HTML page
of the same command. A failure raises :class:`CoalprofError` with coalprof's ``error:`` and
``hint:`` lines and its exit code.

>>> import coalprof
>>> df = coalprof.analyze("report.ncu-rep")
>>> df[["kernel", "global_load_sectors_per_request"]]
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _frames
from ._cli import CoalprofError, find_binary
from ._cli import options as _options
from ._cli import run as _run

__all__ = ["analyze", "lines", "triton", "compare", "check", "run", "CoalprofError", "find_binary", "__version__"]

try:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as _version

    try:
        __version__ = _version("coalprof")
    except PackageNotFoundError:  # imported from a checkout, not installed
        __version__ = "0+unknown"
except ImportError:  # pragma: no cover - Python < 3.8
    __version__ = "0+unknown"

Path = Union[str, "os.PathLike[str]"]


class CheckOutput(_frames.Output):
    """A ``check``'s output: the checks' verdicts counted, as the gate's exit code decides."""

    def count(self, verdict: str) -> int:
        return sum(1 for c in self.json.get("checks", []) if c.get("verdict") == verdict)

    @property
    def failed(self) -> int:
        """Checks that failed (``fail``): the gate fails when this is not 0."""
        return self.count("fail")

    @property
    def warned(self) -> int:
        """Checks that warned (``warn``)."""
        return self.count("warn")

    @property
    def verdict(self) -> str:
        """``fail``, ``warn`` or ``pass``, as the verdict table's headline says it."""
        return "fail" if self.failed else "warn" if self.warned else "pass"


def _command(
    name: str,
    inputs: Sequence[Path],
    flags: Dict[str, Any],
    records_of,
    frame: Optional[str],
    cwd: Optional[Path],
    ok_codes: Sequence[int] = (0,),
    output_class=_frames.Output,
):
    if "format" in flags:
        raise TypeError("the format is JSON for the DataFrame; the HTML page is `frame.coalprof.html()`")
    lib = _frames.library(frame)
    args = [name, *[os.fspath(i) for i in inputs], *_options(flags)]
    where = os.fspath(cwd) if cwd is not None else None
    stdout, stderr, code = _run([*args, "--format", "json"], ok_codes=ok_codes, cwd=where)
    document = json.loads(stdout)

    def page() -> str:
        return _run([*args, "--format", "html"], ok_codes=ok_codes, cwd=where)[0]

    output = output_class(document, ["coalprof", *args, "--format", "json"], code, stderr, page)
    records = records_of(document)
    return _frames.make(records, _frames.columns(records), lib, output)


def _rows(document: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [_frames.flatten(r) for r in document.get("rows", [])]


def analyze(*files: Path, frame: Optional[str] = None, cwd: Optional[Path] = None, **flags: Any):
    """``coalprof analyze FILE…``: ncu CSVs or ``.ncu-rep`` reports, one row per kernel and
    launch shape (``per_launch=True``: per launch)."""
    return _command("analyze", files, flags, _rows, frame, cwd)


def lines(*reports: Path, frame: Optional[str] = None, cwd: Optional[Path] = None, **flags: Any):
    """``coalprof lines REPORT…``: one row per source line (``by="instruction"``: per SASS
    instruction) and access kind, worst first (``top=0`` for every row, ``kernel=REGEX``)."""
    return _command("lines", reports, flags, _rows, frame, cwd)


def triton(
    kernel: Any,
    grid: Any,
    args: Optional[Dict[str, Any]] = None,
    meta: Optional[Dict[str, Any]] = None,
    frame: Optional[str] = None,
    cwd: Optional[Path] = None,
    **flags: Any,
):
    """``coalprof triton FILE.py::KERNEL``: a Triton kernel's rows, as :func:`lines` gives them,
    without a GPU. ``kernel`` is ``"file.py::name"`` or the ``@triton.jit`` function itself;
    ``grid`` an int or a tuple; ``args`` maps each parameter to a numpy array (saved to a
    ``.npy`` for the counter), an int or float, or the spelling of ``--arg`` (``"f32[8192]"``);
    ``meta`` the ``tl.constexpr`` values. Other keywords are the command's flags
    (``num_warps=4``, ``arch="sm_80"``, ``programs=64``). Needs ``triton`` and ``numpy`` in this
    Python (``pip install 'coalprof[triton]'``), which coalprof is pointed at.

    >>> coalprof.triton("k.py::copy", 8, {"x_ptr": "f32[8192]", "y_ptr": "f32[8192]", "n": 8192},
    ...                 {"BLOCK": 1024}, arch="sm_80")
    """
    import sys
    import tempfile

    if not isinstance(kernel, str):
        fn = getattr(kernel, "fn", kernel)
        import inspect

        kernel = f"{inspect.getsourcefile(fn)}::{fn.__name__}"
    grid = [grid] if isinstance(grid, int) else list(grid)
    keep = tempfile.TemporaryDirectory(prefix="coalprof-triton-")
    spelled = []
    for name, value in (args or {}).items():
        if hasattr(value, "dtype") and hasattr(value, "shape"):  # a numpy array
            import numpy

            path = os.path.join(keep.name, f"{name}.npy")
            numpy.save(path, numpy.ascontiguousarray(value))
            value = "@" + path
        spelled.append(f"{name}={value}")
    flags = dict(flags, grid=",".join(str(g) for g in grid), arg=spelled,
                 meta=[f"{k}={v}" for k, v in (meta or {}).items()], top=flags.get("top", 0))
    os.environ.setdefault("COALPROF_PYTHON", sys.executable)
    try:
        return _command("triton", [kernel], flags, _rows, frame, cwd)
    finally:
        keep.cleanup()


def run(frame: Optional[str] = None, cwd: Optional[Path] = None, **flags: Any):
    """``coalprof run``: built-in patterns (``pattern="kv-layout"`` or a list, ``all=True``),
    measured where a GPU is, else predicted (``backend="model"`` anywhere). The run is saved
    under ``profiles/`` as on the command line (``out=DIR``)."""
    return _command("run", [], flags, _rows, frame, cwd)


def compare(*inputs: Path, frame: Optional[str] = None, cwd: Optional[Path] = None, **flags: Any):
    """``coalprof compare A B [C…]``: runs or reports side by side, the first the reference
    (``label=[…]`` one per input). Long form: one row per compared row and input, with the
    columns ``key``, ``kernel``, ``name``, ``input`` (0 for the reference), ``label``, ``gpu``,
    ``arch``, ``shape``, then the input's metrics; an input that lacks a row has no line for it."""

    def records(document: Dict[str, Any]) -> List[Dict[str, Any]]:
        ins = document.get("inputs", [])
        out = []
        for row in document.get("rows", []):
            shapes = row.get("shapes") or [None] * len(ins)
            for i, values in enumerate(row.get("values", [])):
                if values is None:
                    continue
                info = ins[i] if i < len(ins) else {}
                out.append(_frames.flatten({
                    "key": row.get("key"),
                    "kernel": row.get("kernel"),
                    "name": row.get("name"),
                    "input": i,
                    "label": info.get("label"),
                    "gpu": info.get("gpu"),
                    "arch": info.get("arch"),
                    "shape": shapes[i] if i < len(shapes) else None,
                    "metrics": values,
                }))
        return out

    return _command("compare", inputs, flags, records, frame, cwd)


def check(*inputs: Path, frame: Optional[str] = None, cwd: Optional[Path] = None, **flags: Any):
    """``coalprof check INPUT…``: one row per (row × metric) check with its ``verdict``
    (``rules=FILE``, ``baseline=FILE``). A failed gate is a result, not an exception:
    ``frame.coalprof.verdict`` is ``fail``/``warn``/``pass``, ``.failed`` and ``.warned`` count
    the checks, ``.exit_code`` is coalprof's (1 when the gate failed)."""

    def records(document: Dict[str, Any]) -> List[Dict[str, Any]]:
        return [_frames.flatten(c) for c in document.get("checks", [])]

    return _command("check", inputs, flags, records, frame, cwd, ok_codes=(0, 1), output_class=CheckOutput)
