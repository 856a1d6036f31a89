"""Benchmark: the app's numbers, each against a plain baseline in this process where there is one
(part 7: the first visit, measured alone).

Run:  python -m bench run app [--points 5000] [--repeats 3] [--only umap|switch|render|rerun ...]
      python -m bench run app --only compare --only separation  # side by side's two numbers

1. UMAP on 5,000 word vectors at one layer, warm (numba already compiled): the workbench's
   ``Projector`` (``random_state=0``, hence single-threaded and reproducible) against plain
   ``umap.UMAP()`` with its defaults (multi-threaded, not reproducible), same vectors. The cold
   first fit of the process (JIT compilation) is reported too.
2. Layer switch on the Senses page with cached embeddings: the time of an AppTest rerun after
   moving the layer slider to a layer not seen yet (a new projection, embeddings from the memo),
   against the baseline of what that switch costs without cached embeddings (encoding the same
   occurrences from scratch, then the same projection).
3. First page render: ``streamlit run app.py`` started as a fresh process and Debian's
   headless Chromium (Playwright) opening it: seconds from the process start to the server's
   health check, to the page's title and to the first chart (the Explore heatmap), with an
   empty embedding cache (cold) and again with the cache filled (warm). The server runs as a
   user starts it (the project's ``.streamlit/config.toml``: polling file watcher); baseline:
   the same with Streamlit's default watcher (watchdog over the project folder, ``.venv``
   included). The last line, ``FIRST CHART: ...``, is the figure docs/benchmarks.md records.
   The server's CPU time until the chart is printed too: on a shared machine it tells the work
   from the waiting.

4. Side by side, in a real browser: the Senses page opened from a link that shows
   300 SemCor occurrences of "play" in two panes (layers 3 and 6, UMAP), warm (model loaded,
   numba compiled, vectors encoded): seconds from opening the link until both panes and the
   separation curve are drawn, with every result cached (the link reopened) and with new
   projections (another seed: two UMAP fits, vectors from the memo). Baseline: the same two
   plain ``umap.UMAP(random_state=seed)`` fits in this process.
5. The separation curve over all 7 hidden states, raw and z-scored, of the same 300 cached
   vectors (``geometry.separation.separation_by_layer``), against a plain scikit-learn loop
   (``silhouette_score(metric="cosine")`` and a leave-one-out 1-NN with ``NearestNeighbors``).

6. A rerun of the WSD page (found by trying the app on an empty cache): seconds from
   entering another word in the "One sentence" tab until its answer shows, warm (model, WordNet
   and the best index loaded, answers memoised after their first time), and the server's CPU
   seconds meanwhile, with the project's ``.streamlit/config.toml`` (no forced garbage
   collection after a script run) against Streamlit's default (``--runner.postScriptGC true``,
   a full ``gc.collect(2)`` after every run and every tick of a page's progress poll).

7. The WSD page on an empty cache (a new user's first visit, ``--only cold``, once): seconds from
   ``streamlit run app.py`` with an empty ``WORKBENCH_CACHE`` until the WSD page, opened as soon
   as the server answers, shows its example sentence's answer with the default system (the
   shipped bi-encoder: the model loads and the word's glosses are encoded meanwhile), and from
   opening the page; the server's CPU seconds.

8. Ready before the first visitor (``--only ready``): ``streamlit run app.py`` with its preload
   (``webapp.startup``), Chromium opening it at once (the first chart's seconds after the process
   start), and a server started 30 s before its first visitor, then a second visitor; once the
   preload has finished, each page's first view for a first and a second visitor (a row per page,
   beside the floor: the bare app's first chart).
9. Reruns per interaction (``--only interactions``): each page's common widget changes (word,
   correction, search, Geometry's corpus, Senses' side by side, the corpus map's predicted
   colours; the Senses page's layer switch is part 2), once the server's preload is done, warm,
   median of back-and-forth pairs, the first time apart; beside the floors of the same run,
   measured before and after the pages: a bare Streamlit app whose widget redraws its one
   plotly heatmap, one per widget kind (radio, selectbox, text box, toggle), each interaction
   against the floor of its widget's kind and against the radio floor.
10. The corpus map in the browser (``--only map --map-sentences 2000 6000 0``): SemCor's first N
   sentences (0 = all), seconds to draw and to answer a search, Chromium's memory, frame
   intervals while panning, per renderer (plotly; Embedding Atlas when installed). Maps made
   before (``python -m bench run corpus_map --keep``) load from ``--map-cache``.

Numbers are medians of ``--repeats``; the machine is shared, so the load average is printed.
The parts live in ``bench/speed/app_parts/`` by kind of measurement; this script chooses them,
runs them in the order above and writes the figures of parts 6 to 10 with ``--json``.
"""

from __future__ import annotations

import argparse
import os
import sys

from bench.lib.record import write_json
from bench.speed.app_parts import REPO
from bench.speed.app_parts.corpus_map import bench_map_browser
from bench.speed.app_parts.first_visit import bench_cold_wsd, bench_first_render, bench_ready
from bench.speed.app_parts.in_process import bench_layer_switch, bench_separation, bench_umap
from bench.speed.app_parts.warm import bench_compare, bench_interactions, bench_rerun

sys.path.insert(0, str(REPO))  # webapp/ (part 2 imports it) is found from the repository's root


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=5000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", action="append",
                    choices=("umap", "switch", "render", "compare", "separation", "rerun", "cold",
                             "ready", "interactions", "map"),
                    help="run only these parts (repeatable); default all")  # fmt: skip
    ap.add_argument("--json", help="write the raw figures of the parts that give them here")
    ap.add_argument(
        "--map-sentences",
        type=int,
        nargs="*",
        default=[2000, 6000, 0],
        help="SemCor's first N sentences for the corpus map part (0 = all)",
    )
    ap.add_argument(
        "--map-cache", help="the WORKBENCH_CACHE holding the maps (default: the environment's)"
    )
    args = ap.parse_args()
    parts = set(args.only or ("umap", "switch", "render", "compare", "separation", "rerun"))
    os.chdir(REPO)
    raw = {"load_average_start": os.getloadavg()[0], "cpus": os.cpu_count()}
    print(f"load average at start: {raw['load_average_start']:.1f} on {raw['cpus']} CPUs")
    if "umap" in parts:
        bench_umap(args.points, args.repeats)
    if "switch" in parts:
        bench_layer_switch(args.repeats)
    if "render" in parts:
        bench_first_render(args.repeats)
    if "compare" in parts:
        bench_compare(args.repeats)
    if "separation" in parts:
        bench_separation(args.repeats)
    if "rerun" in parts:
        raw["rerun"] = bench_rerun(args.repeats)
    if "cold" in parts:
        raw["cold"] = bench_cold_wsd()
    if "ready" in parts:
        raw["ready"] = bench_ready(args.repeats)
    if "interactions" in parts:
        raw["interactions"] = bench_interactions(args.repeats)
    if "map" in parts:
        raw["map"] = bench_map_browser(args.map_sentences, args.map_cache)
    write_json(args.json, raw)
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
