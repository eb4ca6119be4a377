#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks the PNGs a plotting script wrote (tests/scripts/CMakeLists.txt).

    check_pngs.py DIR --expect a.png b.png ... [--absent c.png ...]

Every --expect file must exist in DIR, be a PNG (signature and IHDR header), be larger than
--min-bytes (default 10 KB: an empty figure with only axes is smaller), be at least 600 x 400
pixels, decode with matplotlib and not be a single colour. Every --absent file must not exist.
Prints one line per problem and exits 1 if there is any.
"""
import argparse
import os
import struct
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.image  # noqa: E402

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def problems_of(path, min_bytes):
    if not os.path.isfile(path):
        return ["missing"]
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != SIGNATURE or head[12:16] != b"IHDR":
        return ["not a PNG"]
    problems = []
    if size <= min_bytes:
        problems.append(f"{size} bytes, expected more than {min_bytes}")
    width, height = struct.unpack(">II", head[16:24])
    if width < 600 or height < 400:
        problems.append(f"{width} x {height} pixels, expected at least 600 x 400")
    try:
        pixels = matplotlib.image.imread(path)
    except Exception as e:  # a truncated or corrupt file
        return problems + [f"does not decode: {e}"]
    if pixels.min() == pixels.max():
        problems.append("a single colour")
    return problems


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("dir")
    p.add_argument("--expect", nargs="+", required=True, metavar="NAME")
    p.add_argument("--absent", nargs="*", default=[], metavar="NAME")
    p.add_argument("--min-bytes", type=int, default=10_000)
    a = p.parse_args(argv)
    failed = False
    for name in a.expect:
        path = os.path.join(a.dir, name)
        problems = problems_of(path, a.min_bytes)
        if problems:
            failed = True
            print(f"check_pngs: {path}: {'; '.join(problems)}")
        else:
            print(f"check_pngs: {path}: ok ({os.path.getsize(path)} bytes)")
    for name in a.absent:
        path = os.path.join(a.dir, name)
        if os.path.exists(path):
            failed = True
            print(f"check_pngs: {path}: exists, expected absent")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
