"""Before/after pictures of ambiguous words: the same occurrences under two encoders.

For each lemma (by default bank, bass, die, play, cell: :data:`SENSE_LEMMAS`) the occurrences are
a seeded sample of its sense-annotated occurrences in SemCor, the project's demo sentences of the
word (``data/demo/<word>.tsv``, a few dozen per word, several senses each) and WordNet's usage
examples of its senses (so rare senses, such as the fish senses of *bass*, which SemCor has once,
appear), each labelled with its gold sense key. Each encoder encodes them once; per layer, the
separation of the gold senses is measured
(:func:`workbench.geometry.separation.separation_by_layer`: the cosine silhouette and
the leave-one-out 1-NN sense accuracy, raw vectors), and the vectors of one layer are projected
with UMAP. :func:`picture_figure` puts the two projections side by side,
:func:`separation_table` and :func:`separation_figure` the per-layer measures.

Example::

    cfg = SenseConfig(lemmas=("bank", "bass"))
    base, tuned = lemma_views(Encoder(), cfg), lemma_views(Encoder("runs/wsd"), cfg)
    separation_table({"base": base, "tuned": tuned}).to_markdown()
    picture_figure({"base": base[0], "tuned": tuned[0]})       # two UMAPs of bank, one legend
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from workbench.corpora.datasets import load_dataset
from workbench.corpora.occurrences import (
    Occurrence,
    demo_words,
    encode_occurrences,
    from_corpus,
    from_lines,
    from_wordnet,
    read_demo,
    sense_glosses,
    sense_names,
)
from workbench.encoding.encoder import Encoder
from workbench.errors import InputError
from workbench.geometry.separation import MEASURE_LABELS, LayerSeparation, separation_by_layer
from workbench.lexicon.wordnet import load_wordnet
from workbench.reports.tables import Table
from workbench.viz.plotting import DASHES, hover_text, layer_lines, small_multiples
from workbench.viz.projection import MIN_POINTS, ProjectionConfig, project

#: The ambiguous lemmas pictured by default.
SENSE_LEMMAS: tuple[str, ...] = ("bank", "bass", "die", "play", "cell")


@dataclass(frozen=True)
class SenseConfig:
    """Which occurrences are pictured, and how (all change the numbers)."""

    lemmas: tuple[str, ...] = SENSE_LEMMAS  # the words pictured
    corpus: str = "semcor"  # sense-annotated corpus of the occurrences
    per_lemma: int = 200  # at most this many corpus occurrences per lemma (seeded sample)
    demo: bool = True  # add the project's demo sentences of the lemma (data/demo), if any
    wordnet_examples: bool = True  # add WordNet's usage examples of the lemma's senses
    layer: str = "-1"  # the layer spec projected with UMAP
    seed: int = 0  # the sample and the projection


@dataclass(frozen=True)
class LemmaView:
    """One lemma's occurrences under one encoder.

    Attributes:
        lemma: the lemma.
        occurrences: its occurrences (gold sense key as label).
        separation: sense separation per hidden state (raw vectors).
        coords: ``(n_occurrences, 2)`` UMAP coordinates at :attr:`SenseConfig.layer`.
    """

    lemma: str
    occurrences: tuple[Occurrence, ...]
    separation: LayerSeparation
    coords: np.ndarray

    @property
    def labels(self) -> list[str]:
        return [o.label for o in self.occurrences]


def lemma_occurrences(lemma: str, cfg: SenseConfig) -> tuple[Occurrence, ...]:
    """The pictured occurrences of ``lemma`` (see the module docstring).

    Raises:
        InputError: fewer than three occurrences in all sources together.
    """
    found: list[Occurrence] = []
    try:
        corpus = load_dataset(cfg.corpus)
        found += from_corpus(corpus, lemma, limit=cfg.per_lemma, random_state=cfg.seed)
    except InputError:
        pass  # no occurrence in the corpus: the other sources may still picture it
    if cfg.demo and lemma in demo_words():
        found += from_lines(read_demo(lemma), lemma, source=f"demo/{lemma}.tsv")
    if cfg.wordnet_examples:
        try:
            found += from_wordnet(load_wordnet(), lemma)
        except InputError:
            pass
    if len(found) < MIN_POINTS:
        raise InputError(
            f"'{lemma}' has {len(found)} sense-annotated occurrence(s) in {cfg.corpus}, the demo "
            f"texts and WordNet's examples: at least {MIN_POINTS} are needed to picture it"
        )
    return tuple(found)


def lemma_views(
    encoder: Encoder, cfg: SenseConfig, progress: Callable[[str], None] | None = None
) -> tuple[LemmaView, ...]:
    """Encode, measure and project every lemma of ``cfg`` with ``encoder``."""
    views = []
    for lemma in cfg.lemmas:
        occurrences = lemma_occurrences(lemma, cfg)
        ov = encode_occurrences(encoder, occurrences)
        labels = [o.label for o in occurrences]
        separation = separation_by_layer(
            ov.vectors, labels, ov.emb.layers, n_hidden=encoder.n_hidden
        )
        umap = ProjectionConfig(method="umap", random_state=cfg.seed)
        coords = project(ov.emb.select(cfg.layer), umap)
        views.append(LemmaView(lemma, occurrences, separation, coords))
        if progress is not None:
            progress(f"{encoder.name}: {lemma} ({len(occurrences)} occurrences)")
    return tuple(views)


def separation_table(views: Mapping[str, Sequence[LemmaView]]) -> Table:
    """Per lemma and layer: the silhouette and the 1-NN sense accuracy under each encoder
    (``views``: encoder label -> its views, in the same lemma order), and the 1-NN chance."""
    labels = list(views)
    columns = ["lemma", "layer", "n", "senses"]
    columns += [f"silhouette {m}" for m in labels] + [f"1-NN {m}" for m in labels]
    columns.append("1-NN chance")
    rows = []
    for per_lemma in zip(*views.values(), strict=True):
        first = per_lemma[0].separation
        for layer in first.layers:
            sep = [v.separation.get(layer) for v in per_lemma]
            rows.append(
                (per_lemma[0].lemma, layer, sep[0].n_measured, sep[0].n_senses)
                + tuple(s.silhouette for s in sep)
                + tuple(s.nn_accuracy for s in sep)
                + (sep[0].chance,)
            )
    return Table(
        tuple(columns),
        tuple(rows),
        caption="Separation of gold senses per hidden state (0 = embeddings), raw vectors: "
        "cosine silhouette and leave-one-out 1-NN sense accuracy",
    )


def picture_figure(views: Mapping[str, LemmaView], layer: str = "-1") -> go.Figure:
    """The UMAP of one lemma's occurrences under each encoder, side by side, one legend."""
    first = next(iter(views.values()))
    wordnet = load_wordnet()
    glosses = sense_glosses(wordnet, first.labels)
    names = sense_names(glosses)
    hover = [hover_text(o.words, o.index, glosses[o.label], o.label) for o in first.occurrences]
    coords = np.stack([v.coords for v in views.values()])
    titles = [f"{label}: layer {layer}" for label in views]
    fig = small_multiples(coords, first.labels, hover, titles, n_cols=len(views), names=names)
    fig.update_layout(title=f"'{first.lemma}': {len(first.occurrences)} occurrences by gold sense")
    return fig


def separation_figure(views: Mapping[str, Sequence[LemmaView]], measure: str) -> go.Figure:
    """``measure`` (silhouette or nn_accuracy) per layer, one line per lemma and encoder: one
    colour per lemma, solid for the first encoder, dashed for the second (then :data:`DASHES`)."""
    series: dict[str, list[float]] = {}
    colors: list[int] = []
    dashes: list[str] = []
    layers: Sequence[str] = ()
    lemmas: dict[str, int] = {}
    for k, (label, per_model) in enumerate(views.items()):
        for view in per_model:
            layers = view.separation.layers
            series[f"{view.lemma} {label}"] = view.separation.series(measure)["none"]
            colors.append(lemmas.setdefault(view.lemma, len(lemmas)))
            dashes.append(DASHES[k % len(DASHES)])
    return layer_lines(series, list(layers), f"Sense separation per layer: {measure}",
                       MEASURE_LABELS.get(measure, measure), colors, dashes)  # fmt: skip
