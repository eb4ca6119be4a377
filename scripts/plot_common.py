# SPDX-License-Identifier: MIT
"""Helpers shared by plot_sweep.py and plot_validation.py: reading nocflow's CSV files by
column name, number parsing, tick labels, and writing figures.

Contract: tables are read with the csv module into lists of dicts keyed by column name, so a
column nocflow adds later is simply ignored; a column a plot needs and the file lacks is a
PlotError naming the file and the column. Nothing here calls sys.exit(); run_script() turns a
PlotError into one message and exit code 2.
"""
import argparse
import csv
import math
import os
import sys

try:
    import matplotlib
except ModuleNotFoundError as missing:  # one line and exit code 2, not a traceback
    script = os.path.splitext(os.path.basename(sys.argv[0]))[0]
    print(f"{script}: needs the Python module '{missing.name}': run it with /usr/bin/python3 and "
          "Debian's python3-matplotlib (scripts/install-deps.sh)", file=sys.stderr)
    sys.exit(2)

matplotlib.use("Agg")  # headless: no display needed
import matplotlib.pyplot as plt  # noqa: E402  (after use())
import matplotlib.ticker as ticker  # noqa: E402

DPI = 130
FIGSIZE = (8, 5)  # inches, before a legend placed outside the axes widens it


class PlotError(Exception):
    """A problem with the input that stops a script (missing file, missing column...)."""


def read_table(path):
    """Returns (columns, rows) of a CSV file with a header line; rows are dicts."""
    if os.path.isdir(path):
        raise PlotError(f"{path} is a folder: give the CSV file in it (its results.csv or validation.csv)")
    if not os.path.exists(path):
        raise PlotError(f"{path}: no such file")
    if not os.path.isfile(path):
        raise PlotError(f"{path}: not a regular file (expected a CSV file)")
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames:
            raise PlotError(f"{path}: empty file (expected a header line)")
        columns = [c.strip() for c in reader.fieldnames]
        reader.fieldnames = columns
        # A short row's missing cells read as "" (DictReader gives None); cells past the header are dropped.
        rows = [{k: (v if isinstance(v, str) else "") for k, v in row.items() if k is not None} for row in reader]
        rows = [row for row in rows if any(v.strip() for v in row.values())]
    return columns, rows


def require_columns(path, columns, needed, what):
    missing = [c for c in needed if c not in columns]
    if missing:
        raise PlotError(
            f"{path}: missing column(s) {', '.join(missing)}; is this {what}? (columns: {', '.join(columns)})"
        )


def number(text):
    """A finite float from a CSV cell, or None for an empty, non-numeric or non-finite cell."""
    try:
        v = float((text or "").strip())
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def bytes_label(n):
    """1024 -> '1 KiB', 65536 -> '64 KiB', 1048576 -> '1 MiB', 100 -> '100 B'."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            v = n / scale
            return f"{v:g} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n:g} B"


def count_label(v, _pos=None, digits=3):
    """120000 -> '120k', 1500000 -> '1.5M', 950 -> '950' (significant digits: `digits`)."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(v) >= scale:
            return f"{v / scale:.{digits}g}{unit}"
    return f"{v:.{digits}g}"


def set_log_count_axis(axis, values):
    """A log axis of counts (cycles) labelled as 100k, 200k, 1M...: at 1, 2, 5 x 10^k, denser
    when the values span little more than a decade, only at powers of ten past four decades;
    values within 50 % of each other get plain ticks, with the digits that tell them apart
    (29.3k to 29.6k read 29.4k five times)."""
    if values and min(values) > 0 and max(values) < 1.5 * min(values):
        step = (max(values) - min(values)) / 4 or max(values) / 10
        digits = max(3, math.floor(math.log10(max(values) / step)) + 2)
        axis.set_major_locator(ticker.MaxNLocator(5))
        axis.set_major_formatter(ticker.FuncFormatter(lambda v, p: count_label(v, p, digits)))
        axis.set_minor_locator(ticker.NullLocator())
        return
    decades = math.log10(max(values) / min(values)) if values and min(values) > 0 else 1.0
    subs = (1.0, 1.5, 2.0, 3.0, 5.0, 7.0) if decades < 1.5 else (1.0, 2.0, 5.0) if decades < 4 else (1.0,)
    axis.set_major_locator(ticker.LogLocator(base=10, subs=subs))
    axis.set_major_formatter(ticker.FuncFormatter(count_label))
    axis.set_minor_formatter(ticker.NullFormatter())


def set_log2_ticks(ax, values, labels=None):
    """Log (base 2) x axis with one tick per value, labelled by labels[value] or the value."""
    values = sorted(set(values))
    ax.set_xscale("log", base=2)
    ax.set_xticks(values)
    ax.set_xticklabels([labels[v] if labels else f"{v:g}" for v in values])
    ax.xaxis.set_minor_locator(ticker.NullLocator())
    if len(values) == 1:
        ax.set_xlim(values[0] / 2, values[0] * 2)
    else:
        ax.set_xlim(values[0] / 1.4, values[-1] * 1.4)


def legend_outside(ax, handles=None, labels=None, **kwargs):
    """A legend to the right of the axes, so it never covers data."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    return ax.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
                     fontsize="small", **kwargs)


def save(fig, out_dir, name, written):
    """Writes fig as out_dir/name (PNG), closes it and records the path in written."""
    path = os.path.join(out_dir, name)
    try:
        fig.savefig(path, dpi=DPI, bbox_inches="tight")
    except OSError as e:
        raise PlotError(f"cannot write {path}: {e.strerror}")
    finally:
        plt.close(fig)
    written.append(path)
    return path


def output_dir(csv_path, out):
    """--out, or the CSV's folder; created if missing."""
    d = out if out else (os.path.dirname(os.path.abspath(csv_path)) or ".")
    try:
        os.makedirs(d, exist_ok=True)
    except OSError as e:  # a file in its place, a folder that cannot be made
        raise PlotError(f"--out {d}: cannot create the folder: {e.strerror}")
    return d


def run_script(name, description, csv_help, plot, argv=None):
    """A plot script's command line: CSV [--out DIR]. plot(csv_path, out, written) reads the
    CSV, then draws into output_dir(csv_path, out) (so a bad CSV creates nothing); the PNGs
    written are listed, a PlotError is one message and exit code 2."""
    p = argparse.ArgumentParser(prog=name, description=description)
    p.add_argument("csv", help=csv_help)
    p.add_argument("--out", help="folder for the PNGs (default: the CSV's folder)")
    a = p.parse_args(argv)
    written = []
    try:
        plot(a.csv, a.out, written)
    except PlotError as e:
        print(f"{name}: {e}", file=sys.stderr)
        return 2
    for path in written:
        print(f"{name}: wrote {path}")
    return 0
