"""Benchmark: Encoder.encode vs a plain per-sentence loop, and against the machine's FLOP bound.

Run:  python bench/extract.py [--sentences 2000] [--repeats 3] [--model M] [--device D]

Corpus: the first N sentences of SemCor (WSD data, $WORKBENCH_DATA or ../shared/data/wsd),
else WordNet example sentences. Prints, per repeat and as medians, words/s and tokens/s of
(a) the plain loop a tutorial would write (one sentence at a time through tokenizer and model,
    mean of each word's subwords in Python),
(b) a careful batched loop (sentences sorted by length, 64 a batch padded to the batch's
    longest, all hidden states stacked, subwords averaged with one scatter-add per sentence),
(c) ``Encoder.encode`` (all hidden states, vectors for every word in input order),
(d) with ``--compile``: ``Encoder(compile=True).encode`` after its compilation (timed apart),
and the model's bare forward pass on the encoder's own batches (no tokenizing, pooling or
output: the ceiling for any pipeline around this model), each as a speed-up over (a) and as a
fraction of the FLOP bound: measured torch matmul GFLOP/s (2048^3, the device's dtype) divided
by the model's FLOPs per token (its linear layers plus attention at the corpus's mean length).
All from the same process, interleaved, so machine noise hits them alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch

from workbench import Encoder
from workbench.corpora.datasets import load_dataset
from workbench.lexicon.examples import example_corpus


def load_sentences(n: int) -> tuple[list[list[str]], str]:
    try:
        corpus = load_dataset("semcor")
        return [list(s.words) for s in corpus.sentences[:n]], "SemCor"
    except Exception as exc:  # noqa: BLE001 - fall back to data that always exists
        print(f"(SemCor unavailable: {exc}; using WordNet examples)", file=sys.stderr)

        corpus = example_corpus()
        return [list(s.words) for s in corpus.sentences[:n]], "WordNet examples"


def matmul_gflops(device: str, dtype: torch.dtype, size: int = 2048, reps: int = 10) -> float:
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    for _ in range(2):
        a @ b
    times = []
    for _ in range(reps):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        t = time.perf_counter()
        a @ b
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    return 2 * size**3 / statistics.median(times) / 1e9


def flops_per_token(model: torch.nn.Module, mean_len: float) -> float:
    """2 x in x out for every Linear of the encoder (not the pooler), plus attention scores
    and context (4 x T x d per layer)."""
    linear = sum(
        2 * m.in_features * m.out_features
        for name, m in model.named_modules()
        if isinstance(m, torch.nn.Linear) and "pooler" not in name
    )
    cfg = model.config
    return linear + 4 * mean_len * cfg.hidden_size * cfg.num_hidden_layers


def plain_loop(enc, sentences) -> float:
    """One sentence at a time, as a tutorial writes it."""
    tok, model = enc.tokenizer, enc.model
    t = time.perf_counter()
    with torch.no_grad():
        for words in sentences:
            inputs = tok(words, is_split_into_words=True, return_tensors="pt", truncation=True)
            out = model(**inputs.to(enc.device), output_hidden_states=True)
            hs = torch.stack(out.hidden_states)[:, 0].float().cpu()  # (L, T, D)
            ids = inputs.word_ids(0)
            for w in range(len(words)):
                pos = [i for i, x in enumerate(ids) if x == w]
                if pos:
                    hs[:, pos].mean(1).numpy()
    return time.perf_counter() - t


def careful_loop(enc, sentences, batch_size: int = 64) -> float:
    """Sorted by length, fixed-size padded batches, pooling by scatter-add: what a careful
    user writes without the encoder's token budget, batch closing rule or output layout."""
    tok, model = enc.tokenizer, enc.model
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    out: list = [None] * len(sentences)
    t = time.perf_counter()
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            inputs = tok(
                [sentences[i] for i in idx],
                is_split_into_words=True,
                padding=True,
                truncation=True,
                return_tensors="pt",
            )
            states = model(**inputs.to(enc.device), output_hidden_states=True).hidden_states
            hs = torch.stack(states, dim=1).float()  # (B, L, T, D)
            for b, i in enumerate(idx):
                wids = inputs.word_ids(b)
                pos = [p for p, w in enumerate(wids) if w is not None]
                seg = torch.tensor([wids[p] for p in pos], device=hs.device)
                n = len(sentences[i])
                summed = torch.zeros(hs.shape[1], n, hs.shape[3], device=hs.device)
                summed.index_add_(1, seg, hs[b][:, pos])
                counts = torch.bincount(seg, minlength=n).clamp(min=1)
                out[i] = (summed / counts[None, :, None]).transpose(0, 1).cpu().numpy()
    return time.perf_counter() - t


def forward_batches(enc, sentences) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The padded (ids, mask) batches ``Encoder.encode`` would run, built once by its own code."""
    batches = []
    with torch.inference_mode():  # as in encode (a compiled graph guards on it)
        for ids, mask in enc.model_inputs(sentences):
            batches.append(tuple(torch.from_numpy(x).to(enc.device) for x in (ids, mask)))
    return batches


def forward_only(enc, batches) -> float:
    t = time.perf_counter()
    with torch.inference_mode():
        for ids, mask in batches:
            enc.runner(ids, mask)
    sync(enc)
    return time.perf_counter() - t


def sync(enc) -> None:
    if enc.device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(enc, fn, *args) -> float:
    sync(enc)
    t = time.perf_counter()
    fn(*args)
    sync(enc)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sentences", type=int, default=2000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", default=None)
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default="auto")
    ap.add_argument("--batch-tokens", type=int, default=8192)
    ap.add_argument(
        "--baseline-sentences",
        type=int,
        default=None,
        help="run the slow plain loop on this many sentences only (default all)",
    )
    ap.add_argument("--compile", action="store_true", help="also time Encoder(compile=True)")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()

    def make(compile: bool):
        return Encoder(
            model=args.model,
            device=args.device,
            dtype=args.dtype,
            max_batch_tokens=args.batch_tokens,
            compile=compile,
        )

    enc = make(False)
    sentences, source = load_sentences(args.sentences)
    enc_tok = enc.tokenizer(sentences, is_split_into_words=True)
    n_tokens = sum(len(x) for x in enc_tok["input_ids"])  # with specials, as the model sees
    n_words = sum(len(s) for s in sentences)
    base_sents = sentences[: args.baseline_sentences] if args.baseline_sentences else sentences
    base_ratio = len(base_sents) / len(sentences)
    mean_len = n_tokens / len(sentences)
    fpt = flops_per_token(enc.model, mean_len)
    dtype = enc.dtype
    print(
        f"model {enc.name} on {enc.device} ({str(dtype)}), torch threads {torch.get_num_threads()}"
    )
    print(
        f"corpus {source}: {len(sentences)} sentences, {n_words} words, {n_tokens} tokens "
        f"(mean {mean_len:.1f}/sentence); {fpt / 1e6:.1f} MFLOP/token"
    )

    batches = forward_batches(enc, sentences)
    enc.encode(sentences[:50])  # warm-up
    plain_loop(enc, base_sents[:20])
    careful_loop(enc, sentences[:100])
    runs = {  # name -> (seconds for the whole corpus)
        "plain": lambda: plain_loop(enc, base_sents) / base_ratio,
        "careful": lambda: careful_loop(enc, sentences),
        "encode": lambda: timed(enc, enc.encode, sentences, None, None, False),
        "forward": lambda: forward_only(enc, batches),
    }
    compile_s = None
    if args.compile:
        fast = make(True)
        compile_s = timed(fast, fast.encode, sentences[:400], None, None, False)
        if not fast.runner.compiled:
            print(f"compilation failed: {fast.runner.error}")
        print(f"compiled encoder: first call (400 sentences, with compilation) {compile_s:.1f} s")
        runs["encode_compiled"] = lambda: timed(fast, fast.encode, sentences, None, None, False)
        runs["forward_compiled"] = lambda: forward_only(fast, batches)
    rows = []
    for r in range(args.repeats):
        peak = matmul_gflops(enc.device, dtype)
        bound_tps = peak * 1e9 / fpt
        secs = {name: fn() for name, fn in runs.items()}
        row = {"repeat": r, "matmul_gflops": peak, "flop_bound_tokens_s": bound_tps}
        for name, sec in secs.items():
            row[f"{name}_tokens_s"] = n_tokens / sec
            row[f"{name}_words_s"] = n_words / sec
            row[f"{name}_speedup"] = secs["plain"] / sec
            row[f"{name}_fraction_of_bound"] = (n_tokens / sec) / bound_tps
        rows.append(row)
        shown = " | ".join(
            f"{name} {row[f'{name}_tokens_s']:6.0f} tok/s x{row[f'{name}_speedup']:.2f} "
            f"{100 * row[f'{name}_fraction_of_bound']:.0f}%"
            for name in runs
        )
        print(f"[{r}] matmul {peak:6.1f} GFLOP/s | {shown}")
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k != "repeat"}
    print(f"median over {len(rows)} repeats (matmul {med['matmul_gflops']:.0f} GFLOP/s):")
    for name in runs:
        print(
            f"  {name:17s} {med[f'{name}_tokens_s']:7.0f} tok/s {med[f'{name}_words_s']:7.0f} "
            f"words/s  x{med[f'{name}_speedup']:.2f} the plain loop  "
            f"{100 * med[f'{name}_fraction_of_bound']:.1f}% of the FLOP bound"
        )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(
                {
                    "args": vars(args),
                    "device": enc.device,
                    "dtype": str(dtype),
                    "n_tokens": n_tokens,
                    "n_words": n_words,
                    "mflop_per_token": fpt / 1e6,
                    "compile_first_call_s": compile_s,
                    "rows": rows,
                    "median": med,
                },
                fh,
                indent=1,
            )


if __name__ == "__main__":
    main()
