# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""The child of test_loader_interrupts.py: a training loop that a parent interrupts with real
SIGINTs. It says "ready" and consumes batches, acknowledging each KeyboardInterrupt with a
line on stdout; after the parent says "stop" on stdin it reads as many batches with a new,
uninterrupted loader and prints one JSON line: what it received and what it should have.

A batch is recorded as soon as the loop binds it (a `pending` slot that the interrupt handler
completes), so that the test asserts the loader's delivery, not this script's bookkeeping."""

from __future__ import annotations

import hashlib
import json
import select
import sys

import patchfeed


def digest(batch) -> str:
    h = hashlib.sha1()
    for name in sorted(batch):
        h.update(name.encode())
        h.update(batch[name].tobytes())
    return h.hexdigest()[:16]


def main() -> None:
    config = json.loads(sys.argv[1])
    folder, style, rebuild = (config.pop(k) for k in ("folder", "style", "rebuild"))
    steps = 10**6  # until the parent says stop

    def make():
        return patchfeed.Loader(folder, as_numpy=True, seed=11, **config)

    loader = make()
    got: list[list] = []
    pending = None
    interrupts = rebuilt = 0

    def stop_asked() -> bool:
        return bool(select.select([sys.stdin], [], [], 0)[0])

    # Each line to the parent is printed inside the try: the parent's next SIGINT follows the
    # line, and so lands where it is caught (not in the loop's own bytecode between handlers).
    say = "ready"
    while len(got) < steps:
        try:
            if say:
                line, say = say, ""
                print(line, flush=True)
            if style == "for":
                for batch in loader:
                    pending = batch
                    info = loader.last_batch
                    record = [info.epoch, info.batch_index, digest(batch)]
                    pending = None
                    got.append(record)
                    del batch
                    if len(got) >= steps or (interrupts and stop_asked()):
                        break
            else:
                while len(got) < steps:
                    batch = loader.next_batch()
                    pending = batch
                    info = loader.last_batch
                    record = [info.epoch, info.batch_index, digest(batch)]
                    pending = None
                    got.append(record)
                    del batch
                    if interrupts and stop_asked():
                        break
            if interrupts and stop_asked():
                break
        except KeyboardInterrupt:
            if pending is not None:
                info = loader.last_batch
                if not got or got[-1][:2] != [info.epoch, info.batch_index]:
                    got.append([info.epoch, info.batch_index, digest(pending)])
                pending = None
            interrupts += 1
            state = loader.state_dict()
            if state["next_batch"] != len(got):
                print(json.dumps({"error": f"after {len(got)} batches the state names batch "
                                  f"{state['next_batch']}"}), flush=True)
                sys.exit(4)
            if rebuild and interrupts % 2 == 0:  # resume in a new loader every other time
                loader.close()
                loader = make()
                loader.load_state_dict(state)
                rebuilt += 1
            say = "caught"
    # Two more batches after the last interrupt: the resumed position reads on correctly.
    for _ in range(2):
        batch = loader.next_batch()
        info = loader.last_batch
        got.append([info.epoch, info.batch_index, digest(batch)])
        del batch
    loader.close()
    with make() as ref:
        want = []
        while len(want) < len(got):
            batch = ref.next_batch()
            info = ref.last_batch
            want.append([info.epoch, info.batch_index, digest(batch)])
            del batch
    print(json.dumps({"got": got, "want": want, "interrupts": interrupts, "rebuilt": rebuilt}),
          flush=True)


if __name__ == "__main__":
    main()
