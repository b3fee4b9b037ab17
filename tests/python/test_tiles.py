# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed.tiles against nnU-Net's own sliding window.

Tile positions equal nnunetv2's compute_steps_for_sliding_window; every tile equals the tile
nnU-Net's predictor cuts from its padded copy of the case (pad_nd_image, then its slicers);
the parts of the tiles inside the case rebuild the case byte for byte, for `.b2nd` (written by
python-blosc2) and zarr v2/v3 (written by zarr-python), 2-D and 3-D cases, 2-D tiles of 3-D
cases, channels > 1, cases smaller than the tile and overlaps 0, 0.25 and 0.5. TileStitcher
gives exactly the logits of nnU-Net's predict_sliding_window_return_logits. Then errors,
buffer sharing, the GIL and Ctrl-C."""

from __future__ import annotations

import pathlib
import subprocess
import sys
import textwrap
import threading
from types import SimpleNamespace

import blosc2
import numpy as np
import patchfeed
import pytest
from loader_testlib import env_with_package, write_dataset
from patchfeed import _core

torch = pytest.importorskip("torch")
zarr = pytest.importorskip("zarr")
sliding = pytest.importorskip("nnunetv2.inference.sliding_window_prediction")
from acvl_utils.cropping_and_padding.padding import pad_nd_image  # noqa: E402
from nnunetv2.inference.predict_from_raw_data import nnUNetPredictor  # noqa: E402

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]

# (case shape (C, *spatial), tile): a 3-D case smaller than the tile along one axis, a 2-D
# case smaller along one axis, a 3-D case tiled slice by slice (nnU-Net's 2d), and a case
# smaller than the tile everywhere.
CASES = [
    ((2, 20, 13, 30), (8, 16, 12)),
    ((3, 25, 9), (10, 12)),
    ((2, 4, 20, 18), (16, 16)),
    ((1, 5, 6, 7), (8, 8, 8)),
]


def write_array(tmp_path, fmt: str, data: np.ndarray) -> str:
    chunks = tuple(max(1, min(s, 8)) for s in data.shape)
    if fmt == "b2nd":
        path = str(tmp_path / "a.b2nd")
        blocks = tuple(max(1, c // 2) for c in chunks)
        blosc2.asarray(data, urlpath=path, mode="w", chunks=chunks, blocks=blocks)
    elif fmt == "zarr2":
        path = str(tmp_path / "a2.zarr")
        zarr.create_array(path, shape=data.shape, dtype=data.dtype, chunks=chunks,
                          zarr_format=2)[...] = data
    else:
        path = str(tmp_path / "a3.zarr")
        shards = tuple(2 * c for c in chunks)
        zarr.create_array(path, shape=data.shape, dtype=data.dtype, chunks=chunks,
                          shards=shards, zarr_format=3)[...] = data
    return path


def nnunet_tiles(case: np.ndarray, patch, overlap: float, pad: float) -> list[np.ndarray]:
    """The tiles nnU-Net's predictor feeds its network, in its order."""
    padded = pad_nd_image(case, patch, "constant", {"constant_values": pad})
    if case.ndim == 4:  # nnU-Net's predictor handles (C, Z, Y, X) cases, with 3-D or 2-D tiles
        predictor = SimpleNamespace(configuration_manager=SimpleNamespace(patch_size=list(patch)),
                                    tile_step_size=1 - overlap, verbose=False)
        slicers = nnUNetPredictor._internal_get_sliding_window_slicers(predictor,
                                                                       padded.shape[1:])
    else:  # 2-D cases: its steps, in the same order
        sy, sx = sliding.compute_steps_for_sliding_window(padded.shape[1:], patch, 1 - overlap)
        slicers = [(slice(None), slice(y, y + patch[0]), slice(x, x + patch[1]))
                   for y in sy for x in sx]
    return [padded[s] for s in slicers]


def test_starts_equal_nnunets_steps():
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(400):
        ndim = int(rng.integers(1, 4))
        tile = [int(t) for t in rng.integers(1, 48, ndim)]
        image = [t + int(e) for t, e in zip(tile, rng.integers(0, 150, ndim))]
        step = float(rng.choice([1.0, 0.75, 0.5, 0.3, 0.25, 1 / 3, 0.1]))
        if any(i > t and t * step < 1 for i, t in zip(image, tile)):
            with pytest.raises(ValueError, match="less than one voxel"):
                _core.sliding_window_steps(image, tile, step)
            continue
        want = sliding.compute_steps_for_sliding_window(tuple(image), tuple(tile), step)
        assert _core.sliding_window_steps(image, tile, step) == want, (image, tile, step)
        checked += 1
    assert checked > 300


@pytest.mark.parametrize("fmt", ["b2nd", "zarr2", "zarr3"])
@pytest.mark.parametrize("overlap", [0.0, 0.25, 0.5])
@pytest.mark.parametrize(("shape", "patch"), CASES)
def test_tiles_are_nnunets_and_rebuild_the_case(tmp_path, fmt, overlap, shape, patch):
    rng = np.random.default_rng(sum(shape))
    case = rng.standard_normal(shape).astype(np.float32)
    path = write_array(tmp_path, fmt, case)
    want = nnunet_tiles(case, patch, overlap, 0.0)
    rebuilt = np.full_like(case, np.nan)
    with patchfeed.tiles(path, patch, overlap, num_threads=2, min_task_bytes=512) as tiles:
        assert len(tiles) == len(want)
        boxes = tiles.boxes
        got = 0
        for tile, expected in zip(tiles, want):
            assert tile.index == got and tile.box == boxes[got]
            image = tile.arrays["image"]
            assert isinstance(image, torch.Tensor) and tuple(image.shape) == (shape[0], *patch)
            assert image.numpy().tobytes() == np.ascontiguousarray(expected).tobytes()
            rebuilt[(slice(None), *tile.case_slices)] = image[(slice(None), *tile.tile_slices)]
            got += 1
        assert got == len(want)
        assert next(tiles, None) is None
    assert rebuilt.tobytes() == case.tobytes()


def test_starts_of_a_padded_case_are_nnunets_steps_shifted(tmp_path):
    case = np.zeros((1, 5, 30, 40), np.float32)
    path = write_array(tmp_path, "b2nd", case)
    with patchfeed.tiles(path, (8, 16, 16), 0.5) as tiles:
        # nnU-Net pads axis 0 from 5 to 8: (8 - 5) // 2 = 1 voxel before the case.
        steps = sliding.compute_steps_for_sliding_window((8, 30, 40), (8, 16, 16), 0.5)
        assert tiles.starts == ((-1,), tuple(steps[1]), tuple(steps[2]))


def test_dataset_case_with_segmentation_and_pads(tmp_path):
    folder = write_dataset(tmp_path / "ds", [(1, 24, 20, 20), (1, 12, 30, 22)])
    dataset = patchfeed.Dataset.from_nnunet_folder(folder)
    image = blosc2.open(str(folder / "case_001.b2nd"))[...]
    seg = blosc2.open(str(folder / "case_001_seg.b2nd"))[...]
    patch = (16, 16, 16)
    # Copies: a tile kept holds one of the reader's few buffers.
    by_id = [{n: a.copy() for n, a in t.arrays.items()}
             for t in patchfeed.tiles((dataset, "case_001"), patch, as_numpy=True)]
    want_image = nnunet_tiles(image, patch, 0.5, 0)
    want_seg = nnunet_tiles(seg, patch, 0.5, -1)  # the Loader's default for "seg"
    assert len(by_id) == len(want_image)
    for arrays, wi, ws in zip(by_id, want_image, want_seg):
        np.testing.assert_array_equal(arrays["image"], wi)
        np.testing.assert_array_equal(arrays["seg"], ws)
    # A pad value per array, and only the arrays asked for, by case index.
    tiles = patchfeed.tiles((dataset, 1), patch, pad={"seg": 9}, arrays=["seg"], as_numpy=True)
    first = next(tiles)
    assert list(first.arrays) == ["seg"]
    np.testing.assert_array_equal(first.arrays["seg"], nnunet_tiles(seg, patch, 0.5, 9)[0])
    tiles.close()
    with pytest.raises(KeyError, match="case_007"):
        patchfeed.tiles((dataset, "case_007"), patch)
    with pytest.raises(ValueError, match="not tiled"):
        patchfeed.tiles((dataset, 0), patch, pad={"label": 1})


def test_open_array_is_a_source(tmp_path):
    case = np.arange(2 * 9 * 10, dtype=np.int16).reshape(2, 9, 10)
    path = write_array(tmp_path, "zarr3", case)
    tiles = patchfeed.tiles(patchfeed.open_array(path), (8, 8), 0.25, pad=-3, as_numpy=True)
    got = [t.arrays["image"].copy() for t in tiles]
    assert [g.tobytes() for g in got] == [w.tobytes() for w in nnunet_tiles(case, (8, 8), 0.25, -3)]


def test_tiles_share_the_readers_buffers(tmp_path):
    path = write_array(tmp_path, "b2nd", np.ones((1, 40, 40, 40), np.float32))
    with patchfeed.tiles(path, (16, 16, 16), read_ahead=2) as tiles:
        pointers = set()
        for tile in tiles:
            pointers.add(tile.arrays["image"].data_ptr())
            del tile  # the buffer goes back when its tensor is freed
        assert len(tiles) > 3
        assert len(pointers) <= 3  # read_ahead + 1 buffers, reused without copies


def test_holding_every_buffer_is_an_error_not_a_hang(tmp_path):
    path = write_array(tmp_path, "b2nd", np.ones((1, 40, 40), np.float32))
    tiles = patchfeed.tiles(path, (16, 16), read_ahead=1)
    held = [next(tiles), next(tiles)]
    with pytest.raises(MemoryError, match="holds all 2 tile buffers"):
        next(tiles)
    held.pop(0)
    assert next(tiles).index == 2
    tiles.close()
    with pytest.raises(ValueError, match="closed"):
        next(tiles)
    assert held[0].arrays["image"].sum().item() == 16 * 16  # held tiles outlive the reader


@pytest.mark.parametrize(
    ("patch", "overlap", "match"),
    [
        ((8, 8, 8, 8), 0.5, "as many axes"),
        ((8,), 0.5, "as many axes"),
        ((8, 8, 8), 1.0, r"\[0, 1\)"),
        ((8, 8, 8), -0.25, r"\[0, 1\)"),
        ((8, 8, 8), float("nan"), r"\[0, 1\)"),
        ((8, 0, 8), 0.5, ">= 1"),
    ],
)
def test_bad_tiles_are_value_errors(tmp_path, patch, overlap, match):
    path = write_array(tmp_path, "b2nd", np.zeros((1, 10, 10, 10), np.float32))
    with pytest.raises(ValueError, match=match):
        patchfeed.tiles(path, patch, overlap)


def test_bad_sources_are_type_errors():
    with pytest.raises(TypeError, match="tiles"):
        patchfeed.tiles(42, (8, 8))


def test_corrupt_chunk_names_file_and_box(tmp_path):
    data = np.random.default_rng(3).standard_normal((1, 32, 32, 32)).astype(np.float32)
    path = tmp_path / "c.b2nd"
    blosc2.asarray(data, urlpath=str(path), mode="w", chunks=(1, 16, 16, 16),
                   blocks=(1, 8, 8, 8))
    raw = bytearray(path.read_bytes())
    mid = len(raw) // 2  # chunk payloads lie between the header and the trailer
    for i in range(mid - 64, mid + 64):
        raw[i] ^= 0x5A
    path.write_bytes(bytes(raw))
    tiles = patchfeed.tiles(str(path), (16, 16, 16), 0.0)
    errors, good = [], 0
    while True:
        try:
            tile = next(tiles)
        except patchfeed.CorruptDataError as e:
            errors.append(str(e))
            continue
        except StopIteration:
            break
        good += 1  # tiles that miss the damaged chunk read fine, and reading goes on
        del tile
    assert errors and good and len(errors) + good == 8
    assert str(path) in errors[0] and "box [0:1, " in errors[0] and "tile " in errors[0]


def test_gaussian_is_nnunets():
    for size in [(8, 8, 8), (5, 12, 7), (16, 16), (1, 32, 32)]:
        want = sliding.compute_gaussian(size, sigma_scale=1 / 8, value_scaling_factor=10,
                                        dtype=torch.float64, device=torch.device("cpu"))
        np.testing.assert_allclose(patchfeed.gaussian_importance_map(size), want.numpy(),
                                   rtol=1e-12)


@pytest.mark.parametrize(("shape", "patch"), [((2, 20, 9, 30), (8, 16, 12)),
                                              ((2, 6, 20, 33), (16, 16))])
def test_stitcher_gives_nnunets_logits(tmp_path, shape, patch):
    torch.manual_seed(0)
    case = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    path = write_array(tmp_path, "b2nd", case)
    conv = (torch.nn.Conv3d if len(patch) == 3 else torch.nn.Conv2d)(shape[0], 3, 3, padding=1)
    predictor = nnUNetPredictor(tile_step_size=0.5, use_gaussian=True, use_mirroring=False,
                                perform_everything_on_device=False, device=torch.device("cpu"),
                                verbose=False, allow_tqdm=False)
    predictor.configuration_manager = SimpleNamespace(patch_size=list(patch))
    predictor.label_manager = SimpleNamespace(num_segmentation_heads=3)
    predictor.network = conv
    want = predictor.predict_sliding_window_return_logits(torch.from_numpy(case))
    with patchfeed.tiles(path, patch, 0.5) as tiles, torch.inference_mode():
        stitcher = patchfeed.TileStitcher(tiles, 3, dtype=torch.half)  # nnU-Net's dtype
        for tile in tiles:
            stitcher.add(tile, conv(tile.arrays["image"][None])[0])
        got = stitcher.result()
    assert got.dtype == want.dtype and torch.equal(got, want)


@pytest.fixture(scope="module")
def big_case(tmp_path_factory):
    path = tmp_path_factory.mktemp("tiles_big") / "big.b2nd"
    data = np.random.default_rng(5).standard_normal((1, 96, 96, 96)).astype(np.float32)
    blosc2.asarray(data, urlpath=str(path), mode="w", chunks=(1, 32, 32, 32),
                   blocks=(1, 16, 16, 16), cparams={"codec": blosc2.Codec.ZSTD, "clevel": 5})
    return str(path)


def test_other_thread_runs_while_next_waits(big_case):
    # As the Loader's test: with a huge switch interval the counter only moves when the main
    # thread gives up the GIL itself; with one tile read ahead by one thread, next() mostly
    # waits for a read. Every tile of the case (8), not only a few: on a loaded machine the
    # counting thread may not get a core within one wait of ~1 ms.
    count = 0
    stop = threading.Event()

    def spin():
        nonlocal count
        import time

        while not stop.is_set():
            count += 1
            time.sleep(0)

    tiles = patchfeed.tiles(big_case, (64, 64, 64), read_ahead=1, num_threads=1)
    old = sys.getswitchinterval()
    t = threading.Thread(target=spin)
    t.start()
    try:
        sys.setswitchinterval(1000.0)
        progress = []
        while True:
            c0 = count
            tile = next(tiles, None)
            if tile is None:
                break
            progress.append(count - c0)
            del tile
    finally:
        sys.setswitchinterval(old)
        stop.set()
        t.join()
        tiles.close()
    assert sum(progress) > 0, progress


def test_keyboard_interrupt_while_waiting_loses_no_tile(big_case):
    # A real SIGINT to a child that only waits for tiles; after the interrupt the tiles go on
    # in order from the one that was awaited.
    script = textwrap.dedent(
        f"""
        import os, signal, sys, threading, time
        import patchfeed
        tiles = patchfeed.tiles({big_case!r}, (64, 64, 64), 0.9, read_ahead=1,
                                num_threads=1, as_numpy=True)
        n = len(tiles)
        def interrupt():
            time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGINT)
        threading.Thread(target=interrupt).start()
        last = -1
        try:
            for tile in tiles:
                assert tile.index == last + 1
                last = tile.index
            print("no interrupt")
            sys.exit(3)
        except KeyboardInterrupt:
            pass
        tile = None  # the last tile goes back to the reader
        rest = [t.index for t in tiles]
        # Interrupted in the wait, nothing moved; rarely the signal lands in Python code
        # just after a tile left the reader, which then is the one lost.
        assert rest in (list(range(last + 1, n)), list(range(last + 2, n))), (last, rest[:3])
        print("interrupted after", last, "of", n)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], check=False, env=env_with_package(),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "interrupted after" in proc.stdout


def test_sliding_window_example_runs(tmp_path):
    import runpy

    example = REPO_ROOT / "examples" / "sliding_window" / "predict.py"
    main = runpy.run_path(str(example))["main"]
    seg = main(["--generate", str(tmp_path / "case.b2nd"), "--patch", "64,64,64",
                "--out", str(tmp_path / "seg.b2nd")])
    assert seg.shape == (80, 96, 72)
    assert patchfeed.open_array(str(tmp_path / "seg.b2nd")).shape == (1, 80, 96, 72)
