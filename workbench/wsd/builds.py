"""The sense indexes of the named systems, built once per encoder and kept in the cache dir.

:func:`semcor_index` builds a SemCor system's index (it encodes SemCor's 226k tagged words and,
for ``best``, the definitions of WordNet's 117k synsets; :func:`build_minutes` estimates how
long) and stores it under :func:`system_index_path`, keyed by the system's config, the encoder's
identity and SemCor's checksum; later calls load it from there. :func:`wordnet_index` builds the
WordNet-only index, for some lemmas only when asked; :func:`trained_index` one of any settings
on any training corpus. :func:`train_output_path` is where ``workbench wsd train`` keeps an
index it builds. Which of these answers for a system: :func:`workbench.wsd.systems.open_system`.

Example::

    index = semcor_index(Encoder(), "best", say=print)   # built once (minutes), then loaded
    gloss = wordnet_index(Encoder(), [("bank", "NOUN")])  # bank's noun senses, gloss vectors
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np

from workbench.corpora.datasets import available_datasets, dataset_paths, load_dataset
from workbench.corpora.readers import Corpus
from workbench.encoding.cache import store_in_cache
from workbench.encoding.digests import file_sha256
from workbench.encoding.encoder import Encoder
from workbench.encoding.models import DIGESTS, default_cache_dir
from workbench.encoding.rows import Progress, progress_part
from workbench.errors import CacheError, DataError, InputError
from workbench.fileio import atomic_path, sha256_bytes
from workbench.lexicon.wordnet import WORDNET_VERSION, WordNet, load_wordnet
from workbench.limits import read_json
from workbench.wsd.baselines import SenseCounts, sense_frequencies
from workbench.wsd.biencoder import BIENCODER_CONFIG, load_biencoder
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo, cache_dtype_tag
from workbench.wsd.index import SenseIndex
from workbench.wsd.predict import build_index, encode_instances
from workbench.wsd.presets import (
    PRESETS,
    WORDNET,
    WORDNET_CORPUS,
    IndexPreset,
    system_of,
)
from workbench.wsd.sources import gloss_vectors
from workbench.wsd.store import FORMAT_VERSION, load_index, save_index

#: Called with a line before a long build starts (what is built and why it takes long).
SystemProgress = Callable[[str], None] | None


def semcor_available() -> bool:
    """Whether SemCor is in the data dir (``workbench data download`` puts it there)."""
    try:
        return "semcor" in available_datasets()
    except DataError:
        return False


def semcor_sha256() -> str:
    """Checksum of SemCor's source files (the same as ``load_dataset("semcor").sha256``), each
    file's digest remembered across processes (:mod:`workbench.encoding.digests`)."""
    xml, gold = dataset_paths("semcor")
    memo = default_cache_dir() / DIGESTS
    digest = hashlib.sha256()
    for path in (p for p in (xml, gold) if p is not None):
        digest.update(f"{path.name}\0{file_sha256(path, memo)}\n".encode())
    return digest.hexdigest()


def semcor_frequencies() -> SenseCounts:
    """SemCor's sense counts for the most-frequent-sense baseline
    (:func:`workbench.wsd.baselines.sense_frequencies`), kept in the cache by SemCor's checksum
    (``wsd/semcor-sense-counts-<sha>.json``): an evaluation needs them, not SemCor's 800k words
    parsed again.

    Raises:
        DataError: SemCor is not found.
    """
    sha = semcor_sha256()
    path = default_cache_dir() / "wsd" / f"semcor-sense-counts-{sha[:16]}.json"
    if path.is_file():
        try:
            return read_sense_counts(path, sha)
        except (CacheError, ValueError, TypeError) as exc:
            warnings.warn(f"{path} is damaged ({exc}); SemCor is counted again", stacklevel=2)
    counts = sense_frequencies(load_dataset("semcor"))
    rows = [[lemma, pos, dict(c)] for (lemma, pos), c in sorted(counts.items())]
    try:
        with atomic_path(path) as tmp:
            tmp.write_text(json.dumps({"sha256": sha, "counts": rows}), encoding="utf-8")
    except OSError as exc:
        warnings.warn(f"SemCor's sense counts cannot be kept in {path}: {exc}", stacklevel=2)
    return counts


def mfs_counts() -> SenseCounts | None:
    """The sense counts of the most-frequent-sense baseline that an evaluation scores
    (``training`` of :func:`workbench.wsd.evaluate.evaluate_corpus`): SemCor's
    (:func:`semcor_frequencies`) when SemCor is in the data dir, else None (no MFS baseline).

    Raises:
        DataError: SemCor is there but cannot be read.
    """
    return semcor_frequencies() if semcor_available() else None


def read_sense_counts(path: Path, sha: str) -> SenseCounts:
    """The sense counts :func:`semcor_frequencies` kept for SemCor of checksum ``sha``.

    Raises:
        CacheError: another SemCor's, or not such a file; ValueError, TypeError: a row or count
            that is not one (non-finite or negative counts included).
    """
    data = read_json(path, error=CacheError)
    if not isinstance(data, dict) or data.get("sha256") != sha:
        raise CacheError("the counts of another SemCor")
    counts: SenseCounts = {}
    for lemma, pos, keys in data["counts"]:
        values = {str(k): float(v) for k, v in dict(keys).items()}
        if not all(math.isfinite(v) and v >= 0 for v in values.values()):
            raise ValueError(f"a count of {lemma}.{pos} is negative or not finite")
        counts[(str(lemma), str(pos))] = Counter(values)
    return counts


def system_index_path(info: EncoderInfo, system: IndexPreset, training_sha256: str) -> Path:
    """Where the index of ``system`` for the encoder ``info`` describes
    (``EncoderInfo.of(encoder)``) trained on the corpus with checksum ``training_sha256`` is
    cached: a name from everything that changes its rows (the config, the training corpus, the
    encoder's identity and compute dtype, the index format)."""
    identity = asdict(info)
    if tag := cache_dtype_tag(identity.pop("dtype")):
        identity["dtype"] = tag
    ident = json.dumps(
        {
            "config": system.config.identity(),
            "training": [system.training, training_sha256],
            "encoder": identity,
            "format": FORMAT_VERSION,
        },
        sort_keys=True,
    )
    tag = sha256_bytes(ident)[:16]
    return index_root() / f"{_system_prefix(system)}{tag}"


def index_root() -> Path:
    """The cache dir's folder of sense indexes: the systems' own (:func:`system_index_path`) and
    those ``workbench wsd train`` keeps (:func:`train_output_path`)."""
    return default_cache_dir() / "wsd-index"


def _system_prefix(system: IndexPreset) -> str:
    return f"{system.name}-{system.training}-"


def saved_index_folders() -> list[Path]:
    """The index folders of :func:`index_root` (a ``meta.json`` in each), by name, less the
    systems' own (named by :func:`system_index_path`, or a system's name): the indexes
    ``workbench wsd train`` saved there."""
    root = index_root()
    if not root.is_dir():
        return []
    systems = tuple(_system_prefix(s) for s in PRESETS.values())
    return [
        p
        for p in sorted(root.glob("*"))
        if (p / "meta.json").is_file() and not p.name.startswith(systems) and p.name not in PRESETS
    ]


#: The build estimate's base: minutes the packaged model (6 layers, 384 wide) takes to build the
#: ``best`` index in float32 on the CPU :func:`build_message` names (docs/benchmarks.md, "WSD");
#: other encoders scale with their compute per token.
PACKAGED_BUILD_MINUTES = 12.0
#: The part of a build with gloss vectors that encoding SemCor takes, the rest being WordNet's
#: definitions: where the progress of :func:`semcor_index` passes from one to the other
#: (docs/benchmarks.md, "The app's background builds").
SEMCOR_SHARE = 0.25
#: How much faster a CPU with bfloat16 instructions encodes in bfloat16 than in float32, as the
#: build estimate takes it (docs/benchmarks.md, "bfloat16 on the CPU").
CPU_BF16_SPEEDUP = 1.7


def build_minutes(info: EncoderInfo) -> float:
    """Roughly how many minutes building a SemCor index takes on a CPU with the encoder ``info``
    describes: :data:`PACKAGED_BUILD_MINUTES` scaled by its layers x width² against the
    packaged model's (all-mpnet-base-v2, 12 x 768: 8 times as much), and divided by
    :data:`CPU_BF16_SPEEDUP` when it computes in bfloat16."""
    minutes = PACKAGED_BUILD_MINUTES * (info.n_hidden - 1) * info.dim**2 / (6 * 384**2)
    return minutes / CPU_BF16_SPEEDUP if info.dtype == "bfloat16" else minutes


def build_message(info: EncoderInfo, system: IndexPreset, path: Path) -> str:
    """The line shown before a system's index is built for the encoder ``info`` describes:
    what, and why it takes a while."""
    glosses = " and the definitions of WordNet's 117,659 synsets"
    minutes = build_minutes(info)
    if minutes < 20:
        cpu = f"about {max(2, round(minutes))} minutes"
    elif minutes < 90:
        cpu = f"about {5 * round(minutes / 5)} minutes"
    else:
        cpu = f"about {minutes / 60:.1f} hours"
    return (
        f"Building the '{system.name}' sense index for {info.name} ({system.description}). "
        f"It encodes SemCor's 226,036 sense-tagged words"
        f"{glosses if system.config.gloss != 'none' else ''} once: {cpu} on a 2-core CPU, a "
        f"few minutes on a GPU. Later runs load it from {path}."
    )


def semcor_index(
    encoder: Encoder,
    system: str | IndexPreset = "best",
    wordnet: WordNet | None = None,
    progress: Progress = None,
    say: SystemProgress = None,
    semcor: Corpus | None = None,
) -> SenseIndex:
    """The index of ``system`` trained on SemCor, loaded from the cache dir, else built and
    stored there.

    Args:
        encoder: the encoder.
        system: a SemCor system (``best``, ``plain``: :data:`~workbench.wsd.presets.PRESETS`),
            or the preset of one (a system of :mod:`workbench.wsd.systems` trained on SemCor).
        wordnet: default :func:`load_wordnet`.
        progress: passed to the encoder (a bar per step, or a ``fraction -> None`` callback
            that goes from 0 to 1 once over the whole build: :data:`SEMCOR_SHARE` of it for
            SemCor, the rest for the gloss vectors).
        say: called with a line before a build starts (what is built and why it takes long).
        semcor: the training corpus (default: SemCor from the data dir). Another corpus is
            cached under its own checksum.

    Raises:
        DataError: no SemCor in the data dir.
    """
    chosen = PRESETS.get(system) if isinstance(system, str) else system
    if chosen is None or chosen.training != "semcor" or chosen.config == BIENCODER_CONFIG:
        name = system if isinstance(system, str) else system.name
        raise InputError(f"the {name} system has no SemCor index: use open_system")
    sha = semcor.sha256 if semcor is not None else semcor_sha256()
    info = EncoderInfo.of(encoder)
    path = system_index_path(info, chosen, sha)
    if (path / "meta.json").is_file():
        try:
            return load_index(path, info)
        except DataError:  # unreadable (e.g. cut off by a full disk): build it again
            pass
    if say is not None:
        say(build_message(info, chosen, path))
    corpus = semcor if semcor is not None else load_dataset("semcor")
    share = SEMCOR_SHARE if chosen.config.gloss != "none" else 1.0
    training = encode_instances(encoder, corpus, progress=progress_part(progress, 0.0, share))
    index = build_index(encoder, training, chosen.config, wordnet,
                        progress=progress_part(progress, share, 1.0))  # fmt: skip
    store_in_cache(lambda: save_index(index, path), f"{chosen.name} sense index")
    return index


def trained_index(
    encoder: Encoder,
    corpus: Corpus,
    config: SenseIndexConfig,
    wordnet: WordNet | None = None,
    progress: Progress = None,
) -> SenseIndex:
    """An index of ``config`` trained on ``corpus`` (its instances encoded through the cache),
    built now and kept nowhere."""
    training = encode_instances(encoder, corpus, progress=progress)
    return build_index(encoder, training, config, wordnet, progress=progress)


def wordnet_index_path(info: EncoderInfo, config: SenseIndexConfig = WORDNET.config) -> Path:
    """Where the full WordNet-only index of the encoder ``info`` describes, built with
    ``config``, is cached (``workbench wsd train --corpus wordnet`` writes it there)."""
    system = dataclasses.replace(WORDNET, config=config)
    return system_index_path(info, system, f"wordnet-{WORDNET_VERSION}")


def wordnet_index(
    encoder: Encoder,
    lemmas: Sequence[tuple[str, str]] | None = None,
    wordnet: WordNet | None = None,
    config: SenseIndexConfig = WORDNET.config,
    progress: Progress = None,
) -> SenseIndex:
    """The WordNet-only index: one gloss vector per sense key, every sense the same way.

    Args:
        encoder: the encoder.
        lemmas: only the senses of these ``(lemma, POS)`` pairs; None: all
            206,941 sense keys (encodes the text of WordNet's 117,659 synsets once).
        wordnet: default :func:`load_wordnet`.
        config: layer spec and gloss pooling (``gloss`` must be ``only``).
        progress: passed to the encoder.
    """
    wordnet = wordnet or load_wordnet()
    if config.gloss != "only":
        raise InputError("a WordNet-only index is made of gloss vectors only (gloss='only')")
    keys = None
    if lemmas is not None:
        keys = sorted({k for lemma, pos in lemmas for k in wordnet.candidates(lemma, pos)})
    gloss = gloss_vectors(
        encoder, wordnet, config.layers, keys, pooling=config.gloss_pooling, progress=progress
    )
    info = EncoderInfo.of(encoder)
    restricted = tuple(f"{lemma}.{pos}" for lemma, pos in lemmas or ())
    training = TrainingInfo(WORDNET_CORPUS, f"wordnet-{wordnet.version}", 0, 0, restricted)
    empty = np.zeros((0, info.dim), np.float32)
    return SenseIndex(config).fit(empty, [], info=info, training=training, gloss=gloss)


def train_output_path(encoder: Encoder, index: SenseIndex, corpus: str) -> Path:
    """Where ``workbench wsd train`` keeps ``index`` of ``encoder`` trained on ``corpus`` when
    no ``--out`` is given: a named system's own cache place (where
    :func:`~workbench.wsd.systems.open_system` finds it), else a folder of the cache dir named
    after the corpus, the settings, the encoder's fingerprint and dtype, and, for trained gloss
    vectors, the gloss encoder's fingerprint."""
    info, config = EncoderInfo.of(encoder), index.config
    if corpus == "wordnet":
        return wordnet_index_path(info, config)
    if system_of(index) in PRESETS:
        return system_index_path(info, PRESETS[system_of(index)], index.training_.sha256)
    parts = [
        Path(corpus).name.split(".")[0], config.layers, config.correction, config.propagate,
        config.gloss, config.gloss_pooling, f"{config.gloss_weight:g}", info.fingerprint,
    ]  # fmt: skip
    if tag := cache_dtype_tag(info.dtype):
        parts.append(tag)
    if config.gloss_pooling == "trained":  # vectors of the bi-encoder's own gloss encoder
        dtype = encoder.dtype_name
        bi = load_biencoder(encoder.source.location, str(encoder.device), dtype)  # type: ignore[arg-type]
        parts.append(bi.gloss_fingerprint)
    slug = "-".join(parts)
    return index_root() / slug.replace("/", "_").replace(":", "_")
