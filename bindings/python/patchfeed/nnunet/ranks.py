# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""Each nnU-Net training process's share of the node: reader threads and memory budget.

`nnUNetv2_train -num_gpus N` starts N processes on one node (torch.multiprocessing.spawn, one
per GPU), and each builds its own loaders. A loader that takes every core would oversubscribe the
node N times, so a rank gets the cores it may use divided by the ranks on its node, unless
`nnUNet_n_proc_DA` (nnU-Net's data-augmentation workers per GPU) says how many.
"""

from __future__ import annotations

import inspect
import os

N_PROC_VARIABLE = "nnUNet_n_proc_DA"


def _whole_number(variable: str, text: str, minimum: int) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        value = None
    if value is None or value < minimum:
        raise ValueError(f"{variable}={text!r} is not a whole number of at least {minimum}; set "
                         f"it to a count such as 8, or unset it")
    return value


def ranks_on_this_node() -> int:
    """Training processes sharing this node's cores.

    torchrun sets LOCAL_WORLD_SIZE; nnU-Net's own `-num_gpus` start (mp.spawn in
    nnunetv2.run.run_training) sets no such variable, but puts every rank on one node, so the
    world size of the initialised process group is the count there. Otherwise 1.
    """
    local = os.environ.get("LOCAL_WORLD_SIZE", "").strip()
    if local:
        return _whole_number("LOCAL_WORLD_SIZE", local, 1)
    try:
        import torch.distributed as dist
    except ImportError:
        return 1
    if dist.is_available() and dist.is_initialized():
        return max(1, dist.get_world_size())
    return 1


def threads_per_rank() -> int:
    """Reader threads for each of this process's loaders.

    `nnUNet_n_proc_DA` when set, per rank as in nnU-Net; its 0 (nnU-Net's augmentation in the
    main process, for debugging) becomes 1, the fewest a loader runs. Else this process's cores
    (its CPU affinity, which a job scheduler may have narrowed) shared among the ranks on the
    node, at least 1.
    """
    n_proc = os.environ.get(N_PROC_VARIABLE, "").strip()
    if n_proc:
        return max(1, _whole_number(N_PROC_VARIABLE, n_proc, 0))
    return max(1, len(os.sched_getaffinity(0)) // ranks_on_this_node())


def memory_budget_per_rank() -> int:
    """patchfeed.Loader's default memory_budget shared among the ranks on the node.

    A loader's budget bounds its own process only; shared, the node's ranks together stay
    within what one process may use. Each rank's need falls with it: fewer threads (each a
    crop of scratch) and nnU-Net's per-rank share of the batch.
    """
    from patchfeed.loader import Loader

    default = inspect.signature(Loader).parameters["memory_budget"].default
    return max(1, default // ranks_on_this_node())
