"""How patchfeed.Loader with nnU-Net's augmentation scales with threads, at batch 1 and 2.

nnU-Net trains with batch 2, so the question is whether one loader keeps every core busy when a
batch holds only one or two samples. Each configuration runs in this process on the datasets
bench/e2e/augment_loader_vs_nnunet.py writes (run it once first, with --channels 1 and 4):
nnU-Net's default augmentation with deep-supervision targets, 205^3 crops -> 128^3.
`consumer_produces=False`, so "N threads" is exactly N arena workers and the consuming thread
only waits; the consumer drops each batch at once, so the loader alone sets the pace.

  PYTHONPATH=build/test/python python3 bench/e2e/augmented_loader_scaling.py
"""
import argparse
import os
import resource
import time

ROOT = "/dev/shm/patchfeed_augment_loader"
PATCH = (128, 128, 128)
CROP = (205, 205, 205)  # nnU-Net's initial patch size for 128^3 and 30 degrees
DS_SCALES = [[1.0, 1.0, 1.0], [0.5, 0.5, 0.5], [0.25, 0.25, 0.25], [0.125, 0.125, 0.125],
             [0.0625, 0.0625, 0.0625]]


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(folder, batch, threads, samples, warmup_batches=2):
    import patchfeed

    loader = patchfeed.Loader(folder, CROP, batch, seed=0, num_threads=threads,
                              consumer_produces=False, oversample_foreground=0.33,
                              need_to_pad=[c - p for c, p in zip(CROP, PATCH)],
                              augmentation={"patch_size": PATCH,
                                            "deep_supervision_scales": DS_SCALES})
    it = iter(loader)
    for _ in range(warmup_batches):
        next(it)
    steps = samples // batch
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    for _ in range(steps):
        next(it)
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    loader.close()
    return steps * batch / wall, cpu / (steps * batch)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=48, help="timed samples per configuration")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--channels", default="1,4")
    args = ap.parse_args()
    configs = [(c, b, t) for c in map(int, args.channels.split(",")) for b in (1, 2)
               for t in (1, 2)]
    best = {}
    for r in range(args.rounds):
        for c, b, t in configs:
            folder = os.path.join(ROOT, f"cases_{c}ch")
            sps, cps = run(folder, b, t, args.samples)
            print(f"round {r} channels {c} batch {b} threads {t}: {sps:.2f} samples/s, "
                  f"{cps:.3f} CPU s/sample", flush=True)
            if sps > best.get((c, b, t), (0, 0))[0]:
                best[(c, b, t)] = (sps, cps)
    print("\n| channels | batch | samples/s, 1 thread | samples/s, 2 threads | 2 / 1 threads |"
          " CPU s/sample (1 / 2 threads) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for c in sorted({k[0] for k in best}):
        for b in (1, 2):
            one, two = best[(c, b, 1)], best[(c, b, 2)]
            print(f"| {c} | {b} | {one[0]:.2f} | {two[0]:.2f} | {two[0] / one[0]:.2f}x | "
                  f"{one[1]:.3f} / {two[1]:.3f} |")


if __name__ == "__main__":
    main()
