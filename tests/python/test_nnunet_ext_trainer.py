# Copyright 2026 The patchfeed Authors. SPDX-License-Identifier: Apache-2.0
"""`nnUNetv2_train -tr NAME` through nnU-Net's own search (find_objects.
recursive_find_trainer_class_by_name) with two folders in nnUNet_extTrainer: patchfeed's, and a
user's own with a patchfeed variant of an nnU-Net trainer (docs/nnunet.md).

nnU-Net looks among its own trainers first, and one of them (Primus) imports timm, which needs a
torchvision built for the installed torch; the CPU torch here has none (docs/nnunet.md). The test
stands in for that first search only when it fails so (it finds none of these names anyway), and
runs nnU-Net's code for the rest: splitting the variable on os.pathsep, each folder in order."""

from __future__ import annotations

import os
import textwrap

import pytest
from nnunet_testlib import torchvision_breaks_nnunets_trainers

nnunetv2 = pytest.importorskip("nnunetv2")
torch = pytest.importorskip("torch")

USER_MODULE = textwrap.dedent(
    """
    from nnunetv2.training.nnUNetTrainer.variants.training_length.nnUNetTrainer_Xepochs import (
        nnUNetTrainer_250epochs)
    from patchfeed.nnunet import PatchfeedDataMixin


    class nnUNetTrainerPatchfeed_250epochs(PatchfeedDataMixin, nnUNetTrainer_250epochs):
        pass
    """
)


@pytest.fixture
def find_trainer(monkeypatch):
    from nnunetv2.utilities import find_objects

    if torchvision_breaks_nnunets_trainers():
        real = find_objects.recursive_find_python_class

        def skip_nnunets_own(folder, class_name, current_module, *args, **kwargs):
            if current_module == "nnunetv2.training.nnUNetTrainer":
                return None
            return real(folder, class_name, current_module, *args, **kwargs)

        monkeypatch.setattr(find_objects, "recursive_find_python_class", skip_nnunets_own)
    return find_objects.recursive_find_trainer_class_by_name


def test_two_ext_trainer_folders(find_trainer, tmp_path, monkeypatch):
    from nnunetv2.training.nnUNetTrainer.variants.training_length.nnUNetTrainer_Xepochs import (
        nnUNetTrainer_250epochs)
    from patchfeed.nnunet import PatchfeedDataMixin, trainer_path

    mine = tmp_path / "my_trainers"
    mine.mkdir()
    (mine / "my_patchfeed_variants.py").write_text(USER_MODULE)
    monkeypatch.setenv("nnUNet_extTrainer", os.pathsep.join([trainer_path(), str(mine)]))

    ours = find_trainer("nnUNetTrainerPatchfeed")
    assert ours.__name__ == "nnUNetTrainerPatchfeed" and issubclass(ours, PatchfeedDataMixin)
    variant = find_trainer("nnUNetTrainerPatchfeed_250epochs")
    assert issubclass(variant, PatchfeedDataMixin) and issubclass(variant, nnUNetTrainer_250epochs)
    assert variant.get_dataloaders is PatchfeedDataMixin.get_dataloaders
    with pytest.raises(RuntimeError, match="Could not find requested nnunet trainer"):
        find_trainer("nnUNetTrainerPatchfeed_NoSuchVariant")
