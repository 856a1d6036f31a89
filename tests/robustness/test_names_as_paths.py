"""Names from outside never become paths: a demo word, a line of a SHA256SUMS listing, an
uploaded file's name and a report's stem are looked up or checked to stay inside their folder
(:func:`workbench.fileio.named_path`), links followed."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from workbench.cli.main import main
from workbench.corpora import datasets
from workbench.corpora import occurrences as occ
from workbench.errors import DataError, InputError
from workbench.fileio import named_path
from workbench.finetune.data.splits import uploaded_data

HOSTILE = ["../../x", "../x.tsv", "/etc/passwd", "a/b", "a\\b", "..", ".", "", "  ", "x\x00y",
           "C:\\x", "sub/../../x"]  # fmt: skip


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_name_is_refused(tmp_path, name):
    with pytest.raises(InputError, match="not a plain name|leads outside"):
        named_path(tmp_path, name, "the name")


def test_plain_and_nested_names_stay_inside_their_folder(tmp_path):
    assert named_path(tmp_path, "bank.tsv") == tmp_path / "bank.tsv"
    assert named_path(tmp_path, "sub/x.txt", nested=True) == tmp_path / "sub" / "x.txt"
    for name in ("../x", "/etc/passwd", "sub/../../x"):
        with pytest.raises(DataError, match="not a relative path inside"):
            named_path(tmp_path, name, "entry", nested=True, error=DataError)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    (tmp_path / "link").symlink_to(outside)
    with pytest.raises(InputError, match="leads outside"):
        named_path(tmp_path, "link/x.txt", nested=True)
    with pytest.raises(InputError, match="leads outside"):
        named_path(tmp_path, "link")


def _outside_text(tmp_path: Path) -> Path:
    """A text outside the demo folder, in the demo format, that names its own path."""
    secret = tmp_path / "secret.tsv"
    secret.write_text("the [[secret]] lies here .\n", encoding="utf-8")
    return secret


@pytest.mark.parametrize("form", ["relative", "absolute"])
def test_a_demo_word_is_never_a_path(tmp_path, form):
    secret = _outside_text(tmp_path)
    stem = secret.with_suffix("")
    word = str(stem) if form == "absolute" else str(Path("../" * 12) / str(stem).lstrip("/"))
    assert (occ.DEMO_DIR / f"{word}.tsv").resolve() == secret.resolve()  # the old join
    with pytest.raises(InputError, match="no demo text"):
        occ.lemma_occurrences(word, "demo")
    with pytest.raises(InputError, match="no demo text"):
        occ.read_demo(word)


def test_a_demo_text_linked_outside_its_folder_is_refused(tmp_path):
    demo = tmp_path / "demo"
    demo.mkdir()
    (demo / "bank.tsv").write_text("the [[bank]] .\n", encoding="utf-8")
    (demo / "secret.tsv").symlink_to(_outside_text(tmp_path))
    assert occ.read_demo("bank", demo) == ["the [[bank]] ."]
    with pytest.raises(InputError, match="leads outside"):
        occ.read_demo("secret", demo)


def test_the_cli_refuses_a_demo_word_that_is_a_path(tmp_path, capsys, tmp_cache, tiny_model_dir):
    stem = _outside_text(tmp_path).with_suffix("")
    out = tmp_path / "f.html"
    args = ["senses", "plot", str(stem), "--out", str(out), "--model", str(tiny_model_dir),
            "--source", "demo", "--method", "pca", "--layers", "2"]  # fmt: skip
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no demo text" in err and not out.exists()


def test_a_checksum_listing_cannot_reach_outside_the_data(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("alpha")
    digest = hashlib.sha256(b"alpha").hexdigest()
    for entry in ("../outside.txt", str(outside), "*../outside.txt"):
        (root / "SHA256SUMS").write_text(f"{digest}  {entry}\n")
        with pytest.raises(DataError, match="SHA256SUMS entry"):
            datasets.check_sums(root)


@pytest.mark.parametrize("name", ["..", "x\x00.conll", "a\\b.conll"])
def test_an_uploaded_file_name_is_never_a_path(name):
    with pytest.raises(InputError, match="has no plain file name") as info:
        uploaded_data("token", (name, b"The\tO\n"))
    assert "workbench-ft-" not in str(info.value)  # never the server's temporary folder


@pytest.mark.parametrize("stem", ["..", "../x", "/tmp/x", "a\\b", " "])
def test_a_report_stem_is_a_plain_name(tmp_path, capsys, stem):
    out = tmp_path / "reports"
    assert main(["geometry", "--corpus", "wordnet", "--out", str(out), "--stem", stem]) == 2
    assert "--stem" in capsys.readouterr().err
