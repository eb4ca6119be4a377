#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs a command that must fail in a given way (tests/scripts/CMakeLists.txt).

    expect_exit.py CODE REGEX -- COMMAND ARGS...

Passes (exit 0) when COMMAND exits with CODE, its output (stdout and stderr) matches REGEX and
holds no Python traceback; otherwise prints what differed and exits 1.
"""
import re
import subprocess
import sys


def main(argv):
    if len(argv) < 4 or argv[2] != "--":
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    code, pattern, command = int(argv[0]), argv[1], argv[3:]
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    problems = []
    if run.returncode != code:
        problems.append(f"exit code {run.returncode}, expected {code}")
    if not re.search(pattern, run.stdout):
        problems.append(f"output does not match {pattern!r}")
    if "Traceback" in run.stdout:
        problems.append("output holds a traceback")
    for p in problems:
        print(f"expect_exit: {p}", file=sys.stderr)
    if problems:
        print(run.stdout, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
