#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Message files of grouped collectives for `nocflow traffic --messages` (lines 'src dst bytes').

Real plans redistribute within groups: a layer split OUTP=a x OFMP_H=b followed by one split the
same way all-gathers each token block among its a OUTP peers. Where the groups sit on the mesh
follows the snake placement (optimizer/partition/placement.h): position p is on row p // cols,
column p % cols on even rows and cols - 1 - p % cols on odd rows; node = row * cols + column.

  group-gather: every member of each group sends BYTES to every other member. Groups of SIZE
    consecutive snake positions (--layout consecutive: a 2-D split whose inner factor is the
    group) or SIZE positions spaced P / SIZE apart (--layout strided: the group is the outer
    factor, one member per block of P / SIZE positions, e.g. one per row for SIZE = rows).
  line: all-to-all among nodes 0 .. K-1 (row 0 when K is at most the mesh's columns), the
    other PEs idle.
  shift: every node i of 0 .. K-1 sends BYTES to node i + d for each distance d given (while
    below K), one message each: on a line of K PEs (a K x 1 mesh) the smallest case of the
    wormhole blocking linkload misses (optimizer/README.md, "Accuracy of linkload").

Example (optimizer/README.md, "Grouped collectives"):
  python3 scripts/collective_messages.py group-gather --mesh 16 --size 16 --layout strided \\
      --bytes 3072 > /tmp/col.txt
  nocflow traffic --hw configs/hw/mesh16x16.yaml --messages /tmp/col.txt --out /tmp/col
Example ("Accuracy of linkload", session 43: 890 cycles against 512 flits on the busiest link):
  python3 scripts/collective_messages.py shift --nodes 16 --distances 4 --bytes 4096 > /tmp/l4.txt
  nocflow traffic --hw configs/hw/mesh8x8.yaml --set topology.rows=16 --set topology.cols=1 \\
      --messages /tmp/l4.txt --out /tmp/l4
"""
import argparse
import sys


def fail(message):
    print(f"collective_messages: {message}", file=sys.stderr)
    sys.exit(2)


def snake_node(p, cols):
    row, col = divmod(p, cols)
    return row * cols + (col if row % 2 == 0 else cols - 1 - col)


def group_gather(mesh, size, layout, nbytes):
    groups = mesh * mesh // size
    for g in range(groups):
        members = [g * size + a for a in range(size)] if layout == "consecutive" else [a * groups + g for a in range(size)]
        for a in members:
            for b in members:
                if a != b:
                    yield snake_node(a, mesh), snake_node(b, mesh), nbytes


def line(nodes, nbytes):
    for a in range(nodes):
        for b in range(nodes):
            if a != b:
                yield a, b, nbytes


def shift(nodes, distances, nbytes):
    for a in range(nodes):
        for d in distances:
            if a + d < nodes:
                yield a, a + d, nbytes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="pattern", required=True)
    g = sub.add_parser("group-gather", help="all-gather within groups of snake positions")
    g.add_argument("--mesh", type=int, required=True, help="mesh side (square mesh, rows = cols)")
    g.add_argument("--size", type=int, required=True, help="members per group")
    g.add_argument("--layout", choices=["consecutive", "strided"], required=True)
    g.add_argument("--bytes", type=int, required=True, help="bytes each member sends each other member")
    ln = sub.add_parser("line", help="all-to-all among the first K nodes of row 0")
    ln.add_argument("--nodes", type=int, required=True, help="K, at least 2")
    ln.add_argument("--bytes", type=int, required=True, help="bytes per message")
    sh = sub.add_parser("shift", help="every node i of K sends to i + d for each distance d")
    sh.add_argument("--nodes", type=int, required=True, help="K, at least 2")
    sh.add_argument("--distances", required=True, help="comma-separated distances, each 1 .. K-1")
    sh.add_argument("--bytes", type=int, required=True, help="bytes per message")
    args = ap.parse_args()
    if args.bytes < 1:
        fail(f"--bytes must be at least 1 (got {args.bytes})")
    if args.pattern == "group-gather":
        pes = args.mesh * args.mesh
        if args.mesh < 1 or args.size < 2 or pes % args.size:
            fail(f"--size must divide the {pes} PEs and be at least 2 (got {args.size})")
        messages = group_gather(args.mesh, args.size, args.layout, args.bytes)
    elif args.nodes < 2:
        fail(f"--nodes must be at least 2 (got {args.nodes})")
    elif args.pattern == "line":
        messages = line(args.nodes, args.bytes)
    else:
        try:
            distances = [int(d) for d in args.distances.split(",")]
        except ValueError:
            fail(f"--distances: expected comma-separated integers (got '{args.distances}')")
        if any(d < 1 or d >= args.nodes for d in distances):
            fail(f"--distances must be 1 .. {args.nodes - 1} (got '{args.distances}')")
        messages = shift(args.nodes, distances, args.bytes)
    out = sys.stdout
    out.write(f"# {' '.join(sys.argv[1:])}\n")
    for src, dst, nbytes in messages:
        out.write(f"{src} {dst} {nbytes}\n")


if __name__ == "__main__":
    main()
