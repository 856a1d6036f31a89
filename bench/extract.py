"""Benchmark: Encoder.encode vs a plain per-sentence loop, and against the machine's FLOP bound.

Run:  python bench/extract.py [--sentences 2000] [--repeats 3] [--model M] [--device D]

Corpus: the first N sentences of SemCor (WSD data, $WORKBENCH_DATA or ../shared/data/wsd),
else WordNet example sentences. Prints, per repeat and as medians, words/s and tokens/s of
(a) the plain loop a tutorial would write (one sentence at a time through tokenizer and model,
    mean of each word's subwords in Python), and (b) ``Encoder.encode`` (all hidden states),
with the ratio b/a, and b as a fraction of the FLOP bound: measured torch matmul GFLOP/s
divided by the model's FLOPs per token (its linear layers plus attention at the corpus's mean
length). Both from the same process, interleaved, so machine noise hits both alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch


def load_sentences(n: int) -> tuple[list[list[str]], str]:
    try:
        from workbench.corpora import load_dataset

        corpus = load_dataset("semcor")
        return [list(s.words) for s in corpus.sentences[:n]], "SemCor"
    except Exception as exc:  # noqa: BLE001 - fall back to data that always exists
        print(f"(SemCor unavailable: {exc}; using WordNet examples)", file=sys.stderr)
        from workbench.wordnet import example_corpus

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


def sync(enc) -> None:
    if enc.device.startswith("cuda"):
        torch.cuda.synchronize()


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
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()

    from workbench import Encoder

    enc = Encoder(
        model=args.model, device=args.device, dtype=args.dtype, max_batch_tokens=args.batch_tokens
    )
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

    enc.encode(sentences[:50])  # warm-up
    plain_loop(enc, base_sents[:20])
    rows = []
    for r in range(args.repeats):
        peak = matmul_gflops(enc.device, dtype)
        t_plain = plain_loop(enc, base_sents) / base_ratio
        sync(enc)
        t = time.perf_counter()
        enc.encode(sentences, progress=False)
        sync(enc)
        t_enc = time.perf_counter() - t
        bound_tps = peak * 1e9 / fpt
        row = {
            "repeat": r,
            "matmul_gflops": peak,
            "plain_words_s": n_words / t_plain,
            "plain_tokens_s": n_tokens / t_plain,
            "encode_words_s": n_words / t_enc,
            "encode_tokens_s": n_tokens / t_enc,
            "speedup": t_plain / t_enc,
            "flop_bound_tokens_s": bound_tps,
            "fraction_of_bound": (n_tokens / t_enc) / bound_tps,
        }
        rows.append(row)
        print(
            f"[{r}] matmul {peak:7.1f} GFLOP/s | plain {row['plain_tokens_s']:8.0f} tok/s | "
            f"encode {row['encode_tokens_s']:8.0f} tok/s ({row['encode_words_s']:7.0f} words/s) | "
            f"x{row['speedup']:.2f} | {100 * row['fraction_of_bound']:.1f}% of bound"
        )
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k != "repeat"}
    print(
        f"median: encode {med['encode_tokens_s']:.0f} tok/s, {med['encode_words_s']:.0f} words/s; "
        f"plain {med['plain_tokens_s']:.0f} tok/s; speed-up x{med['speedup']:.2f}; "
        f"{100 * med['fraction_of_bound']:.1f}% of the FLOP bound "
        f"({med['matmul_gflops']:.0f} GFLOP/s matmul)"
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
                    "rows": rows,
                    "median": med,
                },
                fh,
                indent=1,
            )


if __name__ == "__main__":
    main()
