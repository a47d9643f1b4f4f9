#!/usr/bin/env python3
"""Benchmark, not part of cflrun: how fast this machine can run the work of one CLoVE round at best.

Measures, on setup.sh's venv (the same LibTorch, MKL and oneDNN as cflrun):
- sgemm: a 1024 x 1024 float32 matrix product, the machine's practical peak GFLOP/s;
- forward: the paper's CNN as a frozen TorchScript module (torch.jit.freeze +
  optimize_for_inference: oneDNN-prepacked weights, fused convolution and ReLU) over 12 500
  samples in the best of 64- to 512-sample chunks, the fastest this architecture's forward pass runs here;
- training: eager forward + backward + Adam steps of 100 samples, the local update's kernel.
From these it prints a floor for one round of jobs/fmnist_label_skew1.cfg (every loss vector and
evaluation at the forward rate, every local update at the training rate, nothing else), the figure
to compare against a target such as 0.6 s per round. Best of --repeats timings each.

Usage: .venv/bin/python tests/bench/machine_ceiling.py [--threads N] [--repeats 5]
"""
import argparse
import os
import time


def threads_argument():
    """--threads, read before torch is imported: OpenBLAS (pthreads) takes its thread count from
    OPENBLAS_NUM_THREADS at load time, and torch.set_num_threads does not change it."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    os.environ["OPENBLAS_NUM_THREADS"] = str(args.threads)
    return args


ARGS = threads_argument() if __name__ == "__main__" else None
import torch  # noqa: E402  (after OPENBLAS_NUM_THREADS is set)
import torch.nn.functional as F  # noqa: E402

from pytorch_clove_round import Cnn  # noqa: E402  (the paper's CNN, as the reference script builds it)

FORWARD_FLOPS = 2 * 242_560  # the paper's CNN per 28 x 28 image (side_by_side.sh counts the same)
LOSS_VECTOR_SAMPLES, TRAIN_SAMPLES, TEST_SAMPLES = 25 * 500 * 5, 25 * 500, 25 * 400


def best_seconds(work, repeats):
    for _ in range(3):  # warm-up: TorchScript's profiling runs, oneDNN primitive creation
        work()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def sgemm_rate(repeats):
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    seconds = best_seconds(lambda: [torch.mm(a, b) for _ in range(10)], repeats)
    return 10 * 2 * 1024 ** 3 / seconds


def forward_rate(repeats, samples=12_500, chunks=(64, 128, 256, 512)):
    """The best over chunk sizes (larger chunks fall out of cache: 2 048 ran 4x slower here)."""
    model = torch.jit.optimize_for_inference(torch.jit.freeze(torch.jit.script(Cnn().eval())))
    x = torch.rand(samples, 1, 28, 28)

    def work(chunk):
        with torch.no_grad():
            for start in range(0, samples, chunk):
                model(x[start:start + chunk])
    return max(samples * FORWARD_FLOPS / best_seconds(lambda: work(chunk), repeats) for chunk in chunks)


def training_rate(repeats, samples=2_500, batch=100):
    model = Cnn()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    x, y = torch.rand(samples, 1, 28, 28), torch.randint(0, 10, (samples,))

    def work():
        for start in range(0, samples, batch):
            optimizer.zero_grad()
            F.cross_entropy(model(x[start:start + batch]), y[start:start + batch]).backward()
            optimizer.step()
    return samples * 3 * FORWARD_FLOPS / best_seconds(work, repeats)


def main(args):
    torch.set_num_threads(args.threads)
    sgemm, forward, training = (f(args.repeats) for f in (sgemm_rate, forward_rate, training_rate))
    floor_forward = (LOSS_VECTOR_SAMPLES + TEST_SAMPLES) * FORWARD_FLOPS / forward
    floor_training = TRAIN_SAMPLES * 3 * FORWARD_FLOPS / training
    print(f"{args.threads} threads: sgemm {sgemm / 1e9:.1f} GFLOP/s, frozen CNN forward "
          f"{forward / 1e9:.1f} GFLOP/s, eager CNN training {training / 1e9:.1f} GFLOP/s")
    print(f"round floor: loss vectors {LOSS_VECTOR_SAMPLES * FORWARD_FLOPS / forward:.3f} s + "
          f"evaluation {TEST_SAMPLES * FORWARD_FLOPS / forward:.3f} s + local updates "
          f"{floor_training:.3f} s = {floor_forward + floor_training:.3f} s")


if __name__ == "__main__":
    main(ARGS)
