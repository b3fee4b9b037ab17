# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""`python -m patchfeed ...`: the same command as the `patchfeed` console script."""

import sys

from patchfeed.cli import main

sys.exit(main())
