"""coalprof's JSON rows as a pandas or polars DataFrame that shows as coalprof's page in Jupyter.

The rule from JSON rows to columns (the README states it too): a row's fields stay columns in
their order; its ``metrics`` object is spread into columns of their own, named by the metric
keys of ``metrics.toml`` (``metrics.KEY`` where a key equals a field's name); any other nested
object becomes ``field.key`` columns; lists stay lists. Columns are the union over all rows,
in order of first appearance, and a row without a column has a null there.
"""

from __future__ import annotations

import html
from typing import Any, Callable, Dict, List, Optional


def flatten(row: Dict[str, Any]) -> Dict[str, Any]:
    """One JSON row as ``{column: value}``, by the rule above."""
    out: Dict[str, Any] = {}
    for key, value in row.items():
        if key == "metrics" and isinstance(value, dict):
            for metric, number in value.items():
                out["metrics." + metric if metric in row else metric] = number
        elif isinstance(value, dict):
            _nested(out, key + ".", value)
        else:
            out[key] = value
    return out


def _nested(out: Dict[str, Any], prefix: str, value: Dict[str, Any]) -> None:
    for key, inner in value.items():
        if isinstance(inner, dict):
            _nested(out, prefix + key + ".", inner)
        else:
            out[prefix + key] = inner


def columns(records: List[Dict[str, Any]]) -> List[str]:
    """The union of the records' keys, in order of first appearance."""
    seen: Dict[str, None] = {}
    for r in records:
        for k in r:
            seen.setdefault(k, None)
    return list(seen)


class Output:
    """What one coalprof command gave besides the rows: the whole JSON document, the command,
    its exit code and stderr (``warning:``/``note:`` lines), and its HTML page on demand."""

    def __init__(self, document: Any, command: List[str], exit_code: int, stderr: str,
                 page: Callable[[], str]):
        self.json = document
        self.command = command
        self.exit_code = exit_code
        self.stderr = stderr
        self._page = page
        self._html: Optional[str] = None

    @property
    def notices(self) -> List[str]:
        """The notes the JSON carries (what could not be attributed, and why)."""
        if isinstance(self.json, dict):
            return list(self.json.get("notices") or [])
        return []

    def html(self) -> str:
        """The same command's ``--format html`` page (run once, then kept)."""
        if self._html is None:
            self._html = self._page()
        return self._html

    def __repr__(self) -> str:
        return f"<coalprof output of `{' '.join(self.command)}`, exit code {self.exit_code}>"


def _frame_html(frame: Any, fallback: Callable[[], str]) -> str:
    """coalprof's own page for the command that made ``frame``, in an isolated iframe (its CSS
    stays inside); the DataFrame's own table when that page cannot be made (inputs gone)."""
    out = getattr(frame, "coalprof", None)
    if not isinstance(out, Output):
        return fallback()
    try:
        page = out.html()
    except Exception:  # noqa: BLE001 - any failure here must still show the data
        return fallback()
    return (
        '<iframe title="coalprof" sandbox="allow-scripts" style="width:100%;height:36em;'
        'border:1px solid #ccc;resize:vertical" srcdoc="' + html.escape(page, quote=True) + '"></iframe>'
    )


_classes: Dict[str, type] = {}


def _pandas_class():
    if "pandas" not in _classes:
        import pandas as pd

        class CoalprofFrame(pd.DataFrame):
            """A pandas DataFrame of coalprof's rows; ``.coalprof`` holds the rest of the output.
            Derived frames (a filter, a selection) are plain DataFrames."""

            _metadata = ["coalprof"]

            @property
            def _constructor(self):
                return pd.DataFrame

            def _repr_html_(self):
                return _frame_html(self, lambda: pd.DataFrame._repr_html_(self))

        CoalprofFrame.__module__, CoalprofFrame.__qualname__ = "coalprof", "CoalprofFrame"
        _classes["pandas"] = CoalprofFrame
    return _classes["pandas"]


def _polars_class():
    if "polars" not in _classes:
        import polars as pl

        class CoalprofFrame(pl.DataFrame):
            """A polars DataFrame of coalprof's rows; ``.coalprof`` holds the rest of the output."""

            def _repr_html_(self, **kwargs):
                return _frame_html(self, lambda: pl.DataFrame._repr_html_(self, **kwargs))

        CoalprofFrame.__module__, CoalprofFrame.__qualname__ = "coalprof", "CoalprofFrame"
        _classes["polars"] = CoalprofFrame
    return _classes["polars"]


def library(choice: Optional[str]) -> str:
    """``"pandas"`` or ``"polars"``: the one asked for, else pandas if it imports, else polars."""
    if choice is not None:
        if choice not in ("pandas", "polars"):
            raise ValueError(f"frame must be 'pandas' or 'polars', not {choice!r}")
        return choice
    for name in ("pandas", "polars"):
        try:
            __import__(name)
            return name
        except ImportError:
            continue
    raise ImportError(
        "coalprof returns DataFrames: install pandas or polars "
        "(`pip install pandas`, or `pip install 'coalprof[pandas]'`)"
    )


def make(records: List[Dict[str, Any]], cols: List[str], lib: str, output: Output):
    """A DataFrame of ``records`` with columns ``cols`` (nulls where a record lacks one)."""
    if lib == "pandas":
        import pandas as pd

        plain = pd.DataFrame.from_records(records, columns=cols) if records else pd.DataFrame(columns=cols)
        frame = _pandas_class()(plain)
    else:
        cls = _polars_class()
        full = [{c: r.get(c) for c in cols} for r in records]
        try:
            frame = cls(full, schema=cols, infer_schema_length=None, strict=False) if full else cls(schema=cols)
        except TypeError:  # polars before 1.0 has no `strict`
            frame = cls(full, schema=cols, infer_schema_length=None) if full else cls(schema=cols)
    object.__setattr__(frame, "coalprof", output)
    return frame
