"""Output names and input files that ``workbench embed`` (and the library) must refuse, or read
right, table-driven.

Every refused command line ends with exit code 2 and one line ``workbench: error: ...`` naming
the problem (no traceback), writes nothing where it should not (nothing beside a folder given
as ``--out dir/``), and leaves an earlier output whole. A text file opening with a UTF-8
byte-order mark is read with its real first word.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.robustness.cli_errors import assert_one_line_error
from workbench.cli.main import main
from workbench.corpora.readers import read_text
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.errors import WorkbenchError

DEV_FULL = Path("/dev/full")
DEV_NULL = Path("/dev/null")


@dataclass(frozen=True)
class Case:
    """One bad output name or input file.

    Attributes:
        name: the test id.
        expect: a regular expression the error message must match.
        argv: ``workbench`` arguments (``{w}`` is the world's directory), or None for a library
            case.
        call: the library call, given the world's directory (None for a command-line case).
        absent: files (relative to the world, or absolute) that must not exist afterwards.
        unchanged: files (relative to the world) whose bytes must be the same afterwards.
        needs: a path that must exist for the case to run (a device file).
    """

    name: str
    expect: str
    argv: tuple[str, ...] | None = None
    call: Callable[[Path], object] | None = None
    absent: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = field(default=())
    needs: Path | None = None


def _embed(*args: str) -> tuple[str, ...]:
    return ("embed", *args, "--model", "{w}/tiny", "--device", "cpu", "--no-cache")


@pytest.fixture(scope="module")
def world(tmp_path_factory, tiny_model_dir) -> Path:
    """Inputs, a folder, and an earlier output ``col/foo.npz`` with its two tables."""
    w = tmp_path_factory.mktemp("names")
    (w / "tiny").symlink_to(tiny_model_dir)
    (w / "ok.txt").write_text("The bank is closed.\nHe sat by the river.\n")
    (w / "mine.txt").write_text("Another text entirely.\n")
    (w / "empty.txt").write_bytes(b"")
    (w / "bom.txt").write_bytes("\ufeffBank holidays are closed.\nA second line.\n".encode())
    (w / "d2").mkdir()
    (w / "d2" / "keep.txt").write_text("the user's own file\n")
    (w / "indir").mkdir()
    argv = [a.format(w=w) for a in _embed(str(w / "ok.txt"), "--out", str(w / "col/foo.npz"))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(argv) == 0
    return w


EARLIER = ("col/foo.npz", "col/foo.tsv", "col/foo.sentences.tsv", "d2/keep.txt")
BESIDE_D2 = ("d2.npz", "d2.tsv", "d2.sentences.tsv", "d2/.npz", "d2/.tsv")


def _save(out: Callable[[Path], str]) -> Callable[[Path], object]:
    def call(w: Path) -> object:
        emb = LayerwiseEmbeddings.load(w / "col/foo.npz")
        return emb.save(out(w), sentence_ids=["a", "b"])

    return call


def _read_text(name: str) -> Callable[[Path], object]:
    def call(w: Path) -> object:
        return read_text(w / name if not name.startswith("/") else name)

    return call


CLI_CASES = [
    # 1. an empty --out
    Case("out-empty", r"--out is empty", _embed("{w}/ok.txt", "--out", ""),
         absent=(".npz", ".tsv", ".sentences.tsv"), unchanged=EARLIER),
    # 2. --out naming a directory, with or without a trailing separator; a device
    Case("out-dir-trailing-slash", r"d2/: it ends with a path separator",
         _embed("{w}/ok.txt", "--out", "{w}/d2/"), absent=BESIDE_D2, unchanged=EARLIER),
    Case("out-dir", r"d2: it is a directory", _embed("{w}/ok.txt", "--out", "{w}/d2"),
         absent=BESIDE_D2, unchanged=EARLIER),
    Case("out-missing-dir-trailing-slash", r"newdir/: it ends with a path separator",
         _embed("{w}/ok.txt", "--out", "{w}/newdir/"),
         absent=("newdir", "newdir.npz", "newdir.tsv"), unchanged=EARLIER),
    Case("out-dot", r"it is a directory", _embed("{w}/ok.txt", "--out", "{w}/."),
         absent=(".npz",), unchanged=EARLIER),
    Case("out-dev-full", r"/dev/full: it exists and is not a regular file",
         _embed("{w}/ok.txt", "--out", "/dev/full"),
         absent=("/dev/full.npz", "/dev/full.tsv", "/dev/full.sentences.tsv"), needs=DEV_FULL),
    # 3. a stem ending in .sentences would share foo.npz's sentence table
    Case("out-sentences-stem", r"'\.sentences' is kept for the sentence table",
         _embed("{w}/mine.txt", "--out", "{w}/col/foo.sentences.npz"),
         absent=("col/foo.sentences.npz",), unchanged=EARLIER),
    Case("out-sentences-stem-no-ext", r"'\.sentences' is kept for the sentence table",
         _embed("{w}/mine.txt", "--out", "{w}/col/foo.sentences"),
         absent=("col/foo.sentences.npz",), unchanged=EARLIER),
    # 5. inputs that exist but are not text files
    Case("in-dev-null", r"/dev/null is not a regular file",
         _embed("/dev/null", "--out", "{w}/n.npz"), absent=("n.npz", "n.tsv"), needs=DEV_NULL),
    Case("in-empty", r"empty\.txt is empty", _embed("{w}/empty.txt", "--out", "{w}/e.npz"),
         absent=("e.npz", "e.tsv")),
    Case("in-directory", r"indir is a directory", _embed("{w}/indir", "--out", "{w}/i.npz"),
         absent=("i.npz", "i.tsv")),
    Case("in-missing", r"nope\.txt does not exist", _embed("{w}/nope.txt", "--out", "{w}/m.npz"),
         absent=("m.npz", "m.tsv")),
]  # fmt: skip

LIBRARY_CASES = [
    Case("save-empty-name", r"output name is empty", call=_save(lambda w: ""),
         unchanged=EARLIER),
    Case("save-dir-trailing-slash", r"ends with a path separator",
         call=_save(lambda w: f"{w}/d2/"), absent=BESIDE_D2, unchanged=EARLIER),
    Case("save-dir", r"it is a directory", call=_save(lambda w: f"{w}/d2"), absent=BESIDE_D2,
         unchanged=EARLIER),
    Case("save-sentences-stem", r"'\.sentences' is kept for the sentence table",
         call=_save(lambda w: f"{w}/col/foo.sentences.npz"), absent=("col/foo.sentences.npz",),
         unchanged=EARLIER),
    Case("read-text-directory", r"indir is a directory", call=_read_text("indir")),
    Case("read-text-dev-null", r"/dev/null is not a regular file", call=_read_text("/dev/null"),
         needs=DEV_NULL),
    Case("read-text-missing", r"nope\.txt: file not found", call=_read_text("nope.txt")),
]  # fmt: skip


def _snapshot(world: Path, names: tuple[str, ...]) -> dict[str, bytes]:
    return {name: (world / name).read_bytes() for name in names}


def _check_after(case: Case, world: Path, before: dict[str, bytes]) -> None:
    for name in case.absent:
        assert not (world / name).exists(), f"{name} was written"
    assert _snapshot(world, case.unchanged) == before


@pytest.mark.parametrize("case", CLI_CASES, ids=[c.name for c in CLI_CASES])
def test_command_line_bad_output_name_is_one_line_and_exit_2(case, world, tmp_cache, capsys):
    if case.needs is not None and not case.needs.exists():
        pytest.skip(f"no {case.needs} here")
    argv = [a.format(w=world) for a in case.argv or ()]
    before = _snapshot(world, case.unchanged)
    assert_one_line_error(argv, case.expect, capsys)
    _check_after(case, world, before)


@pytest.mark.parametrize("case", LIBRARY_CASES, ids=[c.name for c in LIBRARY_CASES])
def test_library_bad_output_name_raises_the_projects_error(case, world):
    if case.needs is not None and not case.needs.exists():
        pytest.skip(f"no {case.needs} here")
    assert case.call is not None
    before = _snapshot(world, case.unchanged)
    with pytest.raises(WorkbenchError, match=case.expect):
        case.call(world)
    _check_after(case, world, before)


def test_dir_with_trailing_slash_leaves_nothing_beside_or_inside_the_folder(world, tmp_cache):
    siblings = sorted(p.name for p in world.iterdir())
    inside = sorted(p.name for p in (world / "d2").iterdir())
    argv = [a.format(w=world) for a in _embed("{w}/ok.txt", "--out", "{w}/d2/")]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(argv) == 2
    assert sorted(p.name for p in world.iterdir()) == siblings
    assert sorted(p.name for p in (world / "d2").iterdir()) == inside


def test_a_byte_order_mark_is_not_a_word(world, tmp_cache, capsys):
    corpus = read_text(world / "bom.txt")
    assert corpus.sentences[0].words[0] == "Bank"
    argv = [a.format(w=world) for a in _embed("{w}/bom.txt", "--out", "{w}/bom.npz")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(argv) == 0
    err = capsys.readouterr().err
    assert "\ufeff" not in err and "warn" not in err.lower(), err
    assert not [w for w in caught if "\ufeff" in str(w.message)]
    emb = LayerwiseEmbeddings.load(world / "bom.npz")
    assert emb.words[0] == "Bank"
    assert "\ufeff" not in "".join(emb.words)


EMPTY_PATH_OPTIONS = [
    ("geometry", "--out", ""),
    ("senses", "plot", "bank", "--out", " "),
    ("senses", "separation", "bank", "--csv", ""),
    ("wsd", "eval", "--json", ""),
    ("wsd", "eval", "--data", ""),
    ("wsd", "score", "", "gold.txt"),
    ("wsd", "layers", "--test", ""),
    ("finetune", "seqcls", "--train", "t.csv", "--out", ""),
    ("settings", ""),
    ("model", "fetch", "--dest", ""),
]


@pytest.mark.parametrize("argv", EMPTY_PATH_OPTIONS, ids=lambda a: "-".join(x for x in a if x))
def test_an_empty_path_is_refused_before_any_work(argv, tmp_path, capsys, monkeypatch):
    # Path("") is the current directory: geometry once wrote its reports there for --out ""
    monkeypatch.chdir(tmp_path)
    assert main(list(argv)) == 2  # argparse's refusal: one line, code 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and re.search(r"error: argument .*: an empty (path|name)", err)
    assert list(tmp_path.iterdir()) == []


def test_settings_of_a_directory_says_so(tmp_path, capsys):
    assert main(["settings", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
