"""Hostile content and missing limits, class by class (docs/robustness.md): text from a link is
never markdown, no non-finite number is trusted, every input has a size checked before
allocation, every wait a deadline, housekeeping never leaves the cache, a download is verified,
no CSV cell is a formula, and the errors no check caught before are one line now.

Each class is closed at one place (``webapp.text.plain``, ``workbench.limits``,
``viz.export.csv_cell``, ``EmbeddingCache.own_dir``, ``datasets.check_framework``,
``cli.main.undecodable``); these tests try the members the issue listed and others.
"""

from __future__ import annotations

import csv
import hashlib
import http.server
import io
import json
import os
import shutil
import socketserver
import subprocess
import threading
import time
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from markdown_it import MarkdownIt

from tests.robustness.cli_errors import assert_one_line_error
from webapp.text import plain
from workbench import limits
from workbench.cli.main import main
from workbench.corpora import datasets
from workbench.encoding.cache import EmbeddingCache
from workbench.encoding.encoder import Encoder
from workbench.encoding.models import check_dimensions
from workbench.errors import CacheError, DataError, ModelLoadError, WorkbenchError
from workbench.fileio import sha256_file, temporary_path
from workbench.geometry.corrections import load_correction, make_correction
from workbench.viz.export import csv_cell, plain_csv
from workbench.wsd.config import EncoderInfo, SenseIndexConfig
from workbench.wsd.gloss_cache import GlossCache, text_digests
from workbench.wsd.index import SenseIndex
from workbench.wsd.pos_probe import PosProbe, load_probe
from workbench.wsd.store import load_index, save_index

SE2 = "WSD_Evaluation_Framework/Evaluation_Datasets/senseval2/senseval2"


def _in_time(fn, seconds: float = 10.0):
    """``fn()``'s result, failing the test (instead of hanging it) past ``seconds``."""
    out: dict[str, object] = {}

    def target() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still waiting after {seconds} s"
    if "error" in out:
        raise out["error"]  # type: ignore[misc]
    return out.get("value")


# --------------------------------------------------------------------------- 1. markdown

HOSTILE_TEXTS = [
    "[LOG IN AGAIN](http://example.invalid)",
    "![](http://example.invalid/p.png)",
    "<img src=x onerror=alert(1)>",
    "http://example.invalid/bare",
    "www.example.invalid",
    "**bold** _it_ `code` ~~del~~",
    "# heading\n- list\n| a | b |\n|---|---|",
    ":red[colour] :material/warning: $x^2$",
    "[ref]: http://example.invalid\n[x][ref]",
    "a\\](http://example.invalid)",
    "<http://example.invalid>",
    "mail@example.invalid",
]


@pytest.mark.parametrize("text", HOSTILE_TEXTS)
def test_plain_text_renders_as_itself_without_links_or_images(text):
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    html = md.render(plain(text))
    # a bare URL (GFM's autolink, which Streamlit's renderer has) needs "://" or "www." whole
    assert "://" not in plain(text) and "www." not in plain(text)
    assert "<a " not in html and "<img" not in html and "<h1" not in html and "<li" not in html
    tokens = md.parseInline(plain(text))[0].children or []
    shown = "".join(t.content for t in tokens if t.type == "text")
    assert shown == " ".join(text.split("\n")).replace("\r", " ")  # every character, one line


# --------------------------------------------------------------------------- 2. non-finite


def _gloss_cache(tmp_path: Path) -> GlossCache:
    return GlossCache({"gloss_encoder": "test", "pooling": "mean"}, dim=4, root=tmp_path)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_shard_of_the_right_identity_with_non_finite_vectors_is_dropped(tmp_path, bad):
    cache = _gloss_cache(tmp_path)
    cache.store(["sloping land"], np.ones((1, 4), np.float32))
    vectors = np.ones((1, 4), np.float32)
    vectors[0, 2] = bad
    cache.folder.mkdir(parents=True, exist_ok=True)
    forged = cache.folder / "forged.npz"
    np.savez(
        forged, digests=text_digests(["a bank"]), vectors=vectors, identity=np.array(cache.identity)
    )
    fresh = _gloss_cache(tmp_path)
    with pytest.warns(UserWarning, match="non-finite"):
        _, found = fresh.lookup(["a bank", "sloping land"])
    assert found.tolist() == [False, True]  # encoded again; the good shard still answers
    assert not forged.exists()


def test_non_finite_gloss_vectors_are_never_stored(tmp_path):
    cache = _gloss_cache(tmp_path)
    with pytest.raises(DataError, match="non-finite"):
        cache.store(["x"], np.full((1, 4), np.nan, np.float32))
    assert not list(tmp_path.rglob("*.npz"))


def test_a_nan_pos_probe_is_refused_and_never_written(tmp_path):
    probe = PosProbe("-1")
    probe.coef_ = np.zeros((2, 4), np.float32)
    probe.intercept_ = np.zeros(2, np.float32)
    probe.classes_ = ("NOUN", "VERB")
    path = probe.save(tmp_path / "pos_probe.npz")
    assert load_probe(path) is not None
    np.savez(
        path,
        coef=np.full((2, 4), np.nan, np.float32),
        intercept=np.zeros(2, np.float32),
        classes=np.array(["NOUN", "VERB"]),
        layers=np.array("-1"),
    )
    with pytest.raises(DataError, match="non-finite"):
        load_probe(path)
    probe.coef_[0, 0] = np.inf
    with pytest.raises(DataError, match="non-finite"):
        probe.save(tmp_path / "other.npz")
    assert not (tmp_path / "other.npz").exists()


@pytest.fixture(scope="module")
def nan_model_dir(tiny_model_dir, tmp_path_factory) -> Path:
    """The tiny model with NaN weights in its first layer."""
    import torch
    from transformers import AutoModel

    path = tmp_path_factory.mktemp("nan-bert")
    model = AutoModel.from_pretrained(tiny_model_dir)
    with torch.no_grad():
        model.encoder.layer[0].attention.self.query.weight.fill_(float("nan"))
    model.save_pretrained(path)
    for name in os.listdir(tiny_model_dir):
        if name.startswith(("tokenizer", "vocab", "special")):
            shutil.copy(tiny_model_dir / name, path / name)
    return path


def test_a_model_with_nan_weights_is_refused_and_nothing_written(
    nan_model_dir, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    text = tmp_path / "in.txt"
    text.write_text("A bank by the river.\n", encoding="utf-8")
    out = tmp_path / "out.npz"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(
            [
                "embed",
                str(text),
                "--out",
                str(out),
                "--model",
                str(nan_model_dir),
                "--device",
                "cpu",
            ]
        )
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    line = err.strip().splitlines()[-1]  # after the progress bar
    # refused for its weights, whatever this CPU's attention kernel makes of the NaN
    assert line.startswith("workbench: error: model weights in ") and "non-finite" in line
    assert str(nan_model_dir / "model.safetensors") in line
    assert "tensor 'encoder.layer.0.attention.self.query.weight'" in line
    assert not out.exists()
    assert not list((tmp_path / "cache").rglob("vectors.npy"))


def test_check_finite_reads_a_memory_map_in_chunks(tmp_path):
    path = tmp_path / "v.npy"
    big = np.lib.format.open_memmap(path, "w+", np.float32, (3000, 2, 700))
    big[:] = 1.0
    assert limits.non_finite(big) == 0
    big[2999, 1, 699] = np.nan
    big[0, 0, 0] = -np.inf
    assert limits.non_finite(big) == 2
    assert limits.non_finite(np.arange(5)) == 0  # integers are finite
    with pytest.raises(DataError, match="2 non-finite numbers"):
        limits.check_finite(big, "the test array")


# --------------------------------------------------------------------------- 3. sizes


def _zip_bomb(path: Path, mib: int = 40) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{SE2}.data.xml", b"\0" * (mib << 20))
    return path


def test_a_zip_bomb_is_refused_before_anything_is_unpacked(tmp_path):
    bomb = _zip_bomb(tmp_path / "bomb.zip")
    assert bomb.stat().st_size < 1 << 20
    started = time.monotonic()
    with pytest.raises(DataError, match="zip bomb"):
        limits.extract_zip(bomb, tmp_path / "out")
    assert time.monotonic() - started < 2
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.xml"))


def test_an_archive_past_the_total_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_LIMIT_ARCHIVE_BYTES", "1000")
    path = tmp_path / "big.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("a.txt", os.urandom(600))
        zf.writestr("b.txt", os.urandom(600))
    with pytest.raises(DataError, match="more than the limit"):
        limits.extract_zip(path, tmp_path / "out")


def test_a_member_that_unpacks_past_its_declared_size_is_refused(tmp_path):
    path = tmp_path / "liar.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("a.txt", b"x" * 5000)
    data = bytearray(path.read_bytes())
    central = data.find(b"PK\x01\x02")
    data[central + 24 : central + 28] = (100).to_bytes(4, "little")  # declares 100 bytes
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match="past its declared size|not a valid"):
        limits.extract_zip(path, tmp_path / "out")
    assert (
        not (tmp_path / "out" / "a.txt").exists()
        or (tmp_path / "out" / "a.txt").stat().st_size <= 100
    )


def _npz_with_header(path: Path, shape: tuple[int, ...]) -> Path:
    """An .npz whose ``vectors`` header declares ``shape`` but holds 16 bytes."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": shape}
    )
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("vectors.npy", header.getvalue() + b"\0" * 16)
        zf.writestr("digests.npy", _npy(np.zeros((1, 16), np.uint8)))
        zf.writestr("identity.npy", _npy(np.array("x")))
    return path


def _npy(array: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def test_a_shard_whose_header_claims_terabytes_is_dropped_not_allocated(tmp_path):
    cache = _gloss_cache(tmp_path)
    cache.folder.mkdir(parents=True)
    shard = _npz_with_header(cache.folder / "huge.npz", (1 << 40, 4))  # 14 TiB declared
    with pytest.warns(UserWarning, match="declares"):
        _, found = cache.lookup(["x"])
    assert not found.any() and not shard.exists()  # gone: the next run is not stuck


def test_check_npz_accepts_what_numpy_writes(tmp_path):
    path = tmp_path / "ok.npz"
    np.savez(path, a=np.ones((10, 3)), b=np.array(["x", "yz"]), c=np.array(3))
    limits.check_npz(path)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("num_hidden_layers", 100000),
        ("vocab_size", 10**9),
        ("hidden_size", -5),
        ("hidden_size", 3.5),
        ("max_position_embeddings", True),
    ],
)
def test_a_config_asking_for_an_absurd_model_is_refused_before_loading(
    tiny_model_dir, tmp_path, key, value
):
    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    config[key] = value
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match=key):
        _in_time(lambda: check_dimensions(folder))


def test_a_config_that_is_not_the_weights_own_is_refused(tiny_model_dir, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    config = json.loads((folder / "config.json").read_text())
    config["vocab_size"] = config["vocab_size"] * 50
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match="not the weights' own"):
        _in_time(lambda: Encoder(model=str(folder), device="cpu"), 60)


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "huge"])
def test_meta_json_that_is_no_regular_small_file_is_refused_quickly(tmp_path, special):
    cache = EmbeddingCache(tmp_path)
    entry = cache.path("0" * 32)
    entry.mkdir(parents=True)
    meta = entry / "meta.json"
    if special == "fifo":
        os.mkfifo(meta)
    elif special == "huge":
        with meta.open("wb") as fh:
            fh.truncate((64 << 20) + 1)
    else:
        meta.symlink_to(special)
    listed = _in_time(cache.entries)
    assert listed[0].problem and (
        "regular file" in listed[0].problem or "limit" in listed[0].problem
    )
    assert _in_time(cache.prune).entries == ("0" * 32,)


def test_read_limited_never_reads_past_the_limit(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('{"a": 1}')
    assert limits.read_json(path) == {"a": 1}
    with pytest.raises(DataError, match="over the limit"):
        limits.read_limited(path, max_bytes=3)


def test_a_limit_is_changed_by_its_variable_and_a_bad_value_is_one_error(monkeypatch):
    assert limits.limit("download_seconds") == limits.LIMITS["download_seconds"].default
    monkeypatch.setenv("WORKBENCH_LIMIT_DOWNLOAD_SECONDS", "7")
    assert limits.limit("download_seconds") == 7
    for bad in ("nan", "-1", "soon", "inf"):
        monkeypatch.setenv("WORKBENCH_LIMIT_DOWNLOAD_SECONDS", bad)
        with pytest.raises(WorkbenchError, match="WORKBENCH_LIMIT_DOWNLOAD_SECONDS"):
            limits.limit("download_seconds")


# --------------------------------------------------------------------------- 4. deadlines


class _Trickle(http.server.BaseHTTPRequestHandler):
    """Sends headers, then one byte every 0.2 s, for ever (until the client goes)."""

    def do_GET(self) -> None:  # noqa: N802 - the handler's name
        self.send_response(200)
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        try:
            for _ in range(300):  # at most 60 s: the server stops itself
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            pass

    def log_message(self, *args) -> None:
        pass


class _Silent(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        time.sleep(5)  # accepts, never answers in time

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def serve(monkeypatch):
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")
    servers = []

    def start(handler) -> str:
        server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/x.zip"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_a_download_that_trickles_stops_at_its_deadline_and_leaves_nothing(
    serve, tmp_path, monkeypatch
):
    monkeypatch.setenv("WORKBENCH_LIMIT_DOWNLOAD_SECONDS", "1.5")
    url = serve(_Trickle)
    dest = tmp_path / "data"
    started = time.monotonic()
    with pytest.raises(DataError, match="took longer than 1.5 s"):
        _in_time(lambda: datasets.download(url, dest), 20)
    assert time.monotonic() - started < 10
    assert not dest.exists() or not list(dest.iterdir())


def test_a_server_that_never_answers_is_one_error_within_the_read_limit(
    serve, tmp_path, monkeypatch
):
    monkeypatch.setenv("WORKBENCH_LIMIT_READ_SECONDS", "0.5")
    url = serve(_Silent)
    with pytest.raises(DataError, match="failed"):
        _in_time(lambda: datasets.download(url, tmp_path / "data"), 20)


def test_a_killed_downloads_folder_is_removed_by_the_next(tmp_path):
    dest = tmp_path / "data"
    dest.mkdir()
    left = temporary_path(dest / datasets.FRAMEWORK_DIR)
    left = left.with_name(left.name.replace(f"-{os.getpid()}-", "-999999999-"))
    (left / "unpacked").mkdir(parents=True)
    with pytest.raises(DataError):
        datasets.download((tmp_path / "nothing.zip").as_uri(), dest)
    assert not left.exists()


def test_a_fifo_named_like_a_shard_never_hangs_a_lookup(tmp_path):
    cache = _gloss_cache(tmp_path)
    cache.folder.mkdir(parents=True)
    os.mkfifo(cache.folder / "aaaa.npz")
    with pytest.warns(UserWarning, match="not a regular file"):
        _, found = _in_time(lambda: cache.lookup(["x"]))
    assert not found.any()


# --------------------------------------------------------------------------- 5. the cache's tree


def test_prune_never_follows_the_entries_folder_out_of_the_cache(tmp_path, capsys, monkeypatch):
    user = tmp_path / "mine"
    victim = user / ("ab" * 16)
    victim.mkdir(parents=True)
    (victim / "thesis.txt").write_text("years of work")
    root = tmp_path / "cache"
    root.mkdir()
    (root / "embeddings").symlink_to(user)
    cache = EmbeddingCache(root)
    with pytest.raises(CacheError, match="leads out of the cache"):
        cache.prune()
    with pytest.raises(CacheError, match="leads out of the cache"):
        cache.entries()
    assert cache.remove_stale() == []
    monkeypatch.setenv("WORKBENCH_CACHE", str(root))
    assert_one_line_error(["cache", "prune"], "leads out of the cache", capsys)
    assert_one_line_error(["cache", "prune", "--all"], "leads out of the cache", capsys)
    assert (victim / "thesis.txt").read_text() == "years of work"


def test_an_entry_that_is_a_link_is_removed_as_a_link_only(tmp_path):
    user = tmp_path / "mine"
    user.mkdir()
    (user / "keep.txt").write_text("mine")
    cache = EmbeddingCache(tmp_path / "cache")
    cache.dir.mkdir(parents=True)
    cache.path("cd" * 16).symlink_to(user)
    (entry,) = cache.entries()
    assert entry.problem == "is a symbolic link, not an entry" and entry.bytes == 0
    assert cache.prune().entries == ("cd" * 16,)
    assert (user / "keep.txt").read_text() == "mine"


# --------------------------------------------------------------------------- 6. verified download


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_an_archive_that_is_not_the_framework_is_refused_with_one_line(tmp_path, capsys):
    toy = _zip(tmp_path / "toy.zip", {f"{SE2}.data.xml": b"<corpus/>"})
    dest = tmp_path / "data"
    assert_one_line_error(
        ["data", "download", "--url", toy.as_uri(), "--dest", str(dest), "--quiet"],
        "not the published file|lacks",
        capsys,
    )
    assert not (dest / datasets.FRAMEWORK_DIR).exists()
    wrong = "0" * 64
    assert_one_line_error(
        [
            "data",
            "download",
            "--url",
            toy.as_uri(),
            "--dest",
            str(dest),
            "--sha256",
            wrong,
            "--quiet",
        ],
        "SHA-256 is .* not the 0000",
        capsys,
    )
    assert_one_line_error(
        ["data", "download", "--url", toy.as_uri(), "--dest", str(dest), "--sha256", "xyz"],
        "64 hex digits",
        capsys,
    )
    assert not (dest / datasets.FRAMEWORK_DIR).exists()
    right = hashlib.sha256(toy.read_bytes()).hexdigest()
    assert (
        main(
            [
                "data",
                "download",
                "--url",
                toy.as_uri(),
                "--dest",
                str(dest),
                "--sha256",
                right.upper(),
                "--quiet",
            ]
        )
        == 0
    )


def test_the_framework_files_themselves_are_taken(tmp_path, wsd_data):
    framework = wsd_data / datasets.FRAMEWORK_DIR
    members = {
        f"{datasets.FRAMEWORK_DIR}/{rel}": (framework / rel).read_bytes()
        for rel in datasets.FRAMEWORK_SHA256
    }
    archive = _zip(tmp_path / "framework.zip", members)
    final = datasets.download(archive.as_uri(), tmp_path / "data")
    assert (final / "Evaluation_Datasets/ALL/ALL.data.xml").is_file()
    members[f"{SE2}.gold.key.txt"] += b"senseval2.d000.s000.t000 bank%1:14:00::\n"
    tampered = _zip(tmp_path / "tampered.zip", members)
    with pytest.raises(DataError, match="senseval2.gold.key.txt in the archive is not"):
        datasets.download(tampered.as_uri(), tmp_path / "other")


# --------------------------------------------------------------------------- 8. CSV


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+SUM(A1)", "'+SUM(A1)"),
        ("-2+3", "'-2+3"),
        ("@cmd", "'@cmd"),
        ("\t=x", "'\t=x"),
        ("\r=x", "'\r=x"),
        ('=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'),
        ("-0.5", "-0.5"),
        ("+3", "+3"),
        ("-1e5", "-1e5"),
        (-0.5, -0.5),
        (3, 3),
        (None, ""),
        ("bank", "bank"),
        ("a=b", "a=b"),
    ],
)
def test_csv_cells_that_a_spreadsheet_would_run_are_escaped(value, cell):
    assert csv_cell(value) == cell


def test_a_downloaded_csv_holds_no_formula_and_its_numbers_stay_numbers():
    rows = [{"sentence": "=cmd|' /C calc'!A0", "score": -0.25, "=col": "@x"}]
    text = plain_csv(rows)
    read = list(csv.reader(io.StringIO(text)))
    assert read[0] == ["sentence", "score", "'=col"]
    assert read[1] == ["'=cmd|' /C calc'!A0", "-0.25", "'@x"]
    assert not any(c.startswith(("=", "+", "@")) for row in read for c in row)


# --------------------------------------------------------------------------- 9. one line


def test_an_argument_that_is_not_utf8_is_one_line(capsys):
    bad = b"a \xff b".decode("utf-8", "surrogateescape")
    assert_one_line_error(["wsd", "disambiguate", "--word", "a", bad], "not valid UTF-8", capsys)


def test_a_url_that_is_no_url_is_one_line(tmp_path, capsys):
    assert_one_line_error(
        ["data", "download", "--url", "::::", "--dest", str(tmp_path / "d")],
        "download of :::: failed",
        capsys,
    )
    assert not (tmp_path / "d").exists()


def test_an_encrypted_member_is_one_error(tmp_path):
    path = _zip(tmp_path / "enc.zip", {"a.txt": b"secret"})
    data = bytearray(path.read_bytes())
    # the "encrypted" flag bit in the local header and in the central directory entry
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        at = data.find(signature)
        data[at + offset] |= 1
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match="encrypted"):
        limits.extract_zip(path, tmp_path / "out")


def test_a_model_archive_that_is_not_a_zip_is_one_error(tmp_path):
    path = tmp_path / "model.zip"
    path.write_bytes(b"<html>not found</html>")
    with pytest.raises(ModelLoadError, match="not a valid zip"):
        limits.extract_zip(path, tmp_path / "out", ModelLoadError)


def test_model_fetch_offline_is_one_line(monkeypatch, tmp_path, capsys):
    def offline(*args, **kwargs):
        return subprocess.CompletedProcess(
            args,
            1,
            "",
            "WARNING: Retrying...\nWARNING: again\n"
            "ERROR: Could not find a version that satisfies x\n",
        )

    monkeypatch.setattr(subprocess, "run", offline)
    assert_one_line_error(
        ["model", "fetch", "--dest", str(tmp_path / "m")],
        "Could not download .*: Could not find a version",
        capsys,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        def slow(*args, **kwargs):
            raise subprocess.TimeoutExpired(args, 1)

        monkeypatch.setattr(subprocess, "run", slow)
        assert_one_line_error(
            ["model", "fetch", "--dest", str(tmp_path / "m")], "within .* s", capsys
        )


# --------------------------------------------------------------------------- 2. more readers


def test_a_sense_index_with_nan_vectors_is_refused(tmp_path):
    info = EncoderInfo("toy", "fp-toy", 8, 3, "mean")
    vecs = np.random.default_rng(0).normal(size=(10, 8)).astype(np.float32)
    index = SenseIndex(SenseIndexConfig(layers="-1")).fit(
        vecs, [(f"w{i % 3}%1:00:00::",) for i in range(10)], info=info
    )
    path = save_index(index, tmp_path / "toy.index")
    with np.load(path / "senses.npz", allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["vectors"] = arrays["vectors"].copy()
    arrays["vectors"][0, 0] = np.nan
    np.savez(path / "senses.npz", **arrays)
    with pytest.raises(DataError, match="non-finite"):
        load_index(path, info=info)


def test_a_saved_correction_with_inf_and_a_matching_digest_is_refused(tmp_path):
    fitted = make_correction("zscore").fit(np.random.default_rng(0).normal(size=(50, 6)))
    npz, meta = fitted.save(tmp_path / "z")
    with np.load(npz, allow_pickle=False) as data:
        arrays = {k: data[k].copy() for k in data.files}
    first = next(k for k, v in arrays.items() if np.issubdtype(v.dtype, np.floating))
    arrays[first].flat[0] = np.inf
    np.savez(npz, **arrays)
    info = json.loads(meta.read_text())
    info["npz_sha256"] = sha256_file(npz)  # a forger recomputes the digest
    meta.write_text(json.dumps(info))
    with pytest.raises(DataError, match="non-finite"):
        load_correction(tmp_path / "z")


def test_an_empty_vocabulary_is_one_error_naming_the_tokenizer(tiny_model_dir, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    (folder / "tokenizer.json").unlink()
    (folder / "vocab.txt").write_text("")
    with pytest.raises(ModelLoadError, match="vocabulary files are damaged or empty"):
        Encoder(model=str(folder), device="cpu")
