#!/usr/bin/env python3
"""Reference, not part of cflrun: a CLoVE-shaped round written the best way a PyTorch user would for
many clients, with torch.func (issue 42): vmap over grad of functional_call for the local updates,
one Adam over the stacked client parameters, stacked forward passes for the loss vectors and the
test metrics, and an arg-min assignment (slightly less work than CLoVE's k-means and matching).

The shapes of tests/bench/scale.sh: Fashion-MNIST, K clusters of one class each (class_per_cluster,
K = 10) or label skew 1 (K = 5), every client with TRAIN training and TEST test samples, the paper's
5 142-parameter CNN, Adam lr 0.01, batch 100, one local epoch. Prints one line per round and the
mean seconds per round and per phase over the rounds after the first.

Usage: .venv/bin/python tests/bench/torchfunc_round.py --clients 1000 --train 60 --test 10
       [--rounds 4] [--device cuda] [--threads N] [--clusters 10]
"""
import argparse
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

# The IDX reader and the paper's CNN of the one-client-at-a-time reference, beside this file.
from pytorch_clove_round import Cnn, read_idx

LR, BATCH, BETAS, EPS = 0.01, 100, (0.9, 0.999), 1e-8


def clients_of(images, labels, clusters, clients, per_client, rng):
    """[M, n, 1, 28, 28] inputs and [M, n] labels: client c of cluster k draws from k's classes."""
    classes = [[k] for k in range(10)] if clusters == 10 else [[2 * k, 2 * k + 1] for k in range(5)]
    per_cluster = clients // clusters
    xs, ys = [], []
    for k in range(clusters):
        pool = rng.permutation(np.flatnonzero(np.isin(labels, classes[k])))
        need = per_cluster * per_client
        rows = pool[np.arange(need) % len(pool)].reshape(per_cluster, per_client)
        xs.append(images[rows])
        ys.append(labels[rows])
    x = torch.from_numpy(np.concatenate(xs).astype(np.float32) / 255.0).unsqueeze(2)
    return x, torch.from_numpy(np.concatenate(ys).astype(np.int64))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--train", type=int, default=60)
    parser.add_argument("--test", type=int, default=10)
    parser.add_argument("--clusters", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    rng = np.random.default_rng(1)
    train_x, train_y = clients_of(read_idx("train-images-idx3-ubyte"), read_idx("train-labels-idx1-ubyte"),
                                  args.clusters, args.clients, args.train, rng)
    test_x, test_y = clients_of(read_idx("t10k-images-idx3-ubyte"), read_idx("t10k-labels-idx1-ubyte"),
                                args.clusters, args.clients, args.test, rng)
    train_x, train_y, test_x, test_y = (t.to(device) for t in (train_x, train_y, test_x, test_y))
    m, k = train_x.shape[0], args.clusters
    net = Cnn().to(device)
    torch.manual_seed(1)
    models = {name: torch.stack([Cnn().to(device).state_dict()[name] for _ in range(k)])
              for name in net.state_dict()}  # [K, ...] per parameter

    def loss_of(params, x, y):
        return F.cross_entropy(functional_call(net, params, (x,)), y)

    client_grad = vmap(grad(loss_of))  # per client: its own parameters, inputs, labels
    phases = {"query": [], "plan": [], "local_update": [], "aggregate": [], "evaluate": []}
    for r in range(args.rounds):
        sync()
        t0 = time.perf_counter()
        with torch.no_grad():  # loss vectors: every model on every training sample, stacked
            flat_x, flat_y = train_x.flatten(0, 1), train_y.flatten()
            chunk = 8192 if device.type == "cuda" else 1024
            losses = torch.stack([
                torch.cat([F.cross_entropy(functional_call(net, {n: p[j] for n, p in models.items()},
                                                           (flat_x[i:i + chunk],)),
                                           flat_y[i:i + chunk], reduction="none")
                           for i in range(0, flat_x.shape[0], chunk)]).view(m, -1).mean(1)
                for j in range(k)], dim=1)  # [M, K]
        sync()
        t1 = time.perf_counter()
        assignment = losses.argmin(1)  # [M]
        sync()
        t2 = time.perf_counter()
        params = {n: p[assignment].clone() for n, p in models.items()}  # [M, ...] each client
        first = {n: torch.zeros_like(p) for n, p in params.items()}
        second = {n: torch.zeros_like(p) for n, p in params.items()}
        order = torch.stack([torch.randperm(args.train, device=device) for _ in range(m)])
        for step, start in enumerate(range(0, args.train, BATCH), 1):
            rows = order[:, start:start + BATCH]
            x = torch.gather(train_x, 1, rows.view(m, -1, 1, 1, 1).expand(-1, -1, 1, 28, 28))
            y = torch.gather(train_y, 1, rows)
            grads = client_grad(params, x, y)
            with torch.no_grad():
                for n in params:  # one Adam over the stacked client parameters
                    first[n].mul_(BETAS[0]).add_(grads[n], alpha=1 - BETAS[0])
                    second[n].mul_(BETAS[1]).addcmul_(grads[n], grads[n], value=1 - BETAS[1])
                    denom = (second[n] / (1 - BETAS[1] ** step)).sqrt_().add_(EPS)
                    params[n].addcdiv_(first[n], denom, value=-LR / (1 - BETAS[0] ** step))
        sync()
        t3 = time.perf_counter()
        with torch.no_grad():  # model averaging per cluster (equal sample counts)
            counts = torch.bincount(assignment, minlength=k).clamp_min(1)
            for n, p in params.items():
                sums = torch.zeros_like(models[n]).index_add_(0, assignment, p)
                trained = torch.bincount(assignment, minlength=k) > 0
                models[n][trained] = (sums / counts.view(-1, *[1] * (p.dim() - 1)))[trained]
        sync()
        t4 = time.perf_counter()
        with torch.no_grad():  # each client on its assigned model, stacked
            own = {n: p[assignment] for n, p in models.items()}
            logits = vmap(lambda prm, x: functional_call(net, prm, (x,)))(own, test_x)
            accuracy = (logits.argmax(-1) == test_y).float().mean().item()
        sync()
        t5 = time.perf_counter()
        for name, seconds in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4)):
            phases[name].append(seconds)
        print(f"round {r + 1}/{args.rounds}  accuracy {accuracy:.4f}  {t5 - t0:.3f} s", flush=True)
    later = {name: np.mean(values[1:] if len(values) > 1 else values) for name, values in phases.items()}
    print(f"torchfunc {m} clients on {device}: {sum(later.values()):.4f} s/round; " +
          " ".join(f"{name} {seconds:.4f}" for name, seconds in later.items()))


if __name__ == "__main__":
    main()
