from __future__ import annotations

import functools
import hashlib
import http.server
import shutil
import threading
import zipfile
from pathlib import Path

import pytest

from workbench.cli.main import main
from workbench.corpora import datasets
from workbench.corpora.datasets import load_dataset
from workbench.errors import DataError

TOY_XML = """<?xml version="1.0" encoding="UTF-8" ?>
<corpus lang="en" source="toy">
<text id="senseval2.d000">
<sentence id="senseval2.d000.s000">
<wf lemma="the" pos="DET">The</wf>
<instance id="senseval2.d000.s000.t000" lemma="bank" pos="NOUN">bank</instance>
</sentence>
</text>
</corpus>
"""
TOY_GOLD = "senseval2.d000.s000.t000 bank%1:14:00::\n"
SE2 = "WSD_Evaluation_Framework/Evaluation_Datasets/senseval2/senseval2"


def _zip(path: Path, members: dict[str, str]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in members.items():
            zf.writestr(name, text)
    return path


@pytest.fixture
def http_dir(tmp_path, monkeypatch):
    """Serve ``tmp_path/www`` on 127.0.0.1 (random port) from a thread; yields (dir, base url)."""
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")  # never via a configured proxy
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_download_from_local_server(http_dir, tmp_path, capsys):
    root, url = http_dir
    _zip(
        root / "framework.zip",
        {f"{SE2}.data.xml": TOY_XML, f"{SE2}.gold.key.txt": TOY_GOLD, "README.txt": "hello"},
    )
    dest = tmp_path / "data"
    digest = hashlib.sha256((root / "framework.zip").read_bytes()).hexdigest()
    rc = main(["data", "download", "--url", f"{url}/framework.zip", "--dest", str(dest),
               "--sha256", digest])  # fmt: skip
    assert rc == 0
    assert "unpacked into" in capsys.readouterr().out
    corpus = load_dataset("senseval2", dest)
    assert corpus.n_instances == 1
    assert corpus.sentences[0].instances[0].keys == ("bank%1:14:00::",)
    assert [p.name for p in dest.iterdir()] == ["WSD_Evaluation_Framework"]  # no leftovers
    # a second download refuses to overwrite
    assert main(["data", "download", "--url", f"{url}/framework.zip", "--dest", str(dest)]) == 2


def test_download_refuses_path_traversal(http_dir, tmp_path):
    root, url = http_dir
    _zip(root / "evil.zip", {f"{SE2}.data.xml": TOY_XML, "../../escaped.txt": "gotcha"})
    dest = tmp_path / "data"
    with pytest.raises(DataError, match="unsafe member"):
        datasets.download(f"{url}/evil.zip", dest)
    assert not list(tmp_path.rglob("escaped.txt"))
    assert not (dest / datasets.FRAMEWORK_DIR).exists()


def test_download_errors_are_data_errors(http_dir, tmp_path):
    root, url = http_dir
    (root / "notzip.zip").write_text("plain text")
    _zip(root / "other.zip", {"something/else.txt": "x"})
    with pytest.raises(DataError, match="not a valid zip"):
        datasets.download(f"{url}/notzip.zip", tmp_path / "a")
    with pytest.raises(DataError, match="no WSD_Evaluation_Framework"):
        datasets.download(f"{url}/other.zip", tmp_path / "b")
    with pytest.raises(DataError, match="download of .* failed"):
        datasets.download(f"{url}/missing.zip", tmp_path / "c")


def test_data_dir_resolution(tmp_path, monkeypatch):
    (tmp_path / "env" / datasets.FRAMEWORK_DIR).mkdir(parents=True)
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path / "env"))
    assert datasets.data_dir() == tmp_path / "env"
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path / "empty"))
    with pytest.raises(DataError, match="workbench data download"):
        datasets.data_dir()
    monkeypatch.delenv("WORKBENCH_DATA")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    user = datasets.user_data_dir()
    assert user == tmp_path / "xdg" / "workbench" / "wsd"
    (user / datasets.FRAMEWORK_DIR).mkdir(parents=True)
    assert datasets.data_dir() == user


def test_missing_dataset_file_says_what_to_do(tmp_path):
    (tmp_path / datasets.FRAMEWORK_DIR).mkdir()
    with pytest.raises(DataError, match="workbench data download"):
        load_dataset("ALL", tmp_path)
    with pytest.raises(DataError, match="unknown dataset"):
        datasets.dataset_paths("nope", tmp_path)


def test_checksums_catch_changes(tmp_path):
    (tmp_path / "a.txt").write_text("alpha")
    digest = hashlib.sha256(b"alpha").hexdigest()
    bad = hashlib.sha256(b"other").hexdigest()
    (tmp_path / "SHA256SUMS").write_text(f"{digest}  a.txt\n{bad}  a.txt\n{digest}  gone.txt\n")
    result = datasets.check_sums(tmp_path)
    assert result.checked == ("a.txt", "a.txt")
    assert result.failed == ("a.txt",)
    assert result.missing == ("gone.txt",)
    assert datasets.check_sums(tmp_path / "nowhere") is None


def test_verify_reports_a_broken_dataset(tmp_path, wsd_data, capsys):
    eval_dir = wsd_data / datasets.FRAMEWORK_DIR / "Evaluation_Datasets"
    target = tmp_path / datasets.FRAMEWORK_DIR / "Evaluation_Datasets"
    for name in ("senseval2", "senseval3"):
        shutil.copytree(eval_dir / name, target / name)
    xml = target / "senseval3" / "senseval3.data.xml"
    xml.write_text(xml.read_text()[:5000])  # truncated
    assert main(["data", "verify", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "senseval2" in out and "2,282" in out
    assert "senseval3.data.xml" in out and "malformed XML" in out
    assert "verify: FAILED" in out


@pytest.mark.slow
def test_verify_real_shared_data(wsd_data, capsys):
    assert main(["data", "verify", str(wsd_data)]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[2:9]}
    assert rows["ALL"][:3] == ["1,173", "25,503", "7,253"]
    assert rows["semcor"][0] == "37,176" and rows["semcor"][2] == "226,036"
    assert "18 checked, 0 failed, 0 missing" in out


def test_list(wsd_data, monkeypatch, capsys):
    monkeypatch.setenv("WORKBENCH_DATA", str(wsd_data))
    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert "semcor" in out and "ALL.data.xml" in out
