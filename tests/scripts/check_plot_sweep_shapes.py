#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""scripts/plot_sweep.py on mesh shapes of as many PEs and on a crossbar base config
(tests/scripts/CMakeLists.txt).

    check_plot_sweep_shapes.py SCRIPTS_DIR WORK_DIR

Writes two small results.csv files into WORK_DIR and checks how plot_sweep groups their rows:
4x4, 2x8 and 1x16 (16 PEs each) in series of their own, one per rows:cols, beside the square
meshes; a sweep whose config.resolved.yaml is a crossbar labels its ticks as one; a point
that passed its SRAM (fits_sram false) is ringed and counted; a sweep of one mesh puts its
swept axis (router.vcs) on x, and with two shapes of 16 PEs names no mesh in its subtitle; two
swept axes with a value in common keep both in the legend; a series equal to one drawn before
rings its markers; a narrow range of cycles gets tick labels that differ; and a mesh given as
K ticks as K x K.
Exit 0 when every check holds, else 1 with what differed.
"""
import os
import sys

sys.dont_write_bytecode = True

HEAD = ("point,mesh,network,pes,status,total_cycles,compute_cycles,communication_cycles,energy_pj,"
        "predicted_cycles,prediction_error,solve_seconds,tabulate_seconds,sim_wall_seconds,message\n")


def write_sweep(folder, shapes, topology):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "results.csv"), "w") as f:
        f.write(HEAD)
        for shape, pes in shapes:
            f.write(f"mesh={shape} network=zoo:vgg5,{shape},zoo:vgg5,{pes},ok,{1000000 // pes},1,1,1.0,"
                    f"1.0,0.0,0.1,0.1,0.1,\n")
    with open(os.path.join(folder, "config.resolved.yaml"), "w") as f:
        f.write(f"clock:\n  frequency_ghz: 1.0\ntopology:\n  kind: {topology}\n")
    return os.path.join(folder, "results.csv")


def main(argv):
    sys.path.insert(0, argv[0])
    import plot_sweep
    problems = []

    shapes = write_sweep(os.path.join(argv[1], "shapes"),
                         [("2x2", 4), ("4x4", 16), ("2x8", 16), ("1x16", 16), ("8x8", 64)], "mesh")
    sweep = plot_sweep.Sweep(shapes)
    series = {k: [r["mesh"] for r in rows] for k, rows in sweep.series().items()}
    expected = {("zoo:vgg5", "1:1"): ["2x2", "4x4", "8x8"], ("zoo:vgg5", "1:4"): ["2x8"],
                ("zoo:vgg5", "1:16"): ["1x16"]}
    if series != expected:
        problems.append(f"series {series}, expected {expected}")

    square = plot_sweep.Sweep(write_sweep(os.path.join(argv[1], "square"), [("2x2", 4), ("4x4", 16)], "mesh"))
    if plot_sweep.ASPECT in square.axes:
        problems.append("square meshes alone got an aspect axis")

    # mesh given as K (the spec's `mesh: [2, 4]`) ticks as K x K.
    bare = plot_sweep.Sweep(write_sweep(os.path.join(argv[1], "bare"), [("2", 4), ("4", 16)], "mesh"))
    fig, ax = plot_sweep.plt.subplots()
    bare.x_ticks(ax, bare.rows)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    if labels != ["2x2\n4", "4x4\n16"]:
        problems.append(f"mesh 2 and 4 ticked {labels}, expected 2x2 and 4x4 over their PEs")

    xbar = plot_sweep.Sweep(write_sweep(os.path.join(argv[1], "xbar"), [("2x2", 4), ("4x4", 16)], "crossbar"))
    fig, ax = plot_sweep.plt.subplots()
    xbar.x_ticks(ax, xbar.rows)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    if not labels or not all(t.startswith("xbar") for t in labels):
        problems.append(f"crossbar ticks {labels}, expected each to start with xbar")

    # A point that passed its SRAM is plotted, ringed, and counted under the title.
    over_dir = os.path.join(argv[1], "over")
    os.makedirs(over_dir, exist_ok=True)
    with open(os.path.join(over_dir, "results.csv"), "w") as f:
        f.write("point,mesh,pes,status,total_cycles,fits_sram,message\n"
                "mesh=2x2,2x2,4,ok,4000,false,the memory plan of PE 0 needs more\n"
                "mesh=4x4,4x4,16,ok,1000,true,\n")
    over = plot_sweep.Sweep(os.path.join(over_dir, "results.csv"))
    fig, ax = plot_sweep.plt.subplots()
    plot_sweep.draw_series(ax, over, over.series(), lambda r: r["_total"])
    rings = [line for line in ax.get_lines() if line.get_markeredgecolor() == "red"]
    if over.over_sram != 1 or len(rings) != 1 or list(rings[0].get_xdata()) != [4]:
        problems.append(f"points over SRAM: {over.over_sram} counted, rings at "
                        f"{[list(r.get_xdata()) for r in rings]}; expected 1, one ring at 4 PEs")
    if "1 ringed in red pass their SRAM" not in over.subtitle(2):
        problems.append(f"subtitle '{over.subtitle(2)}' does not count the point over SRAM")

    # No mesh axis (every point on 16 PEs): x is the swept router.vcs, in numeric order.
    vcs_dir = os.path.join(argv[1], "vcs")
    os.makedirs(vcs_dir, exist_ok=True)
    with open(os.path.join(vcs_dir, "results.csv"), "w") as f:
        f.write("point,router.vcs,solver,pes,status,total_cycles\n")
        for vcs, cycles in (("8", 900), ("2", 1100), ("16", 880), ("4", 1000)):
            f.write(f"router.vcs={vcs} solver=dp,{vcs},dp,16,ok,{cycles}\n")
    vcs = plot_sweep.Sweep(os.path.join(vcs_dir, "results.csv"))
    fig, ax = plot_sweep.plt.subplots()
    plot_sweep.draw_series(ax, vcs, vcs.series(), lambda r: r["_total"])
    vcs.x_ticks(ax, vcs.rows)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    ys = list(ax.get_lines()[0].get_ydata())
    if vcs.x_axis != "router.vcs" or labels != ["2", "4", "8", "16"] or ys != [1100, 1000, 900, 880]:
        problems.append(f"without a mesh axis: x {vcs.x_axis}, ticks {labels}, cycles {ys}; expected router.vcs, "
                        "ticks 2 4 8 16, cycles 1100 1000 900 880")
    if "PEs=16" not in vcs.subtitle(4):
        problems.append(f"subtitle '{vcs.subtitle(4)}' does not say every point's PEs")

    # Two shapes of 16 PEs and router.vcs swept: x is router.vcs and the legend tells the shapes
    # apart, so the subtitle does not name one of them as every point's (it said mesh=2x8).
    mixed_dir = os.path.join(argv[1], "mixed")
    os.makedirs(mixed_dir, exist_ok=True)
    with open(os.path.join(mixed_dir, "results.csv"), "w") as f:
        f.write("point,mesh,router.vcs,pes,status,total_cycles\n")
        for shape in ("2x8", "4x4"):
            for vcs, cycles in (("2", 29550), ("4", 29530)):
                f.write(f"p,{shape},{vcs},16,ok,{cycles - (250 if shape == '4x4' else 0)}\n")
    mixed = plot_sweep.Sweep(os.path.join(mixed_dir, "results.csv"))
    if mixed.x_axis != "router.vcs" or "mesh=" in mixed.subtitle(4) or "PEs=16" not in mixed.subtitle(4):
        problems.append(f"two shapes of 16 PEs: x {mixed.x_axis}, subtitle '{mixed.subtitle(4)}'; expected "
                        "router.vcs, PEs=16 and no mesh=")
    # Their cycles span 1 %: the axis's labels differ from each other (29.4k was written 5 times).
    fig, ax = plot_sweep.plt.subplots()
    ax.set_yscale("log")
    ax.plot([0, 1], [29300, 29550])
    plot_sweep.set_log_count_axis(ax.yaxis, [29300, 29550])
    fig.canvas.draw()
    ticks = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    if len(ticks) < 2 or len(set(ticks)) != len(ticks):
        problems.append(f"y tick labels {ticks} over 29,300-29,550 cycles: expected two or more, all different")

    # Two swept axes that share a value: each legend entry names both (batch 2 at 2 GHz read "2").
    two_dir = os.path.join(argv[1], "two")
    os.makedirs(two_dir, exist_ok=True)
    with open(os.path.join(two_dir, "results.csv"), "w") as f:
        f.write("point,mesh,batch,clock.frequency_ghz,pes,status,total_cycles\n")
        for batch in ("1", "2"):
            for ghz in ("1", "2"):
                for shape, pes in (("2x2", 4), ("4x4", 16)):
                    f.write(f"p,{shape},{batch},{ghz},{pes},ok,{1000 * int(batch) // pes}\n")
    two = plot_sweep.Sweep(os.path.join(two_dir, "results.csv"))
    fig, ax = plot_sweep.plt.subplots()
    leg = two.legend(ax)
    entries = [t.get_text() for t in leg.get_texts()] if leg is not None else []
    if entries != ["batch, clock.frequency_ghz", "1, 1", "1, 2", "2, 1", "2, 2"]:
        problems.append(f"legend {entries}, expected the header and 1, 1 .. 2, 2")
    # Their cycles do not depend on the clock: each 2 GHz series equals its 1 GHz one, and rings
    # its markers instead of hiding under it.
    plot_sweep.draw_series(ax, two, two.series(), lambda r: r["_total"])
    hollow = [line for line in ax.get_lines() if line.get_markerfacecolor() == "none"]
    if len(ax.get_lines()) != 4 or len(hollow) != 2 or any(line.get_markersize() <= 6 for line in hollow):
        problems.append(f"{len(hollow)} of {len(ax.get_lines())} series drawn hollow; expected the 2 that "
                        "equal another, with markers larger than 6")

    for p in problems:
        print(f"check_plot_sweep_shapes: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
