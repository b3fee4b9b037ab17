# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Sliding-window inference over one whole case with patchfeed.tiles and a torch model.

Reads the case tile by tile where nnU-Net's predictor puts its tiles (read ahead on
patchfeed's threads, straight into shared buffers), runs the model on each tile and
accumulates nnU-Net's Gaussian-weighted logits with patchfeed.TileStitcher, then writes the
argmax segmentation as a `.b2nd` file. The model is a small random 3-D CNN standing in for a
trained network (load yours instead).

    python examples/sliding_window/predict.py --generate /tmp/case.b2nd --out /tmp/seg.b2nd
    python examples/sliding_window/predict.py --case nnUNet_preprocessed/.../case_017.b2nd \\
        --patch 128,128,128 --device cuda --out seg.b2nd
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import patchfeed
import torch


def stand_in_model(channels: int, classes: int) -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv3d(channels, 8, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv3d(8, classes, 3, padding=1))


def main(argv: list[str] | None = None) -> np.ndarray:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--case", help="a .b2nd or zarr array (C, Z, Y, X)")
    p.add_argument("--generate", metavar="PATH", help="write a random (1, 80, 96, 72) case here")
    p.add_argument("--patch", default="64,64,64", help="tile size, e.g. 128,128,128")
    p.add_argument("--overlap", type=float, default=0.5, help="nnU-Net's 1 - tile_step_size")
    p.add_argument("--classes", type=int, default=3)
    p.add_argument("--device", default="cpu")
    p.add_argument("--out", help="write the argmax segmentation here (.b2nd)")
    args = p.parse_args(argv)
    if args.generate:
        data = np.random.default_rng(0).standard_normal((1, 80, 96, 72)).astype(np.float32)
        patchfeed.write_b2nd(args.generate, data, chunks=(1, 32, 32, 32), blocks=(1, 16, 16, 16))
        args.case = args.generate
    if not args.case:
        p.error("give --case or --generate")
    patch = tuple(int(s) for s in args.patch.split(","))
    device = torch.device(args.device)

    start = time.perf_counter()
    with patchfeed.tiles(args.case, patch, args.overlap) as tiles, torch.inference_mode():
        channels = tiles.array_layout["image"][1][0]
        model = stand_in_model(channels, args.classes).to(device).eval()
        # nnU-Net accumulates in half precision on the GPU; float32 on the CPU is as cheap.
        dtype = torch.half if device.type == "cuda" else torch.float32
        stitcher = patchfeed.TileStitcher(tiles, args.classes, dtype=dtype, device=device)
        for tile in tiles:
            # A blocking copy: the tile's buffer may be reused once the tile is dropped.
            image = tile.arrays["image"][None].to(device)
            stitcher.add(tile, model(image)[0])
        segmentation = stitcher.result().argmax(0).to(torch.int16).cpu().numpy()
    seconds = time.perf_counter() - start
    print(f"{len(tiles)} tiles of {patch} over {tiles.case_shape} in {seconds:.2f} s "
          f"({len(tiles) / seconds:.1f} tiles/s); labels {np.unique(segmentation).tolist()}")
    if args.out:
        patchfeed.write_b2nd(args.out, segmentation[None], chunks=(1, 64, 64, 64),
                             blocks=(1, 32, 32, 32))
    return segmentation


if __name__ == "__main__":
    main()
