"""The named WSD systems: presets, the cached SemCor index, the WordNet-only index, the default."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from workbench.corpora.datasets import load_dataset
from workbench.errors import InputError
from workbench.lexicon.wordnet import load_wordnet
from workbench.wsd.biencoder import shipped_biencoder
from workbench.wsd.builds import (
    build_message,
    index_root,
    mfs_counts,
    saved_index_folders,
    semcor_index,
    system_index_path,
    wordnet_index,
)
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.disambiguate import Disambiguation, SenseCandidate, disambiguate, evidence
from workbench.wsd.opened import OpenedSystem
from workbench.wsd.presets import (
    FEW_OCCURRENCES,
    PACKAGED_FINGERPRINT,
    RESULTS_FILE,
    WORDNET_CORPUS,
    first_sense_f1_all,
    measured_f1_all,
    recorded_results,
    system_note,
    system_of,
)
from workbench.wsd.systems import missing_systems, offered_systems, open_system
from workbench.wsd.systems.registry import (
    DEFAULT_SYSTEM,
    SYSTEMS,
    f1_phrase,
    get_system,
    measured_f1,
)

BASS_MUSIC = "He plays the bass in a jazz band."
BASS_FISH = "He caught a bass in the lake."
HELIUM = "The balloon was filled with helium"


def test_presets_are_the_documented_systems():
    best = SYSTEMS["best"].config
    assert DEFAULT_SYSTEM == "biencoder" and SYSTEMS["biencoder"].config.gloss_pooling == "trained"
    assert (best.layers, best.correction, best.propagate) == ("-1", "none", "lexname")
    assert (best.gloss, best.gloss_weight, best.gloss_pooling) == ("concat", 0.2, "definition")
    assert SYSTEMS["plain"].config == SenseIndexConfig(layers="-1")
    assert SYSTEMS["best"].f1_all == 70.2 and SYSTEMS["plain"].f1_all == 68.4
    wordnet = SYSTEMS["wordnet"]
    assert wordnet.training == "wordnet" and wordnet.config.gloss == "only"
    assert wordnet.f1_all < first_sense_f1_all()  # what its note says
    with pytest.raises(InputError, match="unknown WSD system"):
        get_system("fastest")


def test_the_cache_path_changes_with_everything_that_changes_the_rows(tiny_encoder):
    best = SYSTEMS["best"]
    info = EncoderInfo.of(tiny_encoder)
    path = system_index_path(info, best, "abc")
    assert path == system_index_path(info, best, "abc")
    other_config = dataclasses.replace(best, config=dataclasses.replace(best.config, layers="0"))
    assert system_index_path(info, other_config, "abc") != path
    assert system_index_path(info, best, "abd") != path
    assert system_index_path(info, SYSTEMS["plain"], "abc") != path


def test_saved_index_folders_leave_out_the_systems_own_indexes(tiny_encoder, tmp_cache):
    info = EncoderInfo.of(tiny_encoder)
    own = [system_index_path(info, system, "abc") for system in SYSTEMS.values()]
    named = index_root() / "biencoder"  # a folder named as a system
    saved = [index_root() / "semcor-1-none-none", index_root() / "my-index"]
    for folder in [*own, named, *saved]:
        folder.mkdir(parents=True)
        (folder / "meta.json").write_text("{}", encoding="utf-8")
    (index_root() / "half-written").mkdir()  # no meta.json: not an index
    assert all(path.parent == index_root() for path in own)
    assert saved_index_folders() == sorted(saved)


def test_no_saved_index_folders_without_the_folder(tmp_cache):
    assert not index_root().exists() and saved_index_folders() == []


def test_the_mfs_counts_are_semcor_s_when_semcor_is_here(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))  # no framework there: no SemCor
    assert mfs_counts() is None
    counts = {("bank", "n"): {"bank%1:14:00::": 3.0}}
    monkeypatch.setattr("workbench.wsd.builds.semcor_available", lambda: True)
    monkeypatch.setattr("workbench.wsd.builds.semcor_frequencies", lambda: counts)
    assert mfs_counts() is counts


def test_semcor_index_is_built_once_then_loaded(tiny_encoder, wsd_data, tmp_cache):
    corpus = load_dataset("semeval2015", wsd_data)  # stands in for SemCor: small
    said: list[str] = []
    fractions: list[float] = []
    index = semcor_index(tiny_encoder, "plain", semcor=corpus, say=said.append,
                         progress=fractions.append)  # fmt: skip
    assert len(said) == 1 and "Building the 'plain' sense index" in said[0]
    assert fractions == sorted(fractions) and fractions[-1] == pytest.approx(1.0)  # 0 -> 1 once
    assert "once" in said[0] and str(tmp_cache) in said[0]
    path = system_index_path(EncoderInfo.of(tiny_encoder), SYSTEMS["plain"], corpus.sha256)
    assert (path / "meta.json").is_file()
    again = semcor_index(tiny_encoder, "plain", semcor=corpus, say=said.append)
    assert len(said) == 1  # loaded, not built
    assert again.keys_ == index.keys_ and again.config == SYSTEMS["plain"].config
    np.testing.assert_array_equal(again.vectors_, index.vectors_)
    (path / "senses.npz").write_bytes(b"cut off")  # a broken cache entry is built again
    semcor_index(tiny_encoder, "plain", semcor=corpus, say=said.append)
    assert len(said) == 2
    with pytest.raises(InputError):
        semcor_index(tiny_encoder, "wordnet", semcor=corpus)


@pytest.mark.slow
def test_wordnet_index_represents_every_sense_the_same_way(default_encoder):
    wordnet = load_wordnet()
    lemmas = [("bass", "NOUN"), ("bass", "ADJ"), ("helium", "NOUN")]
    index = wordnet_index(default_encoder, lemmas, wordnet)
    keys = [k for lemma, pos in lemmas for k in wordnet.candidates(lemma, pos)]
    assert sorted(index.keys_) == sorted(keys)  # every candidate has a row ...
    assert {index.origin_of(k) for k in keys} == {"gloss"}  # ... of the same kind
    assert index.training_.corpus == WORDNET_CORPUS and system_of(index) == "wordnet"
    assert "below WordNet's first sense" in system_note(index)


@pytest.mark.slow
def test_without_semcor_the_wordnet_index_answers_and_says_it_loses(
    default_encoder, tmp_path, monkeypatch
):
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))  # no framework there: no SemCor
    result = disambiguate(open_system("best", encoder=default_encoder), HELIUM, "helium")
    assert result.system == "wordnet" and result.best.key == "helium%1:27:00::"
    assert result.best.evidence.startswith("gloss vector")
    assert result.note and result.first_sense.key == "helium%1:27:00::"
    text = result.to_text()
    assert "note: No SemCor here" in text and "WordNet's first sense (the back-off)" in text
    index = open_system("best", encoder=default_encoder).index([("bass", "NOUN")])
    assert system_of(index) == "wordnet"
    fish = disambiguate(OpenedSystem.of_index(default_encoder, index), BASS_FISH, "bass",
                        pos="NOUN")  # fmt: skip
    assert all(c.origin == "gloss" for c in fish.candidates)
    assert len(fish.candidates) == 8 and fish.best.pos == "NOUN"


@pytest.mark.slow
def test_the_default_best_index_answers_bass_with_nouns_and_helium(default_encoder, best_wsd_index):
    best = open_system("best", encoder=default_encoder)
    music = disambiguate(best, BASS_MUSIC, "bass")
    fish = disambiguate(best, BASS_FISH, "bass")
    assert music.system == fish.system == "best" and music.training.corpus == "semcor"
    assert music.best.pos == "NOUN" and fish.best.pos == "NOUN", (music.best, fish.best)
    # SemCor tags bass twice (two music senses): a centroid of one occurrence wins both, and
    # the answer says it rests on too few occurrences
    assert "only once in semcor" in fish.warning
    helium = disambiguate(best, HELIUM, "helium")
    assert helium.best.key == "helium%1:27:00::" and helium.best.origin == "centroid"
    assert helium.best.evidence.startswith(f"centroid of {helium.best.count} semcor")
    assert helium.best.evidence.endswith("+ gloss") and not helium.note
    for c in music.candidates:  # every candidate says where its score comes from
        assert c.evidence.startswith(("centroid of", "propagated from", "gloss only"))
    assert bool(music.warning) == (music.best.count < FEW_OCCURRENCES)


def _candidate(key: str, score: float, origin: str, count: int) -> SenseCandidate:
    config = SYSTEMS["best"].config
    return SenseCandidate(
        key, "x.n.01", "NOUN", "a gloss", score, origin, count, 1,
        evidence(origin, count, "semcor", config), 10,
    )  # fmt: skip


def test_a_winner_on_fewer_than_a_handful_of_occurrences_is_flagged():
    def result(*candidates):
        return Disambiguation(("w",), 0, (("w", "NOUN"),), candidates, TrainingInfo("semcor"),
                              "L-1", "best")  # fmt: skip

    solid = result(_candidate("w%1:00:00::", 0.9, "centroid", 12))
    assert solid.warning == ""
    thin = result(_candidate("w%1:00:00::", 0.9, "centroid", 1),
                  _candidate("w%1:00:01::", 0.5, "centroid", 40))  # fmt: skip
    assert "only once in semcor" in thin.warning
    assert thin.candidates[0].evidence == "centroid of 1 semcor occurrence + gloss"
    propagated = result(_candidate("w%1:00:00::", 0.9, "lexname", 0))
    assert "no occurrence in semcor" in propagated.warning
    assert "lexicographer file" in propagated.candidates[0].evidence
    assert "warning:" in propagated.to_text()
    # a trained bi-encoder's gloss index has no centroids: its gloss vectors are the system
    gloss_only = (_candidate("w%1:00:00::", 0.9, "gloss", 0),)
    glosses = Disambiguation(("w",), 0, (("w", "NOUN"),), gloss_only, TrainingInfo("semcor"),
                             "L-1", "custom", centroids=False)  # fmt: skip
    assert glosses.warning == "" and "warning:" not in glosses.to_text()


@pytest.mark.parametrize(
    ("layers", "dim", "dtype", "expected"),
    [(6, 384, "float32", "about 12 minutes"), (6, 384, "bfloat16", "about 7 minutes"),
     (12, 768, "float32", "about 1.6 hours"), (2, 128, "float32", "about 2 minutes"),
     (12, 768, "bfloat16", "about 55 minutes")],
)  # fmt: skip
def test_build_message_scales_the_cpu_estimate_with_the_model(layers, dim, dtype, expected):
    info = EncoderInfo("m", "fp", dim, layers + 1, "mean", dtype)
    line = build_message(info, SYSTEMS["best"], Path("/cache/x"))
    assert f"once: {expected} on a 2-core CPU" in line and "definitions" in line
    assert "definitions" not in build_message(info, SYSTEMS["plain"], Path("/c"))


def test_the_f1_a_user_is_told_is_the_one_measured_for_the_model_and_dtype(default_encoder):
    assert default_encoder.fingerprint == PACKAGED_FINGERPRINT  # the table's key is this model
    assert measured_f1_all()[("best", PACKAGED_FINGERPRINT, "float32")] == SYSTEMS["best"].f1_all
    assert measured_f1("best", PACKAGED_FINGERPRINT, "bfloat16") == 70.1
    assert f1_phrase("plain", PACKAGED_FINGERPRINT, "bfloat16") == (
        "68.3 F1 on ALL with this model in bfloat16"
    )
    assert f1_phrase("best", "0123456789abcdef", "float32") == (
        "70.2 F1 on ALL with the packaged model; not measured for this one"
    )
    assert measured_f1("best", PACKAGED_FINGERPRINT, "float16") is None


def test_every_figure_shown_is_the_recorded_files_number():
    recorded = json.loads(RESULTS_FILE.read_text(encoding="utf-8"))
    assert recorded == recorded_results() and recorded["runs"]
    for run in recorded["runs"]:
        key = (run["system"], run["fingerprint"], run["dtype"])
        shown = round(run["f1_all"], 1)
        assert run["source"] and run["pointer"] and run["command"]
        assert measured_f1_all()[key] == measured_f1(*key) == shown
        assert f1_phrase(*key) == f"{shown} F1 on ALL with this model in {run['dtype']}"
        if key[1:] == (PACKAGED_FINGERPRINT, "float32"):
            assert SYSTEMS[run["system"]].f1_all == shown
    assert {n for n, s in SYSTEMS.items() if s.f1_all == s.f1_all} == {
        r["system"] for r in recorded["runs"] if r["fingerprint"] == PACKAGED_FINGERPRINT
    }  # every system but the bi-encoder has its packaged figure recorded
    first = recorded["baselines"]["wordnet_first_sense"]["f1_all"]
    assert first_sense_f1_all() == round(first, 1)
    note = system_note(SimpleNamespace(training_=TrainingInfo(WORDNET_CORPUS)))  # type: ignore[arg-type]
    assert f"{SYSTEMS['wordnet'].f1_all:.1f} F1" in note and f"({round(first, 1)})" in note
    levers = json.loads((shipped_biencoder() / "levers.json").read_text(encoding="utf-8"))
    # the raw run the levers file names: its first measuring command's --json file
    measured = levers["measured_by"][0].split()
    raw = Path(__file__).resolve().parents[2] / measured[measured.index("--json") + 1]
    sweep = json.loads(raw.read_text(encoding="utf-8"))
    row = next(r for r in sweep["rows"] if r["levers"] == {"smoothing": levers["smoothing"],
                                                           "prior": levers["prior"]})  # fmt: skip
    assert levers["f1_all"] == row["f1"]["ALL"]  # the shipped levers' own measured row
    assert f1_phrase("biencoder", PACKAGED_FINGERPRINT, "float32") == (
        f"{round(row['f1']['ALL'], 1)} F1 on ALL as shipped"
    )


def test_the_recorded_figures_are_copied_from_their_raw_run_records():
    recorded = recorded_results()
    root = Path(__file__).resolve().parents[2]
    for entry in [*recorded["runs"], *recorded["baselines"].values()]:
        source = root / entry["source"]
        if not source.is_file():
            pytest.skip(f"{entry['source']} is not here (an installed package)")
        data = json.loads(source.read_text(encoding="utf-8"))
        for part in entry["pointer"].strip("/").split("/"):
            data = data[int(part)] if isinstance(data, list) else data[part]
        assert entry["f1_all"] == data, entry["source"]  # copied exactly


def test_every_system_left_out_says_why_in_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DATA", str(tmp_path))  # no framework there: no SemCor
    missing = missing_systems("bert-base-uncased")  # a model without a bi-encoder
    offered = offered_systems("bert-base-uncased")
    assert set(missing) | set(offered) == set(SYSTEMS) and not set(missing) & set(offered)
    assert set(missing) == {"biencoder", "best", "plain"}
    assert "no WSD bi-encoder was trained for 'bert-base-uncased'" in missing["biencoder"]
    assert "needs SemCor" in missing["best"] and "workbench data download" in missing["plain"]
    assert all("\n" not in why for why in missing.values())
    assert "biencoder" not in missing_systems(None)  # the packaged model ships one
