#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Plot a `nocflow validate` validation.csv: the analytic cost models against the cycle-level
microbenchmarks.

    /usr/bin/python3 scripts/plot_validation.py out/validate/validation.csv [--out DIR]

Writes into DIR (default: the CSV's folder):

    validation_error_vs_size.png        |linkload error| (%) vs tensor size, one panel per
                                        redistribution type, one line per topology
    validation_paper_error_vs_size.png  the same for the paper model (its errors are 10-100x
                                        larger, so it gets its own figure and a log y axis)
    validation_error_vs_mesh.png        mean |linkload error| (%) per type vs mesh size: left
                                        below saturation only, right all cases
    validation_fitted_error_vs_mesh.png the same for linkload_fitted (router contention
                                        calibrated per machine), without the case each machine
                                        was fitted on; only when the CSV has it
    validation_decomposition.png        only when the CSV has error-decomposition columns
                                        (hop_latency_cycles, serialization_cycles,
                                        contention_cycles...): each component's mean share of
                                        the simulated cycles, per type

Errors are the signed fractions predicted / simulated - 1 of the CSV; plots show their
absolute value in percent. Cases that move nothing (simulated_cycles 0) are left out. A case is
near saturation when busiest_link_flits_per_cycle >= 0.8 (as `nocflow validate`'s summary):
drawn with hollow markers. Columns are read by name; unknown columns are ignored. Needs
matplotlib (Debian's python3-matplotlib).
"""
import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree (the tests run from it)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot_common import (PlotError, bytes_label, legend_outside, number, output_dir, plt,  # noqa: E402
                         read_table, require_columns, run_script, save, set_log2_ticks)
import matplotlib.ticker as ticker  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402

NEAR_SATURATION = 0.8  # flits per cycle on the busiest link (sim/cli/cmd_validate.cpp)
TYPES = ["NONE", "LOCAL", "ALL_GATHER", "SCATTER", "ALL_TO_ALL", "ALL_REDUCE", "AFTER_REDUCE", "HALO", "HALO_2D", "GROUP_GATHER"]
MODELS = ["linkload", "linkload_fitted", "paper"]
# The simulated time's parts (nocflow validate; sim/README.md), in stacking order. The models'
# own terms (paper_latency_cycles, linkload_load_cycles, ...) are predictions, not parts of it.
DECOMPOSITION_PARTS = ["hop_latency_cycles", "serialization_cycles", "contention_cycles"]
MARKERS = "osD^vP*Xh<>p"


class Case:
    """One row of validation.csv that moved data."""

    def __init__(self, row, columns):
        self.row = row
        self.topology = row["topology"].strip()
        self.kind, self.pes, self.shape = parse_topology(self.topology)
        self.type = row["type"].strip()
        self.size = number(row["tensor_bytes"])
        self.simulated = number(row["simulated_cycles"])
        busiest = number(row.get("busiest_link_flits_per_cycle"))
        self.near_saturation = busiest is not None and busiest >= NEAR_SATURATION
        self.error = {}
        fitted_here = number(row.get("slowdown_fitted_here")) == 1  # linkload_fitted's fit, not a prediction
        for m in MODELS:
            if m == "linkload_fitted" and fitted_here:
                continue
            e = number(row.get(f"{m}_error"))
            if e is None and f"{m}_error" not in columns:
                predicted = number(row.get(f"{m}_cycles"))
                e = predicted / self.simulated - 1 if predicted is not None else None
            if e is not None:
                self.error[m] = e


def parse_topology(text):
    """'mesh 8x8' -> ('mesh', 64, '8x8'); 'crossbar 16' -> ('crossbar', 16, '16')."""
    m = re.fullmatch(r"(\S+)\s+(\d+)x(\d+)", text)
    if m:
        return m.group(1), int(m.group(2)) * int(m.group(3)), f"{m.group(2)}x{m.group(3)}"
    m = re.fullmatch(r"(\S+)\s+(\d+)", text)
    if m:
        return m.group(1), int(m.group(2)), m.group(2)
    return text, None, text


class Validation:
    def __init__(self, path):
        self.path = path
        columns, rows = read_table(path)
        require_columns(path, columns, ["topology", "type", "tensor_bytes", "simulated_cycles"],
                        "a `nocflow validate` validation.csv")
        self.columns = columns
        self.models = [m for m in MODELS if f"{m}_error" in columns or f"{m}_cycles" in columns]
        if not self.models:
            raise PlotError(f"{path}: no model column (linkload_error, paper_error, ...)")
        self.total_rows = len(rows)
        self.cases, self.still = [], {}
        for r in rows:
            simulated = number(r.get("simulated_cycles"))
            if simulated is None or simulated <= 0 or number(r.get("tensor_bytes")) is None:
                t = (r.get("type") or "?").strip()
                self.still[t] = self.still.get(t, 0) + 1
                continue
            self.cases.append(Case(r, columns))
        if not self.cases:
            raise PlotError(f"{path}: no case moved data among {self.total_rows} rows (nothing to plot)")
        seen = []
        for c in self.cases:
            if c.type not in seen:
                seen.append(c.type)
        self.types = [t for t in TYPES if t in seen] + [t for t in seen if t not in TYPES]
        topologies = {c.topology: c for c in self.cases}
        # Meshes by size, then the other topologies (crossbars) by size.
        self.topologies = sorted(topologies, key=lambda t: (topologies[t].kind != "mesh", topologies[t].pes or 0, t))
        self.sizes = sorted({c.size for c in self.cases})
        self.parts = [p for p in DECOMPOSITION_PARTS if p in columns]

    def topology_colour(self, topology):
        meshes = [t for t in self.topologies if t.startswith("mesh")]
        if topology in meshes:
            cmap = plt.get_cmap("viridis")
            return cmap(0.85 * meshes.index(topology) / max(1, len(meshes) - 1))
        others = [t for t in self.topologies if t not in meshes]
        return ["#d62728", "#ff7f0e", "#e377c2", "#8c564b"][others.index(topology) % 4]

    def topology_marker(self, topology):
        return "D" if not topology.startswith("mesh") else "o"

    def source(self):
        folder = os.path.basename(os.path.dirname(os.path.abspath(self.path)))
        return f"{folder}/{os.path.basename(self.path)}"

    def left_out(self):
        if not self.still:
            return ""
        return "; moving nothing, not shown: " + ", ".join(f"{t} x{n}" for t, n in self.still.items())


def grid(n):
    cols = 1 if n == 1 else 2 if n <= 4 else 3
    return (n + cols - 1) // cols, cols


def plot_error_vs_size(v, model, out_dir, name, written, log_y):
    types = [t for t in v.types if any(c.type == t and model in c.error for c in v.cases)]
    if not types:
        print(f"plot_validation: no {model} errors: {name} skipped")
        return
    rows, cols = grid(len(types))
    fig, axes = plt.subplots(rows, cols, figsize=(4.0 * cols + 1.0, 2.9 * rows + 0.9), squeeze=False,
                             sharex=True)
    style = "dashed" if model == "paper" else "solid"
    for i, t in enumerate(types):
        ax = axes[i // cols][i % cols]
        ys = [100 * abs(c.error[model]) for c in v.cases if c.type == t and model in c.error]
        positive = [y for y in ys if y > 0]
        panel_log = log_y and positive and max(positive) / min(positive) >= 10
        for k, topo in enumerate(v.topologies):
            pts = sorted((c.size, 100 * abs(c.error[model]), c.near_saturation) for c in v.cases
                         if c.type == t and c.topology == topo and model in c.error)
            if panel_log:
                pts = [p for p in pts if p[1] > 0]  # an exact prediction has no place on a log axis
            if not pts:
                continue
            colour, marker = v.topology_colour(topo), v.topology_marker(topo)
            # Each later machine drawn smaller and on top: a series identical to an earlier one
            # (LOCAL on 2x4 and 4x4, zero errors) shows as markers nested in its markers.
            size, width = max(3.0, 8.0 - 1.3 * k), max(0.9, 2.6 - 0.4 * k)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colour, linestyle=style, lw=width, zorder=2 + k)
            for x, y, near in pts:
                ax.plot([x], [y], linestyle="none", marker=marker, markersize=size, color=colour, zorder=2 + k,
                        markerfacecolor="white" if near else colour, markeredgewidth=1.2)
        ax.grid(True, alpha=0.35)
        zeros = len(ys) - len(positive) if panel_log else 0
        ax.set_title(t + (" (log y" + (f"; {zeros} exact not shown" if zeros else "") + ")" if panel_log else ""),
                     fontsize="medium", fontweight="bold")
        if panel_log:
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _pos: f"{y:,.0f}" if y >= 1 else f"{y:g}"))
            ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        else:
            ax.set_ylim(0, 1.1 * max(ys) if ys and max(ys) > 0 else 1)
        set_log2_ticks(ax, v.sizes, {s: bytes_label(s) for s in v.sizes})
        ax.tick_params(axis="x", labelrotation=35, labelsize="small")
        if i % cols == 0:
            ax.set_ylabel("|error| (%)")
        if i // cols == rows - 1 or i + cols >= len(types):
            ax.set_xlabel("tensor size")
            ax.tick_params(axis="x", labelbottom=True)
    for j in range(len(types), rows * cols):
        axes[j // cols][j % cols].set_visible(False)
    fig.suptitle(f"{model} model: |predicted / simulated - 1| vs tensor size", fontweight="bold",
                 y=0.995)
    scales = "y scales differ per panel" + ("; log where errors span >= 10x" if log_y else "") + \
        "; each machine drawn smaller than the one before, on top"
    fig.text(0.5, 0.95 if rows > 1 else 0.9, f"{v.source()}{v.left_out()}; {scales}",
             ha="center", fontsize="small", color="0.3")
    handles = [Line2D([], [], color=v.topology_colour(t), linestyle=style, marker=v.topology_marker(t), lw=1.6)
               for t in v.topologies]
    labels = list(v.topologies)
    handles += [Line2D([], [], linestyle="none", marker="o", color="0.3"),
                Line2D([], [], linestyle="none", marker="o", color="0.3", markerfacecolor="white")]
    labels += [f"busiest link < {NEAR_SATURATION} flits/cycle", f"near saturation (>= {NEAR_SATURATION})"]
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(len(labels), 4),
               fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, 0.02, 1, 0.95 if rows > 1 else 0.9))
    save(fig, out_dir, name, written)


def mean(values):
    return sum(values) / len(values) if values else None


def plot_error_vs_mesh(v, out_dir, written, model, name):
    if model not in v.models:
        print(f"plot_validation: no {model} errors: {name} skipped")
        return
    types = [t for t in v.types if any(c.type == t and model in c.error for c in v.cases)]
    meshes = [t for t in v.topologies if t.startswith("mesh")]
    others = [t for t in v.topologies if t not in meshes]
    # Categorical x: meshes by size, then (after a gap) the other topologies.
    xpos = {t: i for i, t in enumerate(meshes)}
    xpos.update({t: len(meshes) + 0.6 + j for j, t in enumerate(others)})
    first = {t: next(c for c in v.cases if c.topology == t) for t in v.topologies}
    fig, axes = plt.subplots(1, 2, figsize=(11, 5), sharey=True)
    near_total = sum(1 for c in v.cases if c.near_saturation and model in c.error)
    panels = [(axes[0], False, f"below saturation (busiest link < {NEAR_SATURATION} flits/cycle; "
                               f"{near_total} near-saturation cases excluded)"),
              (axes[1], True, "all cases (near saturation included)")]
    for ax, include_near, title in panels:
        for k, t in enumerate(types):
            colour, marker = f"C{k % 10}", MARKERS[k % len(MARKERS)]
            points = []
            for topo in v.topologies:
                errs = [100 * abs(c.error[model]) for c in v.cases if c.type == t and c.topology == topo
                        and model in c.error and (include_near or not c.near_saturation)]
                if errs:
                    points.append((xpos[topo], mean(errs), topo))
            line = [p for p in points if p[2] in meshes]
            if line:
                ax.plot([p[0] for p in line], [p[1] for p in line], color=colour, marker=marker, lw=1.8,
                        markersize=6)
            for x, y, topo in points:
                if topo not in meshes:
                    ax.plot([x], [y], linestyle="none", marker=marker, markersize=7, color=colour,
                            markerfacecolor="white", markeredgewidth=1.5)
        if others:
            ax.axvline(len(meshes) - 0.2, color="0.6", lw=0.8)
        ax.set_xticks([xpos[t] for t in v.topologies])
        ax.set_xticklabels([(first[t].shape if t in meshes else first[t].kind + " " + first[t].shape)
                            + (f"\n{first[t].pes} PEs" if first[t].pes else "") for t in v.topologies],
                           fontsize="small")
        ax.set_xlim(-0.5, max(xpos.values()) + 0.5)
        ax.set_title(title, fontsize="small")
        ax.set_xlabel("topology (meshes by size" + (", then crossbar: hollow markers)" if others else ")"))
        ax.grid(True, alpha=0.35)
    # After both panels: the axis is shared, and a limit set after the first froze its top there,
    # cutting off the second panel's larger errors.
    axes[0].set_ylim(bottom=0)
    axes[0].set_ylabel(f"mean |{model} error| (%)")
    fig.suptitle(f"{model} model: mean |predicted / simulated - 1| per redistribution type vs mesh size",
                 fontweight="bold")
    fitted = "; each machine's fitted case left out" if model == "linkload_fitted" else ""
    fig.text(0.5, 0.915, f"{v.source()}: mean over the tested tensor sizes{fitted}{v.left_out()}", ha="center",
             fontsize="small", color="0.3")
    handles = [Line2D([], [], color=f"C{k % 10}", marker=MARKERS[k % len(MARKERS)], lw=1.8) for k in range(len(types))]
    legend_outside(axes[1], handles, types, title="type")
    fig.tight_layout(rect=(0, 0, 1, 0.92))
    save(fig, out_dir, name, written)


def plot_decomposition(v, out_dir, written):
    if not v.parts:
        print("plot_validation: no error-decomposition columns (hop_latency_cycles, serialization_cycles, "
              "contention_cycles...): validation_decomposition.png skipped")
        return
    types, shares = [], {p: [] for p in v.parts}
    rest = []
    for t in v.types:
        # Below saturation, as `nocflow validate`'s table and summary.csv take the shares.
        cases = [c for c in v.cases if c.type == t and not c.near_saturation]
        per_case = []
        for c in cases:
            parts = [number(c.row.get(p)) for p in v.parts]
            if all(x is not None for x in parts):
                per_case.append([100 * x / c.simulated for x in parts])
        if not per_case:
            continue
        types.append(f"{t}\n({len(per_case)} {'case' if len(per_case) == 1 else 'cases'})")
        for i, p in enumerate(v.parts):
            shares[p].append(mean([s[i] for s in per_case]))
        rest.append(100 - mean([sum(s) for s in per_case]))
    if not types:
        print("plot_validation: decomposition columns hold no numbers: validation_decomposition.png skipped")
        return
    fig, ax = plt.subplots(figsize=(9, 5))
    x = range(len(types))
    bottom = [0.0] * len(types)
    colours = ["#4c72b0", "#55a868", "#c44e52", "#8172b2", "#ccb974", "#64b5cd"]
    for i, p in enumerate(v.parts):
        label = p[: -len("_cycles")].replace("_", " ")
        ax.bar(x, shares[p], bottom=bottom, color=colours[i % len(colours)], label=label, width=0.65)
        bottom = [b + s for b, s in zip(bottom, shares[p])]
    unexplained = [max(0.0, r) for r in rest]
    if any(u > 0.05 for u in unexplained):
        ax.bar(x, unexplained, bottom=bottom, color="white", edgecolor="0.5", hatch="//", width=0.65,
               label="not attributed")
    ax.axhline(100, color="black", lw=1)
    ax.set_xticks(list(x))
    # Slanted: ten type names side by side ran into each other ("ALL_REDUCEAFTER_REDUCE").
    ax.set_xticklabels(types, fontsize="small", rotation=30, ha="right", rotation_mode="anchor")
    ax.set_ylabel("share of simulated cycles (%; mean over cases)")
    ax.set_ylim(bottom=0)
    ax.grid(True, axis="y", alpha=0.35)
    fig.suptitle(f"Simulated redistribution cycles by component, per type (below saturation: busiest link "
                 f"< {NEAR_SATURATION} flits/cycle)", fontweight="bold", fontsize="medium")
    ax.set_title(f"{v.source()}: columns {', '.join(v.parts)}", fontsize="small", color="0.3")
    legend_outside(ax)
    save(fig, out_dir, "validation_decomposition.png", written)


def plot_all(csv_path, out, written):
    v = Validation(csv_path)
    out_dir = output_dir(csv_path, out)
    if v.still:
        print("plot_validation: moving nothing (simulated 0 cycles), not plotted: "
              + ", ".join(f"{t} x{n}" for t, n in v.still.items()))
    plot_error_vs_size(v, "linkload", out_dir, "validation_error_vs_size.png", written, log_y=False)
    plot_error_vs_size(v, "paper", out_dir, "validation_paper_error_vs_size.png", written, log_y=True)
    plot_error_vs_mesh(v, out_dir, written, "linkload", "validation_error_vs_mesh.png")
    plot_error_vs_mesh(v, out_dir, written, "linkload_fitted", "validation_fitted_error_vs_mesh.png")
    plot_decomposition(v, out_dir, written)


def main(argv=None):
    return run_script("plot_validation", __doc__.split("\n\n")[0], "validation.csv written by `nocflow validate`",
                      plot_all, argv)


if __name__ == "__main__":
    sys.exit(main())
