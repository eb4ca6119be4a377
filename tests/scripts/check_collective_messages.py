#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks scripts/collective_messages.py against the snake placement (tests/scripts/CMakeLists.txt).

    check_collective_messages.py SCRIPT

On a 4x4 mesh: groups of 4 consecutive snake positions are the mesh's rows; groups of 4 strided
positions take one PE per row, alternating columns c and 3 - c as the snake turns; every member
sends every other member exactly once; a line is an all-to-all among row 0's first K nodes; a
shift sends from every node i to i + d for each distance while below K.
Exits 0 when all hold, else prints what differed and exits 1.
"""
import subprocess
import sys
from collections import defaultdict


def messages(script, *args):
    out = subprocess.run([sys.executable, script, *args], check=True, stdout=subprocess.PIPE, text=True).stdout
    return [tuple(int(x) for x in line.split()) for line in out.splitlines() if not line.startswith("#")]


def groups_of(msgs):
    """Connected sets of nodes that message each other (each group is a clique)."""
    peers = defaultdict(set)
    for src, dst, _ in msgs:
        peers[src].add(dst)
    seen, groups = set(), []
    for node in sorted(peers):
        if node not in seen:
            group = frozenset(peers[node] | {node})
            seen |= group
            groups.append(group)
    return peers, groups


def main(argv):
    script = argv[0]
    problems = []
    rows = messages(script, "group-gather", "--mesh", "4", "--size", "4", "--layout", "consecutive", "--bytes", "64")
    peers, groups = groups_of(rows)
    if sorted(sorted(g) for g in groups) != [[r * 4 + c for c in range(4)] for r in range(4)]:
        problems.append(f"consecutive groups are not the rows: {sorted(sorted(g) for g in groups)}")
    if len(rows) != 4 * 4 * 3 or len(set((s, d) for s, d, _ in rows)) != len(rows) or {b for *_, b in rows} != {64}:
        problems.append(f"consecutive: {len(rows)} messages, expected 48 distinct pairs of 64 bytes")
    strided = messages(script, "group-gather", "--mesh", "4", "--size", "4", "--layout", "strided", "--bytes", "64")
    _, groups = groups_of(strided)
    # Position p = a * 4 + g: row a, column g on even rows, 3 - g on odd rows.
    expected = sorted(sorted(a * 4 + (g if a % 2 == 0 else 3 - g) for a in range(4)) for g in range(4))
    if sorted(sorted(g) for g in groups) != expected:
        problems.append(f"strided groups {sorted(sorted(g) for g in groups)}, expected {expected}")
    line = messages(script, "line", "--nodes", "3", "--bytes", "10")
    if sorted(line) != [(0, 1, 10), (0, 2, 10), (1, 0, 10), (1, 2, 10), (2, 0, 10), (2, 1, 10)]:
        problems.append(f"line --nodes 3: {sorted(line)}")
    shift = messages(script, "shift", "--nodes", "6", "--distances", "2,4", "--bytes", "7")
    if sorted(shift) != [(0, 2, 7), (0, 4, 7), (1, 3, 7), (1, 5, 7), (2, 4, 7), (3, 5, 7)]:
        problems.append(f"shift --nodes 6 --distances 2,4: {sorted(shift)}")
    for p in problems:
        print(f"check_collective_messages: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
