# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""patchfeed.Loader under torch.distributed: two gloo processes on localhost take rank and
world size from the process group; per epoch their batches are disjoint and together are the
single-process epoch, so every case is covered exactly as often as without DDP."""

from __future__ import annotations

import collections
import json
import socket
import subprocess
import sys
import textwrap

import patchfeed
import pytest
from loader_testlib import PATCH, env_with_package, write_dataset

EPOCHS = 2
OPTS = {"epoch_mode": "without_replacement", "samples_per_epoch": 8, "seed": 21, "num_threads": 1}

WORKER = textwrap.dedent(
    """
    import json, sys
    import torch.distributed as dist
    import patchfeed
    rank, port, folder, patch, opts, epochs = (int(sys.argv[1]), sys.argv[2], sys.argv[3],
                                               json.loads(sys.argv[4]), json.loads(sys.argv[5]),
                                               int(sys.argv[6]))
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=2)
    loader = patchfeed.Loader(folder, patch, 4, **opts)  # rank, world size: from the group
    out = {"rank": loader.rank, "world_size": loader.world_size, "len": len(loader),
           "batch_size": loader.batch_size, "epochs": []}
    for epoch in range(epochs):
        loader.set_epoch(epoch)
        out["epochs"].append([[list(s[:2]) for s in loader.last_batch.samples]
                              for _ in loader])
    loader.close()
    dist.barrier()
    dist.destroy_process_group()
    print(json.dumps(out))
    """
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def dataset_dir(tmp_path_factory):
    return write_dataset(tmp_path_factory.mktemp("loader_ddp"))


def test_two_gloo_ranks_cover_each_epoch_disjointly(dataset_dir):
    port = str(free_port())
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(rank), port, str(dataset_dir),
             json.dumps(PATCH), json.dumps(OPTS), str(EPOCHS)],
            env=env_with_package(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rank in range(2)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert [r["rank"] for r in results] == [0, 1]
    assert all(r["world_size"] == 2 and r["batch_size"] == 2 for r in results)

    with patchfeed.Loader(dataset_dir, PATCH, 4, rank=0, world_size=1, **OPTS) as single:
        assert results[0]["len"] == results[1]["len"] == len(single) == 2
        for epoch in range(EPOCHS):
            single.set_epoch(epoch)
            whole = [[[s[0], list(s[1])] for s in single.last_batch.samples] for _ in single]
            for b, batch in enumerate(whole):
                # Rank 0 has the first half of each global batch, rank 1 the second.
                r0, r1 = results[0]["epochs"][epoch][b], results[1]["epochs"][epoch][b]
                assert r0 + r1 == batch
            cases = collections.Counter(
                s[0] for r in results for batch in r["epochs"][epoch] for s in batch
            )
            # 8 samples per epoch over 4 cases, without replacement: each case twice.
            assert cases == {0: 2, 1: 2, 2: 2, 3: 2}
