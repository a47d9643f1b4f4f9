"""Reads cflrun result files for tests/gpu/run.sh (needs h5py): its checks and benchmark figures.

Usage: results.py ari-from FILE ROUND          every round from ROUND (1-based) has ARI 1
       results.py accuracy-at FILE ROUND MIN   mean client accuracy of ROUND >= MIN
       results.py same A B TOL                 same assignments every round, accuracies within TOL
       results.py seconds FILE                 mean seconds per round after the first
       results.py final FILE                   the last round's accuracy, ARI, mean s/round
       results.py phases FILE                  mean s/round and each phase's after the first round
       results.py progress FILE...             rounds each (possibly .partial) file holds
Exit status 0 when the check holds; each prints what it measured.
"""
import sys

import h5py
import numpy as np


def rounds(path, name):
    with h5py.File(path, "r") as f:
        return np.asarray(f[name][:])


def ari_from(path, first):
    ari = rounds(path, "/rounds/ari")
    print(f"ARI by round: {' '.join(f'{a:.3f}' for a in ari[:5])} ... {ari[-1]:.3f} ({len(ari)} rounds)")
    return bool(np.all(ari[first - 1:] == 1.0))


def accuracy_at(path, round_number, minimum):
    accuracy = rounds(path, "/rounds/accuracy")[round_number - 1]
    print(f"accuracy at round {round_number}: {accuracy:.4f} (at least {minimum})")
    return accuracy >= minimum


def same(a, b, tolerance):
    same_assignments = np.array_equal(rounds(a, "/clients/assignment"), rounds(b, "/clients/assignment"))
    accuracy_a, accuracy_b = rounds(a, "/clients/accuracy"), rounds(b, "/clients/accuracy")
    largest = float(np.nanmax(np.abs(accuracy_a - accuracy_b)))
    print(f"assignments {'identical' if same_assignments else 'DIFFER'}; largest accuracy difference {largest:.2e}")
    return same_assignments and largest <= tolerance


def seconds_after_first(path):
    """[rounds, phases] seconds of the rounds after the first (the first alone if there is one)."""
    per_round = rounds(path, "/rounds/seconds")
    return per_round[1:] if len(per_round) > 1 else per_round


def mean_seconds(path):
    """Mean seconds per round after the first (the first alone if there is one)."""
    return seconds_after_first(path).sum(axis=1).mean()


def seconds(path):
    print(f"{mean_seconds(path):.4f}")
    return True


def final(path):
    accuracy, ari = rounds(path, "/rounds/accuracy")[-1], rounds(path, "/rounds/ari")[-1]
    print(f"{accuracy:9.4f} {ari:6.3f} {mean_seconds(path):9.4f}")
    return True


def phases(path):
    with h5py.File(path, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["/rounds/seconds"].attrs["phases"]]
    later = seconds_after_first(path)
    print(f"{later.sum(axis=1).mean():.4f} s/round (" +
          ", ".join(f"{n} {v:.4f}" for n, v in zip(names, later.mean(axis=0))) + ")")
    return True


def progress(*paths):
    for path in paths:
        try:
            print(f"{len(rounds(path, '/rounds/seconds')):4d} rounds  {mean_seconds(path):8.4f} s/round  {path}")
        except (OSError, KeyError) as error:
            print(f"   ? rounds  {path}: {error}")
    return True


def main(args):
    checks = {"ari-from": lambda f, r: ari_from(f, int(r)),
              "accuracy-at": lambda f, r, m: accuracy_at(f, int(r), float(m)),
              "same": lambda a, b, t: same(a, b, float(t)),
              "seconds": seconds,
              "final": final,
              "phases": phases,
              "progress": progress}
    if not args or args[0] not in checks:
        sys.exit(__doc__)
    return 0 if checks[args[0]](*args[1:]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
