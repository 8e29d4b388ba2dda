"""Writes N bytes of word-like text to stdout, the same every run (a fixed-seed generator), for
the compression benchmarks: it compresses about as prose does."""
import random
import sys

n = int(sys.argv[1])
rng = random.Random(42)
letters = "etaoinshrdlcumwfgypbvkjxqz"
weights = [12, 9, 8, 7, 7, 6, 6, 6, 5, 4, 4, 3, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1]
vocab = ["".join(rng.choices(letters, weights, k=rng.randint(1, 10))) for _ in range(20000)]
out = sys.stdout.buffer
written = 0
while written < n:
    line = (" ".join(rng.choices(vocab, k=12)) + "\n").encode()
    line = line[: n - written]
    out.write(line)
    written += len(line)
