"""Data of MDA-DD: the synthetic scene corpus (ground truth), the Karpathy loader, the feature cache."""

import functools
import hashlib
import http.server
import json
import re
import threading

import numpy as np
import pytest

from repro.data import fixtures
from repro.data.captions import load_corpus, save_corpus
from repro.data.karpathy import fetch_archive, fetch_dataset, load_karpathy
from repro.methods.distill.features import SplitFeatures, read_features, write_features
from repro.papers.mdadd.experiment import corpus_for_source
from repro.papers.mdadd.synth import COLOURS, POSITIONS, SceneConfig, make_corpus, render_scene


def test_captions_describe_their_own_scene():
    corpus = make_corpus(30, 10, seed=0, cfg=SceneConfig(image_size=32, captions_per_image=3))
    assert len(corpus.captions) == 120 and corpus.images.shape == (40, 32, 32, 3)
    for cap, img in zip(corpus.captions, corpus.caption_image):
        scene = corpus.scenes[img]
        for obj in scene["objects"]:
            assert obj["colour"] in cap and obj["position"] in cap
        # colours absent from the scene are absent from its caption
        for colour in set(COLOURS) - {o["colour"] for o in scene["objects"]}:
            assert f" {colour} " not in cap


def test_rendered_object_has_its_colour_at_its_position():
    scene = {"background": "grey", "objects": [{"shape": "square", "colour": "red", "size": "large",
                                                 "position": "top left"}]}
    img = render_scene(scene, 40)
    cy, cx = POSITIONS["top left"]
    np.testing.assert_allclose(img[int(cy * 40), int(cx * 40)] / 255, COLOURS["red"], atol=0.01)
    np.testing.assert_allclose(img[int(0.8 * 40), int(0.8 * 40)] / 255, (0.55, 0.55, 0.55), atol=0.01)


def test_corpus_is_reproducible_and_round_trips(tmp_path):
    a = make_corpus(5, 3, seed=11, cfg=SceneConfig(image_size=16, captions_per_image=2))
    b = make_corpus(5, 3, seed=11, cfg=SceneConfig(image_size=16, captions_per_image=2))
    np.testing.assert_array_equal(a.images, b.images)
    assert a.captions == b.captions
    save_corpus(tmp_path / "c.npz", a)
    c = load_corpus(tmp_path / "c.npz")
    np.testing.assert_array_equal(c.images, a.images)
    assert c.captions == a.captions and list(c.split) == list(a.split) and c.scenes == a.scenes


@pytest.fixture
def karpathy_fixture(tmp_path):
    """A tiny Karpathy-format dataset: 4 PNG images in a COCO-like filepath layout."""
    from PIL import Image

    rng = np.random.default_rng(0)
    images = []
    for i, (split, sub) in enumerate([("train", "train2014"), ("restval", "val2014"), ("test", "val2014"),
                                      ("val", "val2014")]):
        (tmp_path / "images" / sub).mkdir(parents=True, exist_ok=True)
        arr = rng.integers(0, 255, (24, 32, 3), dtype=np.uint8)
        Image.fromarray(arr).save(tmp_path / "images" / sub / f"im{i}.png")
        images.append({"filepath": sub, "filename": f"im{i}.png", "split": split, "imgid": i,
                       "sentences": [{"raw": f"caption {i}.{k} ", "tokens": []} for k in range(i + 1)]})
    (tmp_path / "dataset_coco.json").write_text(json.dumps({"dataset": "coco", "images": images}))
    return tmp_path


def test_karpathy_loader_reads_splits_and_captions(karpathy_fixture):
    corpus = load_karpathy(karpathy_fixture / "dataset_coco.json", karpathy_fixture / "images")
    assert list(corpus.split) == ["train", "train", "test", "val"]  # restval folds into train
    assert corpus.captions[:3] == ["caption 0.0", "caption 1.0", "caption 1.1"]
    np.testing.assert_array_equal(corpus.caption_image, [0, 1, 1, 2, 2, 2, 3, 3, 3, 3])
    assert corpus.image_paths[2].endswith("val2014/im2.png")
    same = corpus_for_source("local", json_path=karpathy_fixture / "dataset_coco.json",
                             image_root=karpathy_fixture / "images", max_images={"train": 1})
    assert list(same.split) == ["train", "test", "val"] and same.captions[0] == "caption 0.0"


def test_a_fetched_corpus_is_checked_against_its_sidecars(karpathy_fixture):
    """source: remote reads the JSON and the image folder only if they match the sha256 mdadd_fetch wrote beside
    them; source: local (the user's own files) has none."""
    from repro.data.sidecar import write_sidecar

    paths = {"json_path": karpathy_fixture / "dataset_coco.json", "image_root": karpathy_fixture / "images"}
    with pytest.raises(FileNotFoundError, match=r"dataset_coco\.json\.sha256 is missing"):
        corpus_for_source("remote", **paths)
    for path in paths.values():
        write_sidecar(path)
    assert corpus_for_source("remote", **paths).captions == corpus_for_source("local", **paths).captions
    (karpathy_fixture / "images" / "val2014" / "im2.png").write_bytes(b"not the image that was fetched")
    with pytest.raises(ValueError, match=r"images: sha256 is .* delete it to rebuild"):
        corpus_for_source("remote", **paths)


def test_karpathy_loader_names_bad_input(karpathy_fixture):
    (karpathy_fixture / "images" / "val2014" / "im2.png").unlink()
    with pytest.raises(ValueError, match="im2.png is missing"):
        load_karpathy(karpathy_fixture / "dataset_coco.json", karpathy_fixture / "images")
    (karpathy_fixture / "bad.json").write_text(json.dumps({"images": [{"filename": "x.png", "split": "dev",
                                                                        "sentences": []}]}))
    with pytest.raises(ValueError, match="unknown split 'dev'"):
        load_karpathy(karpathy_fixture / "bad.json", karpathy_fixture / "images", check_files=False)
    with pytest.raises(ValueError, match="unknown data source"):
        corpus_for_source("hub")


def test_fetch_archive_checks_sha256(tmp_path):
    import hashlib
    import zipfile

    archive = tmp_path / "src.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("dataset_flickr30k.json", '{"images": []}')
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    out = fetch_archive(archive.as_uri(), tmp_path / "dl" / "a.zip", sha256=digest)
    assert out.read_bytes() == archive.read_bytes()
    with pytest.raises(ValueError, match="sha256 mismatch"):
        fetch_archive(archive.as_uri(), tmp_path / "dl" / "b.zip", sha256="0" * 64)
    assert not (tmp_path / "dl" / "b.zip").exists()  # nothing partial is left


def _zip_with_json(path):
    import zipfile

    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("dataset_flickr30k.json", '{"images": []}')
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_fetch_archive_refuses_an_archive_without_a_sha256(tmp_path):
    """Every download is checked: an archive whose digest the manifest does not give is refused, naming it."""
    url = "http://127.0.0.1:9/caption_datasets.zip"
    with pytest.raises(ValueError, match=rf"{re.escape(url)}.*sha256"):
        fetch_archive(url, tmp_path / "archives" / "caption_datasets.zip", sha256=None)
    assert not (tmp_path / "archives").exists()


def test_a_failed_download_names_the_url_and_leaves_no_empty_folder(tmp_path):
    url = "http://127.0.0.1:9/caption_datasets.zip"  # nothing listens on port 9: refused at once
    with pytest.raises(ValueError, match=rf"{re.escape(url)}: transfer failed after 2 attempts"):
        fetch_archive(url, tmp_path / "archives" / "caption_datasets.zip", sha256="0" * 64, retries=1, backoff=0,
                      timeout=2)
    assert list(tmp_path.iterdir()) == []


class _FlakyFolder(http.server.SimpleHTTPRequestHandler):
    """Serves a folder; the first request of each path gets a 503 (a host under load)."""

    seen: list = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        type(self).seen.append(self.path)
        if type(self).seen.count(self.path) == 1:
            self.send_error(503, "busy")
            return
        super().do_GET()


def test_fetch_archive_retries_through_repro_data_fetch(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    digest = _zip_with_json(root / "caption_datasets.zip")
    _FlakyFolder.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_FlakyFolder, directory=str(root)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/caption_datasets.zip"
        out = fetch_archive(url, tmp_path / "ds" / "archives" / "caption_datasets.zip", sha256=digest, backoff=0)
    finally:
        server.shutdown()
        server.server_close()
    assert _FlakyFolder.seen == ["/caption_datasets.zip"] * 2
    assert out.read_bytes() == (root / "caption_datasets.zip").read_bytes()
    assert sorted(p.name for p in out.parent.iterdir()) == ["caption_datasets.zip"]


def _real_layout(www, base_url, images=fixtures.flickr30k_images_tar_gz):
    """The manifest of ``source: remote`` for archives in the real layout, served from ``www``."""
    return [{"url": f"{base_url}/{path.name}", "sha256": fixtures.sha256(path)}
            for path in (fixtures.caption_datasets_zip(www), images(www))]


def test_fetch_dataset_puts_the_json_and_the_image_folder_of_the_real_archives_in_place(served, tmp_path):
    """The JSON and the image folder land under their names; nothing else is left in the dataset's folder
    (not the other datasets' split files, not the downloaded archives, no staging folder)."""
    www, url = served
    ds = tmp_path / "resources/mdadd/flickr30k"
    fetch_dataset(_real_layout(www, url), ds, [ds / "dataset_flickr30k.json", ds / "flickr30k-images"])
    assert sorted(p.name for p in ds.iterdir()) == ["dataset_flickr30k.json", "flickr30k-images"]
    corpus = load_karpathy(ds / "dataset_flickr30k.json", ds / "flickr30k-images")
    assert list(corpus.split) == ["train", "train", "train", "val", "test", "test"]  # restval folds into train
    assert len(corpus.captions) == 12


def test_an_unpack_that_fails_midway_leaves_nothing_under_the_final_names(served, tmp_path):
    """The image archive breaks at its fourth member (a CRC error after three images are written): the error
    names the archive's URL, and the dataset's folder holds no half-filled image folder, no JSON (whole, but
    of a fetch that failed), no staging folder and no downloaded archive."""
    www, url = served
    archives = _real_layout(www, url, images=fixtures.flickr30k_images_zip_damaged_midway)
    ds = tmp_path / "resources/mdadd/flickr30k"
    with pytest.raises(ValueError, match=re.escape(archives[1]["url"]) + r": cannot unpack .*Bad CRC-32"):
        fetch_dataset(archives, ds, [ds / "dataset_flickr30k.json", ds / "flickr30k-images"])
    assert sorted(p.name for p in ds.rglob("*")) == []


def test_a_staging_folder_left_by_a_killed_fetch_is_cleared_by_the_next(served, tmp_path):
    """A job killed while unpacking (no clean-up runs) leaves its staging folder beside the targets; the next
    fetch of the folder (which has one writer) starts from an empty one, and its images are only the archive's."""
    www, url = served
    ds = tmp_path / "resources/mdadd/flickr30k"
    stale = ds / ".unpacking" / "tree" / "flickr30k-images"
    stale.mkdir(parents=True)
    (stale / "not_in_the_archive.jpg").write_bytes(b"left by a killed job")
    fetch_dataset(_real_layout(www, url), ds, [ds / "dataset_flickr30k.json", ds / "flickr30k-images"])
    assert sorted(p.name for p in ds.iterdir()) == ["dataset_flickr30k.json", "flickr30k-images"]
    assert sorted(p.stem for p in (ds / "flickr30k-images").iterdir()) == sorted(
        str(fid) for fid, _ in fixtures.FLICKR30K_IMAGES)


def test_a_failed_download_of_a_later_archive_leaves_nothing_of_the_earlier_ones(served, tmp_path):
    """The split files arrive and unpack, the image archive is not found (HTTP 404): the error names its URL,
    and the dataset's folder holds neither the split files nor an empty archives/ folder."""
    www, url = served
    ds = tmp_path / "ds"
    archives = _real_layout(www, url)
    (www / "flickr30k-images.tar.gz").unlink()
    with pytest.raises(ValueError, match=re.escape(archives[1]["url"]) + ": HTTP 404"):
        fetch_dataset(archives, ds, [ds / "dataset_flickr30k.json", ds / "flickr30k-images"])
    assert list(ds.iterdir()) == []


def test_fetch_dataset_names_the_archives_and_the_member_they_lack(served, tmp_path):
    www, url = served
    ds = tmp_path / "ds"
    archives = _real_layout(www, url)[:1]  # the split files only
    with pytest.raises(ValueError, match=rf"mdadd\.paper\.data\.archives \({re.escape(archives[0]['url'])}\) hold "
                                         r"no flickr30k-images"):
        fetch_dataset(archives, ds, [ds / "dataset_flickr30k.json", ds / "flickr30k-images"],
                      where="mdadd.paper.data.archives")
    assert list(ds.iterdir()) == []


def test_image_encoder_reads_files_like_arrays(karpathy_fixture):
    from PIL import Image

    from repro.nn.encoders_offline import EFFICIENTNET_LITE0_DIM, encode_images, load_efficientnet_lite0

    corpus = load_karpathy(karpathy_fixture / "dataset_coco.json", karpathy_fixture / "images")
    arrays = [np.asarray(Image.open(p).convert("RGB")) for p in corpus.image_paths]
    model = load_efficientnet_lite0()
    from_files = encode_images(model, corpus.image_paths, size=64, batch_size=2)
    from_arrays = encode_images(model, arrays, size=64, batch_size=4)  # other batching, same numbers
    assert from_files.shape == (4, EFFICIENTNET_LITE0_DIM)
    np.testing.assert_allclose(from_files, from_arrays, rtol=1e-4, atol=1e-5)
    assert np.linalg.norm(from_files[0] - from_files[1]) > 1e-3  # different images, different features


def test_pretrained_encoders_separate_colours():
    """Frozen ImageNet / MiniLM features carry the scene: same-colour pairs are closer than cross-colour ones."""
    from repro.nn.encoders_offline import encode_images, encode_texts, load_efficientnet_lite0, load_minilm

    def scene(colour, pos):
        return {"background": "grey", "objects": [{"shape": "circle", "colour": colour, "size": "large",
                                                    "position": pos}]}

    imgs = np.stack([render_scene(scene(c, p), 64) for c in ("red", "blue") for p in ("left", "right")])
    f = encode_images(load_efficientnet_lite0(), imgs, size=64)
    f = f / np.linalg.norm(f, axis=1, keepdims=True)
    assert f[0] @ f[1] > f[0] @ f[2] and f[2] @ f[3] > f[1] @ f[3]  # red-red, blue-blue beat red-blue
    t = encode_texts(load_minilm(), ["a red circle", "a red disc", "a blue square", "a blue box"])
    assert t[0] @ t[1] > t[0] @ t[2] and t[2] @ t[3] > t[1] @ t[3]


def test_feature_file_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    feats = {s: SplitFeatures(image=rng.normal(size=(3, 5)).astype(np.float32),
                              text=rng.normal(size=(6, 4)).astype(np.float32), caption_image=np.repeat(np.arange(3), 2))
             for s in ("train", "test")}
    write_features(tmp_path / "f.h5", feats, dataset="x", image_size=64)
    back = read_features(tmp_path / "f.h5")
    for s in feats:
        np.testing.assert_array_equal(back[s].image, feats[s].image)
        np.testing.assert_array_equal(back[s].caption_image, feats[s].caption_image)
    with pytest.raises(ValueError, match="not a caption feature file"):
        read_features(tmp_path / "missing.h5")
