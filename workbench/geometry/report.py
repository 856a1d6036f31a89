"""The per-layer geometry analysis as tables, figures and a report (Markdown, HTML, JSON).

The numbers come from :func:`workbench.geometry.analysis.analyze_layers`; the figures from
:mod:`workbench.geometry.figures`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from workbench.geometry.analysis import GeometryResult, most_anisotropic_layer
from workbench.geometry.corrections import CORRECTION_LABELS
from workbench.geometry.figures import anisotropy_figure, rogue_figure, similarity_figure
from workbench.geometry.rogue import RogueDimensions
from workbench.reports.tables import Table
from workbench.reports.writers import Report, Section


def _rogue_text(rogue: RogueDimensions) -> str:
    return ", ".join(
        f"d{int(d)} ({100 * s:.0f}%)" if math.isfinite(s) else f"d{int(d)}"
        for d, s in zip(rogue.top, rogue.share, strict=True)
    )


def geometry_table(result: GeometryResult) -> Table:
    """The main per-layer table: anisotropy under each correction, self- and intra-sentence
    similarity (raw and adjusted), top rogue dimensions of the raw vectors with their share."""
    k = result.config.top_k
    cols = ["layer"] + [f"anisotropy {CORRECTION_LABELS[c]}" for c in result.corrections]
    cols += ["self-sim", "self-sim adj.", "intra-sim", "intra-sim adj.", "MEV", "MEV adj."]
    cols += [f"top-{k} rogue dims (share)", f"top-{k} share"]
    first = result.corrections[0]
    rows = []
    for layer in result.layers:
        raw = result.get("none" if "none" in result.corrections else first, layer)
        row: list[Any] = [layer]
        row += [result.get(c, layer).anisotropy.value for c in result.corrections]
        row += [raw.self_similarity.value, raw.self_similarity_adjusted.value]
        row += [raw.intra_similarity.value, raw.intra_similarity_adjusted.value]
        row += [raw.mev.value, raw.mev_adjusted.value]
        row += [_rogue_text(raw.rogue), raw.rogue.top_share]
        rows.append(tuple(row))
    label = CORRECTION_LABELS["none" if "none" in result.corrections else first]
    notes = [
        f"Similarities, MEV and rogue dimensions of the {label} vectors; 'adj.' = minus the "
        "layer's baseline (anisotropy for similarities, size-matched random MEV for MEV).",
        f"Self-similarity and MEV average word types occurring {max(2, result.config.min_count)}"
        " times or more; 'undefined' means no word type occurs that often.",
    ]
    return Table(tuple(cols), tuple(rows), caption="Geometry per layer", notes=tuple(notes))


def correction_table(result: GeometryResult) -> Table:
    """Per layer and correction: anisotropy +- SE, adjusted self- and intra-sentence similarity,
    the top rogue-dimension share and the informativity r^2 without the top dimensions."""
    k = result.config.top_k
    cols = ("layer", "correction", "anisotropy", "SE", "self-sim adj.", "intra-sim adj.",
            f"top-{k} share", f"r2 without top-{k}")  # fmt: skip
    rows = [
        (r.layer, CORRECTION_LABELS[r.correction], r.anisotropy.value, r.anisotropy.sem,
         r.self_similarity_adjusted.value, r.intra_similarity_adjusted.value,
         r.rogue.top_share, r.rogue.informativity)
        for r in result.rows
    ]  # fmt: skip
    return Table(cols, tuple(rows), caption="Every correction, every layer", digits=4)


# --------------------------------------------------------------------------- report


def result_data(result: GeometryResult) -> dict[str, Any]:
    """Everything measured, JSON-ready (per-dimension contributions included)."""
    return {
        "sizes": {
            "fit_words": result.n_fit_words,
            "measure_words": result.n_measure_words,
            "measure_sentences": result.n_measure_sentences,
            "word_types": result.n_types,
        },
        "layers": [
            {
                "layer": r.layer,
                "correction": r.correction,
                **{
                    name: {"value": m.value, "sem": m.sem, "n": m.n, "note": m.note}
                    for name, m in (
                        ("anisotropy", r.anisotropy),
                        ("self_similarity", r.self_similarity),
                        ("self_similarity_adjusted", r.self_similarity_adjusted),
                        ("intra_similarity", r.intra_similarity),
                        ("intra_similarity_adjusted", r.intra_similarity_adjusted),
                        ("mev", r.mev),
                        ("mev_baseline", r.mev_baseline),
                        ("mev_adjusted", r.mev_adjusted),
                    )
                },
                "rogue": {
                    "top": r.rogue.top,
                    "share": r.rogue.share,
                    "informativity_r2": r.rogue.informativity,
                    "expected_cosine": r.rogue.expected_cosine,
                    "contributions": r.rogue.contributions,
                },  # fmt: skip
            }
            for r in result.rows
        ],
    }


def _summary(result: GeometryResult) -> str:
    cfg = result.config
    split = (
        f"Corrections were fitted per layer on {result.n_fit_words} words (a seeded random "
        f"{cfg.fit_fraction:.0%} of the sentences); every measure is taken on the other, "
        f"held-out {result.n_measure_words} words ({result.n_measure_sentences} sentences, "
        f"{result.n_types} word types)."
        if cfg.fit_on == "heldout"
        else f"Corrections were fitted and measured on the same {result.n_measure_words} words."
    )
    return (
        f"{split}\n\nAnisotropy is the mean cosine of {cfg.n_pairs} seeded random pairs of words "
        "from different sentences (Ethayarajh 2019), the same pairs for every layer and "
        "correction. Rogue dimensions (Timkey & van Schijndel 2021): the dimensions with the "
        "largest |mean u_i v_i / (|u||v|)|; share = |contribution| / sum of |contributions|; "
        f"r2 = squared correlation between full cosine and cosine without the top-{cfg.top_k}."
    )


def geometry_report(
    result: GeometryResult,
    config: Mapping[str, Any] | Any,
    rogue_layer: int | None = None,
    command: str = "",
    title: str = "Anisotropy and standardization per layer",
) -> Report:
    """The full report: main table, correction table, three figures, JSON data.

    Args:
        result: from :func:`analyze_layers`.
        config: the full configuration (model, fingerprint, corpus, hashes, sample, seed, ...);
            the analysis config is added under ``"geometry"``.
        rogue_layer: layer of the rogue-dimension figure (default: the most anisotropic one).
        command: the command line that made it.
        title: the report title.
    """
    layer = most_anisotropic_layer(result) if rogue_layer is None else rogue_layer
    base = "none" if "none" in result.corrections else result.corrections[0]
    full_config = {**dict(config), "geometry": result.config}
    sections = (
        Section("Per-layer table", _summary(result), (geometry_table(result),)),
        Section(
            "Figures",
            figures=(
                anisotropy_figure(result),
                similarity_figure(result, base),
                rogue_figure(result, layer),
            ),
        ),  # fmt: skip
        Section("All corrections", tables=(correction_table(result),)),
    )
    return Report(title, full_config, sections, data=result_data(result), command=command)
