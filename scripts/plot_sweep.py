#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Plot a `nocflow sweep` results.csv (format: configs/sweeps/README.md).

    /usr/bin/python3 scripts/plot_sweep.py out/ms/results.csv [--out DIR]

Writes into DIR (default: the CSV's folder), x axis the PEs of each point (log scale, ticks
labelled with the mesh shape when the sweep has a `mesh` axis, "xbar" for a crossbar's points,
read from a topology axis or else from config.resolved.yaml beside the CSV); when every point
has as many PEs, x is the first other axis that takes several values (e.g. router.vcs), its
values evenly spaced, in numeric order when they are numbers:

    sweep_cycles.png            total simulated cycles of one inference (or training step)
    sweep_speedup.png           greedy cycles / solver cycles, per non-greedy solver
                                (only points that have a greedy point with the same other axes)
    sweep_comm_share.png        communication_cycles / total_cycles: the share of the run's
                                critical path spent moving data (messages, barriers)
    sweep_prediction_error.png  the cost model's predicted / simulated - 1 (symmetric log scale
                                beyond ±10 % when an error passes 100 %)

Only rows with status `ok` are plotted. Rows are grouped into series by every axis except the
mesh (and by the mesh's rows:cols when shapes of as many PEs are swept, 4x4 beside 2x8, so that
no line joins two shapes at one x): colour is the network, line style the solver (greedy dashed, greedy-layout dash-dotted,
others solid), marker the values of any other axis that takes several values (cost_model,
router.vcs, ...). Axes with a single value are listed under the title. Points that pass their
SRAM (`fits_sram` false: the run held more than pe.sram_bytes) are ringed in red. Columns are read by
name; unknown columns are ignored. Needs matplotlib (Debian's python3-matplotlib).
"""
import math
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (the tests run from it)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_common import (FIGSIZE, PlotError, legend_outside, number, output_dir, plt,  # noqa: E402
                         read_table, require_columns, run_script, save, set_log2_ticks,
                         set_log_count_axis)
from matplotlib.lines import Line2D  # noqa: E402

X_AXIS = "mesh"          # drawn along x (as PEs); every other axis splits series
COLOUR_AXIS = "network"
STYLE_AXIS = "solver"
BASELINE = "greedy"
LINESTYLES = {"greedy": "--", "greedy-layout": "-.", "dp-local": ":"}  # every other solver: solid
MARKERS = "osD^vP*Xh<>p"
ASPECT = "mesh rows:cols"  # a series per aspect when shapes of as many PEs are swept


class Sweep:
    """The ok rows of a results.csv, their axes, and how each series is drawn."""

    def __init__(self, path):
        self.path = path
        columns, rows = read_table(path)
        require_columns(path, columns, ["point", "pes", "status", "total_cycles"], "a `nocflow sweep` results.csv")
        self.columns = columns
        # Axis columns sit between `point` and `pes` (configs/sweeps/README.md).
        self.axes = [c for c in columns[: columns.index("pes")] if c != "point"]
        self.total_rows = len(rows)
        self.not_ok = {}
        self.rows = []
        for r in rows:
            status = (r.get("status") or "").strip() or "(empty)"
            pes, total = number(r.get("pes")), number(r.get("total_cycles"))
            if status != "ok":
                self.not_ok[status] = self.not_ok.get(status, 0) + 1
            elif pes is None or pes <= 0 or total is None or total <= 0:
                self.not_ok["ok without cycles"] = self.not_ok.get("ok without cycles", 0) + 1
            else:
                r["_pes"], r["_total"] = pes, total
                self.rows.append(r)
        if not self.rows:
            raise PlotError(f"{path}: no row with status ok among {self.total_rows} (nothing to plot)")
        self.over_sram = sum(r.get("fits_sram") == "false" for r in self.rows)

        # Without a topology axis every point has the base config's (beside the CSV, if there).
        if "topology" not in self.axes and base_topology(path) == "crossbar":
            for r in self.rows:
                r["topology"] = "crossbar"
        # Mesh shapes of as many PEs (4x4, 2x8, 1x16) would share an x: a series per aspect.
        if X_AXIS in self.axes:
            shapes = {}
            for r in self.rows:
                r[ASPECT] = aspect(r)
                if r[ASPECT] != "crossbar":  # a topology axis tells a crossbar apart already
                    shapes.setdefault(r["_pes"], set()).add(r[ASPECT])
            if any(len(v) > 1 for v in shapes.values()):
                self.axes.append(ASPECT)
        self.values = {a: self._distinct(a) for a in self.axes}
        # x: the PEs, unless every point has as many (no mesh axis: e.g. router.vcs swept on one
        # mesh); then the first other axis that takes several values, its values in order.
        self.x_axis = X_AXIS
        if len({r["_pes"] for r in self.rows}) == 1:
            swept = [a for a in self.axes if a not in (X_AXIS, COLOUR_AXIS, STYLE_AXIS) and len(self.values[a]) > 1]
            if swept:
                self.x_axis = swept[0]
                numeric = all(number(v) is not None for v in self.values[self.x_axis])
                self.x_values = sorted(self.values[self.x_axis], key=number) if numeric else self.values[self.x_axis]
        for r in self.rows:
            r["_x"] = r["_pes"] if self.x_axis == X_AXIS else self.x_values.index(r[self.x_axis])
        self.group_axes = [a for a in self.axes if a not in (X_AXIS, self.x_axis)]
        self.variant_axes = [a for a in self.group_axes
                             if a not in (COLOUR_AXIS, STYLE_AXIS) and len(self.values[a]) > 1]
        self.fixed = [(a, self.values[a][0]) for a in self.axes
                      if a not in (X_AXIS, COLOUR_AXIS, STYLE_AXIS) and len(self.values[a]) == 1]
        if self.x_axis != X_AXIS:  # every point's machine: say its PEs (and shape, if an axis gave it)
            self.fixed.insert(0, ("PEs", f"{self.rows[0]['_pes']:g}"))
            # (several shapes of as many PEs: the legend tells them apart, by rows:cols)
            if X_AXIS in self.axes and len(self.values[X_AXIS]) == 1:
                self.fixed.insert(0, (X_AXIS, self.values[X_AXIS][0]))
        self.networks = self.values.get(COLOUR_AXIS, [])
        self.solvers = self.values.get(STYLE_AXIS, [])
        self.variants = sorted({self.variant(r) for r in self.rows}, key=self._first_seen_variant)
        self.colour_by_variant = len(self.networks) <= 1 and bool(self.variant_axes)
        if self.colour_by_variant and self.networks:
            self.fixed.insert(0, (COLOUR_AXIS, self.networks[0]))

    def _distinct(self, axis):
        seen = []
        for r in self.rows:
            if r[axis] not in seen:
                seen.append(r[axis])
        return seen

    def _first_seen_variant(self, v):
        return next(i for i, r in enumerate(self.rows) if self.variant(r) == v)

    def variant(self, row):
        return tuple(row[a] for a in self.variant_axes)

    def variant_values(self, variant):
        """A variant's values in its axes' order, each axis's own (batch 2 and clock 2 are '2, 2'),
        but for a crossbar's aspect, which repeats its topology."""
        return [value for axis, value in zip(self.variant_axes, variant)
                if not (axis == ASPECT and value == "crossbar" and "topology" in self.variant_axes)]

    def key(self, row, without=()):
        return tuple(row[a] for a in self.group_axes if a not in without)

    def series(self, rows=None):
        """{series key: rows sorted by PEs}, in first-seen order."""
        out = {}
        for r in rows if rows is not None else self.rows:
            out.setdefault(self.key(r), []).append(r)
        for v in out.values():
            v.sort(key=lambda r: r["_x"])
        return out

    # How one series looks. Colour: the network, unless there is one network and other axes
    # vary (then the other axes' values). Marker: the other axes' values if the colour is the
    # network, else the solver. Line style: the solver.
    def colour(self, row):
        if self.colour_by_variant:
            return f"C{self.variants.index(self.variant(row)) % 10}"
        if COLOUR_AXIS not in self.axes:
            return "C0"
        return f"C{self.networks.index(row[COLOUR_AXIS]) % 10}"

    def linestyle(self, row):
        return LINESTYLES.get(row[STYLE_AXIS], "-") if STYLE_AXIS in self.axes else "-"

    def marker(self, row):
        if self.variant_axes and (not self.colour_by_variant or STYLE_AXIS not in self.axes):
            return MARKERS[self.variants.index(self.variant(row)) % len(MARKERS)]
        if STYLE_AXIS in self.axes:
            return MARKERS[self.solvers.index(row[STYLE_AXIS]) % len(MARKERS)]
        return "o"

    def markers_show_solver(self):
        return STYLE_AXIS in self.axes and (self.colour_by_variant or not self.variant_axes)

    def x_ticks(self, ax, rows):
        """PEs on a log axis; ticks labelled with the mesh shape (and PEs) when mesh is an axis.
        With x another axis: its values, evenly spaced."""
        if self.x_axis != X_AXIS:
            ax.set_xticks(range(len(self.x_values)))
            ax.set_xticklabels(self.x_values)
            ax.set_xlim(-0.5, len(self.x_values) - 0.5)
            ax.set_xlabel(f"{self.x_axis} (every point on {self.rows[0]['_pes']:g} PEs)")
            return
        pes = sorted({r["_pes"] for r in rows})
        labels = None
        if X_AXIS in self.axes:
            labels = {}
            for p in pes:
                shapes = []
                for r in rows:
                    # A crossbar point's mesh value only sets its port count (k x k ports).
                    shape = "xbar" if r.get("topology") == "crossbar" else r[X_AXIS]
                    if shape.isdigit():  # mesh: K is K x K
                        shape = f"{shape}x{shape}"
                    if r["_pes"] == p and shape not in shapes:
                        shapes.append(shape)
                labels[p] = "/".join(shapes) + f"\n{p:g}"
            ax.set_xlabel("PEs (tick: mesh shape, then PEs; log scale)")
        else:
            ax.set_xlabel("PEs (log scale)")
        set_log2_ticks(ax, pes, labels)

    def subtitle(self, shown):
        parts = [f"{a}={v}" for a, v in self.fixed]
        skipped = ", ".join(f"{n} {s}" for s, n in self.not_ok.items())
        parts.append(f"{shown} of {self.total_rows} points" + (f" ({skipped} not plotted)" if skipped else ""))
        if self.over_sram:
            parts.append(f"{self.over_sram} ringed in red pass their SRAM (fits_sram false)")
        return f"{os.path.basename(os.path.dirname(os.path.abspath(self.path)))}/" \
               f"{os.path.basename(self.path)}: " + ", ".join(parts)

    def legend(self, ax, solvers=None, extra=()):
        """One legend in sections: colour = network, line style = solver, marker = other axes."""
        handles, labels, headers = [], [], []

        def header(text):
            headers.append(len(labels))
            handles.append(Line2D([], [], linestyle="none"))
            labels.append(text)

        if COLOUR_AXIS in self.axes and not self.colour_by_variant:
            header(COLOUR_AXIS)
            for i, n in enumerate(self.networks):
                handles.append(Line2D([], [], color=f"C{i % 10}", lw=2.5))
                labels.append(short_network(n))
        if STYLE_AXIS in self.axes:
            header(STYLE_AXIS)
            for i, s in enumerate(solvers if solvers is not None else self.solvers):
                m = MARKERS[self.solvers.index(s) % len(MARKERS)] if self.markers_show_solver() else None
                handles.append(Line2D([], [], color="0.2", lw=1.5, linestyle=LINESTYLES.get(s, "-"), marker=m))
                labels.append(s)
        if self.variant_axes:
            header(", ".join(self.variant_axes))
            for i, v in enumerate(self.variants):
                if self.colour_by_variant:
                    m = MARKERS[i % len(MARKERS)] if STYLE_AXIS not in self.axes else None
                    handles.append(Line2D([], [], color=f"C{i % 10}", lw=2, marker=m))
                else:
                    handles.append(Line2D([], [], color="0.35", linestyle="none", marker=MARKERS[i % len(MARKERS)],
                                          markersize=7))
                labels.append(", ".join(self.variant_values(v)))
        if extra:
            header("reference")
            for handle, label in extra:
                handles.append(handle)
                labels.append(label)
        leg = legend_outside(ax, handles, labels, handlelength=2.8)
        if leg is not None:
            for i in headers:
                leg.get_texts()[i].set_fontweight("bold")
        return leg


def base_topology(csv_path):
    """The topology kind of config.resolved.yaml beside a results.csv, or None."""
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(csv_path)), "config.resolved.yaml")) as f:
            m = re.search(r"^topology:\n  kind: (\w+)", f.read(), re.M)
    except OSError:
        return None
    return m.group(1) if m else None


def aspect(row):
    """rows:cols of a mesh point in lowest terms (4x4 -> 1:1, 2x8 -> 1:4); 'crossbar' for one."""
    if row.get("topology") == "crossbar":
        return "crossbar"
    m = re.fullmatch(r"\s*(\d+)\s*(?:x\s*(\d+))?\s*", row.get(X_AXIS) or "")
    if not m:
        return row.get(X_AXIS) or ""
    r = int(m.group(1))
    c = int(m.group(2)) if m.group(2) else r
    g = math.gcd(r, c) or 1
    return f"{r // g}:{c // g}"


def short_network(name):
    """zoo:resnet18 -> resnet18; ../networks/vgg5.yaml -> vgg5.yaml."""
    if name.startswith("zoo:"):
        return name[4:]
    return os.path.basename(name) or name


def new_figure(title, sweep, shown):
    fig, ax = plt.subplots(figsize=FIGSIZE)
    fig.suptitle(title, fontweight="bold", x=0.02, ha="left")
    ax.set_title(sweep.subtitle(shown), fontsize="small", loc="left", color="0.3")
    ax.grid(True, which="major", alpha=0.35)
    return fig, ax


def draw_series(ax, sweep, series, y_of):
    """Draws each series as y_of(row) over PEs; returns the rows drawn."""
    drawn = []
    equal_before = {}  # a series' points: how many drawn series had them already
    for rows in series.values():
        pts = [(r["_x"], y_of(r), r) for r in rows]
        pts = [p for p in pts if p[1] is not None]
        if not pts:
            continue
        first = pts[0][2]
        # A series equal to one drawn already would hide under it: its markers ring the earlier
        # ones, hollow and larger for each more equal series (a 1x4 mesh under 4x1).
        shape = tuple((p[0], p[1]) for p in pts)
        hidden = equal_before.get(shape, 0)
        equal_before[shape] = hidden + 1
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=sweep.colour(first),
                linestyle=sweep.linestyle(first), marker=sweep.marker(first) or ("o" if hidden else None),
                markersize=6 + 5 * hidden, markerfacecolor="none" if hidden else None, lw=1.8, alpha=0.85)
        drawn += [p[2] for p in pts]
        # A point that passed its SRAM (fits_sram false) ran as if it fitted: ring it.
        over = [p for p in pts if p[2].get("fits_sram") == "false"]
        if over:
            ax.plot([p[0] for p in over], [p[1] for p in over], linestyle="none", marker="o", markersize=13,
                    markerfacecolor="none", markeredgecolor="red", markeredgewidth=1.5)
    return drawn


def plot_cycles(sweep, out_dir, written):
    trained = {r.get("train", "") not in ("", "none") for r in sweep.rows}
    what = {frozenset({False}): "one inference", frozenset({True}): "one training step"}.get(
        frozenset(trained), "one inference or training step (train axis)")
    fig, ax = new_figure(f"Simulated cycles of {what}", sweep, len(sweep.rows))
    drawn = draw_series(ax, sweep, sweep.series(), lambda r: r["_total"])
    ax.set_yscale("log")
    set_log_count_axis(ax.yaxis, [r["_total"] for r in drawn])
    ax.set_ylabel("total cycles (simulated; log scale)")
    sweep.x_ticks(ax, drawn)
    sweep.legend(ax)
    save(fig, out_dir, "sweep_cycles.png", written)


def plot_speedup(sweep, out_dir, written):
    if STYLE_AXIS not in sweep.axes:
        print(f"plot_sweep: no `{STYLE_AXIS}` axis: sweep_speedup.png skipped")
        return
    others = [s for s in sweep.solvers if s != BASELINE]
    if BASELINE not in sweep.solvers or not others:
        print(f"plot_sweep: speed-up needs `{BASELINE}` and another solver "
              f"(solvers: {', '.join(sweep.solvers)}): sweep_speedup.png skipped")
        return
    base = {}
    for r in sweep.rows:
        if r[STYLE_AXIS] == BASELINE:
            base[(sweep.key(r, without=(STYLE_AXIS,)), r.get(X_AXIS), r["_x"])] = r["_total"]

    def speedup(r):
        b = base.get((sweep.key(r, without=(STYLE_AXIS,)), r.get(X_AXIS), r["_x"]))
        return b / r["_total"] if b else None

    rows = [r for r in sweep.rows if r[STYLE_AXIS] != BASELINE and speedup(r) is not None]
    if not rows:
        print(f"plot_sweep: no point has a `{BASELINE}` point with the same other axes: sweep_speedup.png skipped")
        return
    fig, ax = new_figure(f"Speed-up over the {BASELINE} solver ({BASELINE} cycles / solver cycles)", sweep,
                         len(rows))
    drawn = draw_series(ax, sweep, sweep.series(rows), speedup)
    ax.axhline(1.0, color="0.45", lw=1.2, linestyle=":", zorder=0)
    ax.set_ylabel(f"speed-up over {BASELINE} (x; > 1: faster)")
    ys = [speedup(r) for r in drawn] + [1.0]
    pad = 0.08 * (max(ys) - min(ys)) or 0.05
    ax.set_ylim(min(ys) - pad, max(ys) + pad)
    sweep.x_ticks(ax, drawn)
    sweep.legend(ax, solvers=[s for s in others if any(r[STYLE_AXIS] == s for r in rows)],
                 extra=[(Line2D([], [], color="0.45", lw=1.2, linestyle=":"), f"{BASELINE} (1.0)")])
    save(fig, out_dir, "sweep_speedup.png", written)


def plot_percent(sweep, out_dir, written, column, name, title, ylabel, percent, zero_line=False,
                 symlog_over=None):
    """One series per network and solver of percent(value of column, row), in %."""
    if column not in sweep.columns:
        print(f"plot_sweep: no {column} column: {name} skipped")
        return

    def value(r):
        x = number(r.get(column))
        return None if x is None else percent(x, r)

    fig, ax = new_figure(title, sweep, len(sweep.rows))
    drawn = draw_series(ax, sweep, sweep.series(), value)
    if zero_line:
        ax.axhline(0.0, color="black", lw=1, zorder=0)
    else:
        ax.set_ylim(bottom=0)
    values = [abs(value(r)) for r in drawn if value(r) is not None]
    if symlog_over is not None and values and max(values) > symlog_over:
        # One model hundreds of % off would flatten the others onto 0: linear to ±10 %, log beyond.
        ax.set_yscale("symlog", linthresh=10)
        ylabel = ylabel.split(";")[0] + "; log beyond ±10 %)"
    ax.set_ylabel(ylabel)
    sweep.x_ticks(ax, drawn)
    sweep.legend(ax)
    save(fig, out_dir, name, written)


def plot_comm_share(sweep, out_dir, written):
    plot_percent(sweep, out_dir, written, "communication_cycles", "sweep_comm_share.png",
                 "Share of the run's critical path spent moving data", "communication / total cycles (%)",
                 lambda cycles, r: 100.0 * cycles / r["_total"])


def plot_prediction_error(sweep, out_dir, written):
    # Without a cost_model column the sweep ran its default (configs/sweeps/README.md).
    model = "" if "cost_model" in sweep.axes else " (linkload, the sweep's default)"
    plot_percent(sweep, out_dir, written, "prediction_error", "sweep_prediction_error.png",
                 f"Cost model{model} prediction error (predicted / simulated - 1)",
                 "prediction error (%; < 0: under-predicts)", lambda error, r: 100.0 * error, zero_line=True,
                 symlog_over=100)


def plot_all(csv_path, out, written):
    sweep = Sweep(csv_path)
    out_dir = output_dir(csv_path, out)
    if sweep.not_ok:
        print("plot_sweep: not plotted: " + ", ".join(f"{n} {s}" for s, n in sweep.not_ok.items())
              + f" of {sweep.total_rows} rows")
    if sweep.over_sram:
        print(f"plot_sweep: {sweep.over_sram} plotted points pass their SRAM (fits_sram false; ringed in red): "
              "their cycles assume the data fits")
    for plot in (plot_cycles, plot_speedup, plot_comm_share, plot_prediction_error):
        plot(sweep, out_dir, written)


def main(argv=None):
    return run_script("plot_sweep", __doc__.split("\n\n")[0], "results.csv written by `nocflow sweep`",
                      plot_all, argv)


if __name__ == "__main__":
    sys.exit(main())
