#!/usr/bin/python3
"""The official CLoVE code's label skew 2 (exp201) pools for its seed 1, as cflrun config lines.

cflrun draws its partitions with its own generators, so no draw of the official code's NumPy
generator is repeated by cflrun itself. This script replays the NumPy calls of the official
Fashion-MNIST label skew 2 partition in their order (shared/papers/clove-official-setup.md Sec. 0
and 2; Nokia-Bell-Labs/Loss-Vector-based-Clustered-Federated-Learning at b602090,
utils/dataset_modifier.py) and prints what they decide: the label sets, and every cluster's class
counts of the train and the test pool. The configs give these as `label-sets`,
`train-class-counts` and `test-class-counts` (jobs/paper/make_configs.py).

The path: np.random.seed(1) (mlflow_driver; nothing draws from NumPy's global generator before the
partition); generate_label_assignments(10, 5, 4, 2) by rejection; then the reserve + Dirichlet(0.5)
routine for the train split (reserve 0.10, +0.05 per retry, every cluster >= 5 100) and, with the
same label sets, for the test split (>= 510). One attempt shuffles every class's indices (held
or not), draws Dirichlet shares for each held class, and shuffles every cluster's index list; a
failed attempt has consumed all of that before the next. Only the lengths of the shuffled arrays
matter for the counts, so the dataset is replaced by its labels (6 000 train / 1 000 test images
per Fashion-MNIST class; the official MNIST's class sizes, 5 421-6 742 train / 892-1 135 test,
for MNIST). The official code partitions once per invocation, with seed 1's state, so seeds 2
and 3 share these pools.

Usage: /usr/bin/python3 jobs/paper/official_draws.py [SEED] [fmnist|mnist]
(default seed 1, fmnist; needs NumPy; checked with 1.24)
"""
import sys

import numpy as np

CLASSES, CLUSTERS, LABELS_PER_CLUSTER, SHARED_LABELS = 10, 5, 4, 2
ALPHA, RESERVE_START, RESERVE_STEP, RESERVE_MAX = 0.5, 0.1, 0.05, 1.0
MIN_TRAIN, MIN_TEST = 5100, 510
# Images per class of the official train and test splits.
CLASS_SIZES = {
    "fmnist": ([6000] * 10, [1000] * 10),
    "mnist": ([5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949],
              [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]),
}


def draw_label_sets():
    """Cluster by cluster, 4 distinct labels, kept only if they share exactly 2 with every earlier set."""
    sets = []
    while len(sets) < CLUSTERS:
        candidate = set(np.random.choice(list(range(CLASSES)), LABELS_PER_CLUSTER, replace=False))
        if all(len(candidate & earlier) == SHARED_LABELS for earlier in sets):
            sets.append(candidate)
    return sets


def attempt(labels, holders, reserve):
    """counts[cluster][class] of one attempt, consuming NumPy's generator as the official routine."""
    counts = np.zeros((CLUSTERS, CLASSES), dtype=int)
    members = [[] for _ in range(CLUSTERS)]
    for k in range(CLASSES):
        indices = np.where(labels == k)[0]
        np.random.shuffle(indices)
        if not holders[k]:
            continue
        reserved = int(len(indices) * reserve)
        rest = indices[reserved:]
        shares = np.random.dirichlet([ALPHA] * len(holders[k]))
        cuts = (np.cumsum(shares) * len(rest)).astype(int)[:-1]
        parts = zip(np.split(rest, cuts), np.array_split(indices[:reserved], len(holders[k])))
        for cluster, (drawn, even) in zip(holders[k], parts):
            counts[cluster, k] += len(drawn) + len(even)
            members[cluster].extend(drawn.tolist() + even.tolist())
    for cluster_members in members:
        np.random.shuffle(cluster_members)  # a Python list, as in the official code
    return counts


def split_counts(labels, holders, minimum):
    """The first attempt whose every cluster reaches the minimum (the reserve grows by 0.05)."""
    reserve = RESERVE_START
    while reserve <= RESERVE_MAX:
        counts = attempt(labels, holders, reserve)
        if (counts.sum(axis=1) >= minimum).all():
            return counts
        reserve += RESERVE_STEP
    sys.exit(f"no attempt reached {minimum} samples per cluster")


def rows(matrix):
    return "/".join(",".join(str(int(v)) for v in row) for row in matrix)


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    dataset = sys.argv[2] if len(sys.argv) > 2 else "fmnist"
    if dataset not in CLASS_SIZES:
        sys.exit(f"official_draws.py: dataset must be one of {', '.join(CLASS_SIZES)}, not {dataset!r}")
    train_sizes, test_sizes = CLASS_SIZES[dataset]
    np.random.seed(seed)
    sets = draw_label_sets()
    holders = [[c for c, labels in enumerate(sets) if k in labels] for k in range(CLASSES)]
    train = split_counts(np.repeat(np.arange(CLASSES), train_sizes), holders, MIN_TRAIN)
    test = split_counts(np.repeat(np.arange(CLASSES), test_sizes), holders, MIN_TEST)
    print("label-sets = " + "/".join(",".join(str(int(v)) for v in sorted(s)) for s in sets))
    print("train-class-counts = " + rows(train))
    print("test-class-counts = " + rows(test))


if __name__ == "__main__":
    main()
