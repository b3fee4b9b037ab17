// Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
#include "cli/help_text.h"

namespace patchfeed::cli {
namespace {

constexpr std::string_view kOverview =
    "usage: patchfeed <command> [args]     (patchfeed <command> --help for details)\n"
    "       patchfeed --version\n"
    "commands:\n"
    "  demo [--dir D] [--cases N] [--steps S] [--threads T] [--batch B] [--patch Z,Y,X]\n"
    "        [--io mmap|pread] [--io-depth N]\n"
    "                                  write a small nnU-Net-like dataset, run the loader\n"
    "                                  (pread: N reads in flight, 0 synchronous; default 64)\n"
    "  demo --codec [--mb N]           encode and decode generated data, print throughput\n"
    "  compress IN OUT [options]       encode a raw file as one Blosc chunk\n"
    "      --typesize N --codec blosclz|lz4|lz4hc|zlib|zstd --clevel 0-9\n"
    "      --filter none|shuffle|bitshuffle|delta|trunc_prec|bytedelta[,...]\n"
    "      [--split auto|always|never] [--blocksize B] [--blosc1] [--dict]\n"
    "  decompress IN OUT [--max-bytes N]\n"
    "                                  decode one Blosc1 or Blosc2 chunk to raw bytes\n"
    "                                  (refused above N bytes, default 1 GiB)\n"
    "  info PATH [--level N | --scale S] [--stats]\n"
    "                                  an array's metadata as JSON (.b2nd, zarr, precomputed)\n"
    "                                  (--stats: min, max, mean, NaN/Inf counts)\n"
    "  read PATH [--box a:b,c:d,...] [--absolute] [--pad V] --out OUT|- [--npy]\n"
    "        [--io mmap|pread] [--level N | --scale S] [--no-fill-missing]\n"
    "                                  write a box of the array (C order), padded outside;\n"
    "                                  PATH: .b2nd, zarr v2/v3, OME-Zarr (--level),\n"
    "                                  a precomputed layer (--level: its scale by index,\n"
    "                                  --scale: by key or x,y,z resolution; or PATH is\n"
    "                                  LAYER/KEY); --absolute: the box in the scale's voxel\n"
    "                                  coordinates (voxel_offset first), else from 0;\n"
    "                                  --no-fill-missing: a chunk never written is an error\n";

constexpr std::string_view kDemo =
    "usage: patchfeed demo [--dir D] [--keep] [--cases N] [--steps S] [--threads T] [--batch B]\n"
    "                      [--patch Z,Y,X] [--io mmap|pread] [--io-depth N]\n"
    "       patchfeed demo --codec [--mb N]\n"
    "\n"
    "Writes a small synthetic nnU-Net-like dataset of .b2nd cases, runs the loader over it as\n"
    "a training loop would and prints samples per second. With --codec it instead encodes and\n"
    "decodes generated data with several codecs and prints each one's throughput.\n"
    "\n"
    "options:\n"
    "  --dir D          write the dataset into D and keep it (default: a temporary folder,\n"
    "                   removed at the end unless --keep)\n"
    "  --keep           keep the temporary folder\n"
    "  --cases N        cases to write, 1..1000 (default 8)\n"
    "  --steps S        batches to draw (default 300)\n"
    "  --threads T      loader threads, 0 = one per core (default 0)\n"
    "  --batch B        samples per batch (default 4)\n"
    "  --patch Z,Y,X    patch size (default 64,64,64)\n"
    "  --io mmap|pread  how chunks are read: memory-mapped or read calls (default mmap)\n"
    "  --io-depth N     with --io pread: reads in flight, 0 = synchronous (default 64)\n"
    "  --codec          run the codec benchmark instead of the loader\n"
    "  --mb N           with --codec: megabytes of data to encode (default 16)\n"
    "\n"
    "example:\n"
    "  patchfeed demo --cases 4 --steps 50 --patch 96,96,96\n";

constexpr std::string_view kCompress =
    "usage: patchfeed compress IN OUT [--typesize N] [--codec C] [--clevel L] [--filter F]\n"
    "                          [--split auto|always|never] [--blocksize B] [--blosc1] [--dict]\n"
    "\n"
    "Encodes the raw bytes of file IN as one Blosc2 chunk (Blosc1 with --blosc1) and writes it\n"
    "to OUT. python-blosc2, numcodecs and c-blosc decode the result.\n"
    "\n"
    "options:\n"
    "  --typesize N     element size in bytes for the filters (default 1)\n"
    "  --codec C        blosclz, lz4, lz4hc, zlib or zstd (default lz4)\n"
    "  --clevel L       0 (store) to 9 (smallest) (default 5)\n"
    "  --filter F       none, shuffle, bitshuffle, delta, trunc_prec or bytedelta; a list\n"
    "                   like delta,shuffle is a pipeline (default shuffle)\n"
    "  --split MODE     auto, always or never: one stream per byte of an element (default auto)\n"
    "  --blocksize B    bytes per block, 0 = automatic (default 0)\n"
    "  --blosc1         write a Blosc1 chunk (c-blosc 1.x, numcodecs' Blosc)\n"
    "  --dict           train and embed a dictionary (Blosc2 with zstd, lz4 or lz4hc)\n"
    "\n"
    "example:\n"
    "  patchfeed compress image.raw image.blosc --typesize 4 --codec zstd --clevel 5\n";

constexpr std::string_view kDecompress =
    "usage: patchfeed decompress IN OUT [--max-bytes N]\n"
    "\n"
    "Decodes one Blosc1 or Blosc2 chunk (as c-blosc, python-blosc2 or numcodecs write them)\n"
    "from file IN and writes its raw bytes to OUT. A corrupt chunk is refused with the block\n"
    "and stream at fault; nothing is written then.\n"
    "\n"
    "options:\n"
    "  --max-bytes N    refuse chunks that decode to more than N bytes (default 1073741824,\n"
    "                   1 GiB)\n"
    "\n"
    "example:\n"
    "  patchfeed decompress image.blosc image.raw\n";

constexpr std::string_view kInfo =
    "usage: patchfeed info PATH [--level N | --scale S] [--stats]\n"
    "\n"
    "Prints the metadata of an array as JSON: shape, dtype, chunks and, for a .b2nd frame,\n"
    "codec, filters, sizes and metalayers. PATH is a .b2nd frame (a file, or a folder holding\n"
    "a sparse frame's chunks.b2frame), a zarr v2 or v3 array, an OME-Zarr image, or a\n"
    "Neuroglancer precomputed layer (a folder with `info`) or one of its scales (LAYER/KEY).\n"
    "\n"
    "options:\n"
    "  --level N        the OME-Zarr resolution level or precomputed scale to describe\n"
    "                   (default 0, the finest)\n"
    "  --scale S        a precomputed scale by key (8_8_40) or x,y,z resolution (8,8,40)\n"
    "  --stats          also read the whole array, chunk by chunk, and add \"stats\": the\n"
    "                   minimum, maximum and mean of its finite values and the counts of\n"
    "                   NaN, +Inf and -Inf\n"
    "\n"
    "example:\n"
    "  patchfeed info case_000.b2nd --stats\n";

constexpr std::string_view kRead =
    "usage: patchfeed read PATH --out OUT|- [--box a:b,c:d,...] [--absolute] [--pad V]\n"
    "                      [--npy] [--io mmap|pread] [--level N | --scale S]\n"
    "                      [--no-fill-missing]\n"
    "\n"
    "Reads a box of an array and writes its items in C order, little-endian. Parts of the box\n"
    "outside the array are filled with the pad value. PATH is a .b2nd frame, a zarr v2 or v3\n"
    "array, an OME-Zarr image, or a precomputed layer or scale (LAYER/KEY), read as\n"
    "(C, z, y, x).\n"
    "\n"
    "options:\n"
    "  --out OUT        the file to write, or - for standard output (required)\n"
    "  --box a:b,...    start:stop per dimension, an empty end meaning the array's bound;\n"
    "                   dimensions left out are read whole (default: the whole array)\n"
    "  --pad V          the value outside the array (default 0)\n"
    "  --npy            write a .npy file (with its header) instead of raw items\n"
    "  --io mmap|pread  memory-mapped or read calls (default mmap)\n"
    "  --level N        the OME-Zarr resolution level or precomputed scale (default 0)\n"
    "  --scale S        a precomputed scale by key (8_8_40) or x,y,z resolution (8,8,40)\n"
    "  --absolute       the box in the array's own coordinates: a precomputed scale's voxel\n"
    "                   coordinates, voxel_offset first (`info` prints it as \"origin\")\n"
    "  --no-fill-missing  a precomputed chunk never written is an error, not zeros\n"
    "\n"
    "example:\n"
    "  patchfeed read case_000.b2nd --box 0:1,10:74,:,: --npy --out patch.npy\n";

#ifndef PATCHFEED_VERSION
#error "PATCHFEED_VERSION must be defined (cli/CMakeLists.txt passes CMake's PROJECT_VERSION)"
#endif
constexpr std::string_view kVersion = "patchfeed " PATCHFEED_VERSION "\n";

}  // namespace

std::string_view OverviewHelp() { return kOverview; }

std::string_view CommandHelp(std::string_view command) {
  if (command == "demo")
    return kDemo;
  if (command == "compress")
    return kCompress;
  if (command == "decompress")
    return kDecompress;
  if (command == "info")
    return kInfo;
  if (command == "read")
    return kRead;
  return {};
}

std::string_view VersionLine() { return kVersion; }

}  // namespace patchfeed::cli
