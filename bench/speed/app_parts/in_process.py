"""Parts 1, 2 and 5 of ``python -m bench run app``: measured in this process, no server or
browser. 1: UMAP on word vectors (``Projector`` against plain ``umap.UMAP()``); 2: the Senses
page's layer switch through Streamlit's ``AppTest`` against encoding afresh; 5: the separation
curve against a plain scikit-learn loop. Also the 300 SemCor occurrences of "play" that parts 4
and 5 share (:func:`play_vectors`).
"""

from __future__ import annotations

import statistics
import time
import warnings

import numpy as np

from bench.lib.measure import median_time
from bench.speed.app_parts import REPO
from workbench import Encoder
from workbench.corpora.occurrences import demo_sentences, encode_occurrences, lemma_occurrences
from workbench.corpora.reference import load_reference_corpus, sample_corpus
from workbench.encoding.cache import encode_cached
from workbench.geometry.corrections import make_correction
from workbench.geometry.separation import separation_by_layer
from workbench.viz.projection import Projector, trustworthiness


def word_vectors(n_points: int) -> tuple[np.ndarray, str]:
    """``n_points`` real word vectors at the last layer, from a seeded corpus sample."""

    corpus = load_reference_corpus("auto")
    sample = sample_corpus(corpus, n_points, unit="words", random_state=0)
    emb = encode_cached(Encoder(device="cpu"), sample.words, layers=[6], progress=False)
    return np.asarray(emb.select("6"))[:n_points], corpus.name


def bench_umap(n_points: int, repeats: int) -> None:
    import umap

    x, corpus = word_vectors(n_points)
    print(f"\n1. UMAP, {len(x):,} word vectors of {corpus} at layer 6 ({x.shape[1]} dims)")
    t = time.perf_counter()
    Projector(random_state=0).fit(np.random.default_rng(0).normal(size=(4500, 16)))
    print(f"   cold: first fit of the process (numba compilation) {time.perf_counter() - t:.1f} s")
    ours = median_time(lambda: Projector(random_state=0).fit(x), repeats)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = median_time(lambda: umap.UMAP().fit(x), repeats)
    coords = Projector(random_state=0).fit_transform(x)
    tw = trustworthiness(x[:2000], coords[:2000], n_neighbors=10)
    print(f"   workbench Projector(random_state=0): {ours:.2f} s (median of {repeats})")
    print(f"   plain umap.UMAP() defaults:          {plain:.2f} s")
    print(f"   ratio plain / ours: {plain / ours:.2f}x; trustworthiness (first 2,000) {tw:.3f}")


def bench_layer_switch(repeats: int) -> None:
    from streamlit.testing.v1 import AppTest

    # imports streamlit (heavy); webapp/ is found through REPO on sys.path
    from webapp.caches import corpora

    for source, word in (("demo", "bank"), ("semcor", "play")):
        if source == "semcor" and "semcor" not in corpora.available_datasets.__wrapped__():
            continue
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600).run()
        at.switch_page("webapp/pages/senses.py").run()
        at.selectbox(key="senses_source").set_value(source).run()
        if source == "demo":
            at.selectbox(key="senses_demo_word").set_value(word).run()
        else:
            at.text_input(key="senses_lemma").set_value(word).run()
        assert not at.exception, at.exception
        n = int(at.caption[1].value.split()[0])
        times = []
        for layer in ["0", "1", "2", "3", "4", "5", "6"][: max(repeats, 3)]:
            t = time.perf_counter()
            at.select_slider(key="senses_layer").set_value(layer).run()
            times.append(time.perf_counter() - t)
            assert not at.exception and at.get("plotly_chart"), at.exception
        slider = at.select_slider(key="senses_layer")
        again = median_time(lambda s=slider: s.set_value("3").run(), 3)
        found = corpora.occurrences.__wrapped__(
            source, word, None, 300 if source == "semcor" else None,
            _corpus=corpora.corpus.__wrapped__("semcor") if source == "semcor" else None,
        )  # fmt: skip
        enc = Encoder(device="cpu")

        def baseline(enc=enc, found=found):
            emb = enc.encode([list(o.words) for o in found], keep=[[o.index] for o in found],
                             progress=False)  # fmt: skip
            Projector(random_state=0).fit(emb.select("3"))

        base = median_time(baseline, repeats)
        med = statistics.median(times)
        print(f"\n2. layer switch, Senses page, {source} '{word}' ({n} occurrences)")
        print(f"   new layer (new projection, cached embeddings): median {med:.2f} s, "
              f"max {max(times):.2f} s over layers {len(times)}")  # fmt: skip
        print(f"   a layer seen before (everything cached): {again:.2f} s")
        print(f"   baseline, embeddings recomputed + projection: {base:.2f} s; "
              f"ratio baseline / switch {base / med:.1f}x")  # fmt: skip


def play_vectors():
    """The 300 SemCor occurrences of "play" the link shows, encoded (through the cache)."""
    found = lemma_occurrences("play", "semcor", limit=300)
    return encode_occurrences(Encoder(device="cpu"), found)


def bench_separation(repeats: int) -> None:
    from sklearn.metrics import silhouette_score
    from sklearn.neighbors import NearestNeighbors

    ov = play_vectors()
    ref = encode_cached(Encoder(device="cpu"), demo_sentences(), progress=False)
    post = make_correction("zscore").fit(ref.vectors)
    labels = np.asarray(ov.labels)
    keep = np.isin(labels, [k for k, n in zip(*np.unique(labels, return_counts=True)) if n >= 2])
    x_all = np.asarray(ov.vectors)

    def ours():
        return separation_by_layer(x_all, ov.labels, ov.emb.layers, post)

    def plain():
        out = []
        for x in (x_all, post.transform(x_all)):
            for i in range(x.shape[1]):
                v, lab = x[keep, i], labels[keep]
                nn = NearestNeighbors(n_neighbors=2, metric="cosine").fit(v)
                idx = nn.kneighbors(v, return_distance=False)[:, 1]
                out.append((silhouette_score(v, lab, metric="cosine"), (lab[idx] == lab).mean()))
        return out

    curve, check = ours(), plain()
    t_ours, t_plain = median_time(ours, repeats), median_time(plain, repeats)
    sil = [r.silhouette for r in curve.rows]
    gap = max(abs(a - b[0]) for a, b in zip(sil, check))
    print(f"\n5. separation curve, 'play' ({len(ov.occurrences)} occurrences, {len(curve.layers)} "
          f"hidden states x raw and z-scored), cached vectors")  # fmt: skip
    print(f"   workbench separation_by_layer: {t_ours * 1000:.0f} ms (median of {repeats})")
    print(f"   baseline, scikit-learn silhouette_score + NearestNeighbors: "
          f"{t_plain * 1000:.0f} ms; ratio baseline / ours {t_plain / t_ours:.1f}x "
          f"(largest silhouette gap {gap:.1e})")  # fmt: skip
