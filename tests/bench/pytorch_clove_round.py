#!/usr/bin/env python3
"""Reference, not part of cflrun: CLoVE rounds of jobs/fmnist_label_skew1.cfg in plain eager PyTorch.

The same work per round as cflrun (25 clients = 5 clusters x 5, 500 training and 400 test samples
each, label skew 1, K = 5 of the paper's 5 142-parameter CNN, Adam lr 0.01, batch 100, one local
epoch), written the straightforward way: loss vectors client by client and model by model in
256-sample chunks, k-means++ with 10 restarts and min-cost matching by trying every permutation,
one fresh Adam per client, weighted model averaging, per-client test evaluation. setup.sh's
venv (.venv/bin/python) runs on the same LibTorch as cflrun. Prints one line per round and then the mean
seconds per phase over the rounds after the first, as `name seconds` pairs for side_by_side.sh.

Usage: .venv/bin/python tests/bench/pytorch_clove_round.py [--rounds 4] [--threads N]
"""
import argparse
import gzip
import itertools
import time

import numpy as np
import torch
import torch.nn.functional as F

FMNIST = "/usr/share/datasets/fashion-mnist"
K, CLIENTS_PER_CLUSTER, TRAIN, TEST = 5, 5, 500, 400
LR, BATCH, CHUNK, RESTARTS = 0.01, 100, 256, 10


def read_idx(name):
    with gzip.open(f"{FMNIST}/{name}.gz") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, np.uint8, offset=4 + 4 * dims).reshape(shape)


def label_skew_1(images, labels, per_client, rng):
    """Cluster k holds classes 2k and 2k+1; each client draws per_client samples of them."""
    clients = []
    for k in range(K):
        pool = rng.permutation(np.flatnonzero((labels == 2 * k) | (labels == 2 * k + 1)))
        for c in range(CLIENTS_PER_CLUSTER):
            rows = pool[c * per_client:(c + 1) * per_client]
            x = torch.from_numpy(images[rows].astype(np.float32) / 255.0).unsqueeze(1)
            clients.append((x, torch.from_numpy(labels[rows].astype(np.int64))))
    return clients


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 6, 5)
        self.conv2 = torch.nn.Conv2d(6, 16, 5)
        self.fc = torch.nn.Linear(256, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def mean_loss(model, x, y):
    total = 0.0
    for start in range(0, len(x), CHUNK):
        total += F.cross_entropy(model(x[start:start + CHUNK]), y[start:start + CHUNK], reduction="sum").item()
    return total / len(x)


def kmeans(points, k, gen):
    best, best_cost = None, float("inf")
    for _ in range(RESTARTS):
        centers = points[torch.randint(len(points), (1,), generator=gen)]
        while len(centers) < k:  # k-means++
            d = torch.cdist(points, centers).min(1).values ** 2
            centers = torch.cat([centers, points[torch.multinomial(d / d.sum(), 1, generator=gen)]])
        for _ in range(100):
            labels = torch.cdist(points, centers).argmin(1)
            moved = torch.stack([points[labels == j].mean(0) if (labels == j).any() else centers[j] for j in range(k)])
            if torch.allclose(moved, centers):
                break
            centers = moved
        cost = (torch.cdist(points, centers).min(1).values ** 2).sum().item()
        if cost < best_cost:
            best, best_cost = labels, cost
    return best


def match(loss_vectors, labels):
    """Cluster j -> model perm[j] minimising the summed losses (every permutation: K! = 120)."""
    cost = torch.stack([loss_vectors[labels == j].sum(0) for j in range(K)])
    return min(itertools.permutations(range(K)), key=lambda p: sum(cost[j, p[j]].item() for j in range(K)))


def run(rounds):
    rng = np.random.default_rng(1)
    train = label_skew_1(read_idx("train-images-idx3-ubyte"), read_idx("train-labels-idx1-ubyte"), TRAIN, rng)
    test = label_skew_1(read_idx("t10k-images-idx3-ubyte"), read_idx("t10k-labels-idx1-ubyte"), TEST, rng)
    torch.manual_seed(1)
    gen = torch.Generator().manual_seed(1)
    models = [Cnn() for _ in range(K)]
    phases = {name: [] for name in ("query", "plan", "local_update", "aggregate", "evaluate")}  # cflrun's phase names
    for t in range(rounds):
        start = time.perf_counter()
        with torch.no_grad():
            for m in models:
                m.eval()
            losses = torch.tensor([[mean_loss(m, x, y) for m in models] for x, y in train])
        t1 = time.perf_counter()
        labels = kmeans(losses, K, gen)
        perm = match(losses, labels)
        assignment = [perm[j] for j in labels.tolist()]
        t2 = time.perf_counter()
        trained = []
        for (x, y), model_index in zip(train, assignment):
            local = Cnn()
            local.load_state_dict(models[model_index].state_dict())
            optimizer = torch.optim.Adam(local.parameters(), lr=LR)
            order = torch.randperm(len(x))
            for b in range(0, len(x), BATCH):
                rows = order[b:b + BATCH]
                optimizer.zero_grad()
                F.cross_entropy(local(x[rows]), y[rows]).backward()
                optimizer.step()
            trained.append(local.state_dict())
        t3 = time.perf_counter()
        for j, model in enumerate(models):
            members = [s for s, a in zip(trained, assignment) if a == j]
            if members:
                model.load_state_dict({n: torch.stack([s[n] for s in members]).mean(0) for n in members[0]})
        t4 = time.perf_counter()
        correct = 0
        with torch.no_grad():
            for (x, y), model_index in zip(test, assignment):
                m = models[model_index].eval()
                correct += sum((m(x[s:s + CHUNK]).argmax(1) == y[s:s + CHUNK]).sum().item() for s in range(0, len(x), CHUNK))
        t5 = time.perf_counter()
        for name, seconds in zip(phases, (t1 - start, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            phases[name].append(seconds)
        print(f"round {t + 1}/{rounds}  accuracy {correct / (len(test) * TEST):.4f}  {t5 - start:.2f} s", flush=True)
    skip = 1 if rounds > 1 else 0
    for name, values in phases.items():
        print(f"{name} {np.mean(values[skip:]):.4f}")
    print(f"round {sum(np.mean(v[skip:]) for v in phases.values()):.4f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0 = all cores)")
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    run(args.rounds)
