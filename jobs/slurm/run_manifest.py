#!/usr/bin/env python3
"""Runs the lines of a sweep manifest (jobs/paper/sweep.sh, `cflrun sweep`) side by side on one
machine: a GPU node (jobs/slurm/gpu_node.sbatch; the runs share the GPU, under NVIDIA MPS where it
starts), or a GPU machine without SLURM (tests/gpu/sweep.sh). Each line is one cflrun run, started
as soon as enough of --slots are free (one slot per MPI rank), in the manifest's order, until
--deadline seconds after the start; runs still going then are stopped (SIGTERM to their process
group, SIGKILL 10 s later) and leave their .partial files and checkpoints for `--resume`. Prints a
line as each run ends: seconds since the start, its state, its seconds, runs ended / runs, the line.

    run_manifest.py MANIFEST --slots 16 --deadline 480 [--part I/N] [--ranks REGEX=N ...]
                    [--expect REGEX=S ...] [--extra ARGS] [--log TSV]

--part I/N runs only the lines whose 0-based index is I modulo N: part I of N nodes (a job array,
gpu_node.sbatch).

--ranks gives a line that matches REGEX (Python `re.search` over the line) N MPI ranks under
--mpiexec (the first rule that matches; 1 rank, no mpiexec, otherwise). --expect gives a line that
matches REGEX an expected duration of S seconds: when its turn comes with less time than that left
before the deadline, it is skipped (never started, so its slots go to the next lines) instead of
being stopped at the deadline with its work lost. --extra is appended to every line (e.g.
"--device cuda --threads 1 --skip-complete"). --log writes one row per line: index, state (ok,
failed RC, stopped at the deadline, skipped by --expect, not started), seconds, ranks, the line.
Each run gets its own TMPDIR (removed when it ends): Open MPI puts every singleton's session
directory under $TMPDIR/ompi.HOST.UID/jf.0, and a run ending there removed the tree while another
was creating its own, failing that run's MPI start ("A call to mkdir was unable to create the
desired directory", seen once in the test suite).
Each run starts in its own session (so that a stop reaches all its processes), which on Linux with
sched_autogroup also makes it its own scheduling group, where the runner's nice value would no
longer rank it below the machine's other work: each run's group gets the runner's nice value, so
that `nice -n 19 run_manifest.py ...` keeps a sweep beside builds and tests from slowing them.
Exit status 0 when every started run ended ok (not-started, skipped and stopped runs do not count
as failures); 2, before any run, when a line cannot be split into words (an unbalanced quote).
"""
import argparse
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("manifest")
    parser.add_argument("--cflrun", default="cflrun")
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--slots", type=int, default=os.cpu_count())
    parser.add_argument("--deadline", type=float, required=True, help="seconds after the start")
    parser.add_argument("--ranks", action="append", default=[], help="REGEX=N")
    parser.add_argument("--expect", action="append", default=[], help="REGEX=SECONDS")
    parser.add_argument("--extra", default="")
    parser.add_argument("--log", default=None)
    parser.add_argument("--run-logs", default=None, help="directory for each run's output")
    parser.add_argument("--part", default="0/1", help="I/N: only lines I, I + N, I + 2N, ...")
    args = parser.parse_args()
    match = re.fullmatch(r"(\d+)/(\d+)", args.part)
    if not match or int(match.group(1)) >= int(match.group(2)):
        parser.error(f"--part must be I/N with 0 <= I < N, but got {args.part!r}")
    args.part = (int(match.group(1)), int(match.group(2)))
    return args


def manifest_lines(path):
    """The run lines of the manifest at path (blank lines and # comments left out). Exits with
    status 2 before any run, naming each line, if a line cannot be split into words as the shell
    would (an unbalanced quote)."""
    with open(path) as f:
        numbered = [(number, line.strip()) for number, line in enumerate(f, start=1)
                    if line.strip() and not line.lstrip().startswith("#")]
    errors = []
    for number, line in numbered:
        try:
            shlex.split(line)
        except ValueError as e:
            errors.append(f"{path}:{number}: {str(e).lower()}; close its quote or escape it: {line}")
    if errors:
        print("run_manifest: error: no run started:\n" + "\n".join(errors), file=sys.stderr)
        sys.exit(2)
    return [line for _, line in numbered]


def rule_value(line, rules, default):
    """The number of the first REGEX=NUMBER rule whose REGEX occurs in line, else default."""
    for rule in rules:
        pattern, _, value = rule.rpartition("=")
        if re.search(pattern, line):
            return float(value)
    return default


def command(line, ranks, args):
    run = [args.cflrun] + shlex.split(line) + shlex.split(args.extra)
    if ranks == 1:
        return run
    return [args.mpiexec, "-n", str(ranks), "--oversubscribe", "--bind-to", "none"] + run


def stop(process):
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        pass


def keep_niceness(pid):
    """Gives the scheduling autogroup of a run in its own session the runner's nice value (Linux,
    /proc/PID/autogroup; nothing where autogroups are off or absent)."""
    niceness = os.getpriority(os.PRIO_PROCESS, 0)
    if niceness == 0:
        return
    try:
        with open(f"/proc/{pid}/autogroup", "w") as group:
            group.write(str(niceness))
    except OSError:
        pass


class Runner:
    def __init__(self, lines, args):
        self.lines, self.args = lines, args
        self.states = ["not started"] * len(lines)
        self.seconds = [0.0] * len(lines)
        self.ranks = [int(rule_value(line, args.ranks, 1)) for line in lines]
        self.expected = [rule_value(line, args.expect, 0.0) for line in lines]
        self.running = {}  # index -> (process, start time, log file)
        self.session_dirs = {}  # index -> the run's own TMPDIR
        self.start = time.monotonic()

    def free_slots(self):
        return self.args.slots - sum(self.ranks[i] for i in self.running)

    def launch(self, i):
        log = subprocess.DEVNULL
        if self.args.run_logs:
            log = open(os.path.join(self.args.run_logs, f"run{i:04d}.log"), "w")
        self.session_dirs[i] = tempfile.mkdtemp(prefix=f"cflrun-run{i:04d}-")
        process = subprocess.Popen(command(self.lines[i], self.ranks[i], self.args), stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True,
                                   env=dict(os.environ, TMPDIR=self.session_dirs[i]))
        keep_niceness(process.pid)
        self.running[i] = (process, time.monotonic(), log)

    def reap(self):
        for i, (process, started, log) in list(self.running.items()):
            rc = process.poll()
            if rc is None:
                continue
            self.finish(i, started, log, "ok" if rc == 0 else f"failed {rc}")

    def finish(self, i, started, log, state):
        self.seconds[i] = time.monotonic() - started
        self.states[i] = state
        if log is not subprocess.DEVNULL:
            log.close()
        del self.running[i]
        shutil.rmtree(self.session_dirs.pop(i), ignore_errors=True)
        ended = sum(1 for s in self.states if s != "not started")
        print(f"[{time.monotonic() - self.start:6.0f} s] {state:>9} {self.seconds[i]:7.1f} s  "
              f"{ended}/{len(self.lines)}  {self.lines[i]}", flush=True)

    def run(self):
        next_line = 0
        while next_line < len(self.lines) or self.running:
            self.reap()
            if time.monotonic() - self.start >= self.args.deadline:
                for i, (process, started, log) in list(self.running.items()):
                    stop(process)
                    self.finish(i, started, log, "stopped")
                break
            while next_line < len(self.lines) and self.ranks[next_line] <= self.free_slots():
                if self.expected[next_line] > self.args.deadline - (time.monotonic() - self.start):
                    self.states[next_line] = "skipped"
                else:
                    self.launch(next_line)
                next_line += 1
            time.sleep(0.5)

    def write_log(self, path):
        with open(path, "w") as f:
            f.write("index\tstate\tseconds\tranks\tline\n")
            for i, line in enumerate(self.lines):
                f.write(f"{i}\t{self.states[i]}\t{self.seconds[i]:.1f}\t{self.ranks[i]}\t{line}\n")


def main():
    args = parse_args()
    if args.run_logs:
        os.makedirs(args.run_logs, exist_ok=True)
    part, parts = args.part
    runner = Runner(manifest_lines(args.manifest)[part::parts], args)
    try:
        runner.run()
    finally:
        if args.log:
            runner.write_log(args.log)
    counts = {state: runner.states.count(state) for state in set(runner.states)}
    print("runs:", ", ".join(f"{n} {state}" for state, n in sorted(counts.items())), flush=True)
    return 1 if any(state.startswith("failed") for state in runner.states) else 0


if __name__ == "__main__":
    sys.exit(main())
