"""Compare: many Measurements laid out as text tables, one table per label.

Within a table, columns are the descriptions (in order of first appearance) and rows are
(num_threads, env, sub_label or stmt), grouped under a "N threads:" separator per thread count.
Each cell is the median in the unit that suits the table's fastest result.
"""

from __future__ import annotations

import collections
import enum
import itertools
import math
from typing import Iterable

from . import common

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(x: float) -> int:
    """Digits before the decimal point of x >= 1 (0 or less for x < 1), as PyTorch counts them
    (ceil of a float32 log10)."""
    return int(math.ceil(common._log10_f32(x)))


class _Column:
    """One description's cells, formatted with one width and precision for the whole column."""

    def __init__(
        self,
        grouped_results: list[tuple[common.Measurement | None, ...]],
        time_scale: float,
        time_unit: str,
        trim_significant_figures: bool,
        highlight_warnings: bool,
    ) -> None:
        self._grouped_results = grouped_results
        self._flat_results = list(itertools.chain.from_iterable(grouped_results))
        self._time_scale = time_scale
        self._time_unit = time_unit
        self._trim_significant_figures = trim_significant_figures
        self._highlight_warnings = highlight_warnings and any(
            r.has_warnings for r in self._flat_results if r
        )
        digits = [_leading_digits(r.median / time_scale) if r else None for r in self._flat_results]
        unit_digits = max(d for d in digits if d is not None)
        if trim_significant_figures:
            decimal_digits = min(
                max(m.significant_figures - d, 0)
                for d, m in zip(digits, self._flat_results)
                if m is not None and d is not None
            )
        else:
            decimal_digits = 1
        length = unit_digits + decimal_digits + (1 if decimal_digits else 0)
        warning_width = 7 if self._highlight_warnings else 0
        self._template = f"{{:>{length}.{decimal_digits}f}}{{:>{warning_width}}}"

    def get_results_for(self, group: int) -> tuple[common.Measurement | None, ...]:
        return self._grouped_results[group]

    def num_to_str(self, value: float | None, estimated_sigfigs: int, spread: float | None):
        if value is None:  # an empty cell, as wide as a filled one
            return " " * len(self.num_to_str(1, estimated_sigfigs, None))
        if self._trim_significant_figures:
            value = common.trim_sigfig(value, estimated_sigfigs)
        flag = (
            f" (! {spread * 100:.0f}%)" if self._highlight_warnings and spread is not None else ""
        )
        return self._template.format(value, flag)


def _optional_min(values: Iterable[float]) -> float | None:
    values = list(values)
    return min(values) if values else None


class _Row:
    """One (num_threads, env, row name) row: its name cell and one cell per column."""

    def __init__(
        self,
        results: list[common.Measurement | None],
        row_group: int,
        render_env: bool,
        env_str_len: int,
        row_name_str_len: int,
        time_scale: float,
        colorize: Colorize,
        num_threads: int | None = None,
    ) -> None:
        self._results = results
        self._row_group = row_group
        self._render_env = render_env
        self._env_str_len = env_str_len
        self._row_name_str_len = row_name_str_len
        self._time_scale = time_scale
        self._colorize = colorize
        self._columns: tuple[_Column, ...] = ()
        self._num_threads = num_threads  # set on the first row of a thread count only

    def register_columns(self, columns: tuple[_Column, ...]) -> None:
        self._columns = columns

    def as_column_strings(self) -> list[str]:
        first = next(r for r in self._results if r is not None)
        env = f"({first.env})" if self._render_env else ""
        cells = ["  " + env.ljust(self._env_str_len + 4) + first.as_row_name]
        for m, column in zip(self._results, self._columns):
            if m is None:
                cells.append(column.num_to_str(None, 1, None))
            else:
                cells.append(
                    column.num_to_str(
                        m.median / self._time_scale,
                        m.significant_figures,
                        m.iqr / m.median if m.has_warnings else None,
                    )
                )
        return cells

    @staticmethod
    def color_segment(segment: str, value: float, best_value: float) -> str:
        if value <= best_value * 1.01 or value <= best_value + 100e-9:
            return BEST + BOLD + segment + TERMINATE * 2
        if value <= best_value * 1.1:
            return GOOD + BOLD + segment + TERMINATE * 2
        if value >= best_value * 5:
            return VERY_BAD + BOLD + segment + TERMINATE * 2
        if value >= best_value * 2:
            return BAD + segment + TERMINATE * 2
        return segment

    def row_separator(self, overall_width: int) -> list[str]:
        if self._num_threads is None:
            return []
        return [f"{self._num_threads} threads: ".ljust(overall_width, "-")]

    def finalize_column_strings(self, column_strings: list[str], col_widths: list[int]):
        best_values: list[float | None] = [-1 for _ in column_strings]
        if self._colorize == Colorize.ROWWISE:
            row_min = min(r.median for r in self._results if r is not None)
            best_values = [row_min for _ in column_strings]
        elif self._colorize == Colorize.COLUMNWISE:
            best_values = [
                _optional_min(
                    r.median for r in column.get_results_for(self._row_group) if r is not None
                )
                for column in self._columns
            ]

        contents = [column_strings[0].ljust(col_widths[0])]
        for cell, width, result, best in zip(
            column_strings[1:], col_widths[1:], self._results, best_values
        ):
            cell = cell.center(width)
            if self._colorize != Colorize.NONE and result is not None and best is not None:
                cell = self.color_segment(cell, result.median, best)
            contents.append(cell)
        return contents


class Table:
    """The table of the results of one label."""

    def __init__(
        self,
        results: list[common.Measurement],
        colorize: Colorize,
        trim_significant_figures: bool,
        highlight_warnings: bool,
    ) -> None:
        if len({r.label for r in results}) != 1:
            raise AssertionError("All results must share the same label")
        self.results = results
        self._colorize = colorize
        self._trim_significant_figures = trim_significant_figures
        self._highlight_warnings = highlight_warnings
        self.label = results[0].label
        self.time_unit, self.time_scale = common.select_unit(min(r.median for r in results))

        self.row_keys = common.ordered_unique(self.row_fn(r) for r in results)
        # By thread count, then env; a stable sort keeps the statements in order of appearance.
        self.row_keys.sort(key=lambda key: key[:2])
        self.column_keys = common.ordered_unique(self.col_fn(r) for r in results)
        self.rows, self.columns = self.populate_rows_and_columns()

    @staticmethod
    def row_fn(m: common.Measurement) -> tuple[int, str, str]:
        return m.num_threads, m.env, m.as_row_name

    @staticmethod
    def col_fn(m: common.Measurement) -> str | None:
        return m.description

    def populate_rows_and_columns(self) -> tuple[tuple[_Row, ...], tuple[_Column, ...]]:
        row_position = {key: i for i, key in enumerate(self.row_keys)}
        col_position = {key: i for i, key in enumerate(self.column_keys)}
        ordered: list[list[common.Measurement | None]] = [
            [None] * len(self.column_keys) for _ in self.row_keys
        ]
        for r in self.results:
            ordered[row_position[self.row_fn(r)]][col_position[self.col_fn(r)]] = r

        unique_envs = {r.env for r in self.results}
        render_env = len(unique_envs) > 1
        env_str_len = max(len(e) for e in unique_envs) if render_env else 0
        row_name_str_len = max(len(r.as_row_name) for r in self.results)

        rows: list[_Row] = []
        rows_by_group: list[list[list[common.Measurement | None]]] = []
        prior_num_threads, prior_env, row_group = -1, "", -1
        for (num_threads, env, _), row in zip(self.row_keys, ordered):
            thread_transition = num_threads != prior_num_threads
            if thread_transition:
                prior_num_threads, prior_env = num_threads, ""
                row_group += 1
                rows_by_group.append([])
            rows.append(
                _Row(
                    results=row,
                    row_group=row_group,
                    render_env=render_env and env != prior_env,
                    env_str_len=env_str_len,
                    row_name_str_len=row_name_str_len,
                    time_scale=self.time_scale,
                    colorize=self._colorize,
                    num_threads=num_threads if thread_transition else None,
                )
            )
            rows_by_group[-1].append(row)
            prior_env = env

        columns = tuple(
            _Column(
                grouped_results=[tuple(row[i] for row in group) for group in rows_by_group],
                time_scale=self.time_scale,
                time_unit=self.time_unit,
                trim_significant_figures=self._trim_significant_figures,
                highlight_warnings=self._highlight_warnings,
            )
            for i in range(len(self.column_keys))
        )
        for row in rows:
            row.register_columns(columns)
        return tuple(rows), columns

    def render(self) -> str:
        # A result without a description has an unnamed column (PyTorch fails on one).
        header = [""] + ["" if key is None else str(key) for key in self.column_keys]
        string_rows = [header] + [row.as_column_strings() for row in self.rows]
        num_cols = max(len(r) for r in string_rows)
        for r in string_rows:
            r.extend([""] * (num_cols - len(r)))

        col_widths = [max(len(cell) for cell in column) for column in zip(*string_rows)]
        lines = ["  |  ".join(cell.center(w) for cell, w in zip(string_rows[0], col_widths))]
        overall_width = len(lines[0])
        for string_row, row in zip(string_rows[1:], self.rows):
            lines.extend(row.row_separator(overall_width))
            lines.append("  |  ".join(row.finalize_column_strings(string_row, col_widths)))

        has_warnings = self._highlight_warnings and any(r.has_warnings for r in self.results)
        title = f" {self.label or ''} ".center(overall_width - 2, "-")
        legend = (
            "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
            if has_warnings
            else ""
        )
        body = "\n".join(lines)
        unit = self.time_unit
        return (
            f"[{title}]\n{body}\n\nTimes are in {common.unit_to_english(unit)}s ({unit}).\n{legend}"
        )


class Compare:
    """Formats many Measurements as tables for side-by-side reading.

    Replicates (equal TaskSpecs) are merged first. There is one table per `label`; its columns
    are the `description`s, its rows the `sub_label`s (or stmts) grouped by `num_threads` (and
    prefixed by `env` when the table mixes several). Print it with :meth:`print` or `str()`.

    Args:
        results: the Measurements to display.
    """

    def __init__(self, results: list[common.Measurement]) -> None:
        self._results: list[common.Measurement] = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self) -> str:
        return "\n".join(self._render())

    def extend_results(self, results: Iterable[common.Measurement]) -> None:
        """Adds results to those already held; each must be a Measurement."""
        results = list(results)
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Prints each value with only the figures its spread supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colors cells by how they compare with the best of their column (default) or row."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Marks high-variance cells with (! XX%), XX being their IQR as a % of the median."""
        self._highlight_warnings = True

    def print(self) -> None:
        """Prints the tables."""
        print(str(self))

    def _render(self) -> list[str]:
        results = common.Measurement.merge(self._results)
        grouped = self._group_by_label(results)
        return [self._layout(group) for group in grouped.values()]

    def _group_by_label(self, results: list[common.Measurement]):
        grouped: dict[str | None, list[common.Measurement]] = collections.defaultdict(list)
        for r in results:
            grouped[r.label].append(r)
        return grouped

    def _layout(self, results: list[common.Measurement]) -> str:
        table = Table(
            results, self._colorize, self._trim_significant_figures, self._highlight_warnings
        )
        return table.render()
