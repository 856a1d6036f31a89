"""Nothing of the user's is deleted or overwritten, table-driven over every command that writes
(the output rule, workbench.outputs).

Each case runs one command line in a folder of its own and checks: the exit code; on a refusal,
one line ``workbench: error: ...`` naming the problem; the user's files byte for byte; nothing
left behind that should not be (no empty --out folder, no lock, no manifest). The classes:

* a file the user made where a command writes one (``--out``, ``--json``, ``--csv``, ``--data``,
  a report or key file in an ``--out`` folder, a standardizer, exported splits): refused
  without ``--overwrite``, replaced with it; the workbench's own output is replaced on a rerun;
* a folder of the user's given where one output fills a folder (``wsd train --out``, a
  fine-tuning run, Ray shards): refused, with or without ``--overwrite``, and left alone;
* a folder of the workbench's that also holds a file of the user's: refused the same way.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from workbench.cli.main import main
from workbench.outputs import LEDGER

SENTENCES = "The bank is closed.\nHe sat by the river bank.\nThe bank raised its rates.\n"
XML = (
    '<?xml version="1.0" encoding="UTF-8"?>\n<corpus lang="en" source="t">\n<text id="d000">\n'
    + "".join(
        f'<sentence id="d000.s00{i}"><wf lemma="the" pos="DET">The</wf>'
        f'<instance id="d000.s00{i}.t000" lemma="bank" pos="NOUN">bank</instance>'
        f'<wf lemma="be" pos="VERB">is</wf><wf lemma="close" pos="VERB">closed</wf></sentence>\n'
        for i in range(4)
    )
    + "</text>\n</corpus>\n"
)
GOLD = "".join(
    f"d000.s00{i}.t000 {'bank%1:14:00::' if i % 2 else 'bank%1:17:01::'}\n" for i in range(4)
)
USERS = "the user's own file\n"


@dataclass(frozen=True)
class Case:
    """One command over a place that holds something.

    Attributes:
        name: the test id.
        argv: ``workbench`` arguments (``{w}``: the case's folder, ``{tiny}``: the tiny model).
        code: the exit code expected.
        expect: a regular expression the error line must match (refusals only).
        prepare: makes the case's files, given its folder.
        unchanged: files (relative to the folder) whose bytes must stay the same.
        absent: paths (relative to the folder) that must not exist afterwards.
        after: more checks, given the folder.
    """

    name: str
    argv: tuple[str, ...]
    code: int
    expect: str = ""
    prepare: Callable[[Path], None] = lambda w: None
    unchanged: tuple[str, ...] = field(default=())
    absent: tuple[str, ...] = field(default=())
    after: Callable[[Path], None] = lambda w: None


TINY = ("--model", "{tiny}", "--device", "cpu")
EMBED = ("embed", "{w}/ok.txt", *TINY, "--no-cache")
EVAL = ("wsd", "eval", "--data", "{w}/t.data.xml", "--train", "{w}/t.data.xml", "--system",
        "plain", "--no-baselines", *TINY)  # fmt: skip
LAYERS = ("wsd", "layers", "--train", "{w}/t.data.xml", "--test", "{w}/t.data.xml", "--specs",
          "-1", *TINY)  # fmt: skip
TRAIN = ("wsd", "train", "--corpus", "{w}/t.data.xml", "--system", "plain", *TINY)
GEOMETRY = ("geometry", "--corpus", "{w}/ok.txt", "--sample", "0", "--n-pairs", "20",
            "--min-count", "2", "--corrections", "none", *TINY)  # fmt: skip
FINETUNE = ("finetune", "seqcls", "--train", "{w}/train.csv", "--epochs", "1", "--no-progress",
            "--max-length", "32", *TINY)  # fmt: skip
NOT_OURS = r"exists and is a file the workbench did not write.*--overwrite"


def _inputs(w: Path) -> None:
    (w / "ok.txt").write_text(SENTENCES)
    (w / "t.data.xml").write_text(XML)
    (w / "t.gold.key.txt").write_text(GOLD)
    rows = "".join(f"the film was {'good' if i % 2 else 'bad'},{i % 2}\n" for i in range(16))
    (w / "train.csv").write_text("text,label\n" + rows)


def _users(*names: str) -> Callable[[Path], None]:
    """The inputs, and a file of the user's at each of ``names`` (folders made as needed)."""

    def prepare(w: Path) -> None:
        _inputs(w)
        for name in names:
            (w / name).parent.mkdir(parents=True, exist_ok=True)
            (w / name).write_text(USERS)

    return prepare


def _precious(w: Path) -> None:
    """A folder of the user's holding a thesis, and one holding a HuggingFace model with a
    ``checkpoint/`` folder (what a trainer of another tool leaves)."""
    _inputs(w)
    (w / "precious").mkdir()
    (w / "precious" / "thesis.txt").write_text(USERS)
    (w / "hf" / "checkpoint").mkdir(parents=True)
    (w / "hf" / "config.json").write_text('{"the user": "model"}\n')
    (w / "hf" / "checkpoint" / "trainer_state.json").write_text("{}\n")


def _looks_like_an_index(w: Path) -> None:
    """A folder of the user's whose files are named as an index's, with a ``meta.json`` of the
    index format (an index of before the ledgers, or a lookalike): no ledger says it is ours."""
    _inputs(w)
    (w / "lookalike").mkdir()
    (w / "lookalike" / "meta.json").write_text('{"format": 1, "config": {"the user": 1}}\n')
    (w / "lookalike" / "senses.npz").write_text(USERS)
    (w / "lookalike" / "correction.json").write_text(USERS)


def _ours_then(*names: str, run: tuple[str, ...]) -> Callable[[Path], None]:
    """The inputs, the output of ``run`` (the workbench's), then a file of the user's at each of
    ``names``."""

    def prepare(w: Path) -> None:
        _inputs(w)
        assert _run(w, run) == 0
        for name in names:
            (w / name).write_text(USERS)

    return prepare


def _is_users(*names: str) -> Callable[[Path], None]:
    def check(w: Path) -> None:
        for name in names:
            assert (w / name).read_text() == USERS

    return check


def _replaced(*names: str) -> Callable[[Path], None]:
    def check(w: Path) -> None:
        for name in names:
            assert (w / name).is_file() and (w / name).read_text(errors="replace") != USERS

    return check


_TINY: list[Path] = []


def _run(w: Path, argv: tuple[str, ...]) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return main([a.format(w=w, tiny=_TINY[0]) for a in argv])


CASES = [
    # --- a file of the user's where a command writes one
    Case("embed-out-npz", (*EMBED, "--out", "{w}/mydata.npz"), 2, "mydata.npz " + NOT_OURS,
         _users("mydata.npz"), ("mydata.npz",), ("mydata.tsv", LEDGER)),
    Case("embed-out-npz-overwrite", (*EMBED, "--out", "{w}/mydata.npz", "--overwrite"), 0,
         prepare=_users("mydata.npz"), after=_replaced("mydata.npz", "mydata.tsv")),
    Case("embed-sentence-table", (*EMBED, "--out", "{w}/v.npz"), 2, "v.sentences.tsv " + NOT_OURS,
         _users("v.sentences.tsv"), ("v.sentences.tsv",), ("v.npz", "v.tsv")),
    Case("embed-rerun-replaces-its-own", (*EMBED, "--out", "{w}/v.npz"), 0,
         prepare=_ours_then(run=(*EMBED, "--out", "{w}/v.npz"))),
    Case("embed-own-output-edited-by-the-user", (*EMBED, "--out", "{w}/v.npz"), 2,
         "v.tsv " + NOT_OURS, _ours_then("v.tsv", run=(*EMBED, "--out", "{w}/v.npz")),
         ("v.tsv", "v.npz")),
    Case("wsd-eval-json", (*EVAL, "--json", "{w}/report.json"), 2, "report.json " + NOT_OURS,
         _users("report.json"), ("report.json",)),
    Case("wsd-eval-json-is-an-input", (*EVAL, "--json", "{w}/t.gold.key.txt", "--overwrite"), 2,
         r"t.gold.key.txt is the input", _inputs, ("t.gold.key.txt",)),
    Case("wsd-eval-key-file-in-out", (*EVAL, "--out", "{w}/rep"), 2,
         r"t.key.txt " + NOT_OURS, _users("rep/t.key.txt"), ("rep/t.key.txt",),
         ("rep/wsd-t.html",)),
    Case("wsd-eval-report-in-out", (*EVAL, "--out", "{w}/rep"), 2, r"wsd-t.md " + NOT_OURS,
         _users("rep/wsd-t.md"), ("rep/wsd-t.md",), ("rep/t.key.txt",)),
    Case("wsd-eval-json-overwrite", (*EVAL, "--json", "{w}/report.json", "--overwrite"), 0,
         prepare=_users("report.json"), after=_replaced("report.json")),
    Case("wsd-eval-rerun-replaces-its-own", (*EVAL, "--json", "{w}/report.json"), 0,
         prepare=_ours_then(run=(*EVAL, "--json", "{w}/report.json"))),
    Case("wsd-layers-json", (*LAYERS, "--json", "{w}/sweep.json"), 2, "sweep.json " + NOT_OURS,
         _users("sweep.json"), ("sweep.json",)),
    Case("geometry-report", (*GEOMETRY, "--out", "{w}/geo"), 2, r"geometry.html " + NOT_OURS,
         _users("geo/geometry.html"), ("geo/geometry.html",), ("geo/geometry.json",)),
    Case("geometry-standardizer", (*GEOMETRY, "--out", "{w}/geo", "--save-standardizer",
         "{w}/z"), 2, r"z.json " + NOT_OURS, _users("z.json"), ("z.json",), ("geo", "z.npz")),
    Case("geometry-out-is-a-file", (*GEOMETRY, "--out", "{w}/ok.txt"), 2,
         r"--out .*ok.txt is a file", _inputs, ("ok.txt",)),
    Case("senses-separation-csv", ("senses", "separation", "bank", "--source", "{w}/ok.txt",
         "--csv", "{w}/sep.csv", *TINY), 2, r"sep.csv " + NOT_OURS, _users("sep.csv"),
         ("sep.csv",)),
    Case("senses-plot-out", ("senses", "plot", "bank", "--source", "{w}/ok.txt", "--out",
         "{w}/bank.html", *TINY), 2, r"bank.html " + NOT_OURS, _users("bank.html"),
         ("bank.html",)),
    Case("senses-plot-data", ("senses", "plot", "bank", "--source", "{w}/ok.txt", "--out",
         "{w}/bank.html", "--data", "{w}/bank.csv", *TINY), 2, r"bank.csv " + NOT_OURS,
         _users("bank.csv"), ("bank.csv",), ("bank.html",)),
    Case("senses-plot-out-is-the-source", ("senses", "plot", "bank", "--source", "{w}/ok.json",
         "--out", "{w}/ok.json", "--overwrite", *TINY), 2, r"ok.json is the input",
         _users("ok.json"), ("ok.json",)),
    Case("finetune-builtin-splits", ("finetune", "builtin", "wic", "--out", "{w}/splits"), 2,
         r"dev.jsonl " + NOT_OURS, _users("splits/dev.jsonl"), ("splits/dev.jsonl",),
         ("splits/train.jsonl",)),
    Case("finetune-compare-report", ("finetune", "compare", "default", "{w}/ok.txt", "--out",
         "{w}/cmp"), 2, r"compare.html " + NOT_OURS, _users("cmp/compare.html"),
         ("cmp/compare.html",)),
    # --- one file named for two outputs of one command: the second would replace the first
    Case("geometry-standardizer-is-the-report", (*GEOMETRY, "--out", "{w}/geo", "--stem", "z",
         "--save-standardizer", "{w}/geo/z"), 2, r"z.json is named for two outputs", _inputs,
         absent=("geo",)),
    Case("wsd-eval-json-is-a-report", (*EVAL, "--out", "{w}/rep", "--json",
         "{w}/rep/wsd-t.json"), 2, r"wsd-t.json is named for two outputs", _inputs,
         absent=("rep",)),
    Case("senses-plot-data-is-the-figure", ("senses", "plot", "bank", "--source", "{w}/ok.txt",
         "--out", "{w}/b.json", "--data", "{w}/./b.json", *TINY), 2,
         r"b.json is named for two outputs", _inputs, absent=("b.json",)),
    # --- a folder of the user's where one output fills a folder
    Case("wsd-train-into-users-folder", (*TRAIN, "--out", "{w}/precious"), 2,
         r"precious is not empty and is not a workbench sense index directory.*thesis.txt",
         _precious, ("precious/thesis.txt",)),
    Case("wsd-train-into-a-folder-that-only-looks-like-an-index", (*TRAIN, "--out",
         "{w}/lookalike"), 2,
         r"lookalike is not empty and is not a workbench sense index directory.*"
         r"no \.workbench-outputs\.json in it", _looks_like_an_index,
         ("lookalike/meta.json", "lookalike/senses.npz", "lookalike/correction.json")),
    Case("wsd-train-into-the-inputs-folder", (*TRAIN, "--out", "{w}"), 2,
         r"is not empty and is not a workbench sense index directory", _inputs,
         ("t.data.xml", "t.gold.key.txt", "ok.txt"), (LEDGER,)),
    Case("wsd-train-replaces-its-own-index", (*TRAIN, "--out", "{w}/index"), 0,
         prepare=_ours_then(run=(*TRAIN, "--out", "{w}/index")),
         after=lambda w: None if (w / "index" / "meta.json").is_file() else pytest.fail()),
    Case("wsd-train-own-index-holding-a-users-file", (*TRAIN, "--out", "{w}/index"), 2,
         r"also holds notes.txt, which the workbench did not write",
         _ours_then("index/notes.txt", run=(*TRAIN, "--out", "{w}/index")),
         ("index/notes.txt", "index/meta.json")),
    *(
        Case(f"finetune-into-users-folder{flag}", (*FINETUNE, "--out", "{w}/" + folder,
             *([flag] if flag else [])), 2,
             rf"{folder} is not empty and is not a workbench run directory", _precious,
             (f"{folder}/{kept}",))
        for folder, kept in (("hf", "config.json"), ("precious", "thesis.txt"))
        for flag in ("", "--overwrite", "--resume")
    ),
    Case("finetune-users-checkpoint-folder-kept", (*FINETUNE, "--out", "{w}/hf",
         "--overwrite"), 2, r"not a workbench run directory", _precious,
         ("hf/checkpoint/trainer_state.json",)),
    Case("embed-ray-into-users-folder", ("embed", "{w}/ok.txt", "--engine", "ray", "--out",
         "{w}/precious", *TINY), 2, r"precious is not empty and holds no manifest.json",
         _precious, ("precious/thesis.txt",)),
    *(
        [Case("wsd-train-where-nothing-can-be-written", (*TRAIN, "--out", "/proc/index"), 2,
              r"cannot write the sense index /proc/index: ", _inputs)]
        if Path("/proc/self").is_dir()
        else []
    ),
    # --- a refused command leaves no folder behind
    Case("embed-refused-makes-no-folder", (*EMBED, "--out", "{w}/new/deeper/v.npz",
         "--layers", "9"), 2, r"[Ll]ayer", _inputs, absent=("new",)),
    Case("wsd-eval-refused-makes-no-folder", ("wsd", "eval", "--data", "{w}/nope.data.xml",
         "--out", "{w}/new/rep", "--json", "{w}/new2/r.json", *TINY), 2, r"nope.data.xml",
         _inputs, absent=("new", "new2")),
    Case("finetune-refused-makes-no-folder", (*FINETUNE, "--dev", "{w}/missing.csv", "--out",
         "{w}/new/run"), 2, r"missing.csv does not exist", _inputs, absent=("new",)),
    Case("embed-ray-unreachable-makes-no-folder", ("embed", "{w}/ok.txt", "--engine", "ray",
         "--address", "127.0.0.1:1", "--connect-timeout", "5", "--out", "{w}/new/shards",
         *TINY), 2, r"cannot reach the Ray cluster at 127.0.0.1:1 within 5 s", _inputs,
         absent=("new",)),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_nothing_of_the_users_is_replaced(case, tiny_model_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    _TINY[:] = [tiny_model_dir]
    w = tmp_path / "w"
    w.mkdir()
    case.prepare(w)
    capsys.readouterr()
    before = {name: (w / name).read_bytes() for name in case.unchanged}
    code = _run(w, case.argv)
    err = capsys.readouterr().err
    assert code == case.code, err
    assert "Traceback" not in err
    if case.code == 2:
        lines = [line for line in err.splitlines() if line.startswith("workbench: error: ")]
        assert len(lines) == 1, err
        assert re.search(case.expect, lines[0]), lines[0]
    assert {name: (w / name).read_bytes() for name in case.unchanged} == before
    for name in case.absent:
        assert not (w / name).exists(), f"{name} was left behind"
    case.after(w)
