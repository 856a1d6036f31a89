"""Every option of the WSD commands is checked before any work, and an option that cannot
apply is refused with its reason (exit 2, one line): nothing is read, encoded or trained
first."""

from __future__ import annotations

import json

import numpy as np
import pytest

from workbench.cli import geometry as geometry_cli
from workbench.cli import wsd as wsd_cli
from workbench.cli.main import main
from workbench.errors import DataError, InputError
from workbench.finetune.evaluation import compare
from workbench.wsd import builds, predict
from workbench.wsd.config import EncoderInfo, SenseIndexConfig
from workbench.wsd.index import SenseIndex
from workbench.wsd.store import load_index, save_index
from workbench.wsd.systems import open_system


@pytest.fixture
def no_work(monkeypatch):
    """Every way the WSD commands start work, recorded instead of done."""
    calls: list[str] = []

    def record(name):
        def called(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"{name} ran before the options were checked")

        return called

    for name in ("load_corpus", "encode_instances", "evaluate_corpus", "layer_sweep",
                 "_encoder", "disambiguate", "save_index", "load_wordnet"):  # fmt: skip
        monkeypatch.setattr(wsd_cli, name, record(name))
    return calls


BAD = [
    (["eval", "--system", "plain", "--correction", "bogus"], "correction must be one of"),
    (["eval", "--system", "best", "--correction", ""], "correction must be one of"),
    (["train", "--system", "plain", "--correction", "Zscore"], "correction must be one of"),
    (["eval", "--system", "best", "--gloss-weight", "2"], "gloss_weight must be in [0, 1]"),
    (["eval", "--system", "plain", "--layers", "sum(1"], "layer"),
    (["layers", "--corrections", "bogus"], "correction must be one of"),
    (["layers", "--corrections", "none", "zscore", "whitening"], "not 'whitening'"),
    (["layers", "--specs", "-1;nonsense"], "layer"),
    (["eval", "--index", "{idx}", "--correction", "zscore"], "cannot apply to a saved --index"),
    (["eval", "--index", "{idx}", "--layers", "5"], "--layers cannot apply to a saved --index"),
    (["eval", "--index", "{idx}", "--train", "wordnet"], "--train cannot apply"),
    (["eval", "senseval2", "--data", "{tmp}/x.data.xml"], "give one of them"),
    (["eval", "senseval2", "--gold", "{tmp}/k.txt"], "--gold goes with a *.data.xml file"),
    (["train", "--system", "plain", "--gold", "{tmp}/k.txt"], "'semcor' is a dataset"),
    (["train", "--system", "wordnet", "--correction", "zscore"], "no corpus vectors"),
]


@pytest.mark.parametrize(
    ("argv", "expected"), BAD, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_a_bad_or_inapplicable_option_is_refused_before_any_work(
    argv, expected, tmp_path, capsys, no_work, monkeypatch
):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    args = [a.format(idx=tmp_path / "idx", tmp=tmp_path) for a in argv]
    assert main(["wsd", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err
    assert no_work == []


@pytest.mark.parametrize("models", [("default", "{tmp}/a-file.txt"), ("{tmp}/nothing", "default")])
def test_finetune_compare_finds_both_models_before_measuring_either(
    models, tmp_path, capsys, monkeypatch
):
    (tmp_path / "a-file.txt").write_text("not a model\n")
    measured: list[object] = []
    monkeypatch.setattr(compare, "compare_measure", lambda *a, **k: measured.append(a))
    argv = ["finetune", "compare", *(m.format(tmp=tmp_path) for m in models)]
    assert main([*argv, "--out", str(tmp_path / "cmp")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no model directory exists there" in err, err
    assert measured == [] and not (tmp_path / "cmp").exists()


@pytest.mark.parametrize("correction", [None, "", "bogus", 3, ["zscore"]])
def test_a_config_with_a_bad_correction_is_refused(correction):
    with pytest.raises(InputError, match="correction must be one of"):
        SenseIndexConfig(correction=correction)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="correction must be one of"):
        SenseIndexConfig.from_dict({"layers": "-1", "postprocess": correction})


@pytest.mark.parametrize("correction", [None, "", "bogus"])
def test_a_saved_index_whose_config_names_a_bad_correction_does_not_load(tmp_path, correction):
    info = EncoderInfo("toy", "fp-toy", 4, 3, "mean")
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(10, 4)).astype(np.float32)
    keys = [(f"w%1:00:0{i % 2}::",) for i in range(10)]
    index = SenseIndex(SenseIndexConfig(layers="-1")).fit(vecs, keys, info=info)
    path = save_index(index, tmp_path / "idx")
    meta = json.loads((path / "meta.json").read_text())
    meta["config"]["correction"] = correction
    meta["config"].pop("postprocess", None)
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(DataError, match="correction must be one of"):
        load_index(path, info=info)


# ---------------------------------------------------------------------- more of the round's members


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "--index", "{idx}", "--system", "plain"],
        ["disambiguate", "--index", "{idx}", "--system", "best", "--word", "bank", "The bank"],
    ],
    ids=["eval", "disambiguate"],
)
def test_a_system_beside_a_saved_index_is_refused_not_ignored(
    argv, tmp_path, capsys, no_work, monkeypatch
):
    """``--system plain --index DIR`` answered with the index's own system, the option
    silently dropped: it cannot apply, and says so."""
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    assert main(["wsd", *(a.format(idx=tmp_path / "idx") for a in argv)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot apply to a saved --index" in err, err
    assert no_work == []


@pytest.mark.parametrize("action", ["separation", "plot"])
def test_a_min_count_below_what_a_separation_takes_is_refused_while_parsing(
    action, tmp_path, capsys
):
    """``--min-count 1`` passed the parser, then was refused after the occurrences were read
    and encoded (the separation takes 2 and up)."""
    out = ["--out", str(tmp_path / "map.html")] if action == "plot" else []
    assert main(["senses", action, "bank", "--source", "demo", "--min-count", "1", *out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--min-count: must be an integer >= 2" in err, err


@pytest.mark.parametrize(
    "argv",
    [
        ["layers", "--specs=-1;9", "--train", "{xml}", "--test", "{xml}"],
        ["layers", "--specs=-9", "--train", "{xml}", "--test", "{xml}"],
    ],
    ids=["layer-9", "layer--9"],
)
def test_a_layer_the_model_lacks_is_refused_before_a_corpus_is_read(
    argv, tiny_model_dir, tmp_path, capsys, monkeypatch
):
    """``wsd layers --specs 99`` encoded both corpora (SemCor: minutes) before the spec met the
    model; the model's hidden states are known once it loads, before any corpus."""
    (tmp_path / "x.data.xml").write_text("<corpus/>")
    (tmp_path / "x.gold.key.txt").write_text("")
    read: list[str] = []
    for name in ("load_corpus", "encode_instances", "layer_sweep"):
        monkeypatch.setattr(wsd_cli, name, lambda *a, _n=name, **k: read.append(_n))
    args = [a.format(xml=tmp_path / "x.data.xml") for a in argv]
    assert main(["wsd", *args, "--model", str(tiny_model_dir), "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not exist: this model has hidden states 0..2" in err
    assert read == []


@pytest.mark.parametrize(("system", "layers"), [("plain", "9"), ("best", "-9"), ("wordnet", "3")])
def test_an_opened_system_checks_its_layers_when_its_encoder_loads(
    system, layers, tiny_model_dir, monkeypatch
):
    """``wsd eval --system plain --layers 99`` encoded all of SemCor (15 minutes) before the
    layer met the model: an opened system checks its index's layer spec as soon as its encoder
    loads, before any word is encoded."""

    def encoded(*a, **k):
        raise AssertionError("encoded before the layer spec was checked")

    monkeypatch.setattr(builds, "encode_instances", encoded)
    monkeypatch.setattr(predict, "encode_instances", encoded)
    opened = open_system(system, str(tiny_model_dir), device="cpu", changes={"layers": layers})
    with pytest.raises(InputError, match=f"Layer {layers} does not exist"):
        opened.index([("bank", "NOUN")])
    fine = open_system(system, str(tiny_model_dir), device="cpu", changes={"layers": "2"})
    assert fine.encoder.n_hidden == 3


@pytest.mark.parametrize(
    "option",
    [
        ["--workers", "3"],
        ["--shard-size", "5"],
        ["--address", "auto"],
        ["--keep", "instances"],
        ["--verify", "size"],
        ["--connect-timeout", "5"],
        ["--text-column", "body"],
        ["--gpus-per-worker", "0"],
        ["--cpus-per-worker", "2"],
    ],  # fmt: skip
    ids=lambda o: o[0],
)
def test_an_option_of_the_ray_engine_is_refused_for_a_local_run(option, tmp_path, capsys):
    """``embed --workers 3`` (no ``--engine ray``) ran in this one process, the option
    ignored: refused before the input is read, naming the option."""
    (tmp_path / "in.txt").write_text("the bank rose\n")
    argv = ["embed", str(tmp_path / "in.txt"), *option, "--out", str(tmp_path / "v.npz")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{option[0]}: option(s) of --engine ray" in err, err
    assert not (tmp_path / "v.npz").exists()


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (["--layers", "0,9"], "Layer 9 does not exist"),
        (["--rogue-layer", "9"], "--rogue-layer 9 is not analysed; choose from [0, 1, 2]"),
        (["--layers", "0,2", "--rogue-layer", "1"], "--rogue-layer 1 is not analysed"),
    ],  # fmt: skip
    ids=["layers", "rogue-layer", "rogue-layer-not-kept"],
)
def test_geometry_layers_meet_the_model_before_the_corpus_is_read(
    option, expected, tiny_model_dir, tmp_path, capsys, monkeypatch
):
    """``geometry --layers 99`` sampled the corpus first; ``--rogue-layer 99`` was refused by
    the figure, after the whole analysis."""
    read: list[object] = []
    monkeypatch.setattr(geometry_cli, "load_reference_corpus", lambda *a: read.append(a))
    argv = ["geometry", "--model", str(tiny_model_dir), "--device", "cpu", *option]
    assert main([*argv, "--out", str(tmp_path / "g")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err
    assert read == []
