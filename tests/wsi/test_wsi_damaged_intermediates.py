"""A damaged intermediate of the WSI stage (tissue mask .npz, patch coordinates .h5, features .h5, bags .h5) is a
ValueError naming the file and saying to rebuild it, not a bare OSError, RuntimeError or KeyError from h5py."""

from __future__ import annotations

import re

import h5py
import numpy as np
import pytest

from repro.wsi.bags import Bag, load_bags, read_bag_attrs, write_bags
from repro.wsi.features import read_features
from repro.wsi.patching import read_coords
from repro.wsi.pipeline import load_tissue


def _coords(path):
    with h5py.File(path, "w") as f:
        d = f.create_dataset("coords", data=np.arange(4000, dtype=np.int64).reshape(-1, 2))
        d.attrs["patch_size_level0"] = 224
        f.create_dataset("features", data=np.ones((2000, 8), np.float32))
        f.attrs["encoder"] = "stub"


def _bags(path):
    write_bags(path, {"s1": Bag(np.ones((300, 8), np.float32), np.zeros((300, 2), np.int64),
                                np.zeros(300, np.int16))}, encoder="stub", patch_size_level0=224, tissue_types=["a"],
               cohort="c")


def _tissue(path):
    np.savez_compressed(path, mask=np.ones((200, 300), bool), downsample=np.float64(4.0), threshold=np.float64(0.5),
                        seg_mpp=np.float64(8.0), modality=np.str_("brightfield"))


CASES = {"patches.h5": (_coords, read_coords), "features.h5": (_coords, read_features),
         "bags.h5": (_bags, load_bags), "bag attributes.h5": (_bags, read_bag_attrs),
         "tissue.npz": (_tissue, load_tissue)}


# the bags file's own attributes sit before the damaged bytes: only a truncation reaches them
@pytest.mark.parametrize("case, damage", [(c, d) for c in CASES for d in ("truncated", "inside")
                                          if (c, d) != ("bag attributes.h5", "inside")])
def test_a_damaged_wsi_intermediate_is_named(tmp_path, case, damage):
    write, read = CASES[case]
    path = tmp_path / case.replace(" ", "_")
    write(path)
    read(path)
    raw = bytearray(path.read_bytes())
    if damage == "truncated":
        raw = raw[:len(raw) // 2]
    elif path.suffix == ".h5":  # the superblock survives, the object headers and symbol tables after it do not
        raw[800:1600] = b"\xa5" * 800
    else:  # a member of the archive is overwritten
        raw[len(raw) // 3:len(raw) // 2] = b"\xa5" * (len(raw) // 2 - len(raw) // 3)
    path.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=re.escape(f"{path}: ") + ".*delete it to rebuild"):
        read(path)
