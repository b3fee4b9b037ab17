# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The network-file-system test bed (issue 15): patchfeed_latency_fs mounted through
fuse_bed.mounted, first checked on its own (data equal to the source, a delay per request that
concurrent requests share, the bandwidth cap, no page cache, EIO and short reads on chosen
paths only), then the loader over it (io_mode="pread": batches equal the local ones, faults
surface from iteration naming the file).

Timing asserts are lower bounds (a read cannot finish before its delay) or bounds a factor of
two or more away from what overlap gives; the test skips where FUSE mounts are not allowed.
"""

from __future__ import annotations

import errno
import os
import pathlib
import threading
import time

import numpy as np
import patchfeed
import patchfeed._core as core
import pytest
from fuse_bed import mounted, read_stats, reset_stats

MAX_READ = 128 * 1024
FILES = {  # relative path -> size; sizes cross max_read and end mid-page
    "a.bin": 1_000_003,
    "b.bin": 300_007,
    "tiny.txt": 17,
    "sub/short_reads.bin": 200_000,
    "sub/bad_eio.bin": 50_000,
}


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> pathlib.Path:
    root = tmp_path_factory.mktemp("fuse_source")
    rng = np.random.default_rng(15)
    for rel, size in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(rng.bytes(size))
    return root


def timed_pread(fd: int, size: int, offset: int) -> tuple[bytes, float]:
    t0 = time.perf_counter()
    data = os.pread(fd, size, offset)
    return data, time.perf_counter() - t0


def concurrent_preads(path: pathlib.Path, reads: list[tuple[int, int]]) -> tuple[list, float]:
    """Issues `reads` (size, offset) from one thread each, released together; returns the data
    and the wall time from release to the last answer."""
    fd = os.open(path, os.O_RDONLY)
    out: list = [None] * len(reads)
    start = threading.Barrier(len(reads) + 1)

    def work(i: int) -> None:
        start.wait()
        out[i] = os.pread(fd, *reads[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(reads))]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    os.close(fd)
    return out, elapsed


# --- the file system on its own ------------------------------------------------------------


def test_reads_equal_the_source(source):
    rng = np.random.default_rng(0)
    with mounted(source, max_read=MAX_READ) as mnt:
        assert sorted(os.listdir(mnt)) == sorted(os.listdir(source))  # stats file unlisted
        assert sorted(os.listdir(mnt / "sub")) == sorted(os.listdir(source / "sub"))
        for rel, size in FILES.items():
            if "bad" in rel:
                continue
            want = (source / rel).read_bytes()
            assert (mnt / rel).read_bytes() == want, rel
            assert os.stat(mnt / rel).st_size == size
            fd = os.open(mnt / rel, os.O_RDONLY)
            try:
                for _ in range(25):
                    offset = int(rng.integers(0, size + 10))
                    length = int(rng.integers(1, 3 * MAX_READ))
                    got = os.pread(fd, length, offset)
                    assert got == want[offset : offset + length], (rel, offset, length)
            finally:
                os.close(fd)
        stats = read_stats(mnt)
        assert stats["max_request_bytes"] <= MAX_READ  # larger reads were split
        assert stats["requests"] > 0 and stats["eio_replies"] == 0
        with pytest.raises(OSError) as e:
            os.open(mnt / "a.bin", os.O_WRONLY)
        assert e.value.errno == errno.EROFS


def test_max_read_splits_large_reads(source):
    with mounted(source, max_read=64 * 1024) as mnt:
        fd = os.open(mnt / "a.bin", os.O_RDONLY)
        try:
            reset_stats(mnt)
            assert len(os.pread(fd, 512 * 1024, 0)) == 512 * 1024
            stats = read_stats(mnt)
        finally:
            os.close(fd)
    assert stats["max_request_bytes"] == 64 * 1024
    assert stats["requests"] == 8


def test_every_read_pays_the_delay_and_nothing_is_cached(source):
    delay = 0.005
    with mounted(source, delay_us=delay * 1e6) as mnt:
        fd = os.open(mnt / "b.bin", os.O_RDONLY)
        reset_stats(mnt)
        times = []
        for _ in range(4):  # the same range again and again: direct_io, no page cache
            data, seconds = timed_pread(fd, 4096, 8192)
            assert len(data) == 4096
            times.append(seconds)
        stats = read_stats(mnt)
        os.close(fd)
    assert min(times) >= delay, times
    assert stats["requests"] == 4  # each read reached the file system


def test_concurrent_reads_overlap_their_delays(source):
    # A long delay keeps this robust on a loaded machine: serial would take n * delay = 1.6 s.
    delay, n = 0.1, 16
    with mounted(source, delay_us=delay * 1e6) as mnt:
        reset_stats(mnt)
        reads = [(4096, i * 8192) for i in range(n)]
        got, elapsed = concurrent_preads(mnt / "a.bin", reads)
        stats = read_stats(mnt)
    want = (source / "a.bin").read_bytes()
    assert got == [want[off : off + size] for size, off in reads]
    print(f"{n} concurrent reads at {delay * 1e3:.0f} ms delay took {elapsed * 1e3:.1f} ms; "
          f"max in flight {stats['max_in_flight']}")
    assert elapsed >= delay
    assert elapsed < n * delay / 4, f"{n} reads took {elapsed:.3f} s: they did not overlap"
    assert stats["max_in_flight"] >= n
    assert stats["requests"] == n


def test_bandwidth_cap_is_shared_by_concurrent_reads(source):
    mbps = 20.0  # 10^6 bytes per second
    with mounted(source, bandwidth_mbps=mbps) as mnt:
        fd = os.open(mnt / "a.bin", os.O_RDONLY)
        data, sequential = timed_pread(fd, 1_000_000, 0)  # 8 requests of 128 KiB, one by one
        os.close(fd)
        assert len(data) == 1_000_000
        got, concurrent = concurrent_preads(mnt / "a.bin", [(250_000, i * 250_000)
                                                            for i in range(4)])
        assert b"".join(got) == (source / "a.bin").read_bytes()[:1_000_000]
    floor = 1_000_000 / (mbps * 1e6)  # 50 ms
    assert sequential >= 0.95 * floor, sequential
    assert concurrent >= 0.95 * floor, concurrent  # one link: 4 readers share it


def test_eio_on_the_chosen_paths_only(source):
    with mounted(source, delay_us=2000, eio_path_substring="bad_") as mnt:
        fd = os.open(mnt / "sub" / "bad_eio.bin", os.O_RDONLY)  # opening works
        with pytest.raises(OSError) as e:
            os.pread(fd, 4096, 0)
        assert e.value.errno == errno.EIO
        os.close(fd)
        assert (mnt / "b.bin").read_bytes() == (source / "b.bin").read_bytes()
        assert (mnt / "sub" / "short_reads.bin").read_bytes() == (
            source / "sub" / "short_reads.bin").read_bytes()
        assert read_stats(mnt)["eio_replies"] == 1


def test_eio_range_fails_only_reads_that_touch_it(source):
    want = (source / "sub" / "bad_eio.bin").read_bytes()
    with mounted(source, eio_path_substring="bad_", eio_range=(10_000, 20_000)) as mnt:
        fd = os.open(mnt / "sub" / "bad_eio.bin", os.O_RDONLY)
        assert os.pread(fd, 10_000, 0) == want[:10_000]
        assert os.pread(fd, 5_000, 20_000) == want[20_000:25_000]
        for size, offset in ((1, 10_000), (2, 9_999), (100, 19_999), (30_000, 0)):
            with pytest.raises(OSError) as e:
                os.pread(fd, size, offset)
            assert e.value.errno == errno.EIO, (size, offset)
        os.close(fd)


def test_short_reads_on_the_chosen_paths_only(source):
    want = (source / "sub" / "short_reads.bin").read_bytes()
    with mounted(source, short_read_path_substring="short_") as mnt:
        fd = os.open(mnt / "sub" / "short_reads.bin", os.O_RDONLY)
        assert os.pread(fd, 65536, 1000) == want[1000 : 1000 + 32768]  # half, not at EOF
        assert os.pread(fd, 1, 5) == want[5:6]  # one byte cannot be halved
        assert os.pread(fd, 1000, len(want) - 100) == want[-100:]  # at EOF: what is there
        os.close(fd)
        fd = os.open(mnt / "b.bin", os.O_RDONLY)
        assert len(os.pread(fd, 65536, 1000)) == 65536
        os.close(fd)
        # A reader that loops on short reads still gets the whole file.
        assert (mnt / "sub" / "short_reads.bin").read_bytes() == want
        assert read_stats(mnt)["short_replies"] > 2


def test_stats_reset_and_settings(source):
    with mounted(source, delay_us=1000, bandwidth_mbps=500, max_read=MAX_READ) as mnt:
        (mnt / "tiny.txt").read_bytes()
        stats = read_stats(mnt)
        assert stats["requests"] >= 1 and stats["bytes"] == FILES["tiny.txt"]
        assert stats["delay_us"] == 1000 and stats["max_read"] == MAX_READ
        assert stats["bandwidth_bytes_per_s"] == 500e6
        reset_stats(mnt)
        stats = read_stats(mnt)
        assert stats["requests"] == stats["bytes"] == stats["max_in_flight"] == 0


def test_unmounts_when_the_body_raises(source):
    with pytest.raises(KeyError):
        with mounted(source) as mnt:
            raise KeyError("boom")
    assert not os.path.ismount(mnt)
    assert not mnt.exists()


# --- the loader over it --------------------------------------------------------------------

PATCH = (16, 16, 16)
SHAPES = [(1, 24, 20, 20), (1, 20, 24, 18), (1, 28, 20, 22), (1, 22, 22, 20)]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> pathlib.Path:
    """Four nnU-Net-like cases written with patchfeed.write_b2nd (float32 image, int16 seg)."""
    folder = tmp_path_factory.mktemp("fuse_dataset")
    for i, shape in enumerate(SHAPES):
        rng = np.random.default_rng(i)
        image = rng.standard_normal(shape, dtype=np.float32)
        seg = np.zeros(shape, dtype=np.int16)
        z, y, x = (s // 2 for s in shape[1:])
        seg[0, z - 3 : z + 3, y - 3 : y + 3, x - 3 : x + 3] = 1
        seg[0, z - 1 : z + 1, y - 1 : y + 1, x - 1 : x + 1] = 2
        for array, suffix in ((image, ".b2nd"), (seg, "_seg.b2nd")):
            chunks, blocks = core.nnunet_chunk_block_shapes(shape, PATCH, array.itemsize)
            patchfeed.write_b2nd(folder / f"case_{i:03d}{suffix}", array, chunks, blocks,
                                 codec="lz4", clevel=1)
    return folder


def make_loader(folder, **kw) -> patchfeed.Loader:
    # Foreground indexes are built by mapping the seg files, which direct_io files refuse
    # (see test_foreground_index_build_over_direct_io_mount): sample uniformly here.
    kw.setdefault("foreground", "off")
    kw.setdefault("oversample_foreground", 0)
    kw.setdefault("num_threads", 4)
    kw.setdefault("batch_size", 2)
    return patchfeed.Loader(folder, PATCH, io_mode="pread", seed=7, as_numpy=True,
                            foreground_cache_dir="", **kw)


def load_batches(folder, n: int, **kw) -> list:
    """The next `n` batches as (batch index, samples, image copy, seg copy)."""
    out = []
    with make_loader(folder, **kw) as loader:
        for _ in range(n):
            batch = loader.next_batch()
            info = loader.last_batch
            out.append((info.batch_index, [(s.case_index, tuple(s.box_start))
                                           for s in info.samples],
                        np.array(batch["image"]), np.array(batch["seg"])))
            del batch
    return out


def assert_same_batches(want: list, got: list) -> None:
    assert len(want) == len(got)
    for (wi, ws, wimg, wseg), (gi, gs, gimg, gseg) in zip(want, got):
        assert (wi, ws) == (gi, gs)
        np.testing.assert_array_equal(gimg, wimg, err_msg=f"batch {wi} image")
        np.testing.assert_array_equal(gseg, wseg, err_msg=f"batch {wi} seg")


def test_loader_batches_over_the_mount_equal_local_reads(dataset):
    want = load_batches(dataset, 6)
    with mounted(dataset, delay_us=2000) as mnt:
        reset_stats(mnt)
        t0 = time.perf_counter()
        got = load_batches(mnt, 6)
        elapsed = time.perf_counter() - t0
        stats = read_stats(mnt)
    print(f"loader over the mount: 6 batches in {elapsed * 1e3:.0f} ms, {stats['requests']} "
          f"read requests, max in flight {stats['max_in_flight']}")
    assert_same_batches(want, got)
    assert stats["requests"] > 0 and stats["eio_replies"] == 0


@pytest.mark.parametrize("backend", ["io_uring", "pread"])
def test_loader_keeps_reads_in_flight_over_the_mount(dataset, backend):
    # Batches of 8: each round of a batch's reads (headers and offsets, then block streams)
    # is dozens of reads, all submitted before the producer waits.
    want = load_batches(dataset, 4, batch_size=8, io_depth=0)
    with mounted(dataset, delay_us=3000) as mnt:
        reset_stats(mnt)
        with make_loader(mnt, batch_size=8, io_depth=0, num_threads=2) as loader:
            for _ in range(4):
                del loader.next_batch()["image"]
        sync_stats = read_stats(mnt)
        reset_stats(mnt)
        got = load_batches(mnt, 4, batch_size=8, io_depth=64, io_backend=backend)
        with make_loader(mnt, batch_size=8, io_depth=64, io_backend=backend) as loader:
            for _ in range(4):
                del loader.next_batch()["image"]
            metrics = loader.metrics()
        stats = read_stats(mnt)
    assert_same_batches(want, got)
    assert metrics["io_backend"] == ("io_uring" if backend == "io_uring" else "pread pool")
    assert metrics["io_depth"] == 64 and metrics["io_requests"] > 0
    assert metrics["io_fallback_reads"] == 0
    # Synchronous reads: at most one per thread (2 workers and the consumer) at the mount.
    assert sync_stats["max_in_flight"] <= 3, sync_stats
    # Ahead of decode: many at once, as the loader and the file system both count them.
    assert metrics["io_max_in_flight"] >= 8, metrics
    assert stats["max_in_flight"] >= 8, stats


def test_augmented_loader_over_the_mount_equals_local_reads(dataset):
    aug = {"patch_size": (10, 10, 10), "p_rotation": 0.6, "p_scaling": 0.5}
    kw = dict(augmentation=aug, need_to_pad=(3, 3, 3))
    want = load_batches(dataset, 4, io_depth=0, **kw)
    with mounted(dataset, delay_us=1000) as mnt:
        got = load_batches(mnt, 4, **kw)
        assert read_stats(mnt)["requests"] > 0
    assert_same_batches(want, got)


def test_loader_survives_short_reads(dataset):
    want = load_batches(dataset, 4)
    with mounted(dataset, short_read_path_substring="case_") as mnt:
        got = load_batches(mnt, 4)
        assert read_stats(mnt)["short_replies"] > 0
    assert_same_batches(want, got)


def test_loader_eio_is_raised_from_iteration_naming_the_file(dataset):
    # EIO on the middle third of one image file, which holds only chunk data: opening the
    # frame (header, offsets, trailer) works, the batches whose boxes read those bytes fail.
    bad = dataset / "case_001.b2nd"
    size = bad.stat().st_size
    with mounted(dataset, delay_us=2000, eio_path_substring="case_001.b2nd",
                 eio_range=(size // 3, 2 * size // 3)) as mnt:
        failures, good = [], 0
        with make_loader(mnt) as loader:
            for _ in range(12):
                try:
                    batch = loader.next_batch()
                except OSError as e:
                    failures.append(str(e))
                else:
                    good += 1
                    del batch
        stats = read_stats(mnt)
    assert failures and good, (failures, good)
    for message in failures:
        assert str(mnt / "case_001.b2nd") in message, message
        assert "Input/output error" in message, message
        assert "at offset" in message, message  # the range that failed
    assert stats["eio_replies"] >= len(failures)


# The foreground index build reads label maps with the loader's io_mode: FUSE direct_io files
# refuse shared mappings (ENODEV), so a build that mapped them would fail here.
def test_foreground_index_build_over_direct_io_mount(dataset):
    want = load_batches(dataset, 2, foreground="auto", oversample_foreground=0.5)
    with mounted(dataset) as mnt:
        got = load_batches(mnt, 2, foreground="auto", oversample_foreground=0.5)
    assert_same_batches(want, got)
