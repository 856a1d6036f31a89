"""Benchmark: the corpus map of SemCor (every word occurrence, 778,587 words), made once and cached.

Run:  python -m bench run corpus_map [--sentences 0] [--layer 6] [--fit-sample 20000]
                                 [--scaling 2000 5000 10000] [--json out.json]

1. ``workbench.viz.corpus_map.corpus_map`` on SemCor's first ``--sentences`` sentences (0 = all)
   at ``--layer``, with an empty map cache: seconds to encode (through the embedding cache, which
   may already hold the sentences), to fit UMAP on the ``--fit-sample`` words, to place the rest
   by their nearest sampled neighbours, and in all; then the same call again (loaded from the
   cache dir).
2. Baseline, UMAP on every word: a plain ``Projector(random_state=0)`` fit on ``--scaling``
   sizes of the same vectors (the first fit of the process compiles numba code first, not
   counted), and the power law ``t = a * n**b`` fitted on the sizes past 10,000 words (UMAP
   runs 500 epochs below that, 200 above) extrapolated to the whole corpus.
3. Quality of the placement: on a held-out 2,000 of the sampled words, placed by their
   neighbours among the other sampled words, the trustworthiness of the placed coordinates
   against UMAP's own (both against the vectors; ``viz.projection.trustworthiness``).

The machine is shared: the load average is printed at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace

import numpy as np

from bench.lib.record import write_json
from workbench import Encoder
from workbench.corpora.reference import load_reference_corpus
from workbench.lexicon.wordnet import load_wordnet
from workbench.viz.corpus_map import (
    CorpusMapConfig,
    corpus_map,
    corpus_vectors,
    maps_dir,
    place_by_neighbours,
)
from workbench.viz.projection import ProjectionConfig, Projector, trustworthiness


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sentences", type=int, default=0)
    ap.add_argument("--layer", default="6")
    ap.add_argument("--fit-sample", type=int, default=20_000)
    ap.add_argument(
        "--scaling",
        type=int,
        nargs="*",
        default=[5000, 10000, 20000, 40000],
        help="sample sizes of the UMAP baseline (above 4,096 words UMAP searches "
        "neighbours approximately, as it does on a whole corpus); none: the map alone",
    )
    ap.add_argument("--skip-map", action="store_true", help="parts 2 and 3 only")
    ap.add_argument("--json")
    ap.add_argument(
        "--keep",
        action="store_true",
        help="store the map in the workbench's cache dir (for the app), not a temp dir",
    )
    args = ap.parse_args()
    raw: dict = {"load_average_start": os.getloadavg(), "cpus": os.cpu_count(), "args": vars(args)}
    print(f"load average at start: {raw['load_average_start']} on {raw['cpus']} CPUs")
    corpus = load_reference_corpus("semcor")
    enc = Encoder(device="cpu")
    wn = load_wordnet()
    config = CorpusMapConfig(layer=args.layer, max_sentences=args.sentences,
                             fit_sample=args.fit_sample)  # fmt: skip
    stages: dict[str, float] = {}
    last = [time.perf_counter(), ""]

    def progress(fraction: float, stage: str) -> None:
        if stage != last[1]:
            now = time.perf_counter()
            if last[1]:
                stages[last[1]] = stages.get(last[1], 0.0) + now - last[0]
            last[:] = [now, stage]

    with tempfile.TemporaryDirectory(prefix="wb-maps-") as temp:
        maps = str(maps_dir()) if args.keep else temp
        if args.skip_map:
            config = replace(config, max_sentences=300)
        t = time.perf_counter()
        cmap = corpus_map(enc, corpus, config, wn, progress=progress, cache_dir=maps)
        total = time.perf_counter() - t
        stages[str(last[1])] = stages.get(str(last[1]), 0.0) + time.perf_counter() - last[0]
        t = time.perf_counter()
        again = corpus_map(enc, corpus, config, wn, cache_dir=maps)
        loaded = time.perf_counter() - t
    assert again.info["cached"] and np.array_equal(again.coords, cmap.coords)
    n = len(cmap)
    print(f"\n1. corpus map, {n:,} words of {cmap.info['corpus']} at layer {args.layer}")
    for stage, seconds in stages.items():
        print(f"   {stage:<60} {seconds:8.1f} s")
    print(f"   in all {total:.1f} s (UMAP {cmap.info['umap_seconds']:.1f} s on "
          f"{cmap.info['fitted']:,} words, placement {cmap.info.get('place_seconds', 0):.1f} s); "
          f"loaded again from the cache dir (table included) {loaded:.1f} s")  # fmt: skip
    raw["map"] = {"n_words": n, "seconds": total, "stages": stages, "loaded_seconds": loaded,
                  **{k: v for k, v in cmap.info.items() if k != "cached"}}  # fmt: skip

    if not args.scaling:  # the map alone (e.g. made for the app's browser benchmark)
        write_json(args.json, raw)
        return 0

    # 2. UMAP on every word, extrapolated from fits on growing samples of the same vectors
    sample_corpus = corpus.head(4000)
    vectors = corpus_vectors(enc, [tuple(s.words) for s in sample_corpus.sentences], config)
    rng = np.random.default_rng(0)
    Projector(random_state=0).fit(rng.normal(size=(500, 8)))  # numba compiled first
    sizes, times = [], []
    for size in args.scaling:
        if size > len(vectors):
            break
        rows = np.sort(rng.choice(len(vectors), size, replace=False))
        t = time.perf_counter()
        Projector(random_state=0).fit(vectors[rows])
        sizes.append(size)
        times.append(time.perf_counter() - t)
        print(f"   UMAP fit on {size:,} words: {times[-1]:.1f} s")
    # UMAP runs 500 epochs up to 10,000 words and 200 past that: the law is fitted on the
    # sizes past 10,000, the regime of a whole corpus
    big = [i for i, size in enumerate(sizes) if size > 10_000] or list(range(len(sizes)))
    b, log_a = np.polyfit(np.log([sizes[i] for i in big]), np.log([times[i] for i in big]), 1)
    whole = float(np.exp(log_a) * n**b)
    print(
        f"\n2. UMAP on every word (baseline): t ~ {np.exp(log_a):.2e} * n^{b:.2f}; "
        f"{n:,} words ~ {whole / 60:.0f} min (extrapolated); the map took {total / 60:.1f} min"
    )
    raw["umap_scaling"] = {"sizes": sizes, "seconds": times, "exponent": float(b),
                           "extrapolated_seconds_all": whole}  # fmt: skip

    # 3. placement quality: hold out 2,000 sampled words, place them, compare with UMAP
    fit_rows = np.sort(rng.choice(len(vectors), min(len(vectors), 8000), replace=False))
    x = vectors[fit_rows]
    umap_coords = Projector(ProjectionConfig(random_state=0)).fit_transform(x)
    held = np.sort(rng.choice(len(x), 2000, replace=False))
    kept = np.setdiff1d(np.arange(len(x)), held)
    placed = place_by_neighbours(x, kept, umap_coords[kept].astype(np.float32))
    tw_umap = trustworthiness(x[held], umap_coords[held], n_neighbors=10)
    tw_placed = trustworthiness(x[held], placed[held], n_neighbors=10)
    print(f"\n3. placement: trustworthiness of 2,000 held-out words, UMAP {tw_umap:.3f}, "
          f"placed by neighbours {tw_placed:.3f}")  # fmt: skip
    raw["placement"] = {"trustworthiness_umap": tw_umap, "trustworthiness_placed": tw_placed}
    raw["load_average_end"] = os.getloadavg()
    print(f"\nload average at end: {raw['load_average_end']}")
    write_json(args.json, raw)
    return 0


if __name__ == "__main__":
    sys.exit(main())
