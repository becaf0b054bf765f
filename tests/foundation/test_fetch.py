"""repro.data.fetch against a local HTTP server on 127.0.0.1 (Range support, cut connections)."""

from __future__ import annotations

import hashlib
import http.server
import io
import tarfile
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from repro.data.fetch import FetchError, fetch_url, load_tensors, partial_path, safe_extract

PAYLOAD = bytes(range(256)) * 4096  # 1 MiB, every byte value
SHA = hashlib.sha256(PAYLOAD).hexdigest()


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves PAYLOAD (or ``state["payload"]``) at /data.bin with Range support; /cut.bin and /cut/images.tar
    drop the connection a third of the way through, once."""

    state: dict = {}

    def log_message(self, *args):  # keep pytest output clean
        pass

    def do_GET(self):
        self.state.setdefault("requests", []).append((self.path, self.headers.get("Range")))
        payload = self.state.get("payload", PAYLOAD)  # what every path serves
        if self.path not in ("/data.bin", "/cut.bin", "/norange.bin", "/cut/images.tar"):
            self.send_error(404, "no such file")
            return
        start = 0
        rng = self.headers.get("Range")
        if rng and self.path != "/norange.bin":
            start = int(rng.split("=")[1].split("-")[0])
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(payload) - 1}/{len(payload)}")
        else:
            self.send_response(200)
        body = payload[start:]
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.path.startswith("/cut") and not self.state.get("cut_done"):
            self.state["cut_done"] = True
            self.wfile.write(body[: len(body) // 3])
            self.wfile.flush()
            self.connection.shutdown(2)  # the connection dies a third of the way through
            return
        self.wfile.write(body)


@pytest.fixture
def server():
    _Handler.state = {}
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", _Handler.state
    httpd.shutdown()
    httpd.server_close()


def test_download_verifies_sha256(server, tmp_path):
    base, _ = server
    out = fetch_url(f"{base}/data.bin", tmp_path / "d.bin", sha256=SHA, backoff=0)
    assert out.read_bytes() == PAYLOAD
    assert not (tmp_path / "d.bin.part").exists()


def test_resume_after_cut_connection_uses_range(server, tmp_path):
    base, state = server
    out = fetch_url(f"{base}/cut.bin", tmp_path / "c.bin", sha256=SHA, retries=2, backoff=0)
    assert out.read_bytes() == PAYLOAD
    # the second request asked only for the missing bytes
    ranges = [r for p, r in state["requests"] if p == "/cut.bin"]
    assert ranges[0] is None and ranges[1] is not None
    assert int(ranges[1].split("=")[1].rstrip("-")) == len(PAYLOAD) // 3


def test_resume_from_existing_part_file(server, tmp_path):
    base, state = server
    (tmp_path / "p.bin.part").write_bytes(PAYLOAD[:1000])
    fetch_url(f"{base}/data.bin", tmp_path / "p.bin", sha256=SHA, backoff=0)
    assert (tmp_path / "p.bin").read_bytes() == PAYLOAD
    assert state["requests"][0][1] == "bytes=1000-"


def test_a_failed_fetch_keeps_dest_part_and_the_next_one_resumes_it(server, tmp_path):
    """One partial file per destination, under a name the next run finds: <dest>.part."""
    base, state = server
    with pytest.raises(FetchError, match=f"{base}/cut.bin: transfer failed .*the next run resumes"):
        fetch_url(f"{base}/cut.bin", tmp_path / "c.bin", sha256=SHA, retries=0, backoff=0)
    assert [p.name for p in tmp_path.iterdir()] == ["c.bin.part"] and partial_path(tmp_path / "c.bin").exists()
    kept = (tmp_path / "c.bin.part").stat().st_size
    assert 0 < kept < len(PAYLOAD)
    fetch_url(f"{base}/cut.bin", tmp_path / "c.bin", sha256=SHA, retries=0, backoff=0)
    assert state["requests"][-1] == ("/cut.bin", f"bytes={kept}-")
    assert (tmp_path / "c.bin").read_bytes() == PAYLOAD
    assert [p.name for p in tmp_path.iterdir()] == ["c.bin"]


def test_a_part_of_another_file_is_downloaded_again_from_the_start(server, tmp_path):
    base, state = server
    (tmp_path / "o.bin.part").write_bytes(b"an older version of the file")
    fetch_url(f"{base}/data.bin", tmp_path / "o.bin", sha256=SHA, backoff=0)
    assert [r for _, r in state["requests"]] == ["bytes=28-", None]
    assert (tmp_path / "o.bin").read_bytes() == PAYLOAD and [p.name for p in tmp_path.iterdir()] == ["o.bin"]


def test_check_sees_the_verified_file_with_its_suffix_and_a_refusal_keeps_nothing(server, tmp_path):
    base, _ = server
    seen = []
    fetch_url(f"{base}/data.bin", tmp_path / "ok.csv", sha256=SHA, backoff=0,
              check=lambda path: seen.append((path.suffix, path.read_bytes() == PAYLOAD)))
    assert seen == [(".csv", True)] and (tmp_path / "ok.csv").read_bytes() == PAYLOAD

    def refuse(path):
        raise ValueError(f"{path}: not a leaderboard")

    with pytest.raises(ValueError, match="not a leaderboard"):
        fetch_url(f"{base}/data.bin", tmp_path / "bad.csv", sha256=SHA, backoff=0, check=refuse)
    assert [p.name for p in tmp_path.iterdir()] == ["ok.csv"]


def test_stray_partials_of_random_temporary_names_are_removed(server, tmp_path):
    """What fetching into a temporary name of repro.io.atomic_path used to leave behind."""
    base, _ = server
    stray = tmp_path / ".dump.k3j_x9.csv.tmp.csv.part"
    stray.write_bytes(PAYLOAD[:10])
    fetch_url(f"{base}/data.bin", tmp_path / "dump.csv", sha256=SHA, backoff=0)
    assert [p.name for p in tmp_path.iterdir()] == ["dump.csv"]


def test_server_without_range_restarts_cleanly(server, tmp_path):
    base, _ = server
    (tmp_path / "n.bin.part").write_bytes(b"garbage" * 10)
    fetch_url(f"{base}/norange.bin", tmp_path / "n.bin", sha256=SHA, backoff=0)
    assert (tmp_path / "n.bin").read_bytes() == PAYLOAD


def test_checksum_mismatch_names_url_and_both_hashes_and_leaves_nothing(server, tmp_path):
    base, _ = server
    wrong = "0" * 64
    with pytest.raises(FetchError) as err:
        fetch_url(f"{base}/data.bin", tmp_path / "bad.bin", sha256=wrong, backoff=0)
    text = str(err.value)
    assert f"{base}/data.bin" in text and wrong in text and SHA in text
    assert list(tmp_path.iterdir()) == []


def test_404_is_a_clear_error_without_retry(server, tmp_path):
    base, state = server
    with pytest.raises(FetchError, match="HTTP 404"):
        fetch_url(f"{base}/missing.bin", tmp_path / "m.bin", sha256=SHA, retries=3, backoff=0)
    assert len(state["requests"]) == 1
    assert list(tmp_path.iterdir()) == []


def test_unreachable_host_keeps_no_output(tmp_path):
    # port 9 on loopback: nothing listens, the connection is refused at once
    with pytest.raises(FetchError, match="after 2 attempts"):
        fetch_url("http://127.0.0.1:9/x.bin", tmp_path / "x.bin", sha256=SHA, retries=1, backoff=0, timeout=2)
    assert not (tmp_path / "x.bin").exists()


def _tar_with(tmp_path: Path, names: list[str]) -> Path:
    path = tmp_path / "a.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name in names:
            info = tarfile.TarInfo(name)
            data = name.encode()
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_safe_extract_unpacks_a_clean_tar(tmp_path):
    archive = _tar_with(tmp_path, ["slides/a.svs", "manifest.csv"])
    out = safe_extract(archive, tmp_path / "out")
    assert (out / "slides" / "a.svs").read_text() == "slides/a.svs"


@pytest.mark.parametrize("evil", ["../escape.txt", "ok/../../escape.txt", "/abs/escape.txt"])
def test_safe_extract_rejects_traversal_in_tar_and_writes_nothing(tmp_path, evil):
    archive = _tar_with(tmp_path, ["fine.txt", evil])
    with pytest.raises(FetchError, match="outside the target folder"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "escape.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tar.gz"]


def test_safe_extract_rejects_traversal_in_zip(tmp_path):
    archive = tmp_path / "a.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("fine.txt", "x")
        zf.writestr("../escape.txt", "x")
    with pytest.raises(FetchError, match="outside the target folder"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_load_tensors_refuses_pickled_code(tmp_path):
    torch = pytest.importorskip("torch")
    good = tmp_path / "w.pt"
    torch.save({"w": torch.ones(3)}, good)
    assert torch.equal(load_tensors(good)["w"], torch.ones(3))
    evil = tmp_path / "evil.pt"
    torch.save({"w": torch.ones(3), "obj": _Handler}, evil)  # an arbitrary class: not plain tensors
    with pytest.raises(ValueError, match="weights_only"):
        load_tensors(evil)


def test_a_cut_image_folder_download_resumes_from_its_bytes(server, tmp_path):
    """fetch_image_set downloads under a name fixed by its output and the URL, so the next run resumes the
    bytes a cut transfer kept (a temporary folder's random name was never found again)."""
    from PIL import Image

    from repro.data.image_folder import download_path, fetch_image_set, read_image_folder, read_npz

    base, state = server
    folder = tmp_path / "images"
    for k in range(3):
        (folder / f"class{k}").mkdir(parents=True)
        for j in range(4):  # noise, so the archive is tens of kB and the cut lands inside an image
            pixels = np.random.default_rng(10 * k + j).integers(0, 256, (16, 16, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(folder / f"class{k}" / f"{j}.png")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(folder, arcname="images")
    state["payload"] = payload = buffer.getvalue()
    url, dest = f"{base}/cut/images.tar", tmp_path / "out" / "remote.npz"
    sha = hashlib.sha256(payload).hexdigest()

    with pytest.raises(FetchError, match="the next run resumes"):
        fetch_image_set(url, sha, dest, size=16, retries=0, backoff=0)
    part = partial_path(download_path(url, dest))
    assert [p.name for p in dest.parent.iterdir()] == [part.name] and part.name == ".remote.npz.images.tar.part"
    kept = part.stat().st_size
    assert 0 < kept < len(payload)

    fetch_image_set(url, sha, dest, size=16, retries=0, backoff=0)
    assert state["requests"][-1] == ("/cut/images.tar", f"bytes={kept}-")  # resumed, not started over
    got, direct = read_npz(dest), read_image_folder(folder, 16)
    np.testing.assert_array_equal(got.y, direct.y)
    np.testing.assert_array_equal(got.x, direct.x)
    assert [p.name for p in dest.parent.iterdir()] == ["remote.npz"]  # the download is gone once read
