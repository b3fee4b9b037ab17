# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""nnUNetTrainerPatchfeed under nnU-Net's multi-GPU start (`nnUNetv2_train -num_gpus N`): the
ranks share the node's cores instead of each taking all of them, nnUNet_n_proc_DA stays per
rank, and each rank's loaders give that rank's batch (nnU-Net splits batch size and
oversampling per rank). Two gloo ranks on the CPU, started as nnunetv2.run.run_training starts
them (torch.multiprocessing.spawn, MASTER_ADDR/MASTER_PORT, env:// process group); plus the
thread and budget rules alone for each environment."""

from __future__ import annotations

import json
import os
import pathlib

import pytest

nnunetv2 = pytest.importorskip("nnunetv2")
torch = pytest.importorskip("torch")

# test_nnunet_trainer's fixtures: nnU-Net's folders and split file, a cache below tmp_path.
from test_nnunet_trainer import env, nnunet_root  # noqa: E402,F401

WORLD = 2
N_PROC = 3


def _rank_batches(trainer, case_ids: list[str]) -> dict:
    """This rank's loader threads and a checked training batch."""
    from patchfeed.nnunet.settings import loader_options

    train, val = trainer.get_dataloaders()
    batch = next(train)
    data, target = batch["data"], batch["target"]
    seg = target[0] if isinstance(target, list) else target
    options = loader_options(trainer, case_ids, train=True)
    out = {
        "threads": [train.loader.num_threads, val.loader.num_threads],
        "budget": options["memory_budget"],
        "oversample": options["oversample_foreground"],
        "data_shape": list(data.shape),
        "finite": bool(torch.isfinite(data).all()),
        "labels": sorted(int(v) for v in torch.unique(seg)),
        "keys_known": all(k in case_ids for k in batch["keys"]),
    }
    train.close()
    val.close()
    return out


def _rank_main(rank: int, root: str, out_dir: str) -> None:
    """What nnunetv2.run.run_training.run_ddp does up to the training, with gloo for nccl."""
    import torch.distributed as dist
    from test_nnunet_trainer import make_trainer

    dist.init_process_group("gloo", rank=rank, world_size=WORLD)
    try:
        trainer = make_trainer(pathlib.Path(root), "3d_fullres")
        tr_keys, _ = trainer.do_split()
        result = {"rank": rank, "is_ddp": trainer.is_ddp, "batch_size": trainer.batch_size,
                  "oversample": trainer.oversample_foreground_percent,
                  "cores": len(os.sched_getaffinity(0))}
        os.environ.pop("nnUNet_n_proc_DA", None)
        result["shared"] = _rank_batches(trainer, tr_keys)
        os.environ["nnUNet_n_proc_DA"] = str(N_PROC)
        result["n_proc"] = _rank_batches(trainer, tr_keys)
        pathlib.Path(out_dir, f"rank{rank}.json").write_text(json.dumps(result))
    finally:
        dist.destroy_process_group()


def test_ddp_ranks_share_the_cores_and_get_their_batches(env, tmp_path, monkeypatch):
    import torch.multiprocessing as mp
    from nnunetv2.run.run_training import find_free_network_port
    from patchfeed import Loader
    from test_nnunet_trainer import make_trainer

    monkeypatch.setenv("MASTER_ADDR", "localhost")
    monkeypatch.setenv("MASTER_PORT", str(find_free_network_port()))
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)
    mp.spawn(_rank_main, args=(str(env), str(tmp_path)), nprocs=WORLD, join=True)
    ranks = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(WORLD)]

    single = make_trainer(env, "3d_fullres")  # no process group here: the whole batch
    patch = [int(p) for p in single.configuration_manager.patch_size]
    default_budget = Loader.__init__.__kwdefaults__["memory_budget"]
    assert sum(r["batch_size"] for r in ranks) == single.batch_size
    for r in ranks:
        assert r["is_ddp"]
        shared = max(1, r["cores"] // WORLD)
        assert r["shared"]["threads"] == [shared, shared], r
        assert r["n_proc"]["threads"] == [N_PROC, N_PROC], r
        for case in ("shared", "n_proc"):
            got = r[case]
            assert got["budget"] == default_budget // WORLD
            assert got["oversample"] == r["oversample"]  # nnU-Net's share for this rank
            assert got["data_shape"] == [r["batch_size"], 1, *patch]
            assert got["finite"] and got["keys_known"]
            assert set(got["labels"]) <= {0, 1, 2}


@pytest.fixture
def sixteen_cores(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)))
    monkeypatch.delenv("nnUNet_n_proc_DA", raising=False)
    monkeypatch.delenv("LOCAL_WORLD_SIZE", raising=False)


@pytest.mark.parametrize("n_proc,local_world,threads", [
    (None, None, 16),   # one process: every core it may use
    (None, "2", 8),     # torchrun's LOCAL_WORLD_SIZE ranks share them
    (None, "3", 5),
    (None, "32", 1),    # at least one
    ("12", "4", 12),    # nnU-Net's nnUNet_n_proc_DA is per rank, whatever the ranks
    ("40", None, 40),   # as nnU-Net's own loaders would start, not capped here
    ("0", None, 1),     # nnU-Net's "in the main process": the fewest threads
    (" 6 ", None, 6),
    ("", "2", 8),       # set but empty: as unset
])
def test_threads_per_rank(sixteen_cores, monkeypatch, n_proc, local_world, threads):
    from patchfeed.nnunet.ranks import threads_per_rank

    if n_proc is not None:
        monkeypatch.setenv("nnUNet_n_proc_DA", n_proc)
    if local_world is not None:
        monkeypatch.setenv("LOCAL_WORLD_SIZE", local_world)
    assert threads_per_rank() == threads


@pytest.mark.parametrize("variable,value", [("nnUNet_n_proc_DA", "-1"),
                                            ("nnUNet_n_proc_DA", "four"),
                                            ("nnUNet_n_proc_DA", "2.5"),
                                            ("LOCAL_WORLD_SIZE", "0"),
                                            ("LOCAL_WORLD_SIZE", "x")])
def test_a_bad_count_names_its_variable(sixteen_cores, monkeypatch, variable, value):
    from patchfeed.nnunet.ranks import threads_per_rank

    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match=f"{variable}='{value}' is not a whole number"):
        threads_per_rank()


def test_memory_budget_is_shared_by_the_ranks(sixteen_cores, monkeypatch):
    from patchfeed import Loader
    from patchfeed.nnunet.ranks import memory_budget_per_rank

    default = Loader.__init__.__kwdefaults__["memory_budget"]
    assert memory_budget_per_rank() == default
    monkeypatch.setenv("LOCAL_WORLD_SIZE", "4")
    assert memory_budget_per_rank() == default // 4
