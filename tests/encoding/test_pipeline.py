"""The encoder's plain loop and its overlapped run (workbench.encoding.pipeline.overlap): the
vectors of a plain batch loop, in input order, whichever stages overlap; failures and
interrupts end it with no thread left running and no output file passed off as complete."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

from bench.lib.stages import StageTimes, encode_in_stages, model_inputs
from workbench import Encoder
from workbench.encoding.batching import BatchBuilder
from workbench.encoding.pipeline.overlap import PipelineConfig, run_overlapped
from workbench.encoding.prepare import prepare
from workbench.encoding.rows import RowLayout, keep_masks
from workbench.errors import EncodingError, InputError

THREADED = PipelineConfig(overlap=True, prefetch=2, in_flight=1)
#: threaded, the input tokenized in chunks of 40, 80, 160, ... words by the producer thread
STREAMED = PipelineConfig(overlap=True, prefetch=2, in_flight=1, stream_words=40)
RNG = np.random.default_rng(0)
VOCAB = "the of river bank money unbelievably sat deposit loan fishing boat walked quickly".split()
# short and long sentences (max_length 64 on the tiny model: the 150-word one runs in windows)
SENTENCES = [[VOCAB[i] for i in RNG.integers(0, len(VOCAB), n)] for n in (5, 150, 1, 12, 30, 7)]
SENTENCES += [["Unbelievably", ",", "they", "sat", "on", "the", "riverbank", "."]] * 20
KEEP = [sorted(RNG.choice(len(s), (len(s) + 1) // 2, replace=False).tolist()) for s in SENTENCES]
KEEP[3] = []  # a sentence with nothing kept


def pipeline_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("workbench-")]


def plain_loop(enc, sentences, layers=None, keep=None, pooling="mean", store=np.float32):
    """A straightforward loop over the encoder's batches (chunk by chunk where it streams):
    run the model, then pool every kept word of every window in Python, one word and one layer
    at a time."""
    layout = RowLayout.build(sentences, keep_masks(sentences, keep))
    kept = enc.check_layers(layers)
    out = np.full((layout.n, len(kept), enc.dim), np.nan, dtype=store)
    prefix = len(enc.specials.head)
    for builder, batch in enc.batch_stream(sentences, layout.rows, pooling):
        prep = builder.prep  # the chunk's: sentence indices within the chunk
        ids, mask, windows, bounds = builder.inputs(batch)
        with torch.inference_mode():
            hs = enc.model(
                input_ids=torch.from_numpy(ids),
                attention_mask=torch.from_numpy(mask),
                output_hidden_states=True,
            ).hidden_states
        for r, (w, (a, _)) in enumerate(zip(windows, bounds)):
            off = prep.offsets[w.sentence]
            for j in w.owned:
                row = builder.rows[prep.sentence_words[w.sentence] + j]
                if row < 0:
                    continue
                span = list(range(prefix + off[j] - a, prefix + off[j + 1] - a))
                for slot, k in enumerate(kept):
                    h = hs[k][r]
                    if pooling == "first" or len(span) == 1:
                        v = h[span[0]]
                    elif pooling == "last":
                        v = h[span[-1]]
                    else:  # the mean as the encoder sums it: each part times 1/n, in order
                        weight = torch.tensor(1 / len(span), dtype=torch.float32)
                        v = torch.zeros(enc.dim)
                        for p in span:
                            v += h[p] * weight
                    out[row, slot] = v.numpy().astype(store)
    return out


@pytest.fixture(scope="module")
def small_batches(tiny_model_dir):
    """The tiny model with a small token budget (many batches) and each pipeline setting."""
    return {
        name: Encoder(
            model=str(tiny_model_dir),
            device="cpu",
            max_batch_tokens=256,
            pipeline=cfg,
            backend="torch",
        )
        for name, cfg in (
            ("inline", None),
            ("threaded", THREADED),
            ("streamed", STREAMED),
        )
    }


@pytest.mark.parametrize("setting", ["inline", "threaded", "streamed", "profiled"])
@pytest.mark.parametrize("pooling", ["first", "mean", "last"])
def test_pipeline_equals_a_plain_batch_loop(small_batches, setting, pooling):
    enc = small_batches["inline" if setting == "profiled" else setting]
    expected = plain_loop(enc, SENTENCES, pooling=pooling)
    times = StageTimes() if setting == "profiled" else None
    if times is None:
        emb = enc.encode(SENTENCES, pooling=pooling, progress=False)
    else:  # the stages as bench/speed/extract.py --profile times them
        emb = encode_in_stages(enc, SENTENCES, times, pooling=pooling)
    assert not np.isnan(expected).any()
    np.testing.assert_array_equal(emb.vectors, expected)  # bit-identical
    assert emb.words == [w for s in SENTENCES for w in s]  # input order
    assert emb.sentence_index.tolist() == [i for i, s in enumerate(SENTENCES) for _ in s]
    if times is not None:
        assert times.batches == len(list(model_inputs(enc, SENTENCES))) > 5
        assert times.seconds["forward"] > 0 and sum(times.shares().values()) == pytest.approx(1)


@pytest.mark.parametrize("setting", ["inline", "threaded", "streamed"])
def test_overlapped_profile_times_the_real_run(small_batches, setting):
    """StageTimes(overlapped=True) (bench.lib.stages): the run is the usual one (same vectors),
    and the profile holds what each of its threads did and waited for."""
    enc = small_batches[setting]
    times = StageTimes(overlapped=True)
    emb = encode_in_stages(enc, SENTENCES, times)
    np.testing.assert_array_equal(emb.vectors, enc.encode(SENTENCES, progress=False).vectors)
    assert times.batches == 0 and times.seconds["forward"] == 0  # nothing run in turn
    assert all(v >= 0 for v in times.threads.values())
    threads = {key.split(":")[0] for key in times.threads}
    if setting == "inline":  # the calling thread does everything
        assert times.seconds["tokenize"] > 0
        assert set(times.threads) == {"main: wait for a batch", "main: run and write"}
    else:
        assert times.seconds["tokenize"] > 0
        assert threads == {"main", "producer", "writer"}
        assert times.threads["producer: prepare"] > 0 and times.threads["writer: write"] > 0
        assert times.threads["main: launch"] > 0
    assert not pipeline_threads()


@pytest.mark.parametrize("setting", ["inline", "threaded", "streamed"])
def test_keep_layers_out_and_float16(small_batches, setting, tmp_path):
    enc = small_batches[setting]
    layers = [-1, 0]
    expected = plain_loop(enc, SENTENCES, layers, KEEP, "mean", np.float16)
    path = tmp_path / "vectors.npy"
    emb = enc.encode(
        SENTENCES, layers=layers, keep=KEEP, out=path, store_dtype="float16", progress=False
    )
    assert isinstance(emb.vectors, np.memmap) and emb.vectors.dtype == np.float16
    np.testing.assert_array_equal(np.load(path), expected)
    assert emb.layers == (0, 2)
    assert emb.words == [s[p] for s, k in zip(SENTENCES, KEEP) for p in k]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vectors.npy"]  # no temporary left


def test_threaded_and_inline_agree_on_the_default_budget(tiny_model_dir, tiny_encoder):
    threaded = Encoder(model=str(tiny_model_dir), device="cpu", pipeline=THREADED, backend="torch")
    np.testing.assert_array_equal(
        threaded.encode(SENTENCES).vectors, tiny_encoder.encode(SENTENCES).vectors
    )


def test_streamed_chunks_agree_with_the_whole_input(small_batches):
    """Chunks change which sentences share a batch, nothing else: the same rows, spans and
    notes, vectors equal up to the rounding of other batch shapes; model_inputs gives the
    batches encode runs."""
    streamed, whole = small_batches["streamed"], small_batches["inline"]
    odd = [*SENTENCES, ["the", "\u0301", "bank"]] * 3  # an unknown-token word in three chunks
    stream = streamed.batch_stream(odd, None, "mean")
    batches = [(b.prep, batch.tolist()) for b, batch in stream]
    assert len(stream.bounds) > 3 and len(stream.preps) == len(stream.bounds)
    assert [ids.shape for ids, _ in model_inputs(streamed, odd)] == [
        (len(batch), max(p.word_offsets[p.sentence_words[w.sentence] + w.word_end]
                         - p.word_offsets[p.sentence_words[w.sentence] + w.word_start]
                         for w in (p.windows[i] for i in batch)) + streamed.specials.count)
        for p, batch in batches
    ]  # fmt: skip
    with pytest.warns(UserWarning, match="3 word.s. map to no subword") as caught:
        a = streamed.encode(odd, progress=False)
    assert len([w for w in caught if "no subword" in str(w.message)]) == 1  # one note, merged
    with pytest.warns(UserWarning, match="no subword"):
        b = whole.encode(odd, progress=False)
    assert a.notes == b.notes and a.words == b.words
    np.testing.assert_array_equal(a.spans, b.spans)
    np.testing.assert_array_equal(a.sentence_index, b.sentence_index)
    np.testing.assert_allclose(a.vectors, b.vectors, rtol=1e-5, atol=1e-5)


def test_bad_input_found_in_a_later_chunk_names_its_sentence(small_batches, tmp_path):
    """A word with no subword and no unknown token, first met in a chunk the producer
    tokenizes while earlier batches run: the caller gets the error naming the sentence of
    the whole input; no thread left, no output file."""
    enc = small_batches["streamed"]
    tok = enc.tokenizer
    unk = tok.unk_token_id
    bad = [*SENTENCES, ["the", "\u0301", "bank"]]
    try:
        tok.unk_token = None
        assert tok.unk_token_id is None
        with pytest.raises(InputError, match=f"Word 1 of sentence {len(SENTENCES)} "):
            enc.encode(bad, out=tmp_path / "v.npy", progress=False)
    finally:
        tok.unk_token = tok.convert_ids_to_tokens(unk)
    assert tok.unk_token_id == unk
    bounds = enc.batch_stream(bad, None, "mean").bounds
    assert len(bounds) > 2 and bounds[-1][0] > 0  # in the last chunk: found late, not at once
    assert pipeline_threads() == []
    assert list(tmp_path.iterdir()) == []


def _fail_on_call(n, exc):
    """A BatchBuilder.build that raises ``exc`` on its n-th call (bad input found late)."""
    real = BatchBuilder.build
    calls = [0]

    def build(self, batch):
        calls[0] += 1
        if calls[0] == n:
            raise exc
        return real(self, batch)

    return build


@pytest.mark.parametrize("setting", ["inline", "threaded", "streamed"])
@pytest.mark.parametrize(
    ("exc", "kind", "needle"),
    [
        (InputError("word 3 of sentence 9 has no subword"), InputError, "sentence 9"),
        (IndexError("index 70000 is out of bounds"), EncodingError, "prep stage.*IndexError"),
    ],
)
def test_producer_error_reaches_the_caller(
    small_batches, setting, exc, kind, needle, monkeypatch, tmp_path
):
    enc = small_batches[setting]
    monkeypatch.setattr(BatchBuilder, "build", _fail_on_call(3, exc))
    path = tmp_path / "vectors.npy"
    path.write_bytes(b"the user's earlier file")
    with pytest.raises(kind, match=needle):
        enc.encode(SENTENCES, out=path, progress=False)
    assert pipeline_threads() == []
    assert path.read_bytes() == b"the user's earlier file"  # untouched, no partial output
    assert [p.name for p in tmp_path.iterdir()] == ["vectors.npy"]


@pytest.mark.parametrize("setting", ["inline", "threaded", "streamed"])
def test_out_of_memory_in_the_forward_pass(small_batches, setting, monkeypatch, tmp_path):
    enc = small_batches[setting]
    real = enc.runner.model
    calls = [0]

    def forward(**kwargs):
        calls[0] += 1
        if calls[0] == 3:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(**kwargs)

    monkeypatch.setattr(enc.runner, "model", forward)
    with pytest.raises(EncodingError, match="ran out of memory .*max_batch_tokens"):
        enc.encode(SENTENCES, out=tmp_path / "v.npy", progress=False)
    assert pipeline_threads() == []
    assert list(tmp_path.iterdir()) == []  # no output file, complete or not
    monkeypatch.undo()
    again = enc.encode(SENTENCES[:3], progress=False)  # the encoder still works
    assert len(again) == sum(len(s) for s in SENTENCES[:3])


@pytest.mark.parametrize("setting", ["inline", "threaded", "streamed"])
def test_keyboard_interrupt_stops_the_threads(small_batches, setting, tmp_path):
    enc = small_batches[setting]
    seen = []

    def progress(fraction):
        seen.append(fraction)
        if len(seen) == 2:
            assert setting == "inline" or pipeline_threads()  # the threads were running
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        enc.encode(SENTENCES, out=tmp_path / "v.npy", progress=progress)
    assert pipeline_threads() == []
    assert list(tmp_path.iterdir()) == []
    again = enc.encode(SENTENCES[:3], progress=False)  # the encoder still works
    assert len(again) == sum(len(s) for s in SENTENCES[:3])


def test_writer_error_reaches_the_caller(tiny_encoder):
    """A write that fails on the writer thread (here: an output too small) ends the run."""
    enc = tiny_encoder
    prep = prepare(enc.tokenizer, SENTENCES, enc.window_tokens)
    layout = RowLayout.build(SENTENCES, keep_masks(SENTENCES, None))
    builder = BatchBuilder(prep, enc.specials, layout.rows, "mean", max_batch_tokens=256)
    dest = torch.zeros((5, enc.n_hidden, enc.dim))
    with pytest.raises(EncodingError, match="write stage"), torch.inference_mode():
        work = [(builder, batch) for batch in builder.batches()]
        run_overlapped(work, enc.runner, [0, 1, 2], dest, "cpu", THREADED)
    assert pipeline_threads() == []


def test_pack_round_trip(tiny_encoder):
    """The packed host buffer (one copy to a GPU) unpacks to the batch's own arrays."""
    enc = tiny_encoder
    prep = prepare(enc.tokenizer, SENTENCES, enc.window_tokens)
    layout = RowLayout.build(SENTENCES, keep_masks(SENTENCES, KEEP))
    builder = BatchBuilder(prep, enc.specials, layout.rows, "mean", max_batch_tokens=256)
    for windows in builder.batches():
        batch = builder.build(windows)
        direct = batch.to_device("cpu")
        packed = batch.to_device("cpu", batch.pack(pin=False))
        assert (direct.mask is None) == (packed.mask is None) == (not batch.padded)
        if batch.padded:
            assert torch.equal(direct.mask, packed.mask)
        for a, b in (
            (direct.ids, packed.ids),
            (direct.index.single_positions, packed.index.single_positions),
            (direct.index.multi_positions, packed.index.multi_positions),
            (direct.index.multi_segments, packed.index.multi_segments),
            (direct.index.multi_weights, packed.index.multi_weights),
        ):
            assert torch.equal(a, b)
        assert direct.index.n_multi == packed.index.n_multi


def test_batches_without_padding_run_without_a_mask(tiny_model_dir, monkeypatch):
    """A batch of one length gets mask None (no device sync in transformers' mask check);
    a padded one its mask."""
    enc = Encoder(model=str(tiny_model_dir), device="cpu", max_batch_tokens=100, backend="torch")
    seen = []
    real = enc.runner.model

    def forward(**kwargs):
        mask = kwargs["attention_mask"]
        seen.append(None if mask is None else bool(mask.all()))
        return real(**kwargs)

    monkeypatch.setattr(enc.runner, "model", forward)
    enc.encode([["a", "b", "c"]] * 40 + [["a"] * 7, ["a"] * 6])
    assert seen == [False, None, None]  # 7 + 6 words padded together, then 33 + 7 unpadded


def test_config_defaults_per_device(tiny_encoder):
    cfg = PipelineConfig()
    assert not cfg.overlap_on("cpu") and not tiny_encoder.overlapped
    assert cfg.overlap_on("cuda:0") and cfg.prefetch == 4 and cfg.in_flight == 3
    assert not cfg.overlap_on("mps")
    assert PipelineConfig(overlap=True).overlap_on("cpu")
    assert not PipelineConfig(overlap=False).overlap_on("cuda")
