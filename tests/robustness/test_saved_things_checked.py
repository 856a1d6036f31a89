"""Class 5 and 7 of the third hostile round (issue 53): a saved thing is checked on its own
before it is trusted, and its size is checked from ``stat`` and its headers before it is read,
hashed or inflated.

* a saved index's correction agrees with the index's config and encoder (kind, layers, width,
  model, pooling), not only with its own digest;
* a folder holding a bi-encoder's files is refused as a damaged bi-encoder when its
  ``head.json`` is missing or another task's, before any model loads or index is built;
* ``sense_counts.json.gz`` holds whole counts of 0 and up, and inflates no further than the
  JSON limit;
* an ``.npz`` (a saved correction, the legacy ``postprocessor.npz``) is sized from ``stat``
  before a byte of it is hashed, and bytes that belong to none of its arrays are refused.

The fine-tuning checkpoints (digests, bookkeeping, the base's fingerprint) are in
``test_checkpoints_checked.py``.
"""

from __future__ import annotations

import gzip
import json
import shutil
import zlib
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import wsd as wsd_cli
from workbench.cli.main import main
from workbench.corpora.readers import Corpus, Instance, Sentence
from workbench.corpora.store import read_corpus, save_corpus
from workbench.errors import CacheError, DataError, LimitError, ModelLoadError
from workbench.fileio import sha256_file
from workbench.geometry.corrections import load_correction, make_correction
from workbench.limits import check_npz
from workbench.wsd.biencoder import (
    CARD,
    GLOSS_ENCODER,
    HEAD_CONFIG,
    SENSE_COUNTS,
    bi_encoder_head,
    check_model_folder,
    read_sense_counts,
    write_sense_counts,
)
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.index import SenseIndex
from workbench.wsd.pos_probe import PROBE_FILE
from workbench.wsd.store import CORRECTION_STEM, FORMER_CORRECTION_STEM, load_index, save_index
from workbench.wsd.systems import open_system

DIM = 8
INFO = EncoderInfo("toy", "fp-toy", DIM, 3, "mean")
KEYS = [(f"w{i % 5}%1:00:0{i % 2}::",) for i in range(40)]


def _index(tmp_path: Path, name: str, info: EncoderInfo = INFO, **config) -> Path:
    rng = np.random.default_rng(len(name))
    vecs = rng.normal(size=(40, DIM)).astype(np.float32) + 3.0
    index = SenseIndex(SenseIndexConfig(**{"layers": "-1", **config})).fit(
        vecs, KEYS, info=info, training=TrainingInfo("toy", "abc", 4, 40)
    )
    return save_index(index, tmp_path / name)


def _swap_correction(target: Path, source: Path) -> None:
    for ext in ("npz", "json"):
        shutil.copyfile(source / f"{CORRECTION_STEM}.{ext}", target / f"{CORRECTION_STEM}.{ext}")


# ---------------------------------------------------------------------- an index's correction


@pytest.mark.parametrize(
    ("other", "expected"),
    [
        ({"correction": "center"}, "a 'center' correction, where the config says 'zscore'"),
        ({"correction": "whiten"}, "a 'whiten' correction"),
        ({"correction": "zscore", "layers": "0"}, "fitted on layers '0', where the config says"),
        ({"correction": "zscore", "layers": "last2-sum"}, "fitted on layers 'last2-sum'"),
    ],
)
def test_an_index_whose_correction_is_another_kind_or_layer_is_refused_naming_the_file(
    tmp_path, other, expected
):
    good = _index(tmp_path, "good", correction="zscore")
    donor = _index(tmp_path, "donor", **other)
    _swap_correction(good, donor)  # each file with its own valid digest
    with pytest.raises(DataError, match=expected) as err:
        load_index(good, info=INFO)
    assert f"{CORRECTION_STEM}.json" in str(err.value) and str(good) in str(err.value)


def test_a_correction_of_another_model_pooling_width_or_per_layer_is_refused(tmp_path):
    good = _index(tmp_path, "good", correction="zscore")
    for name, info, expected in (
        ("model", EncoderInfo("toy", "fp-other", DIM, 3, "mean"), "fingerprint 'fp-other'"),
        ("pooling", EncoderInfo("toy", "fp-toy", DIM, 3, "first"), "pooling 'first'"),
    ):
        _swap_correction(good, _index(tmp_path, name, info, correction="zscore"))
        with pytest.raises(DataError, match=f"fitted with {expected}"):
            load_index(good)
    # a per-layer correction (as `geometry --save-standardizer` writes) in an index's place
    per_layer = make_correction("zscore").fit(np.random.default_rng(0).normal(size=(9, 3, DIM)))
    per_layer.save(tmp_path / "per-layer")
    shutil.copyfile(tmp_path / "per-layer.npz", good / f"{CORRECTION_STEM}.npz")
    shutil.copyfile(tmp_path / "per-layer.json", good / f"{CORRECTION_STEM}.json")
    with pytest.raises(DataError, match="fitted per layer"):
        load_index(good)
    # one of another width
    narrow = make_correction("zscore").fit(np.random.default_rng(0).normal(size=(9, DIM - 1)))
    narrow.save(tmp_path / "narrow")
    shutil.copyfile(tmp_path / "narrow.npz", good / f"{CORRECTION_STEM}.npz")
    shutil.copyfile(tmp_path / "narrow.json", good / f"{CORRECTION_STEM}.json")
    with pytest.raises(DataError, match="fitted on 7-dim vectors"):
        load_index(good)


def test_the_agreeing_correction_loads_and_the_cli_refuses_a_foreign_one_in_one_line(
    tmp_path, capsys
):
    good = _index(tmp_path, "good", correction="zscore")
    assert load_index(good, info=INFO).correction_ is not None  # the agreeing one loads
    _swap_correction(good, _index(tmp_path, "donor", correction="center"))
    code = main(["wsd", "disambiguate", "He sat on the bank", "--word", "bank",
                 "--index", str(good), "--device", "cpu"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "a 'center' correction, where the config says 'zscore'" in err


@pytest.mark.parametrize("correction", [["zscore"], {"kind": "zscore"}, 0, True])
def test_a_saved_config_whose_correction_is_no_name_does_not_load(tmp_path, correction):
    path = _index(tmp_path, "idx", correction="zscore")
    meta = json.loads((path / "meta.json").read_text())
    meta["config"]["correction"] = correction
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match="correction must be one of"):
        load_index(path)


def _resave_senses(path: Path, change) -> None:
    with np.load(path / "senses.npz") as data:
        arrays = {k: data[k] for k in data.files}
    change(arrays)
    np.savez(path / "senses.npz", **arrays)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda a: a.update(counts=a["counts"] - 5), "a negative occurrence count"),
        (lambda a: a.update(origin=a["origin"] + 9), "an origin outside 0 to 4"),
        (lambda a: a.update(vectors=a["vectors"][:, :-1]), r"not \(n, 8\) floats"),
        (lambda a: a.update(keys=a["keys"][:-1]), "keys, .* origins and .* counts for"),
        (lambda a: a.update(counts=a["counts"].astype(float)), "of the wrong kind"),
        (lambda a: a.update(vectors=a["vectors"].astype(np.int32)), "floats"),
        (lambda a: a.update(origin=a["origin"][:, None]), "origins"),
    ],
    ids=["negative-count", "origin", "width", "keys", "float-counts", "int-vectors", "2-d"],
)
def test_index_rows_that_do_not_fit_their_meta_are_refused(tmp_path, change, expected):
    """Another saved thing, ``senses.npz``: its arrays agree with each other and with
    ``meta.json`` (a negative count would read "seen -5x in training")."""
    path = _index(tmp_path, "idx")
    _resave_senses(path, change)
    with pytest.raises(DataError, match=f"senses.npz does not fit its meta.json: .*{expected}"):
        load_index(path)


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("rows", -1, "10 rows, where meta.json says -1"),
        ("rows", 10**30, "10 rows, where meta.json says 1000000000000000000000000000000"),
        ("rows", True, "10 rows, where meta.json says true"),
        ("rows_by_origin", {"centroid": 41}, "rows by origin"),
    ],
)
def test_rows_that_disagree_with_the_counts_meta_json_declares_are_refused(
    tmp_path, field, value, expected
):
    """``meta.json`` says how many rows the index holds, of each origin: ``senses.npz`` holds
    that many, or the two files are not one index."""
    path = _index(tmp_path, "idx")
    meta = json.loads((path / "meta.json").read_text())
    meta[field] = value
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match=f"senses.npz does not fit its meta.json: {expected}"):
        load_index(path)


@pytest.mark.parametrize("stem", [CORRECTION_STEM, FORMER_CORRECTION_STEM])
def test_a_correction_beside_a_config_of_none_is_refused(tmp_path, stem):
    """Rows built through a z-score, a config edited to ``none``: queries would go in
    uncorrected against corrected rows (it answered, wrongly)."""
    path = _index(tmp_path, "idx", correction="zscore")
    if stem == FORMER_CORRECTION_STEM:
        for ext in ("npz", "json"):
            (path / f"{CORRECTION_STEM}.{ext}").rename(path / f"{stem}.{ext}")
    meta = json.loads((path / "meta.json").read_text())
    meta["config"]["correction"] = "none"
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match=f"holds a saved correction \\({stem}.json, {stem}.npz\\)"):
        load_index(path)
    assert load_index(_index(tmp_path, "plain", correction="none")).correction_ is None


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda a: a.update(scale=np.zeros_like(a["scale"])), "scale holds 8 value"),
        (lambda a: a["scale"].__setitem__(0, -1.0), "scale holds 1 value"),
    ],
    ids=["zero-scale", "negative-scale"],
)
def test_a_saved_z_score_whose_scale_is_not_positive_is_refused(tmp_path, change, expected):
    """A z-score divides by its scale: 0 made infinite and NaN scores that answered (with a
    numpy warning); the digest redone, as a careful editor would."""
    z = make_correction("zscore").fit(np.random.default_rng(0).normal(size=(9, DIM)))
    npz, meta = z.save(tmp_path / "z")
    with np.load(npz) as data:
        arrays = {k: data[k] for k in data.files}
    change(arrays)
    np.savez(npz, **arrays)
    info = json.loads(meta.read_text())
    info["npz_sha256"] = sha256_file(npz)
    meta.write_text(json.dumps(info))
    with pytest.raises(DataError, match=f"not a usable saved zscore correction \\({expected}"):
        load_correction(tmp_path / "z")
    info["params"]["zero_variance"] = "bogus"
    np.savez(npz, **{**arrays, "scale": np.ones(DIM)})
    info["npz_sha256"] = sha256_file(npz)
    meta.write_text(json.dumps(info))
    with pytest.raises(DataError, match="zero_variance is 'bogus'"):
        load_correction(tmp_path / "z")


@pytest.mark.parametrize("dim", ["8", 0, -8, True])
def test_an_index_whose_encoder_width_is_no_width_is_refused(tmp_path, dim):
    path = _index(tmp_path, "idx")
    meta = json.loads((path / "meta.json").read_text())
    meta["encoder"]["dim"] = dim
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match="encoder's dim"):
        load_index(path)


# ---------------------------------------------------------------------- sizes before hashing


def test_a_huge_sparse_correction_npz_is_refused_from_stat_before_it_is_hashed(
    tmp_path, monkeypatch
):
    """The legacy name, ``postprocessor.npz``, and the new one: refused by their size alone."""
    hashed: list[Path] = []
    monkeypatch.setattr(
        "workbench.geometry.corrections.sha256_file",
        lambda p: hashed.append(Path(p)) or sha256_file(p),
    )
    for stem in (CORRECTION_STEM, FORMER_CORRECTION_STEM):
        path = _index(tmp_path, f"idx-{stem}", correction="zscore")
        if stem == FORMER_CORRECTION_STEM:
            for ext in ("npz", "json"):
                (path / f"{CORRECTION_STEM}.{ext}").rename(path / f"{stem}.{ext}")
        with open(path / f"{stem}.npz", "r+b") as fh:
            fh.truncate(300 << 30)  # sparse: 300 GiB that take no disk
        with pytest.raises(LimitError, match="300 GiB, over the limit"):
            load_index(path)
        with pytest.raises(LimitError, match="300 GiB"):
            load_correction(path / stem)
    assert hashed == []


def test_bytes_that_belong_to_no_array_are_refused_before_hashing(tmp_path, monkeypatch):
    z = make_correction("center").fit(np.random.default_rng(0).normal(size=(9, DIM)))
    npz, _ = z.save(tmp_path / "c")
    load_correction(tmp_path / "c")  # as saved: loads
    monkeypatch.setattr(
        "workbench.geometry.corrections.sha256_file", lambda p: pytest.fail("hashed")
    )
    data = npz.read_bytes()
    npz.write_bytes(b"\0" * (4 << 20) + data)  # a zip reader still finds the arrays
    with pytest.raises(DataError, match="belong to none of its arrays"):
        load_correction(tmp_path / "c")
    npz.write_bytes(data + b"\0" * (4 << 20))  # after the end record
    with pytest.raises(DataError):
        check_npz(npz)


@pytest.mark.parametrize("compressed", [False, True])
def test_every_npz_numpy_writes_passes_the_size_check(tmp_path, compressed):
    save = np.savez_compressed if compressed else np.savez
    rng = np.random.default_rng(0)
    arrays = {f"a{i}": rng.normal(size=i * 1000).astype(np.float32) for i in range(12)}
    arrays["keys"] = np.array([f"w{i}%1:00:00::" for i in range(20)])
    save(tmp_path / "x.npz", **arrays)
    check_npz(tmp_path / "x.npz")
    save(tmp_path / "empty.npz")
    check_npz(tmp_path / "empty.npz")


# ---------------------------------------------------------------------- sense counts


def _counts_file(tmp_path: Path, payload: bytes) -> Path:
    (tmp_path / SENSE_COUNTS).write_bytes(gzip.compress(payload, mtime=0))
    return tmp_path


@pytest.mark.parametrize(
    "value",
    [-5, 2.5, "7", None, True, [1], 1e300, 1 << 60],
    ids=["negative", "fraction", "string", "null", "bool", "list", "huge-float", "huge-int"],
)
def test_a_count_that_is_not_a_whole_number_of_occurrences_is_refused(tmp_path, value):
    _counts_file(tmp_path, json.dumps({"bank%1:14:00::": 3, "bank%1:17:01::": value}).encode())
    with pytest.raises(ModelLoadError, match=r"the count of 'bank%1:17:01::' is .*not a whole"):
        read_sense_counts(tmp_path)


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_counts_are_refused(tmp_path, text):
    _counts_file(tmp_path, ('{"a%1:00:00::": ' + text + "}").encode())
    with pytest.raises(ModelLoadError, match="not a whole number"):
        read_sense_counts(tmp_path)


def test_sense_counts_round_trip_and_damage(tmp_path):
    write_sense_counts(tmp_path, {"b%1:00:00::": 2, "a%1:00:00::": 0})
    assert read_sense_counts(tmp_path) == {"a%1:00:00::": 0, "b%1:00:00::": 2}
    packed = (tmp_path / SENSE_COUNTS).read_bytes()
    (tmp_path / SENSE_COUNTS).write_bytes(packed[: len(packed) // 2])
    with pytest.raises(ModelLoadError, match="truncated"):
        read_sense_counts(tmp_path)
    _counts_file(tmp_path, b"[1, 2]")
    with pytest.raises(ModelLoadError, match="not an object"):
        read_sense_counts(tmp_path)


def test_a_gzip_bomb_inflates_no_further_than_the_json_limit(tmp_path, monkeypatch):
    """3 MB of gzip that would inflate to 3 GiB: refused once past the limit (here 1 MiB), with
    no more than that inflated."""
    monkeypatch.setenv("WORKBENCH_LIMIT_JSON_BYTES", str(1 << 20))
    pack = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * (1 << 20)
    parts = [pack.compress(b'{"a%1:00:00::": 1')]
    parts += [pack.compress(block) for _ in range(64)]  # 64 MiB of spaces, ~64 KB packed
    parts.append(pack.compress(b"}") + pack.flush())
    (tmp_path / SENSE_COUNTS).write_bytes(b"".join(parts))
    sizes: list[int] = []
    real = zlib.decompressobj

    class Counting:
        def __init__(self, *args, **kwargs):
            self.inner = real(*args, **kwargs)

        def decompress(self, data, max_length=0):
            out = self.inner.decompress(data, max_length)
            sizes.append(len(out))
            return out

        def __getattr__(self, name):
            return getattr(self.inner, name)

    monkeypatch.setattr(zlib, "decompressobj", Counting)  # as workbench.limits calls it
    with pytest.raises(ModelLoadError, match="inflates past the limit"):
        read_sense_counts(tmp_path)
    assert sum(sizes) <= (1 << 20) + 1
    # the packed file itself is read within the limit too
    (tmp_path / SENSE_COUNTS).write_bytes(b"\x1f\x8b" + b"\0" * (2 << 20))
    with pytest.raises(ModelLoadError, match="over the limit"):
        read_sense_counts(tmp_path)


# ---------------------------------------------------------------------- a bi-encoder's head


@pytest.fixture
def headless(tiny_model_dir, tmp_path) -> Path:
    """A model folder holding a bi-encoder's files (gloss encoder, counts, card of task wsd)
    but no ``head.json``."""
    folder = tmp_path / "bi"
    shutil.copytree(tiny_model_dir, folder)
    shutil.copytree(tiny_model_dir, folder / GLOSS_ENCODER)
    write_sense_counts(folder, {"bank%1:14:00::": 3})
    (folder / CARD).write_text(json.dumps({"task": "wsd"}))
    (folder / HEAD_CONFIG).unlink(missing_ok=True)
    return folder


def _only(folder: Path, keep: str) -> None:
    """Leave ``keep`` the one bi-encoder trace of ``folder``."""
    traces = {GLOSS_ENCODER: folder / GLOSS_ENCODER, SENSE_COUNTS: folder / SENSE_COUNTS,
              CARD: folder / CARD}  # fmt: skip
    for name, path in traces.items():
        if name != keep:
            shutil.rmtree(path) if path.is_dir() else path.unlink()


@pytest.mark.parametrize("trace", [GLOSS_ENCODER, SENSE_COUNTS, CARD, PROBE_FILE])
@pytest.mark.parametrize("head", [None, {"task": "sequence", "labels": ["a"]}, ["wsd"]])
def test_a_bi_encoder_folder_without_its_head_is_refused_not_taken_for_a_plain_model(
    headless, trace, head
):
    if trace == PROBE_FILE:
        (headless / PROBE_FILE).write_bytes(b"")
        _only(headless, PROBE_FILE)
    else:
        _only(headless, trace)
    if head is not None:
        (headless / HEAD_CONFIG).write_text(json.dumps(head))
    with pytest.raises(ModelLoadError, match="holds a WSD bi-encoder's files") as err:
        bi_encoder_head(headless)
    assert str(headless) in str(err.value) and HEAD_CONFIG in str(err.value)
    for system in ("biencoder", "best", "plain", "wordnet"):
        with pytest.raises(ModelLoadError, match="holds a WSD bi-encoder's files"):
            open_system(system, str(headless))  # refused at the door, nothing loaded


def test_a_plain_model_folder_and_another_tasks_run_still_open(tiny_model_dir, tmp_path):
    check_model_folder(str(tiny_model_dir))
    check_model_folder("some-hub/name")
    check_model_folder(None)
    run = tmp_path / "seq"
    shutil.copytree(tiny_model_dir, run)
    (run / HEAD_CONFIG).write_text(json.dumps({"task": "sequence", "labels": ["a", "b"]}))
    (run / CARD).write_text(json.dumps({"task": "sequence"}))
    assert bi_encoder_head(run) is None
    check_model_folder(str(run))
    opened = open_system("plain", str(run))
    assert opened.name == "plain"


def test_a_headed_bi_encoder_without_its_card_is_refused_at_the_door(headless):
    (headless / HEAD_CONFIG).write_text(json.dumps({
        "task": "wsd", "gloss_pooling": "mean", "gloss_text": "definition",
        "gloss_max_length": 24,
    }))  # fmt: skip
    (headless / CARD).unlink()
    with pytest.raises(ModelLoadError, match="has no training_card.json"):
        open_system("best", str(headless))


def test_the_cli_refuses_a_headless_bi_encoder_in_one_line_before_any_work(
    headless, capsys, monkeypatch
):
    monkeypatch.setattr(wsd_cli, "load_corpus", lambda *a, **k: pytest.fail("corpus read"))
    for argv in (
        ["wsd", "disambiguate", "He sat on the bank", "--word", "bank"],
        ["wsd", "eval", "senseval2", "--system", "best"],
    ):
        code = main([*argv, "--model", str(headless), "--device", "cpu"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, err
        assert "holds a WSD bi-encoder's files" in err and "no head.json" in err


def test_a_saved_corpus_inflates_no_further_than_the_text_limit_and_is_kept(tmp_path, monkeypatch):
    """Another gzip file the workbench keeps (WordNet's examples as a corpus): a bomb is
    refused for this run by the limit and kept; a truncated one is damage (a CacheError, and
    the caller builds it again)."""
    sentence = Sentence("s0", ("A", "bank", "."), ("a", "bank", "."), ("DET", "NOUN", "."),
                        (Instance("s0.t0", 1, "bank", "NOUN", ("bank%1:14:00::",)),))  # fmt: skip
    corpus = Corpus("toy", (sentence,), (), "abc")
    path = save_corpus(corpus, tmp_path / "toy.json.gz")
    assert read_corpus(path) == corpus
    monkeypatch.setenv("WORKBENCH_LIMIT_TEXT_BYTES", str(1 << 20))
    pack = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    bomb = pack.compress(b" " * (8 << 20)) + pack.flush()  # 8 MiB of spaces, 8 KB packed
    path.write_bytes(bomb)
    with pytest.raises(LimitError, match="inflates past the limit of 1 MiB.*TEXT_BYTES"):
        read_corpus(path)
    packed = gzip.compress(json.dumps({"format": "x"}).encode())
    path.write_bytes(packed[:-6])
    with pytest.raises(CacheError, match="truncated"):
        read_corpus(path)
    path.write_bytes(packed + b"junk")
    with pytest.raises(CacheError, match="past its gzip stream"):
        read_corpus(path)
