"""repro.data.sidecar: the sha256 written beside a fetched or cached file (or folder) and checked by its readers."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import subprocess

import pytest

from repro.data.sidecar import digest, read_sidecar, sidecar_path, verify, verify_inputs, write_sidecar

PAYLOAD = bytes(range(256)) * 12_288  # 3 MiB: several of the blocks a file is hashed in


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "remote.npz"
    path.write_bytes(PAYLOAD)
    return path


def _folder(root):
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("alpha")
    (root / "sub" / "b.bin").write_bytes(PAYLOAD[:1000])
    return root


def test_a_file_round_trips_in_sha256sum_format(data):
    value = write_sidecar(data)
    assert value == hashlib.sha256(PAYLOAD).hexdigest() == digest(data) == read_sidecar(data)
    assert sidecar_path(data) == data.with_name("remote.npz.sha256")
    assert sidecar_path(data).read_text() == f"{value}  remote.npz\n"
    assert verify(data) == data
    if shutil.which("sha256sum"):  # the coreutils tool reads it too
        subprocess.run(["sha256sum", "-c", "--status", "remote.npz.sha256"], cwd=data.parent, check=True)
    assert not [p.name for p in data.parent.iterdir() if p.name.startswith(".")], "a temporary file was left"


@pytest.mark.parametrize("damage", ["flip", "truncate"])
def test_a_damaged_file_is_refused_naming_it_both_digests_and_the_fix(data, damage):
    recorded = write_sidecar(data)
    raw = bytearray(PAYLOAD)
    if damage == "flip":
        raw[len(raw) // 2] ^= 0x01  # one bit of one byte in the middle
    else:
        del raw[-100:]
    data.write_bytes(bytes(raw))
    with pytest.raises(ValueError) as err:
        verify(data)
    message = str(err.value)
    found = hashlib.sha256(bytes(raw)).hexdigest()
    assert str(data) in message and recorded in message and found in message, message
    assert "delete it to rebuild" in message
    assert read_sidecar(data) == recorded  # refusing leaves the record as it was


def test_a_missing_sidecar_is_a_clear_error(data):
    with pytest.raises(FileNotFoundError, match=r"remote\.npz\.sha256 is missing.*delete it to rebuild"):
        verify(data)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        verify(data.with_name("absent.npz"))


def test_a_malformed_sidecar_is_named(data):
    sidecar_path(data).write_text("not a digest\n")
    with pytest.raises(ValueError, match=r"remote\.npz\.sha256: not a checksum line"):
        verify(data)


def test_a_failed_write_leaves_the_old_sidecar_and_no_partial_one(data, monkeypatch):
    """The sidecar is written atomically: a disk that fills up while writing it leaves the old record whole."""
    old = write_sidecar(data)
    data.write_bytes(PAYLOAD[::-1])

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError) as err:
        write_sidecar(data)
    assert err.value.errno == errno.ENOSPC and "remote.npz.sha256" in str(err.value)
    assert sidecar_path(data).read_text() == f"{old}  remote.npz\n"
    assert sorted(p.name for p in data.parent.iterdir()) == ["remote.npz", "remote.npz.sha256"]


def test_nothing_to_checksum_writes_nothing(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_sidecar(tmp_path / "absent.npz")
    assert list(tmp_path.iterdir()) == []


def test_a_folder_digest_is_its_sorted_listing(tmp_path):
    """Closed form: the sha256 of ``<sha256 of file>  <relative path>`` lines in sorted path order."""
    folder = _folder(tmp_path / "model")
    listing = "".join(f"{hashlib.sha256(content).hexdigest()}  {rel}\n" for rel, content in
                      sorted([("a.txt", b"alpha"), ("sub/b.bin", PAYLOAD[:1000])]))
    assert digest(folder) == hashlib.sha256(listing.encode()).hexdigest()
    value = write_sidecar(folder)
    assert sidecar_path(folder) == tmp_path / "model.sha256"
    assert sidecar_path(folder).read_text() == f"{value}  model/\n"
    assert verify(folder) == folder


def test_a_folder_digest_ignores_creation_order_and_empty_folders(tmp_path):
    one = _folder(tmp_path / "one")
    two = tmp_path / "two"
    (two / "sub").mkdir(parents=True)
    (two / "sub" / "b.bin").write_bytes(PAYLOAD[:1000])  # the other order
    (two / "a.txt").write_text("alpha")
    (two / "empty").mkdir()
    assert digest(one) == digest(two)


@pytest.mark.parametrize("change", ["content", "added", "removed", "renamed"])
def test_any_change_to_a_folder_is_refused(tmp_path, change):
    folder = _folder(tmp_path / "model")
    recorded = write_sidecar(folder)
    if change == "content":
        (folder / "sub" / "b.bin").write_bytes(PAYLOAD[:999])
    elif change == "added":
        (folder / "extra.json").write_text("{}")
    elif change == "removed":
        (folder / "a.txt").unlink()
    else:
        (folder / "a.txt").rename(folder / "c.txt")
    with pytest.raises(ValueError) as err:
        verify(folder)
    assert str(folder) in str(err.value) and recorded in str(err.value) and digest(folder) in str(err.value)


def test_verify_inputs_checks_each_input_declared_with_its_sidecar(tmp_path, data, monkeypatch):
    write_sidecar(data)
    plain = tmp_path / "other.json"
    plain.write_text("{}")  # no sidecar declared: left alone
    inputs = [f"./{data.relative_to(tmp_path)}", str(sidecar_path(data).relative_to(tmp_path)),
              str(plain.relative_to(tmp_path))]
    monkeypatch.chdir(tmp_path)
    assert [str(p) for p in verify_inputs(inputs)] == ["remote.npz"]
    assert verify_inputs(["other.json"]) == []
    data.write_bytes(PAYLOAD[:-1])
    with pytest.raises(ValueError, match="remote.npz: sha256 is"):
        verify_inputs(inputs)
