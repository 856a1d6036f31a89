"""Benchmark: what the safety of issue 12 costs, each against a plain baseline in this process.

Run:  python -m bench run robustness [--sentences 1000] [--repeats 3] [--json PATH]

1. XML reading: :func:`workbench.corpora.parsing.parse_xml` as the readers call it (expat fed
   in 64 KiB chunks, each checked for a run of more than 64 KiB without ``<``) against the same
   parse fed by expat's own ``ParseFile`` (``max_token_bytes=None``: no bound), on SemCor.
2. Model identity: the content fingerprint (a full SHA-256 of the weights, config and tokenizer
   files of a fresh copy of the packaged model, page-cached, not hashed before in this process)
   against loading the model and tokenizer themselves.
3. A cache hit: :func:`workbench.encoding.cache.encode_cached` on a stored entry (every file's
   size, the CRC-32 of ``index.npz`` and of the whole ``vectors.npy``, the meta checksum, the
   arrays' fit; also with ``verify=False``, no CRC of the vectors) against plain ``np.load`` of
   the same ``vectors.npy`` (memory map) and ``index.npz``.
4. Saving embeddings: :meth:`LayerwiseEmbeddings.save` (the .npz, the escaped .tsv and
   .sentences.tsv, their SHA-256 in the .npz, per-writer temporaries and renames) against one
   plain ``np.savez`` of the same arrays.
5. A fine-tuning checkpoint of the packaged model with AdamW state: the safetensors + JSON
   format (write, then read) against the same state through ``torch.save`` /
   ``torch.load(weights_only=True)`` (the pickled format it replaces, read the safe way).

Numbers are medians of ``--repeats`` (first, cold runs dropped where noted); the machine is
shared, so the load average is printed and stored.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import torch

from bench.lib.record import write_json
from workbench.corpora.datasets import dataset_paths
from workbench.corpora.parsing import parse_xml
from workbench.corpora.readers import Instance, Sentence, read_xml
from workbench.encoding import models
from workbench.encoding.cache import EmbeddingCache, encode_cached
from workbench.encoding.encoder import Encoder
from workbench.finetune.training import checkpoint as ckpt


def _median(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _row(name: str, ours: float, base: float) -> dict:
    print(f"{name:<34} {ours:9.3f} s  baseline {base:9.3f} s  ratio {ours / base:6.2f}")
    return {"name": name, "seconds": ours, "baseline_seconds": base, "ratio": ours / base}


def xml_reading(repeats: int) -> dict:
    xml, _ = dataset_paths("semcor")

    def bounded() -> None:
        parse_xml(xml, {}, Sentence, Instance)

    def plain() -> None:  # the same parse, fed by expat's ParseFile without the bound
        parse_xml(xml, {}, Sentence, Instance, max_token_bytes=None)

    return _row("XML read (SemCor)", _median(bounded, repeats), _median(plain, repeats))


def fingerprint(repeats: int) -> dict:
    source = models.resolve_model(None)

    def load() -> object:
        models.load_tokenizer(source)
        return models.load_model(source)

    model = load()
    with tempfile.TemporaryDirectory() as tmp:
        copies = []
        for i in range(repeats):  # a fresh place each time: no file hashed before here
            copies.append(Path(shutil.copytree(source.location, Path(tmp) / str(i))))
        it = iter(copies)

        def fresh_fingerprint() -> None:
            where = next(it)
            models.weights_fingerprint(models.ModelSource("copy", str(where), True), model.config)

        ours = _median(fresh_fingerprint, repeats)
    return _row("fingerprint vs model load", ours, _median(load, repeats))


def cache_hit(encoder: Encoder, words: list[list[str]], repeats: int) -> list[dict]:
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(tmp)
        encode_cached(encoder, words, cache=cache)
        entry = next(p for p in cache.dir.iterdir())

        def plain() -> None:
            vectors = np.load(entry / "vectors.npy", mmap_mode="r")
            with np.load(entry / "index.npz") as index:
                {k: index[k] for k in index.files}
            assert vectors.shape[0] > 0

        base = _median(plain, repeats)
        rows = [
            _row("cache hit (verify)", _median(
                lambda: encode_cached(encoder, words, cache=cache), repeats), base),
            _row("cache hit (verify=False)", _median(
                lambda: encode_cached(encoder, words, cache=cache, verify=False), repeats), base),
        ]  # fmt: skip
        size = (entry / "vectors.npy").stat().st_size
        print(f"  entry: {size / 2**20:.0f} MiB of vectors")
        rows[0]["vectors_mib"] = size / 2**20
        return rows


def saving(encoder: Encoder, words: list[list[str]], repeats: int) -> dict:
    emb = encoder.encode(words, progress=False)
    ids = [f"s{i}" for i in range(len(words))]
    with tempfile.TemporaryDirectory() as tmp:
        ours = _median(lambda: emb.save(Path(tmp) / "v.npz", sentence_ids=ids), repeats)

        def plain() -> None:
            np.savez(
                Path(tmp) / "plain.npz",
                vectors=emb.vectors,
                words=np.array(emb.words),
                sentence_index=emb.sentence_index,
                word_index=emb.word_index,
                spans=emb.spans,
            )

        return _row("save .npz + tables", ours, _median(plain, repeats))


def checkpoint(encoder: Encoder, repeats: int) -> dict:
    model = encoder.model
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    model(**encoder.tokenizer(["a b c"], return_tensors="pt")).last_hidden_state.sum().backward()
    optimizer.step()
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    state = ckpt.RunState(history=[])
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)

        def ours() -> None:
            ckpt.save_checkpoint(directory, model, optimizer, scheduler, state, {"run": 1})
            ckpt.load_checkpoint(directory, {"run": 1})

        def pickled() -> None:
            rng = ckpt.rng_state()  # NumPy's state as a tensor: weights_only=True reads it
            rng["numpy"] = (rng["numpy"][0], torch.from_numpy(rng["numpy"][1].astype(np.int64)),
                            *rng["numpy"][2:])  # fmt: skip
            blob = {
                "model": ckpt.trained_state_dict(model),
                "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(),
                "rng": rng,
                "state": state.__dict__,
                "identity": {"run": 1},
            }
            torch.save(blob, directory / "last.pt")
            torch.load(directory / "last.pt", weights_only=True)

        row = _row("checkpoint write + read", _median(ours, repeats), _median(pickled, repeats))
        row["file_mib"] = (directory / ckpt.LAST).stat().st_size / 2**20
        return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=1000, help="SemCor sentences encoded")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, {os.cpu_count()} CPUs")
    encoder = Encoder(device="cpu")
    semcor = read_xml(dataset_paths("semcor")[0])
    words = [list(s.words) for s in semcor.sentences[: args.sentences]]
    rows = [
        xml_reading(args.repeats),
        fingerprint(args.repeats),
        *cache_hit(encoder, words, args.repeats),
        saving(encoder, words, args.repeats),
        checkpoint(encoder, args.repeats),
    ]
    if args.json:
        facts = {"load_average": load, "cpus": os.cpu_count(), "sentences": args.sentences,
                 "words": sum(map(len, words)), "repeats": args.repeats}  # fmt: skip
        write_json(args.json, {"machine": facts, "rows": rows})


if __name__ == "__main__":
    main()
