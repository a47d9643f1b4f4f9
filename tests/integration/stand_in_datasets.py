#!/usr/bin/env python3
"""Writes stand-in MNIST and CIFAR-10 files of exactly the shape cflrun reads when the real ones are
absent, so that every config in jobs/ can be dry-run: same file names and formats, same number of
images per class and split as the data sets of datasets/README.md, synthetic pixels.

  DIR/mnist/                   IDX files: 60 000 train / 10 000 test images, 28x28 bytes, with the
                               class counts of the official MNIST (datasets/get_mnist.sh)
  DIR/cifar-10-batches-bin/    CIFAR-10 binary: data_batch_1..5.bin with 10 000 records each and
                               test_batch.bin with 10 000 (1 000 per class per file), records of
                               1 label byte + 3 072 pixel bytes

The pixels of class c are a constant grey level (a dry run never trains). Pure Python, no NumPy.
Usage: stand_in_datasets.py DIR"""
import os
import struct
import sys

MNIST_TRAIN_PER_CLASS = [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
MNIST_TEST_PER_CLASS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]
CIFAR_RECORDS_PER_CLASS_PER_FILE = 1000


def interleaved_labels(per_class):
    """Labels with the given count per class, classes interleaved as in a shuffled data set."""
    remaining = list(per_class)
    labels = []
    while any(remaining):
        for label, left in enumerate(remaining):
            if left:
                labels.append(label)
                remaining[label] -= 1
    return labels


def write_idx(directory, prefix, per_class):
    labels = interleaved_labels(per_class)
    with open(os.path.join(directory, f"{prefix}-labels-idx1-ubyte"), "wb") as f:
        f.write(struct.pack(">II", 0x801, len(labels)) + bytes(labels))
    with open(os.path.join(directory, f"{prefix}-images-idx3-ubyte"), "wb") as f:
        f.write(struct.pack(">IIII", 0x803, len(labels), 28, 28))
        f.write(b"".join(bytes([25 * label]) * 784 for label in labels))


def write_cifar_batch(path):
    labels = interleaved_labels([CIFAR_RECORDS_PER_CLASS_PER_FILE] * 10)
    with open(path, "wb") as f:
        f.write(b"".join(bytes([label]) + bytes([25 * label]) * 3072 for label in labels))


def main():
    root = sys.argv[1]
    mnist = os.path.join(root, "mnist")
    os.makedirs(mnist, exist_ok=True)
    write_idx(mnist, "train", MNIST_TRAIN_PER_CLASS)
    write_idx(mnist, "t10k", MNIST_TEST_PER_CLASS)
    cifar = os.path.join(root, "cifar-10-batches-bin")
    os.makedirs(cifar, exist_ok=True)
    for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        write_cifar_batch(os.path.join(cifar, name))


if __name__ == "__main__":
    main()
