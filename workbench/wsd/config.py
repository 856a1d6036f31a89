"""What describes a sense index: how it is built, whose vectors it holds, where its centroids
come from, and the candidate scores it reports (:mod:`workbench.wsd.index` holds the index itself).

Example:
    >>> SenseIndexConfig(layers="last4-sum", correction="zscore", propagate="lexname").label
    'sum(-4,-3,-2,-1) zscore +lexname'
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal, get_args

import numpy as np

from workbench.encoding.embeddings import LayerwiseEmbeddings
from workbench.encoding.pooling import LayerSpec
from workbench.errors import InputError
from workbench.geometry.correction import Provenance
from workbench.geometry.corrections import CORRECTIONS
from workbench.wsd.vectors import LEVELS, PropagationLevel

if TYPE_CHECKING:
    from workbench.encoding.encoder import Encoder

#: How gloss vectors join the corpus centroids: not at all, concatenated, or gloss vectors only
#: (every sense represented the same way, no corpus: the WordNet-only index).
GlossCombination = Literal["none", "concat", "only"]
GLOSS_COMBINATIONS: tuple[str, ...] = get_args(GlossCombination)
#: A gloss vector: the mean of the definition's words, of the definition's and the usage
#: examples' words, the lemma's own vector (workbench.wsd.sources.gloss_vectors), or the
#: vector a trained WSD bi-encoder's gloss encoder gives the sense (workbench.wsd.biencoder;
#: ``gloss="only"`` with it is the bi-encoder itself).
GlossPooling = Literal["definition", "definition-examples", "lemma", "trained"]
GLOSS_POOLINGS: tuple[str, ...] = get_args(GlossPooling)


@dataclass(frozen=True)
class SenseIndexConfig:
    """How a sense index is built (everything that changes its vectors)."""

    layers: str = (
        "last4-sum"  # layer spec of the occurrence vectors (workbench.encoding.pooling.LayerSpec)
    )
    correction: str = "none"  # correction fitted on the training vectors: none | zscore | ...
    propagate: PropagationLevel = "none"  # LMMS propagation to senses with no corpus vector
    gloss: GlossCombination = "none"  # gloss vectors: none | concat (with the centroids) | only
    gloss_weight: float = 0.2  # weight of the gloss cosine (chosen on SemEval-2007, the dev set)
    gloss_pooling: GlossPooling = "definition"  # gloss vector (workbench.wsd.sources)

    def __post_init__(self) -> None:
        LayerSpec.parse(self.layers)
        if not isinstance(self.correction, str) or self.correction not in CORRECTIONS:
            raise InputError(
                f"correction must be one of {', '.join(CORRECTIONS)}, not {self.correction!r}"
            )
        if self.propagate not in LEVELS:
            raise InputError(
                f"propagate must be one of {', '.join(LEVELS)}, not '{self.propagate}'"
            )
        if self.gloss not in GLOSS_COMBINATIONS:
            raise InputError(
                f"gloss must be one of {', '.join(GLOSS_COMBINATIONS)}, not '{self.gloss}'"
            )
        if self.gloss_pooling not in GLOSS_POOLINGS:
            raise InputError(
                f"gloss_pooling must be one of {', '.join(GLOSS_POOLINGS)}, "
                f"not '{self.gloss_pooling}'"
            )
        if self.gloss == "only" and (self.propagate != "none" or self.correction != "none"):
            raise InputError(
                "an index of gloss vectors only has no corpus vectors to propagate or to fit a "
                "correction on: use propagate='none' and correction='none'"
            )
        if not 0.0 <= self.gloss_weight <= 1.0:
            raise InputError(f"gloss_weight must be in [0, 1], not {self.gloss_weight}")

    @classmethod
    def from_dict(cls, data: dict) -> SenseIndexConfig:
        """The config a saved index's ``meta.json`` holds; one saved before the workbench
        called the correction so names it ``postprocess``, read as ``correction``.

        Raises:
            TypeError: a field it does not know (as the constructor does).
        """
        data = dict(data)
        if "postprocess" in data and "correction" not in data:
            data["correction"] = data.pop("postprocess")
        return cls(**data)

    def identity(self) -> dict:
        """The config as cache names are made of it: its fields, the correction under the key
        ``postprocess`` it had when the cached indexes were named, so they are found still."""
        data = asdict(self)
        data["postprocess"] = data.pop("correction")
        return data

    @property
    def label(self) -> str:
        """Short description for tables, e.g. ``sum(-4,-3,-2,-1) zscore +lexname +gloss``."""
        parts = [LayerSpec.parse(self.layers).label]
        parts += [self.correction] if self.correction != "none" else ["raw"]
        parts += [f"+{self.propagate}"] if self.propagate != "none" else []
        if self.gloss == "concat":
            parts.append(f"+gloss({self.gloss_pooling},{self.gloss_weight:g})")
        elif self.gloss == "only" and self.gloss_pooling == "trained":
            parts.append("against the gloss encoder's vectors")
        elif self.gloss == "only":
            parts.append(f"gloss only ({self.gloss_pooling})")
        return " ".join(parts)


@dataclass(frozen=True)
class EncoderInfo:
    """Identity of the encoder whose vectors an index holds."""

    name: str
    fingerprint: str
    dim: int
    n_hidden: int
    pooling: str
    dtype: str = ""  # the model's compute dtype ("": not recorded, as in older index files)

    @classmethod
    def of(cls, encoder: Encoder | LayerwiseEmbeddings) -> EncoderInfo:
        """From an :class:`~workbench.encoding.encoder.Encoder` or a ``LayerwiseEmbeddings``."""
        if isinstance(encoder, LayerwiseEmbeddings):
            n_hidden, dim, name = encoder.n_hidden, encoder.vectors.shape[2], encoder.model_name
            dtype = encoder.compute_dtype
        else:
            n_hidden, dim, name = encoder.n_hidden, encoder.dim, encoder.name
            dtype = encoder.dtype_name
        return cls(name, encoder.fingerprint, int(dim), int(n_hidden), encoder.pooling, dtype)


def cache_dtype_tag(dtype: str) -> str:
    """A compute dtype as it enters the name of a cached index or vector file: "" for float32
    (those files keep the names they had before the dtype was recorded), else the dtype."""
    return "" if dtype == "float32" else dtype


@dataclass(frozen=True)
class TrainingInfo:
    """Where the centroids come from (stated with every result)."""

    corpus: str = "unknown"  # e.g. "semcor", "wordnet-examples+glosses"
    sha256: str = ""  # checksum of the corpus source files
    n_sentences: int = 0
    n_occurrences: int = 0
    restricted_to: tuple[str, ...] = ()  # lemmas, when the index covers only some

    def provenance(self, info: EncoderInfo, layers: str) -> Provenance:
        """The provenance of a correction fitted on these training vectors of the encoder
        ``info`` describes (``layers``: the index's layer spec), as the index's correction
        records it."""
        return Provenance(
            model_name=info.name,
            fingerprint=info.fingerprint,
            layer_spec=layers,
            pooling=info.pooling,
            corpus=self.corpus,
            corpus_hash=self.sha256,
            n_sentences=self.n_sentences,
        )


@dataclass(frozen=True)
class CandidateScores:
    """Scores of every candidate row of one instance (for display)."""

    keys: tuple[str, ...]
    scores: np.ndarray  # (n_candidates,) float32, cosine in the index's space
    origins: tuple[str, ...]
