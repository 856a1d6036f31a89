"""More faults, table-driven: a cache entry that is a file, prune options that are not numbers
of days, a saved correction whose ``.json`` disagrees with its arrays, and a fine-tuning
output directory that holds the user's own files.

A command-line case prepares its files in a fresh directory, runs ``workbench`` in-process and
checks the exit code, the message (one line ``workbench: error: ...`` and no traceback for a
refusal), that the user's files are unchanged, and what the case says must hold afterwards.
"""

from __future__ import annotations

import json
import re
import shutil
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from workbench.cli.main import main
from workbench.encoding import cache as cache_module
from workbench.encoding.cache import EmbeddingCache
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.errors import DataError, MismatchError, WorkbenchError
from workbench.finetune.training.store import RUN_KIND
from workbench.geometry.corrections import load_correction, make_correction
from workbench.outputs import mark_directory

TINY = ("--model", "{tiny}", "--device", "cpu")
FINETUNE = ("finetune", "seqcls", "--train", "{w}/train.csv", "--epochs", "1", "--no-progress")


@dataclass(frozen=True)
class Case:
    """One fault over the command line.

    Attributes:
        name: the test id.
        argv: the arguments (``{w}``: the case's directory, ``{tiny}``: the tiny model).
        code: the exit code expected.
        expect: a regular expression the output must match (stderr and the warnings for a
            refusal or a recomputed entry; stdout for a success).
        prepare: makes the case's files, given its directory.
        unchanged: files (relative to the directory) whose bytes must stay the same.
        after: checks what must hold afterwards, given the directory.
    """

    name: str
    argv: tuple[str, ...]
    code: int
    expect: str
    prepare: Callable[[Path], None] = lambda w: None
    unchanged: tuple[str, ...] = field(default=())
    after: Callable[[Path], None] = lambda w: None


WARNING = "workbench: warning: "  # how the command line shows a warning: one line on stderr


def _main(argv: list[str]) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        return main(argv)


# ---------------------------------------------------------------------------- cache entries


def _cache_dir(w: Path) -> Path:
    return w / "cache" / "embeddings"


def _embed_once(w: Path) -> None:
    (w / "mine.txt").write_text("The bank is closed.\nHe sat by the river.\n")
    code = _main(["embed", str(w / "mine.txt"), "--out", str(w / "m.npz"), *_tiny()])
    assert code == 0


def _tiny() -> list[str]:
    return ["--model", str(_TINY_DIR[0]), "--device", "cpu"]


_TINY_DIR: list[Path] = []


def _entry_to_file(w: Path) -> None:
    _embed_once(w)
    (entry,) = list(_cache_dir(w).iterdir())
    shutil.rmtree(entry)
    entry.write_text("x\n")


def _plus_file_entry(w: Path) -> None:
    _embed_once(w)
    (_cache_dir(w) / ("f" * 32)).write_text("x\n")


def _recomputed(w: Path) -> None:
    (entry,) = EmbeddingCache(w / "cache").entries(verify=True)
    assert entry.problem == ""
    assert (_cache_dir(w) / entry.key).is_dir()
    first, again = LayerwiseEmbeddings.load(w / "m.npz"), LayerwiseEmbeddings.load(w / "m2.npz")
    assert first.words == again.words
    np.testing.assert_array_equal(np.asarray(first.vectors), np.asarray(again.vectors))


def _only_good_entry_left(w: Path) -> None:
    left = list(_cache_dir(w).iterdir())
    assert [p.name for p in left] != ["f" * 32] and len(left) == 1 and left[0].is_dir()


def _no_entry_left(w: Path) -> None:
    assert list(_cache_dir(w).iterdir()) == []


# ---------------------------------------------------------------------------- fine-tuning


def _train_csv(w: Path) -> None:
    rows = "".join(f"the film was {'good' if i % 2 else 'bad'},{i % 2}\n" for i in range(16))
    (w / "train.csv").write_text("text,label\n" + rows)


def _users_dir(w: Path) -> None:
    _train_csv(w)
    (w / "prec").mkdir()
    (w / "prec" / "config.json").write_text('{"mine": true}\n')
    (w / "prec" / "notes.txt").write_text("the user's own notes\n")


def _finished_run(w: Path) -> None:
    _train_csv(w)
    (w / "run").mkdir()
    (w / "run" / "training_card.json").write_text('{"task": "seqcls"}\n')
    (w / "run" / "config.json").write_text('{"an earlier run": true}\n')
    mark_directory(w / "run", RUN_KIND)  # as the workbench leaves a finished run


def _empty_dir(w: Path) -> None:
    _train_csv(w)
    (w / "empty").mkdir()


def _trained(w: Path) -> None:
    assert (w / "empty" / "training_card.json").is_file()
    assert not (w / "empty" / "checkpoint").exists()


def _users_files_only(w: Path) -> None:
    assert sorted(p.name for p in (w / "prec").iterdir()) == ["config.json", "notes.txt"]


FOREIGN = "prec is not empty and is not a workbench run directory.*choose a new or empty"
USERS = ("prec/config.json", "prec/notes.txt")

CASES = [
    # 1. a cache entry that is a file: damage, removed and recomputed; prune removes it
    Case("cache-entry-is-a-file-recomputed",
         ("embed", "{w}/mine.txt", "--out", "{w}/m2.npz", *TINY), 0,
         r"cache entry .* is a file, not a directory; recomputing it",
         _entry_to_file, ("mine.txt",), _recomputed),
    Case("cache-prune-verify-removes-a-file-entry", ("cache", "prune", "--verify"), 0,
         r"removed 1 entries", _plus_file_entry, after=_only_good_entry_left),
    Case("cache-prune-all-removes-a-file-entry", ("cache", "prune", "--all"), 0,
         r"removed 2 entries", _plus_file_entry, after=_no_entry_left),
    Case("cache-list-names-a-file-entry", ("cache", "list"), 0,
         r"DAMAGED: is a file, not a directory", _plus_file_entry),
    # 2. --older-than that is not a number of days
    *(
        Case(f"cache-prune-older-than-{value}", ("cache", "prune", f"--older-than={value}"), 2,
             r"argument --older-than: must be a finite number >= 0, not",
             _plus_file_entry, after=lambda w: None if len(list(_cache_dir(w).iterdir())) == 2
             else pytest.fail("prune removed entries although refused"))
        for value in ("nan", "inf", "-inf", "-1")
    ),
    # 4. a fine-tuning output directory holding the user's files
    Case("finetune-into-users-dir", (*FINETUNE, "--out", "{w}/prec", *TINY), 2, FOREIGN,
         _users_dir, USERS, _users_files_only),
    Case("finetune-into-users-dir-overwrite",
         (*FINETUNE, "--out", "{w}/prec", "--overwrite", *TINY), 2, FOREIGN,
         _users_dir, USERS, _users_files_only),
    Case("finetune-into-users-dir-resume",
         (*FINETUNE, "--out", "{w}/prec", "--resume", *TINY), 2, FOREIGN,
         _users_dir, USERS, _users_files_only),
    Case("finetune-into-finished-run", (*FINETUNE, "--out", "{w}/run", *TINY), 2,
         r"run already holds a fine-tuned model", _finished_run,
         ("run/training_card.json", "run/config.json")),
    Case("finetune-into-empty-dir", (*FINETUNE, "--out", "{w}/empty", *TINY), 0,
         r"", _empty_dir, ("train.csv",), _trained),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_command_line_fault(case, tiny_model_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    _TINY_DIR[:] = [tiny_model_dir]
    case.prepare(tmp_path)
    capsys.readouterr()
    before = {name: (tmp_path / name).read_bytes() for name in case.unchanged}
    argv = [a.format(w=tmp_path, tiny=tiny_model_dir) for a in case.argv]
    code = _main(argv)
    out, err = capsys.readouterr()
    assert code == case.code, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    warned = [line.removeprefix(WARNING) for line in lines if line.startswith(WARNING)]
    if code == 2:
        lines = [line for line in lines if not line.startswith(WARNING)]
        assert len(lines) == 1 and lines[0].startswith("workbench: error: "), err
        assert re.search(case.expect, lines[0]), lines[0]
    else:
        assert re.search(case.expect, "\n".join([out, *warned])), (out, warned)
    assert {name: (tmp_path / name).read_bytes() for name in case.unchanged} == before
    case.after(tmp_path)


# ---------------------------------------------------------------------------- library


def _saved(w: Path, kind: str, x: np.ndarray, **params: object) -> Path:
    return make_correction(kind, **params).fit(x).save(w / kind)[1]


def _edit(meta: Path, **fields: object) -> None:
    info = json.loads(meta.read_text())
    info.update(fields)
    meta.write_text(json.dumps(info))


def _load(meta: Path) -> object:
    return load_correction(meta)


X2 = np.random.default_rng(0).normal(size=(30, 8))
X3 = np.random.default_rng(1).normal(size=(30, 3, 8))


def _edited_width(
    kind: str, x: np.ndarray, width: int, **params: object
) -> Callable[[Path], object]:
    def call(w: Path) -> object:
        meta = _saved(w, kind, x, **params)
        _edit(meta, n_features_in=width)
        return _load(meta)

    return call


def _edited_layers(w: Path) -> object:
    meta = _saved(w, "zscore", X3)
    _edit(meta, n_layers=5)
    return _load(meta)


def _wrong_width(kind: str, x: np.ndarray) -> Callable[[Path], object]:
    def call(w: Path) -> object:
        loaded = _load(_saved(w, kind, x))
        return loaded.transform(np.ones((*x.shape[:-1], x.shape[-1] + 1)))  # type: ignore[attr-defined]

    return call


@dataclass(frozen=True)
class LibraryCase:
    name: str
    call: Callable[[Path], object]
    error: type[WorkbenchError]
    expect: str


LIBRARY_CASES = [
    # 3. a hand-edited n_features_in, refused at load time naming the file and the field
    *(
        LibraryCase(f"correction-{kind}-n-features-in-edited", _edited_width(kind, x, 3),
                    DataError, rf"{kind}.npz: array 'mean'.*{kind}.json.*'n_features_in' is 3")
        for kind in ("zscore", "center", "abtt", "whiten")
        for x in (X2,)
    ),
    LibraryCase("correction-layered-n-features-in-edited", _edited_width("zscore", X3, 100),
                DataError, r"zscore.json.*'n_features_in' is 100"),
    LibraryCase("correction-n-features-in-zero", _edited_width("none", X2, 0),
                DataError, r"none.json: field 'n_features_in' must be 1 or more"),
    LibraryCase("correction-n-layers-edited", _edited_layers, DataError,
                r"zscore.json.*'n_layers' is 5"),
    # and a correctly loaded one refuses vectors of another width
    *(
        LibraryCase(f"correction-{kind}-wrong-width-{x.ndim}d", _wrong_width(kind, x),
                    MismatchError, r"fitted on 8-dimensional vectors.*got 9 dimensions")
        for kind in ("zscore", "whiten", "none")
        for x in (X2, X3)
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", LIBRARY_CASES, ids=[c.name for c in LIBRARY_CASES])
def test_library_fault(case, tmp_path):
    with pytest.raises(case.error, match=case.expect):
        case.call(tmp_path)


def test_a_saved_correction_still_loads_and_transforms(tmp_path):
    for kind in ("zscore", "center", "abtt", "whiten", "none"):
        for x in (X2, X3):
            meta = _saved(tmp_path, kind, x)
            loaded = _load(meta)
            assert loaded.transform(x).shape[:-1] == x.shape[:-1]  # type: ignore[attr-defined]


def test_cache_remove_reports_what_it_could_not_remove(tmp_path, monkeypatch):
    store = EmbeddingCache(tmp_path)
    store.dir.mkdir(parents=True)
    (store.dir / ("a" * 32)).write_text("x")
    assert store.remove("a" * 32) and not (store.dir / ("a" * 32)).exists()
    (store.dir / ("b" * 32)).write_text("x")
    monkeypatch.setattr(cache_module, "remove_path", lambda path: False)  # e.g. no permission
    assert store.prune(everything=True).entries == ()
