#!/usr/bin/env python3
"""Every CTest test that may start MPI has a TMPDIR of its own (cflrun_test_defaults in
tests/CMakeLists.txt): Open MPI 4.1 keeps its session directories under $TMPDIR, and two tests
sharing one failed at random (open-mpi/ompi#8510). Reads the tests from `ctest --show-only=json-v1`;
the GoogleTest executables (tests/unit, named *_test) start no MPI and are left out.

Usage: own_tmpdir_check.py CTEST BUILD_DIR
"""
import json
import os
import subprocess
import sys


def tmpdirs(test):
    """The TMPDIR values that a test's ENVIRONMENT and ENVIRONMENT_MODIFICATION set."""
    values = []
    for prop in test.get("properties", []):
        if prop["name"] in ("ENVIRONMENT", "ENVIRONMENT_MODIFICATION"):
            entries = prop["value"] if isinstance(prop["value"], list) else [prop["value"]]
            values += [e.split("=", 1)[1] for e in entries if e.startswith("TMPDIR=")]
    return values


def main(ctest, build_dir):
    listing = subprocess.run([ctest, "--test-dir", build_dir, "--show-only=json-v1"],
                             check=True, capture_output=True, text=True).stdout
    owners = {}
    problems = []
    checked = 0
    for test in json.loads(listing)["tests"]:
        command = test.get("command", [""])
        if os.path.basename(command[0]).endswith("_test"):
            continue
        checked += 1
        values = tmpdirs(test)
        if not values:
            problems.append(f"{test['name']}: no TMPDIR of its own (add it before cflrun_test_defaults())")
        for value in values:
            if value in owners:
                problems.append(f"{test['name']}: shares TMPDIR {value} with {owners[value]}")
            owners[value] = test["name"]
    if checked < 100:
        problems.append(f"only {checked} tests listed: is {build_dir} a configured build?")
    for problem in problems:
        print("FAIL:", problem, file=sys.stderr)
    if problems:
        return 1
    print(f"ok: {checked} tests, each with its own TMPDIR")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
