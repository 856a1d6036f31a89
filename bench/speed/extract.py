"""Benchmark: Encoder.encode against a plain loop, the bare forward pass and the FLOP bound.

Run (CPU):  python -m bench run extract --sentences 2000 --repeats 5 --baseline-sentences 500
Run (GPU, everything docs/benchmarks.md asks of one device call):
    python -m bench run extract --sentences 2000,20000 --repeats 3 --baseline-sentences 200 \
        --profile --semcor-whole --wsd-eval --json docs/bench_runs/extract_gpu.json

Corpus: the first N sentences of SemCor (the WSD data: README.md, "The WSD data"),
else WordNet example sentences. For each N (``--sentences 2000,20000`` runs both), per repeat
and as medians, words/s and tokens/s of
(a) ``plain``: the loop a tutorial would write (one sentence at a time through tokenizer and
    model, mean of each word's subwords in Python), on ``--baseline-sentences`` and scaled;
(b) ``careful``: a careful batched loop (sentences sorted by length, 64 a batch padded to the
    batch's longest, all hidden states stacked, subwords averaged by one scatter-add each);
(c) ``encode``: ``Encoder.encode`` (all hidden states, every word, input order);
(d) ``forward``: the model's bare forward pass on the encoder's own batches
    (:func:`bench.lib.stages.model_inputs`, on the device beforehand): the ceiling for any
    pipeline;
(e) with ``--also-dtype bfloat16``: (c) and (d) of a second encoder in that dtype;
(f) with ``--pipelines inline,whole``: (c) with those :class:`PipelineConfig` settings
    (``whole``: the default but the input tokenized in one chunk, not streamed; ``fill10``:
    the default with the CPU's ``min_fill``, more and smaller batches), each with its own bare
    forward where its batches differ;
(g) with ``--compile [MODE]``: (c) and (d) compiled, after the compilation (timed apart), with
    the main encoder's pipeline setting; its ``encode`` also as a fraction of the main encoder's
    bare forward (``_over_main_forward``), and with ``--profile`` its profile too;
(h) with ``--also-store-dtype float16``: (c) storing float16 vectors (cast on the device, half
    the bytes to copy back and write), against the same bare forward as (c); the same for the
    compiled encoder of (g) and each of (f), against theirs;
``--main-pipeline NAME`` gives the main encoder (``encode``, the profile, whole SemCor) one of
the ``--pipelines`` settings (``--main-pipeline whole --pipelines auto``: the input in one chunk
against the default), each with its own float16 run under ``--also-store-dtype``.
(i) with ``--also-switch-interval S``: (c) with Python's GIL switch interval set to ``S``
    seconds for the call (``sys.setswitchinterval``; Python's default is 0.005), against the
    same bare forward as (c): on a GPU the calling thread hands the GIL back at each of the
    forward pass's operations, and waits up to an interval to get it back whenever the
    producer or the writer thread is running Python.
``--no-careful`` leaves (b) out (it is the slowest run on a GPU and no target is set on it).
Each as a speed-up over (a), as a fraction of the FLOP bound (the measured GFLOP/s of a
2048^3 torch matmul in the device's dtype, divided by the model's FLOPs per token: its linear
layers plus attention at the corpus's mean length), and ``encode / forward`` of the same
encoder. All from the same process, interleaved, so machine noise hits them alike.

Options measured once, on the largest N or on the whole of SemCor:
  ``--profile``       seconds per stage of a whole ``encode`` call (input, tokenize, layout; per
                      batch host prep, H2D, forward, pooling, D2H, write; finish) against its wall
                      time, the stages run one after another, the device synchronised between;
                      then the real, overlapped call's threads: what each did and waited for
                      (``StageTimes(overlapped=True)``), also storing float16 with
                      ``--also-store-dtype``; both by :mod:`bench.lib.stages`, which runs
                      ``encode``'s stages from the library's public pieces;
  ``--semcor-whole``  all of SemCor (37,176 sentences) with (1) only the instance words kept,
                      all layers, in RAM, twice; (2) every word, every layer, float16, streamed
                      to a memory map: wall time and peak host memory (anonymous and file-backed);
  ``--wsd-eval``      ``workbench wsd eval ALL --layers 6`` end to end in a subprocess, cold (a
                      fresh cache) then warm.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch

from bench.lib.machine import machine_facts
from bench.lib.record import write_json
from bench.lib.stages import StageTimes, encode_in_stages, model_inputs
from workbench import Encoder
from workbench.corpora.datasets import load_dataset
from workbench.corpora.wordnet_examples import example_corpus
from workbench.encoding.pipeline.overlap import PipelineConfig

PIPELINES = {  # --pipelines names
    "auto": PipelineConfig(),
    "inline": PipelineConfig(overlap=False),
    "threaded": PipelineConfig(overlap=True, prefetch=2),
    "whole": PipelineConfig(stream_words=0),  # the default, the input tokenized in one chunk
    "fill10": PipelineConfig(min_fill=0.1),  # the default with the CPU's batch plan
}


def load_sentences(n: int | None) -> tuple[list[list[str]], str, list[list[int]]]:
    """The first ``n`` SemCor sentences (all if None) and each one's instance positions."""
    try:
        corpus = load_dataset("semcor")
        chosen = corpus.sentences[:n] if n else corpus.sentences
        keep = [sorted({i.index for i in s.instances}) for s in chosen]
        return [list(s.words) for s in chosen], "SemCor", keep
    except Exception as exc:  # noqa: BLE001 - fall back to data that always exists
        print(f"(SemCor unavailable: {exc}; using WordNet examples)", file=sys.stderr)
        chosen = example_corpus().sentences[:n] if n else example_corpus().sentences
        return [list(s.words) for s in chosen], "WordNet examples", [[] for _ in chosen]


def matmul_gflops(device: str, dtype: torch.dtype, size: int = 2048, reps: int = 10) -> float:
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    for _ in range(2):
        a @ b
    times = []
    for _ in range(reps):
        sync(device)
        t = time.perf_counter()
        a @ b
        sync(device)
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
    sync(enc.device)
    return time.perf_counter() - t


def forward_batches(enc, sentences) -> list[tuple[torch.Tensor, torch.Tensor | None]]:
    """The padded (ids, mask) batches ``Encoder.encode`` would run, built once by its own code,
    on the device; as in encode, no mask where a batch has no padding."""
    batches = []
    with torch.inference_mode():  # as in encode (a compiled graph guards on it)
        for ids, mask in model_inputs(enc, sentences):
            m = None if mask.all() else torch.from_numpy(mask).to(enc.device)
            batches.append((torch.from_numpy(ids).to(enc.device), m))
    return batches


def forward_only(enc, batches) -> float:
    sync(enc.device)
    t = time.perf_counter()
    with torch.inference_mode():
        for ids, mask in batches:
            enc.runner(ids, mask)
    sync(enc.device)
    return time.perf_counter() - t


def agree(a, b) -> dict[str, float]:
    """How close two encoders' vectors of the same words are: the lowest and mean cosine of
    a word's vector at a layer, and the largest absolute difference."""
    x = torch.from_numpy(a.vectors).double()
    y = torch.from_numpy(b.vectors).double()
    cos = torch.nn.functional.cosine_similarity(x, y, dim=-1)
    return {
        "min_cosine": float(cos.min()),
        "mean_cosine": float(cos.mean()),
        "max_abs_diff": float((x - y).abs().max()),
    }


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def switched(interval: float, fn, *args, **kwargs):
    """``fn(...)`` with Python's GIL switch interval at ``interval`` seconds, restored after."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        return fn(*args, **kwargs)
    finally:
        sys.setswitchinterval(before)


def timed(enc, fn, *args, **kwargs) -> float:
    """Seconds of ``fn(...)``; its result is freed after the clock stops (freeing gigabytes of
    vectors is not part of computing them: the caller keeps them)."""
    sync(enc.device)
    t = time.perf_counter()
    result = fn(*args, **kwargs)
    sync(enc.device)
    seconds = time.perf_counter() - t
    del result
    return seconds


class PeakMemory:
    """Peak anonymous and file-backed resident memory of this process (MB) while in the block,
    sampled every 20 ms from /proc/self/status, against the values on entry."""

    FIELDS = ("RssAnon", "RssFile")

    def __init__(self) -> None:
        self.base = self.peak = dict.fromkeys(self.FIELDS, 0.0)
        self._done = threading.Event()

    @staticmethod
    def now() -> dict[str, float]:
        out = dict.fromkeys(PeakMemory.FIELDS, 0.0)
        try:
            for line in Path("/proc/self/status").read_text().splitlines():
                key = line.split(":", 1)[0]
                if key in out:
                    out[key] = int(line.split()[1]) / 1024
        except OSError:
            pass
        return out

    def _sample(self) -> None:
        while not self._done.is_set():
            cur = self.now()
            self.peak = {k: max(self.peak[k], cur[k]) for k in self.FIELDS}
            time.sleep(0.02)

    def __enter__(self) -> PeakMemory:
        self.base = self.now()
        self.peak = dict(self.base)
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()

    def report(self) -> dict[str, float]:
        return {
            "base_anon_mb": self.base["RssAnon"],
            "peak_anon_mb": self.peak["RssAnon"],
            "peak_anon_over_base_mb": self.peak["RssAnon"] - self.base["RssAnon"],
            "peak_file_mb": self.peak["RssFile"],
        }


def run_size(args, encs: dict, sentences: list[list[str]], source: str) -> dict:
    """Every timed run on one corpus size, interleaved within each repeat."""
    enc = encs["encode"]
    n_tokens = sum(len(x) for x in enc.tokenizer(sentences, is_split_into_words=True)["input_ids"])
    n_words = sum(len(s) for s in sentences)
    base_sents = sentences[: args.baseline_sentences] if args.baseline_sentences else sentences
    base_ratio = len(base_sents) / len(sentences)
    mean_len = n_tokens / len(sentences)
    fpt = flops_per_token(enc.model, mean_len)
    print(
        f"\ncorpus {source}: {len(sentences)} sentences, {n_words} words, {n_tokens} tokens "
        f"(mean {mean_len:.1f}/sentence); {fpt / 1e6:.1f} MFLOP/token"
    )
    runs = {"plain": lambda: plain_loop(enc, base_sents) / base_ratio}
    if not args.no_careful:
        runs["careful"] = lambda: careful_loop(enc, sentences)
    pairs = {}  # encode run -> its forward run
    plans = {}  # each encoder's batch shapes
    for name, e in encs.items():
        batches = forward_batches(e, sentences)
        plans[name] = [tuple(ids.shape) for ids, _ in batches]
        e.encode(sentences[:50], progress=False)  # warm-up
        runs[name] = lambda e=e: timed(e, e.encode, sentences, progress=False)
        # a pipeline setting that runs other batches (whole: not streamed) gets its own forward
        if not name.startswith("encode_pipeline") or plans[name] != plans["encode"]:
            fwd = name.replace("encode", "forward")
            runs[fwd] = lambda e=e, b=batches: forward_only(e, b)
        else:
            fwd = "forward"
        pairs[name] = fwd
    if args.also_switch_interval:  # the same batches as encode: its forward is the same too
        name = "encode_switch_interval"
        runs[name] = lambda: switched(args.also_switch_interval, timed, enc, enc.encode,
                                      sentences, progress=False)  # fmt: skip
        pairs[name] = "forward"
    if args.also_store_dtype:  # the main, compiled and pipeline encoders', against their forward
        bases = [n for n in encs if n in ("encode", "encode_compiled") or "_pipeline_" in n]
        for base in bases:
            e = encs[base]
            name = f"{base}_store_{args.also_store_dtype}"
            runs[name] = lambda e=e: timed(
                e, e.encode, sentences, progress=False, store_dtype=args.also_store_dtype
            )
            pairs[name] = pairs[base]
    plain_loop(enc, base_sents[:20])
    careful_loop(enc, sentences[:100])
    rows = []
    for r in range(args.repeats):
        peak = matmul_gflops(enc.device, enc.dtype)
        bound_tps = peak * 1e9 / fpt
        secs = {name: fn() for name, fn in runs.items()}
        row = {"repeat": r, "matmul_gflops": peak, "flop_bound_tokens_s": bound_tps}
        for name, sec in secs.items():
            row[f"{name}_tokens_s"] = n_tokens / sec
            row[f"{name}_words_s"] = n_words / sec
            row[f"{name}_speedup"] = secs["plain"] / sec
            row[f"{name}_fraction_of_bound"] = (n_tokens / sec) / bound_tps
        for name, fwd in pairs.items():
            row[f"{name}_over_forward"] = secs[fwd] / secs[name]
            if fwd != "forward":  # other batches (compiled, bucketed): also against the eager's
                row[f"{name}_over_main_forward"] = secs["forward"] / secs[name]
        rows.append(row)
        shown = " | ".join(
            f"{name} {row[f'{name}_tokens_s']:6.0f} tok/s x{row[f'{name}_speedup']:.2f}"
            for name in runs
        )
        print(f"[{r}] matmul {peak:6.1f} GFLOP/s | {shown}", flush=True)
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0] if k != "repeat"}
    print(f"median over {len(rows)} repeats (matmul {med['matmul_gflops']:.0f} GFLOP/s):")
    for name in runs:
        ratio = (
            f"  {100 * med[f'{name}_over_forward']:.0f}% of its forward" if name in pairs else ""
        )
        if f"{name}_over_main_forward" in med:
            ratio += f", {100 * med[f'{name}_over_main_forward']:.0f}% of the main forward"
        print(
            f"  {name:24s} {med[f'{name}_tokens_s']:9.0f} tok/s {med[f'{name}_words_s']:9.0f} "
            f"words/s  x{med[f'{name}_speedup']:.2f} the plain loop  "
            f"{100 * med[f'{name}_fraction_of_bound']:.1f}% of the FLOP bound{ratio}"
        )
    return {
        "sentences": len(sentences),
        "batches": {name: len(plan) for name, plan in plans.items()},
        "padded_tokens": {name: sum(r * w for r, w in plan) for name, plan in plans.items()},
        "n_tokens": n_tokens,
        "n_words": n_words,
        "mflop_per_token": fpt / 1e6,
        "rows": rows,
        "median": med,
    }


def profile_stages(enc, sentences, store_dtypes: tuple[str, ...] = ("float32",)) -> dict:
    """The call's stages in turn, then its threads in the real run (each store dtype)."""
    times = StageTimes()
    encode_in_stages(enc, sentences[:50], StageTimes())  # warm-up
    wall = timed(enc, encode_in_stages, enc, sentences, times)
    shares = times.shares()
    print(f"\nper-stage profile ({len(sentences)} sentences, {times.batches} batches, in turn):")
    for stage, sec in times.seconds.items():
        print(f"  {stage:8s} {sec:8.3f} s  {100 * shares[stage]:5.1f}%")
    accounted = sum(times.seconds.values())
    print(f"  (the call took {wall:.3f} s; the stages account for {accounted:.3f})")
    out = {"seconds": times.seconds, "batches": times.batches, "tokens": times.tokens,
           "wall_s": wall, "overlapped": {}}  # fmt: skip
    for store in store_dtypes:
        over = StageTimes(overlapped=True)
        wall = timed(enc, encode_in_stages, enc, sentences, over, store_dtype=store)
        print(f"the overlapped call, {store} stored: {wall:.3f} s; each thread's activities:")
        for key, sec in sorted(over.threads.items()):
            print(f"  {key:30s} {sec:8.3f} s  {100 * sec / wall:5.1f}% of the call")
        outside = {k: v for k, v in over.seconds.items() if v}
        print(f"  timed outside the batches: {outside}")
        out["overlapped"][store] = {"wall_s": wall, "threads": over.threads, "seconds": outside}
    return out


def semcor_whole(enc, limit: int | None = None) -> dict:
    sentences, _, keep = load_sentences(limit)
    with_inst = [i for i, k in enumerate(keep) if k]
    inst_sents = [sentences[i] for i in with_inst]
    inst_keep = [keep[i] for i in with_inst]
    out: dict = {"sentences": len(sentences), "words": sum(map(len, sentences))}
    runs = []
    for _ in range(2):
        t = timed(enc, enc.encode, inst_sents, keep=inst_keep, progress=False)
        runs.append(t)
    out["instances_kept"] = sum(map(len, inst_keep))
    out["instances_s"] = runs
    print(
        f"\nSemCor ({len(sentences)} sentences), {out['instances_kept']} instance words kept, "
        f"all layers, in RAM: {runs[0]:.2f} s, again {runs[1]:.2f} s"
    )
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMP")) as tmp:
        path = Path(tmp) / "semcor_f16.npy"
        with PeakMemory() as mem:
            t = time.perf_counter()
            emb = enc.encode(sentences, out=path, store_dtype="float16", progress=False)
            wall = time.perf_counter() - t
        size = path.stat().st_size
        shape = list(emb.vectors.shape)
        del emb
    out["all_words_f16_mmap"] = {"wall_s": wall, "shape": shape, "file_mb": size / 2**20}
    out["all_words_f16_mmap"].update(mem.report())
    m = out["all_words_f16_mmap"]
    print(
        f"SemCor, every word, every layer, float16, to a memory map: {wall:.2f} s, "
        f"{shape} ({size / 2**30:.2f} GiB); peak anonymous memory "
        f"+{m['peak_anon_over_base_mb']:.0f} MB over {m['base_anon_mb']:.0f} MB, "
        f"peak file-backed {m['peak_file_mb']:.0f} MB"
    )
    return out


def wsd_eval(args) -> dict:
    """``workbench wsd eval ALL --layers 6`` in a subprocess, cold (fresh cache) then warm."""
    cmd = [sys.executable, "-m", "workbench", "wsd", "eval", "ALL", "--layers", "6"]
    cmd += ["--model", args.model] if args.model else []
    cmd += ["--device", args.device] if args.device else []
    out: dict = {"command": " ".join(cmd[2:])}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, WORKBENCH_CACHE=cache)
        for run in ("cold", "warm"):
            t = time.perf_counter()
            res = subprocess.run(cmd, capture_output=True, text=True, env=env)
            out[f"{run}_s"] = time.perf_counter() - t
            out[f"{run}_rc"] = res.returncode
            out[f"{run}_tail"] = (res.stdout + res.stderr)[-1500:]
            print(f"\n{out['command']} ({run}): {out[f'{run}_s']:.1f} s, exit {res.returncode}")
            print(res.stdout[-800:])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", default="2000", help="corpus sizes, comma-separated")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", default=None)
    ap.add_argument("--device", default=None)
    ap.add_argument("--dtype", default="auto")
    ap.add_argument("--also-dtype", default=None, help="also time a second encoder in this dtype")
    ap.add_argument(
        "--batch-tokens", type=int, default=None, help="default: the encoder's (measured on GPU)"
    )
    ap.add_argument(
        "--baseline-sentences",
        type=int,
        default=None,
        help="run the slow plain loop on this many sentences only (default all)",
    )
    ap.add_argument(
        "--pipelines", default="", help=f"also time encode with these: {', '.join(PIPELINES)}"
    )
    ap.add_argument(
        "--main-pipeline",
        default=None,
        choices=tuple(PIPELINES),
        help="the main encoder's pipeline setting (default: the library's default)",
    )
    ap.add_argument(
        "--compile",
        nargs="?",
        const="default",
        default=None,
        choices=("default",),
        help="also time Encoder(compile=MODE) (default mode: default)",
    )
    ap.add_argument(
        "--also-store-dtype",
        default=None,
        choices=("float16",),
        help="also time encode storing vectors in this dtype (against the same forward)",
    )
    ap.add_argument("--profile", action="store_true", help="per-stage profile on the largest N")
    ap.add_argument(
        "--also-switch-interval",
        type=float,
        default=None,
        help="also time encode with this GIL switch interval (seconds)",
    )
    ap.add_argument("--no-careful", action="store_true", help="leave the careful loop out")
    ap.add_argument("--semcor-whole", action="store_true", help="whole-SemCor runs")
    ap.add_argument(
        "--semcor-limit", type=int, default=None, help="--semcor-whole on N sentences (a check)"
    )
    ap.add_argument("--wsd-eval", action="store_true", help="time workbench wsd eval ALL")
    ap.add_argument("--json", default=None, help="write the results here")
    args = ap.parse_args()

    def make(dtype=args.dtype, compile=False, pipeline=None):
        return Encoder(
            model=args.model,
            device=args.device,
            dtype=dtype,
            max_batch_tokens=args.batch_tokens,
            compile=compile,
            pipeline=pipeline,
            backend="torch",  # this bench times torch's forward pass and stages (ONNX Runtime's:
            # bench/speed/backends.py)
        )

    main_pipeline = PIPELINES[args.main_pipeline] if args.main_pipeline else None
    enc = make(pipeline=main_pipeline)
    facts = machine_facts()
    measured = f"; measured {enc.budget.measured}" if enc.budget.measured else ""
    print(
        f"model {enc.name} on {enc.device} ({str(enc.dtype)}), torch threads "
        f"{torch.get_num_threads()}, batch budget {enc.max_batch_tokens} tokens "
        f"({enc.budget.note}{measured})"
    )
    print(f"machine: {facts}")
    encs = {"encode": enc}
    if args.also_dtype:
        encs[f"encode_{args.also_dtype}"] = make(dtype=args.also_dtype)
    for name in filter(None, args.pipelines.split(",")):
        encs[f"encode_pipeline_{name}"] = make(pipeline=PIPELINES[name])
    compile_s, agreement, compiled_budget = None, None, None
    if args.compile:
        fast = make(compile=args.compile, pipeline=main_pipeline)
        first, _, _ = load_sentences(400)
        compile_s = timed(fast, fast.encode, first, progress=False)
        if not fast.runner.compiled:
            print(f"compilation failed: {fast.runner.error}")
        print(f"compiled encoder: first call (400 sentences, with compilation) {compile_s:.1f} s")
        print(f"compiled encoder: batch budget {fast.max_batch_tokens} tokens ({fast.budget.note})")
        compiled_budget = {"tokens": fast.max_batch_tokens, "note": fast.budget.note,
                           "measured": fast.budget.measured}  # fmt: skip
        encs["encode_compiled"] = fast
        agreement = agree(fast.encode(first, progress=False), enc.encode(first, progress=False))
        print(f"compiled against eager on those sentences: {agreement}")

    result: dict = {
        "args": vars(args),
        "machine": facts,
        "model": enc.name,
        "device": enc.device,
        "dtype": str(enc.dtype),
        "batch_tokens": enc.max_batch_tokens,
        "budget": {"note": enc.budget.note, "measured": enc.budget.measured},
        "compile_first_call_s": compile_s,
        "compiled_agreement": agreement,
        "compiled_budget": compiled_budget,
        "sizes": [],
    }
    # the JSON is rewritten after every part, marked incomplete until the last: a run stopped
    # from outside (a remote machine's time limit) keeps every part it finished
    result["complete"] = False
    sizes = [int(x) for x in args.sentences.split(",")]
    for n in sizes:
        sentences, source, _ = load_sentences(n)
        result["sizes"].append(run_size(args, encs, sentences, source))
        write_json(args.json, result)
    if args.profile:
        sentences, _, _ = load_sentences(max(sizes))
        stores = ("float32", args.also_store_dtype) if args.also_store_dtype else ("float32",)
        result["profile"] = profile_stages(enc, sentences, stores)
        write_json(args.json, result)
        if "encode_compiled" in encs:
            print("\nthe compiled encoder:")
            result["profile_compiled"] = profile_stages(encs["encode_compiled"], sentences, stores)
            write_json(args.json, result)
    if args.semcor_whole:
        result["semcor_whole"] = semcor_whole(enc, args.semcor_limit)
        write_json(args.json, result)
    if args.wsd_eval:
        result["wsd_eval"] = wsd_eval(args)
    result["complete"] = True
    write_json(args.json, result)


if __name__ == "__main__":
    main()
