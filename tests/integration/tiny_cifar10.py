#!/usr/bin/env python3
"""Writes a tiny dataset in the CIFAR-10 binary format (data_batch_1..5.bin, test_batch.bin: records
of 1 label byte + 3 072 pixel bytes, red, green, blue planes of 32x32) for the integration tests.
Images of class c are noise around a class-specific colour, so a CNN can learn them.
Usage: tiny_cifar10.py DIR [RECORDS_PER_FILE]"""
import os
import random
import sys

directory = sys.argv[1]
records = int(sys.argv[2]) if len(sys.argv) > 2 else 200
os.makedirs(directory, exist_ok=True)
rng = random.Random(7)
for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
    with open(os.path.join(directory, name), "wb") as f:
        for r in range(records):
            label = r % 10
            base = [(label * 25) % 256, (label * 70) % 256, (255 - label * 25) % 256]
            pixels = bytearray()
            for channel in range(3):
                pixels += bytes(min(255, max(0, base[channel] + rng.randint(-40, 40))) for _ in range(1024))
            f.write(bytes([label]) + pixels)
