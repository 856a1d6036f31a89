"""Bad inputs and faults, table-driven, over the command line and the library.

Every command-line case must end with exit code 2 and one line ``workbench: error: ...`` that
names the problem (no traceback, nothing before it), and leave the user's files as they were;
every library case must raise the project's own exception (or, for a damaged cache entry,
warn and recompute the right result). The classes, each with several members: unwritable or
forbidden outputs, broken model files, bad option values, damaged checkpoints and saved
corrections, damaged cache entries, missing, malformed or oversized input files, key files
that cannot be meant, and inputs of the wrong type.
"""

from __future__ import annotations

import json
import lzma
import pickle
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from tests.robustness.cli_errors import assert_one_line_error
from workbench.cli.main import main
from workbench.corpora.readers import read_xml
from workbench.encoding.cache import EmbeddingCache, encode_cached
from workbench.encoding.device import choose_device
from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.encoder import Encoder
from workbench.encoding.wordtable import read_table
from workbench.errors import WorkbenchError
from workbench.finetune.training import checkpoint as ckpt
from workbench.finetune.training.checkpoint import load_checkpoint
from workbench.finetune.training.store import RUN_KIND
from workbench.geometry.corrections import Standardizer, load_correction
from workbench.lexicon.wordnet import load_wordnet
from workbench.outputs import mark_directory
from workbench.wsd.sources import definition_vectors
from workbench.wsd.store import load_index

HAS_PROC = Path("/proc/self").is_dir()


@dataclass(frozen=True)
class Case:
    """One bad input.

    Attributes:
        name: the test id.
        argv: command-line arguments (``{w}`` is the prepared world's directory, ``{tiny}`` the
            tiny model), or None for a library case.
        call: the library call, given the world's directory (None for a command-line case).
        expect: a regular expression the error message must match.
        unchanged: files (relative to the world) whose bytes must be the same afterwards.
    """

    name: str
    expect: str
    argv: tuple[str, ...] | None = None
    call: Callable[[Path], object] | None = None
    unchanged: tuple[str, ...] = field(default=())


# ---------------------------------------------------------------------------- the world


def _truncate(path: Path, keep: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


class _Planted:
    """Unpickling this creates the file ``code-ran``: proof that code in a file was run."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


@pytest.fixture(scope="module")
def world(tmp_path_factory, tiny_model_dir) -> Path:
    """Every file the cases need, made once."""
    w = tmp_path_factory.mktemp("world")
    (w / "ok.txt").write_text("The bank is closed.\nHe sat by the river.\n")
    (w / "sent.tsv").write_text("The bank\tis closed.\n")
    (w / "x.sentences.tsv").write_text("a sentence\n")
    (w / "empty.txt").write_text("\n   \n")
    (w / "binary.txt").write_bytes(b"\xff\xfe\x00\x81 binary")
    (w / "adir.npz").mkdir()
    (w / "indir").mkdir()
    (w / "notes.tsv").write_text("my own notes, not a workbench table\n")
    (w / "alias.tsv").symlink_to(w / "ok.txt")
    (w / "precious").mkdir()
    (w / "precious" / "notes.txt").write_text("the user's own files\n")
    sentence = '<sentence id="s"><wf lemma="a" pos="X">a</wf></sentence>'
    (w / "bad.data.xml").write_text(f"<corpus><text>{sentence}<sentence></text></corpus>")
    huge = f'<corpus><text><sentence id="s"><wf lemma="{"a" * (2 << 20)}" pos="X">a</wf>'
    (w / "huge.data.xml").write_text(huge + "</sentence></text></corpus>")
    (w / "nogold.data.xml").write_text(f'<corpus><text id="d">{sentence}</text></corpus>')
    shutil.copy(w / "nogold.data.xml", w / "withgold.data.xml")
    (w / "withgold.gold.key.txt").write_text("d.s.t0 bank%1:14:00::\n")
    instance = '<instance id="d.s.t0" lemma="bank" pos="NOUN">bank</instance>'
    (w / "inst.data.xml").write_text(
        f'<corpus><text id="d"><sentence id="d.s">{instance}</sentence></text></corpus>'
    )
    (w / "keyless-ids.txt").write_text("d.s.t0\n")
    with lzma.open(w / "cut.data.xml.xz", "wt") as fh:
        fh.write(f"<corpus><text>{sentence * 200}</text></corpus>")
    _truncate(w / "cut.data.xml.xz")
    # key files
    (w / "gold.txt").write_text("d.s.t0 bank%1:14:00::\nd.s.t1 bank%1:17:01::\n")
    (w / "empty-gold.txt").write_text("")
    (w / "keyless-gold.txt").write_text("d.s.t0\nd.s.t1 bank%1:17:01::\n")
    (w / "system.txt").write_text("d.s.t0 bank%1:14:00::\n")
    (w / "unknown-ids.txt").write_text("x.y.z0 bank%1:14:00::\nx.y.z1 bank%1:14:00::\n")
    (w / "empty-system.txt").write_text("\n")
    (w / "binary-system.txt").write_bytes(b"\xff\xfe\x00\x81")
    # broken models
    for name in ("trunc-weights", "garbage-config", "no-weights", "trunc-tokenizer"):
        shutil.copytree(tiny_model_dir, w / name)
    _truncate(w / "trunc-weights" / "model.safetensors")
    (w / "garbage-config" / "config.json").write_text("{garbage")
    (w / "no-weights" / "model.safetensors").unlink()
    _truncate(w / "trunc-tokenizer" / "tokenizer.json", 0.3)
    (w / "empty-model").mkdir()
    # fine-tuning data and checkpoints
    rows = "".join(f"the film was {'good' if i % 2 else 'bad'},{i % 2}\n" for i in range(16))
    (w / "train.csv").write_text("text,label\n" + rows)
    for name in ("ckpt-trunc", "ckpt-pickle", "ckpt-none", "ckpt-garbage"):
        (w / name / "checkpoint").mkdir(parents=True)
        mark_directory(w / name, RUN_KIND)  # a run directory, as the workbench marks one
    model, optimizer, scheduler = _tiny_training()
    ckpt.save_checkpoint(
        w / "ckpt-trunc" / "checkpoint", model, optimizer, scheduler, ckpt.RunState(), {}
    )
    _truncate(w / "ckpt-trunc" / "checkpoint" / ckpt.LAST)
    (w / "ckpt-garbage" / "checkpoint" / ckpt.LAST).write_bytes(b"\x00" * 100)
    marker = w / "code-ran"
    with (w / "ckpt-pickle" / "checkpoint" / "last.pt").open("wb") as fh:
        pickle.dump({"model": _Planted(str(marker))}, fh)
    # a saved standardizer, damaged in several ways
    x = np.random.default_rng(0).normal(size=(20, 4))
    for name in ("z-trunc", "z-list", "z-params", "z-binary"):
        Standardizer().fit(x).save(w / name)
    _truncate(w / "z-trunc.json")
    (w / "z-list.json").write_text("[]")
    info = json.loads((w / "z-params.json").read_text())
    info["params"] = {"bogus": 1}
    (w / "z-params.json").write_text(json.dumps(info))
    (w / "z-binary.json").write_bytes(b"\xff\xfe\x00")
    # saved sense indexes: a truncated senses.npz, a meta.json that is a list or lacks a field
    for name in ("index-trunc", "index-list", "index-nofield"):
        (w / name).mkdir()
        np.savez(w / name / "senses.npz", keys=np.array(["a%1:00:00::"]), vectors=np.zeros((1, 2)),
                 origin=np.array(["centroid"]), counts=np.array([1]))  # fmt: skip
        (w / name / "meta.json").write_text('{"format": 1, "config": {}}')
    _truncate(w / "index-trunc" / "senses.npz")
    (w / "index-list" / "meta.json").write_text("[]")
    # embeddings files: truncated, and a table that belongs to other vectors
    emb = LayerwiseEmbeddings(
        vectors=np.zeros((2, 1, 3), np.float32),
        layers=(0,),
        words=["a", "b"],
        sentence_index=np.array([0, 0]),
        word_index=np.array([0, 1]),
        spans=np.array([[0, 1], [1, 2]]),
        n_sentences=1,
        n_hidden=1,
        model_name="toy",
        fingerprint="0" * 16,
        pooling="mean",
    )
    emb.save(w / "cut.npz")
    _truncate(w / "cut.npz")
    emb.save(w / "mixed.npz")
    emb.save(w / "other.npz", sentence_ids=["other id"])
    shutil.copy(w / "other.tsv", w / "mixed.tsv")
    (w / "mixed.tsv").write_text((w / "mixed.tsv").read_text().replace("\ta\t", "\tz\t"))
    return w


def _tiny_training():
    import torch

    model = torch.nn.Linear(3, 2)
    optimizer = torch.optim.AdamW(model.parameters())
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    return model, optimizer, scheduler


# ---------------------------------------------------------------------------- the cases

TINY = ("--model", "{tiny}", "--device", "cpu")
EMBED = ("embed", "{w}/ok.txt")

CLI_CASES = [
    # outputs that cannot or must not be written
    *(
        [Case("embed-out-proc", "cannot write /proc/x.npz", (*EMBED, "--out", "/proc/x.npz"))]
        if HAS_PROC
        else []
    ),
    Case("embed-out-under-file", "ok.txt is a file, not a directory",
         (*EMBED, "--out", "{w}/ok.txt/x.npz"), unchanged=("ok.txt",)),
    Case("embed-out-is-dir", "adir.npz: it is a directory", (*EMBED, "--out", "{w}/adir.npz")),
    Case("embed-over-input", "would write .*sent.tsv, which is the input",
         ("embed", "{w}/sent.tsv", "--out", "{w}/sent.npz"), unchanged=("sent.tsv",)),
    Case("embed-over-input-2", "would write .*x.sentences.tsv, which is the input",
         ("embed", "{w}/x.sentences.tsv", "--out", "{w}/x.npz"),
         unchanged=("x.sentences.tsv",)),
    Case("embed-over-input-link", "alias.tsv, which is the input",
         (*EMBED, "--out", "{w}/alias.npz"), unchanged=("ok.txt",)),
    Case("embed-over-users-file", "notes.tsv exists and is a file the workbench did not write",
         (*EMBED, "--out", "{w}/notes.npz"), unchanged=("notes.tsv",)),
    Case("model-fetch-into-users-dir", "precious exists and holds no model: it is never replaced",
         ("model", "fetch", "--dest", "{w}/precious"), unchanged=("precious/notes.txt",)),
    *(
        [
            Case("geometry-out-proc", "cannot write /proc/geo",
                 ("geometry", "--corpus", "{w}/ok.txt", "--out", "/proc/geo", *TINY)),
            Case("finetune-out-proc", "cannot write /proc/run/training_card.json",
                 ("finetune", "seqcls", "--train", "{w}/train.csv", "--out", "/proc/run",
                  "--epochs", "1", "--no-progress", *TINY)),
            Case("geometry-standardizer-proc", "cannot write /proc/z.npz",
                 ("geometry", "--corpus", "{w}/ok.txt", "--out", "{w}/geo",
                  "--save-standardizer", "/proc/z", *TINY)),
        ]
        if HAS_PROC
        else []
    ),
    # model files and devices
    Case("model-truncated-weights", "trunc-weights.*(deserializ|incomplete|header)",
         ("info", "--model", "{w}/trunc-weights", "--device", "cpu")),
    Case("model-garbage-config", "garbage-config", ("info", "--model", "{w}/garbage-config")),
    Case("model-no-weights", "no-weights", ("info", "--model", "{w}/no-weights")),
    Case("model-truncated-tokenizer", "trunc-tokenizer",
         ("info", "--model", "{w}/trunc-tokenizer")),
    Case("model-empty-dir", "empty-model",
         ("info", "--model", "{w}/empty-model")),
    Case("model-empty-name", "model name is empty", ("info", "--model", " ")),
    Case("model-bad-path", "looks like a local path", ("info", "--model", "./no/such/dir")),
    Case("device-bogus", "Unknown device 'bogus'", ("info", "--device", "bogus")),
    Case("device-meta", "Unknown device 'meta'", ("info", "--device", "meta")),
    Case("device-cuda-n", "cuda:7", ("info", "--device", "cuda:7")),
    Case("device-garbage-index", "Unknown device 'cpu:x'", ("info", "--device", "cpu:x")),
    # option values
    Case("layers-letter", "--layers must be comma-separated integers", (*EMBED, "--out",
         "{w}/o.npz", "--layers", "a")),
    Case("layers-comma", "--layers ',' names no layer", (*EMBED, "--out", "{w}/o.npz",
         "--layers", ",")),
    Case("layers-mixed", "--layers must be", (*EMBED, "--out", "{w}/o.npz", "--layers", "1,,x")),
    Case("layers-out-of-range", "99", (*EMBED, "--out", "{w}/o.npz", "--layers", "99", *TINY)),
    Case("geometry-layers-letter", "--layers must be",
         ("geometry", "--corpus", "{w}/ok.txt", "--out", "{w}/geo", "--layers", "x", *TINY)),
    Case("batch-tokens-zero", "--batch-tokens: must be an integer >= 1",
         (*EMBED, "--out", "{w}/o.npz", "--batch-tokens", "0", *TINY)),
    Case("geometry-fit-fraction", r"--fit-fraction: must be a finite number in \(0, 1\)",
         ("geometry", "--corpus", "{w}/ok.txt", "--fit-fraction", "2", *TINY)),
    Case("geometry-corrections", "unknown corrections \\['bogus'\\]",
         ("geometry", "--corpus", "{w}/ok.txt", "--corrections", "bogus", *TINY)),
    Case("geometry-pairs", "--n-pairs: must be an integer >= 1",
         ("geometry", "--corpus", "{w}/ok.txt", "--n-pairs", "0", *TINY)),
    Case("geometry-missing-corpus", "unknown corpus",
         ("geometry", "--corpus", "{w}/nope.txt", *TINY)),
    Case("cache-bad-size", "not a size", ("cache", "prune", "--max-size", "12Q")),
    Case("cache-negative-age", "--older-than: must be a finite number >= 0",
         ("cache", "prune", "--older-than", "-1")),
    # checkpoints
    Case("resume-truncated", "last.safetensors is damaged",
         ("finetune", "seqcls", "--train", "{w}/train.csv", "--out", "{w}/ckpt-trunc",
          "--resume", "--epochs", "1", "--no-progress", *TINY)),
    Case("resume-garbage", "last.safetensors is damaged",
         ("finetune", "seqcls", "--train", "{w}/train.csv", "--out", "{w}/ckpt-garbage",
          "--resume", "--epochs", "1", "--no-progress", *TINY)),
    Case("resume-pickle", "pickled checkpoint of an earlier workbench version",
         ("finetune", "seqcls", "--train", "{w}/train.csv", "--out", "{w}/ckpt-pickle",
          "--resume", "--epochs", "1", "--no-progress", *TINY)),
    Case("resume-nothing", "Nothing to resume",
         ("finetune", "seqcls", "--train", "{w}/train.csv", "--out", "{w}/ckpt-none",
          "--resume", "--epochs", "1", "--no-progress", *TINY)),
    # input files
    Case("embed-missing", "does not exist", ("embed", "{w}/missing.txt", "--out", "{w}/o.npz")),
    Case("embed-directory", "is a directory", ("embed", "{w}/indir", "--out", "{w}/o.npz")),
    Case("embed-binary", "save it as UTF-8", ("embed", "{w}/binary.txt", "--out", "{w}/o.npz")),
    Case("embed-no-words", "holds no words", ("embed", "{w}/empty.txt", "--out", "{w}/o.npz")),
    Case("embed-malformed-xml", r"bad.data.xml:1: malformed XML",
         ("embed", "{w}/bad.data.xml", "--out", "{w}/o.npz")),
    Case("embed-huge-attribute", r"huge.data.xml:1: more than 64 KiB",
         ("embed", "{w}/huge.data.xml", "--out", "{w}/o.npz")),
    Case("embed-truncated-xz", "cut.data.xml.xz", ("embed", "{w}/cut.data.xml.xz", "--out",
         "{w}/o.npz")),
    # every input checked before any work (wsd eval used to encode SemCor first)
    Case("eval-missing-data", "nope.data.xml: file not found",
         ("wsd", "eval", "--data", "{w}/nope.data.xml", *TINY)),
    Case("eval-data-without-gold", "nogold.data.xml: no gold key file",
         ("wsd", "eval", "--data", "{w}/nogold.data.xml", *TINY)),
    Case("eval-missing-gold", "nope.key.txt: gold key file not found",
         ("wsd", "eval", "--data", "{w}/nogold.data.xml", "--gold", "{w}/nope.key.txt", *TINY)),
    # the test set's content is read before the model loads or an index is built
    Case("eval-malformed-data", r"bad.data.xml:1: malformed XML",
         ("wsd", "eval", "--data", "{w}/bad.data.xml", "--gold", "{w}/gold.txt", *TINY)),
    Case("eval-huge-attribute", r"huge.data.xml:1: more than 64 KiB",
         ("wsd", "eval", "--data", "{w}/huge.data.xml", "--gold", "{w}/gold.txt", *TINY)),
    Case("eval-gold-of-another-dataset", "none of the 2 ids of the gold file .*unknown-ids.txt",
         ("wsd", "eval", "--data", "{w}/withgold.data.xml", "--gold", "{w}/unknown-ids.txt",
          *TINY)),
    Case("eval-keyless-gold", "inst: no instance has a gold sense key",
         ("wsd", "eval", "--data", "{w}/inst.data.xml", "--gold", "{w}/keyless-ids.txt", *TINY)),
    Case("eval-unknown-dataset", "unknown dataset 'senseval9'",
         ("wsd", "eval", "senseval9", *TINY)),
    Case("eval-missing-index", "no saved index there",
         ("wsd", "eval", "--data", "{w}/withgold.data.xml", "--index", "{w}/nowhere", *TINY)),
    Case("train-missing-corpus", "nope.data.xml: file not found",
         ("wsd", "train", "--corpus", "{w}/nope.data.xml", *TINY)),
    Case("layers-missing-test", "nope.data.xml: file not found",
         ("wsd", "layers", "--train", "{w}/withgold.data.xml", "--test", "{w}/nope.data.xml")),
    *(
        [Case("eval-json-proc", "cannot write /proc/r.json",
              ("wsd", "eval", "--data", "{w}/nogold.data.xml", "--gold", "{w}/gold.txt",
               "--json", "/proc/r.json", *TINY))]
        if HAS_PROC
        else []
    ),
    Case("disambiguate-pos-without-senses", "'bank' has no ADV senses in WordNet, only NOUN, VERB",
         ("wsd", "disambiguate", "He sat on the bank", "--word", "bank", "--pos", "ADV", *TINY)),
    Case("disambiguate-missing-word", "'river' is not a word of the sentence",
         ("wsd", "disambiguate", "He sat on the bank", "--word", "river", *TINY)),
    # key files
    Case("score-empty-gold", "empty-gold.txt: no gold keys",
         ("wsd", "score", "{w}/empty-gold.txt", "{w}/system.txt")),
    Case("score-unknown-ids", "none of the 2 ids in .*unknown-ids.txt",
         ("wsd", "score", "{w}/gold.txt", "{w}/unknown-ids.txt")),
    Case("score-keyless-gold-line", "keyless-gold.txt:1: instance 'd.s.t0' has no sense key",
         ("wsd", "score", "{w}/keyless-gold.txt", "{w}/system.txt")),
    Case("score-empty-system", "empty-system.txt: no answers",
         ("wsd", "score", "{w}/gold.txt", "{w}/empty-system.txt")),
    Case("score-missing", "nope.txt does not exist", ("wsd", "score", "{w}/nope.txt",
         "{w}/system.txt")),
    Case("score-binary", "binary-system.txt: no answers",
         ("wsd", "score", "{w}/gold.txt", "{w}/binary-system.txt")),
]  # fmt: skip


def _encode(w: Path, sentences: object) -> object:
    return Encoder(str(w / "tiny"), device="cpu").encode(sentences)  # type: ignore[arg-type]


def _load_z(name: str) -> Callable[[Path], object]:
    def call(w: Path) -> object:
        return load_correction(w / name)

    return call


def _embeddings(name: str) -> Callable[[Path], object]:
    def call(w: Path) -> object:
        return LayerwiseEmbeddings.load(w / name)

    return call


def _table(w: Path) -> object:
    return read_table(w / "mixed.tsv")


def _checkpoint(name: str) -> Callable[[Path], object]:
    def call(w: Path) -> object:
        return load_checkpoint(w / name / "checkpoint", {})

    return call


def _xml(name: str) -> Callable[[Path], object]:
    def call(w: Path) -> object:
        return read_xml(w / name)

    return call


def _device(name: str) -> Callable[[Path], object]:
    def call(w: Path) -> object:
        return choose_device(name)

    return call


def _index(name: str) -> Callable[[Path], object]:
    def call(w: Path) -> object:
        return load_index(w / name)

    return call


LIBRARY_CASES = [
    Case("encode-dict", "got dict", call=lambda w: _encode(w, {"a": "b"})),
    Case("encode-number", "got int 5", call=lambda w: _encode(w, 5)),
    Case("encode-float-array", "numpy array of float64",
         call=lambda w: _encode(w, np.array([1.0, 2.0]))),
    Case("encode-set", "got set", call=lambda w: _encode(w, {"a b"})),
    Case("encode-bytes-sentence", "Sentence 0 is bytes", call=lambda w: _encode(w, [b"a b"])),
    Case("encode-empty-generator", "input is empty", call=lambda w: _encode(w, iter([]))),
    Case("correction-truncated-json", "z-trunc.json", call=_load_z("z-trunc")),
    Case("correction-json-list", "z-list.json", call=_load_z("z-list")),
    Case("correction-unknown-param", "z-params.json", call=_load_z("z-params")),
    Case("correction-binary-json", "z-binary.json", call=_load_z("z-binary")),
    Case("embeddings-truncated", "cut.npz", call=_embeddings("cut.npz")),
    Case("embeddings-not-npz", "ok.txt", call=_embeddings("ok.txt")),
    Case("table-of-other-vectors", "does not match the vectors in mixed.npz", call=_table),
    Case("checkpoint-truncated", "damaged", call=_checkpoint("ckpt-trunc")),
    Case("checkpoint-pickle", "pickled checkpoint", call=_checkpoint("ckpt-pickle")),
    Case("xml-huge-attribute", "more than 64 KiB", call=_xml("huge.data.xml")),
    Case("xml-truncated-xz", "cut.data.xml.xz", call=_xml("cut.data.xml.xz")),
    Case("device-bogus-library", "Unknown device", call=_device("bogus")),
    Case("index-truncated-npz", "index-trunc is not a workbench sense index",
         call=_index("index-trunc")),
    Case("index-meta-list", "index-list is not a workbench sense index", call=_index("index-list")),
    Case("index-meta-no-field", "index-nofield is not a workbench sense index",
         call=_index("index-nofield")),
    Case("device-empty-index", "Unknown device", call=_device("cuda:")),
]  # fmt: skip


@pytest.fixture(scope="module")
def tiny_link(world, tiny_model_dir) -> Path:
    link = world / "tiny"
    if not link.exists():
        link.symlink_to(tiny_model_dir)
    return link


def _snapshot(world: Path, names: tuple[str, ...]) -> dict[str, bytes]:
    return {name: (world / name).read_bytes() for name in names}


@pytest.mark.parametrize("case", CLI_CASES, ids=[c.name for c in CLI_CASES])
def test_command_line_bad_input_is_one_line_and_exit_2(case, world, tiny_link, tmp_cache, capsys):
    argv = [a.format(w=world, tiny=tiny_link) for a in case.argv or ()]
    before = _snapshot(world, case.unchanged)
    assert_one_line_error(argv, case.expect, capsys)
    assert _snapshot(world, case.unchanged) == before
    assert not (world / "code-ran").exists()


@pytest.mark.parametrize("case", LIBRARY_CASES, ids=[c.name for c in LIBRARY_CASES])
def test_library_bad_input_raises_the_projects_error(case, world, tiny_link):
    assert case.call is not None
    with pytest.raises(WorkbenchError, match=case.expect):
        case.call(world)
    assert not (world / "code-ran").exists()


def _meta(entry: Path, text: str) -> None:
    (entry / "meta.json").write_text(text)


def _drop_field(entry: Path) -> None:
    meta = json.loads((entry / "meta.json").read_text())
    meta.pop("files")
    _meta(entry, json.dumps(meta))


def _swap(entry: Path, other: Path, name: str) -> None:
    shutil.copy(other / name, entry / name)  # another entry's file, of the same size


CACHE_FAULTS: dict[str, Callable[[Path, Path], None]] = {
    "meta-list": lambda entry, other: _meta(entry, "[]"),
    "meta-null": lambda entry, other: _meta(entry, "null"),
    "meta-missing-field": lambda entry, other: _drop_field(entry),
    "meta-truncated": lambda entry, other: _truncate(entry / "meta.json"),
    "index-truncated": lambda entry, other: _truncate(entry / "index.npz"),
    "index-swapped": lambda entry, other: _swap(entry, other, "index.npz"),
    "vectors-truncated": lambda entry, other: _truncate(entry / "vectors.npy", 0.9),
    "vectors-swapped": lambda entry, other: _swap(entry, other, "vectors.npy"),
}  # fmt: skip


@pytest.mark.parametrize("fault", list(CACHE_FAULTS))
def test_a_damaged_cache_entry_is_reported_and_recomputed(fault, tiny_encoder, tmp_cache):
    mine = [["The", "bank", "is", "closed"], ["He", "sat", "by", "the", "river"]]
    other = [["A", "cat", "is", "asleep"], ["We", "ran", "to", "the", "shore"]]
    cache = EmbeddingCache()
    encode_cached(tiny_encoder, other)
    (other_entry,) = [p for p in cache.dir.iterdir()]
    expected = encode_cached(tiny_encoder, mine)
    expected_vectors = np.array(expected.vectors)  # a copy: the hit maps the file damaged below
    entry = next(p for p in cache.dir.iterdir() if p != other_entry)
    CACHE_FAULTS[fault](entry, other_entry)
    with pytest.warns(UserWarning, match=f"cache entry {entry}.*recomputing"):
        again = encode_cached(tiny_encoder, mine)
    assert again.words == expected.words
    np.testing.assert_array_equal(np.asarray(again.vectors), expected_vectors)
    assert all(e.problem == "" for e in cache.entries())


@pytest.mark.slow  # the packaged model and WordNet's gloss vectors of the lemma
def test_a_word_whose_senses_have_no_usage_example_gets_an_answer(capsys):
    """``helium``: none of its senses has a usage example; the WordNet-only index still ranks
    them (it raised an IndexError once)."""
    argv = ["wsd", "disambiguate", "The balloon was filled with helium", "--word", "helium",
            "--system", "wordnet", "--device", "cpu"]  # fmt: skip
    assert main(argv) == 0
    assert "helium%1:27:00::" in capsys.readouterr().out


@pytest.mark.parametrize("action", [["cache"], ["cache", "prune", "--all"]])
def test_a_cache_dir_that_is_a_file_is_named(action, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "a-file"))
    (tmp_path / "a-file").write_text("not a directory")
    assert main(action) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"workbench: error: the cache dir {tmp_path / 'a-file'} is a file: set WORKBENCH_CACHE "
        "to a directory"
    )


@pytest.mark.parametrize("damage", ["truncated", "garbage", "other-shape"])
def test_damaged_cached_definition_vectors_are_recomputed(damage, tiny_encoder, tmp_cache):
    wordnet = load_wordnet()
    synsets = ["bank.n.01", "bank.n.09", "river.n.01"]
    first = np.array(definition_vectors(tiny_encoder, wordnet, synsets))
    (stored,) = list((tmp_cache / "wsd").glob("definitions-*.npy"))
    if damage == "truncated":
        _truncate(stored, 0.7)
    elif damage == "garbage":
        stored.write_bytes(b"\x93NUMPY garbage")
    else:
        np.save(stored, np.zeros((2, 3), np.float32))
    with pytest.warns(UserWarning, match="cannot be used.*recomputing"):
        again = definition_vectors(tiny_encoder, wordnet, synsets)
    np.testing.assert_allclose(np.asarray(again), first, rtol=0, atol=1e-6)
