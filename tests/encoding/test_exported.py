"""The ONNX Runtime backend: an export made once per model, checked before it is trusted, giving
the torch backend's words, rows and vectors; answers that import no torch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

from workbench import Encoder
from workbench.cli.main import main
from workbench.encoding import models
from workbench.encoding.exported import make, quantize
from workbench.encoding.exported.backend import choose_backend
from workbench.encoding.exported.store import (
    MODEL_FILE,
    RECORD_FILE,
    TOKENIZER_FILE,
    export_folder,
    refusal_path,
)
from workbench.encoding.models import load_tokenizer, resolve_model
from workbench.errors import InputError

SENTENCES = [
    "He sat on the bank of the river.",
    "She robbed the bank, unbelievably, with a toothbrush!",
    ["Embeddings", "differ", "by", "layer", "and", "by", "model", "."],
]


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """The largest difference per hidden state, relative to that state's largest value."""
    return max(
        float(np.abs(a[:, k] - b[:, k]).max() / np.abs(b[:, k]).max()) for k in range(a.shape[1])
    )


def test_both_backends_give_the_same_words_rows_and_vectors_on_the_tiny_bert(
    tiny_encoder, tiny_onnx_encoder
):
    assert tiny_encoder.backend.name == "torch" and tiny_onnx_encoder.backend.name == "onnx"
    a = tiny_onnx_encoder.encode(SENTENCES)
    b = tiny_encoder.encode(SENTENCES)
    assert a.words == b.words
    np.testing.assert_array_equal(a.spans, b.spans)
    np.testing.assert_array_equal(a.sentence_index, b.sentence_index)
    assert relative_error(a.vectors, b.vectors) < 1e-4
    assert tiny_onnx_encoder.describe()["parameters"] == tiny_encoder.describe()["parameters"]
    assert tiny_onnx_encoder.max_length == tiny_encoder.max_length
    assert tiny_onnx_encoder.specials == tiny_encoder.specials


def test_both_backends_agree_on_the_packaged_model_long_sentences_included(default_encoder):
    assert default_encoder.backend.name == "onnx"  # the default on a CPU
    torch_enc = Encoder(device="cpu", backend="torch", dtype="float32", max_length=16)
    onnx_enc = Encoder(device="cpu", max_length=16)  # windows: sentences longer than 16
    a, b = onnx_enc.encode(SENTENCES), torch_enc.encode(SENTENCES)
    assert a.words == b.words
    np.testing.assert_array_equal(a.spans, b.spans)
    assert relative_error(a.vectors, b.vectors) < 1e-4
    whole = default_encoder.encode(SENTENCES, layers=[0, 6], pooling="first")
    assert whole.vectors.shape == (len(a.words), 2, 384)


def test_the_export_is_made_once_and_found_by_the_next_encoder(tiny_model_dir, own_exports):
    enc = Encoder(str(tiny_model_dir), device="cpu")
    assert enc.backend.name == "onnx" and "made now" in enc.backend.reason
    folder = export_folder(enc.fingerprint)
    record = json.loads((folder / RECORD_FILE).read_text())
    assert record["probe_error"] < record["tolerance"] == make.TOLERANCE
    again = Encoder(str(tiny_model_dir), device="cpu")
    assert again.backend.reason.endswith(str(folder))
    np.testing.assert_array_equal(again.encode(SENTENCES).vectors, enc.encode(SENTENCES).vectors)


@pytest.mark.parametrize(
    "damage",
    ["truncate model", "tamper tokenizer", "other fingerprint", "other opset", "no record"],
)
def test_a_damaged_or_foreign_export_is_refused_and_made_again(tiny_model_dir, own_exports, damage):
    first = Encoder(str(tiny_model_dir), device="cpu")
    folder = export_folder(first.fingerprint)
    if damage == "truncate model":
        data = (folder / MODEL_FILE).read_bytes()
        (folder / MODEL_FILE).write_bytes(data[: len(data) // 2])
    elif damage == "tamper tokenizer":
        text = (folder / TOKENIZER_FILE).read_text().replace('"[CLS]"', '"[CLX]"')
        (folder / TOKENIZER_FILE).write_text(text)
    elif damage == "no record":
        (folder / RECORD_FILE).unlink()
    else:
        record = json.loads((folder / RECORD_FILE).read_text())
        key, value = ("fingerprint", "0" * 16) if damage == "other fingerprint" else ("opset", 13)
        record[key] = value
        (folder / RECORD_FILE).write_text(json.dumps(record))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        again = Encoder(str(tiny_model_dir), device="cpu")
    assert again.backend.name == "onnx" and "made now" in again.backend.reason
    if damage != "no record":
        assert any("made again" in str(w.message) for w in caught)
    np.testing.assert_allclose(
        again.encode(SENTENCES).vectors, first.encode(SENTENCES).vectors, atol=1e-6
    )


def test_an_export_that_disagrees_with_torch_is_refused_and_the_model_stays_on_torch(
    tiny_model_dir, own_exports, monkeypatch
):
    tolerance = make.TOLERANCE
    monkeypatch.setattr(make, "TOLERANCE", -1.0)  # nothing agrees
    loads = []
    plain_load = models.load_pretrained
    monkeypatch.setattr(models, "load_pretrained", lambda *a: loads.append(a) or plain_load(*a))
    with pytest.warns(UserWarning, match="stays on torch.*differ from torch"):
        enc = Encoder(str(tiny_model_dir), device="cpu", dtype="float32")
    assert enc.backend.name == "torch" and "refused" in enc.backend.reason
    assert len(loads) == 1  # the float32 model the export was made from answers
    fresh = Encoder(str(tiny_model_dir), device="cpu", dtype="float32", backend="torch")
    np.testing.assert_array_equal(enc.encode(SENTENCES).vectors, fresh.encode(SENTENCES).vectors)
    assert refusal_path(enc.fingerprint).is_file() and not export_folder(enc.fingerprint).exists()
    monkeypatch.setattr(make, "TOLERANCE", tolerance)
    later = Encoder(str(tiny_model_dir), device="cpu")  # goes straight to torch, says why
    assert later.backend.name == "torch" and "differ from torch" in later.backend.reason
    with pytest.raises(InputError, match="export was refused"):
        Encoder(str(tiny_model_dir), device="cpu", backend="onnx")


def test_torch_answers_where_onnx_runtime_cannot_and_onnx_insists(tiny_model_dir):
    source = resolve_model(str(tiny_model_dir))
    for kwargs, reason in (
        ({"dtype": "bfloat16"}, "bfloat16"),
        ({"compile": True}, "torch.compile"),
        ({"attention": "eager"}, "attention"),
        ({"overlapped": True}, "overlapped"),
    ):
        args = {"dtype": "auto", **kwargs}
        dtype = args.pop("dtype")
        choice = choose_backend("auto", "cpu", dtype, source, **args)
        assert choice.name == "torch" and reason in choice.reason
        with pytest.raises(InputError, match=reason):
            choose_backend("onnx", "cpu", dtype, source, **args)
    assert choose_backend("auto", "cuda", "auto", source).name == "torch"
    assert choose_backend("torch", "cpu", "auto", source).reason == "torch, as asked"
    with pytest.raises(InputError, match="Unknown backend"):
        choose_backend("tensorrt", "cpu", "auto", source)


#: Runs a command of the CLI in this process and says which heavy modules it imported.
PROBE = """
import sys
from workbench.cli.main import main
code = main(sys.argv[1:])
heavy = sorted(m for m in ("torch", "transformers", "peft", "accelerate") if m in sys.modules)
print("HEAVY=" + ",".join(heavy), "CODE=" + str(code))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["info"],
        ["wsd", "disambiguate", "She sat on the bank and watched the river.", "--word", "bank"],
        ["embed", "{text}", "--out", "{out}.npz", "--layers", "-1"],
        [
            "senses",
            "separation",
            "bank",
            "--source",
            "demo",
            "--layers",
            "-1",
            "--reference",
            "demo",
        ],
    ],
    ids=["help", "info", "wsd-disambiguate", "embed", "senses"],
)
def test_the_answering_path_of_the_command_line_imports_no_torch(argv, default_encoder, tmp_path):
    """Once a model's export exists (the first run makes the ones it needs: the shipped
    bi-encoder's towers, say), every answer runs on ONNX Runtime, tokenizers and numpy."""
    text = tmp_path / "in.txt"
    text.write_text("The bank raised its rates.\nWe sat on the river bank.\n")
    for run_number in (1, 2):
        args = [a.format(text=text, out=tmp_path / f"out{run_number}") for a in argv]
        run = subprocess.run(
            [sys.executable, "-c", PROBE, *args],
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "WORKBENCH_DTYPE": ""},
        )
        last = run.stdout.strip().splitlines()[-1]
        assert last.endswith("CODE=0"), run.stdout[-2000:] + run.stderr[-2000:]
    assert last == "HEAVY= CODE=0", run.stdout[-2000:] + run.stderr[-2000:]


def test_backend_torch_still_answers_on_the_command_line(default_encoder, capsys):
    argv = ["wsd", "disambiguate", "He deposited the cheque at the bank.", "--word", "bank"]
    assert main([*argv, "--backend", "torch"]) == 0
    on_torch = capsys.readouterr().out
    assert "WORKBENCH_BACKEND" not in os.environ  # --backend held for that command only
    assert main(argv) == 0
    on_onnx = capsys.readouterr().out

    def best(out: str) -> list[str]:
        return [line.split()[2] for line in out.splitlines() if line.startswith("*")]

    assert best(on_torch) and best(on_torch) == best(on_onnx)


def test_the_exports_tokenizer_cuts_and_marks_texts_as_transformers_does(default_encoder):
    """The gloss side tokenizes whole texts cut to a length: the same ids either way."""
    texts = [
        "a long ridge or pile",
        "sloping land (especially the slope beside a body of water) " * 4,
        "",
        "naïve café — «quoted» text with symbols: 3½ %, $, & and emoji 🙂",
    ]
    reference = load_tokenizer(resolve_model(None))
    onnx_side = default_encoder.tokenizer
    for cut in (8, 32):
        want = reference(texts, truncation=True, max_length=cut)["input_ids"]
        assert onnx_side(texts, truncation=True, max_length=cut)["input_ids"] == want
    words = [["Embeddings", "differ", "by", "layer", "."], ["naïve", "café", "🙂"]]
    want = reference(words, is_split_into_words=True)
    got = onnx_side(words, is_split_into_words=True)
    assert got["input_ids"] == want["input_ids"]
    assert [got.word_ids(i) for i in range(2)] == [want.word_ids(i) for i in range(2)]


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of each pair of rows of two ``(n, layers, dim)`` arrays: ``(n, layers)``."""
    return (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))


def test_int8_is_made_from_the_float32_export_checked_and_found_again(tiny_model_dir, own_exports):
    exact = Encoder(str(tiny_model_dir), device="cpu")
    quick = Encoder(str(tiny_model_dir), device="cpu", dtype="int8")
    assert quick.backend.name == "onnx" and quick.dtype_name == "int8"
    folder = export_folder(quick.fingerprint, "int8")
    assert "int8 export made now" in quick.backend.reason and str(folder) in quick.backend.reason
    record = json.loads((folder / RECORD_FILE).read_text())
    assert record["dtype"] == "int8" and record["probe_error"] <= record["tolerance"]
    assert (
        record["model_sha256"]
        != json.loads((export_folder(exact.fingerprint) / RECORD_FILE).read_text())["model_sha256"]
    )  # another graph: its weights are int8
    a, b = quick.encode(SENTENCES), exact.encode(SENTENCES)
    assert a.words == b.words
    np.testing.assert_array_equal(a.vectors[:, 0], b.vectors[:, 0])  # embeddings: untouched
    assert not np.array_equal(a.vectors[:, -1], b.vectors[:, -1])
    assert cosines(a.vectors[:, 1:], b.vectors[:, 1:]).min() > 0.9
    again = Encoder(str(tiny_model_dir), device="cpu", dtype="int8")
    assert again.backend.reason.endswith(str(folder))
    np.testing.assert_array_equal(again.encode(SENTENCES).vectors, a.vectors)


def test_int8_answers_on_onnx_runtime_or_says_why_not(tiny_model_dir, own_exports, monkeypatch):
    with pytest.raises(InputError, match="int8 runs on ONNX Runtime only"):
        Encoder(str(tiny_model_dir), device="cpu", dtype="int8", backend="torch")
    with pytest.raises(InputError, match="int8.*torch.compile"):
        Encoder(str(tiny_model_dir), device="cpu", dtype="int8", compile=True)
    monkeypatch.setattr(quantize, "TOLERANCE", -1.0)  # nothing agrees
    with pytest.raises(InputError, match="int8 export was refused.*cosine"):
        Encoder(str(tiny_model_dir), device="cpu", dtype="int8")
    fingerprint = Encoder(str(tiny_model_dir), device="cpu").fingerprint  # float32 answers
    assert refusal_path(fingerprint, "int8").is_file()
    monkeypatch.setattr(quantize, "TOLERANCE", 0.1)
    with pytest.raises(InputError, match="refused"):  # recorded: not tried again
        Encoder(str(tiny_model_dir), device="cpu", dtype="int8")


def test_int8_on_the_command_line_keeps_the_packaged_models_answer(default_encoder, capsys):
    argv = ["wsd", "disambiguate", "She sat on the bank and watched the river.", "--word", "bank"]
    assert main([*argv, "--dtype", "int8"]) == 0
    quick = capsys.readouterr().out
    assert main(argv) == 0
    exact = capsys.readouterr().out
    chosen = [[line.split()[2] for line in out.splitlines() if line.startswith("*")]
              for out in (quick, exact)]  # fmt: skip
    assert chosen[0] == chosen[1] == ["bank%1:17:01::"]  # the same answer, the river's bank


def test_cache_list_shows_every_export_and_refusal(tiny_model_dir, own_exports, capsys):
    enc = Encoder(str(tiny_model_dir), device="cpu")
    (own_exports / "onnx" / "0123456789abcdef-float32-opset17-v1").mkdir()  # no record
    with open(refusal_path("fedcba9876543210"), "w") as fh:
        json.dump({"reason": "its hidden states differ", "versions": {}}, fh)
    assert main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert "model exports" in out and f"{enc.fingerprint}  float32" in out
    assert "2 layers x 32" in out
    assert "0123456789abcdef-float32-opset17-v1" in out and "no readable record" in out
    assert "refused: its hidden states differ" in out
