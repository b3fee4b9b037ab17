"""How patchfeed.Loader with nnU-Net's augmentation scales with threads, at batch 1 and 2.

nnU-Net trains with batch 2, so the question is whether one loader keeps every core busy when a
batch holds only one or two samples. Each configuration runs on the datasets
bench/e2e/augment_loader_vs_nnunet.py writes (run it once first, with --channels 1 and 4):
nnU-Net's default augmentation with deep-supervision targets, 205^3 crops -> 128^3.
`consumer_produces=False`, so "N threads" is exactly N arena workers and the consuming thread
only waits; the consumer drops each batch at once, so the loader alone sets the pace.

What the machine allows: two independent 1-thread loaders in two processes, timed over the
same window, share nothing but the hardware (memory bandwidth, caches, the hypervisor's
scheduling); their summed samples/s over one loader's is the best any 2-thread loader can do
here. Each round runs 1 thread, 2 threads and the pair back to back, and the ratios are taken
within a round (this VM's speed drifts by 10-20 % between minutes); the table gives the median
over rounds.

  PYTHONPATH=build/test/python python3 bench/e2e/augmented_loader_scaling.py
"""
import argparse
import multiprocessing as mp
import os
import resource
import statistics
import time

ROOT = "/dev/shm/patchfeed_augment_loader"
PATCH = (128, 128, 128)
CROP = (205, 205, 205)  # nnU-Net's initial patch size for 128^3 and 30 degrees
DS_SCALES = [[1.0, 1.0, 1.0], [0.5, 0.5, 0.5], [0.25, 0.25, 0.25], [0.125, 0.125, 0.125],
             [0.0625, 0.0625, 0.0625]]


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(folder, batch, threads, samples, warmup_batches=2, seed=0, before_timing=None):
    import patchfeed

    loader = patchfeed.Loader(folder, CROP, batch, seed=seed, num_threads=threads,
                              consumer_produces=False, oversample_foreground=0.33,
                              need_to_pad=[c - p for c, p in zip(CROP, PATCH)],
                              augmentation={"patch_size": PATCH,
                                            "deep_supervision_scales": DS_SCALES})
    it = iter(loader)
    for _ in range(warmup_batches):
        next(it)
    if before_timing is not None:
        before_timing()
    steps = samples // batch
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    for _ in range(steps):
        next(it)
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    loader.close()
    return steps * batch / wall, cpu / (steps * batch)


def _pair_member(folder, batch, samples, seed, barrier, results):
    sps, _ = run(folder, batch, 1, samples, seed=seed, before_timing=barrier.wait)
    results.put(sps)


def run_pair(folder, batch, samples):
    """Summed samples/s of two 1-thread loaders in two processes, timed from a common start."""
    ctx = mp.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_pair_member, args=(folder, batch, samples, seed, barrier, results))
             for seed in (0, 0)]
    for p in procs:
        p.start()
    total = results.get() + results.get()
    for p in procs:
        p.join()
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=48, help="timed samples per configuration")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--channels", default="1,4")
    args = ap.parse_args()
    configs = [(c, b) for c in map(int, args.channels.split(",")) for b in (1, 2)]
    rows = {cfg: [] for cfg in configs}
    for r in range(args.rounds):
        for c, b in configs:
            folder = os.path.join(ROOT, f"cases_{c}ch")
            one, cpu1 = run(folder, b, 1, args.samples)
            two, cpu2 = run(folder, b, 2, args.samples)
            pair = run_pair(folder, b, args.samples)
            rows[(c, b)].append((one, two, pair, cpu1, cpu2))
            print(f"round {r} channels {c} batch {b}: 1 thread {one:.2f}, 2 threads {two:.2f}, "
                  f"2 independent loaders {pair:.2f} samples/s; 2/1 {two / one:.2f}x, "
                  f"pair/1 {pair / one:.2f}x", flush=True)
    print(f"\nmedian over {args.rounds} rounds of {args.samples} samples:")
    print("| channels | batch | samples/s, 1 thread | samples/s, 2 threads | 2 / 1 threads |"
          " 2 independent loaders / 1 | CPU s/sample (1 / 2 threads) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for (c, b), rs in rows.items():
        med = [statistics.median(col) for col in zip(*rs)]
        ratio = statistics.median(two / one for one, two, *_ in rs)
        ceiling = statistics.median(pair / one for one, _, pair, *_ in rs)
        print(f"| {c} | {b} | {med[0]:.2f} | {med[1]:.2f} | {ratio:.2f}x | {ceiling:.2f}x | "
              f"{med[3]:.3f} / {med[4]:.3f} |")


if __name__ == "__main__":
    main()
