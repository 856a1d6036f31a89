"""The gloss-informed bi-encoder at work: a trained context encoder and gloss encoder say which
sense a word has; each gloss is encoded when an answer first needs it and kept on disk.

A *bi-encoder directory* is what ``workbench finetune wsd`` writes (and what the package ships
for its default model, :func:`shipped_biencoder`):

* the context encoder, as a model directory the :class:`~workbench.encoding.encoder.Encoder`
  loads: what training changed against the base model (:mod:`workbench.encoding.adapters`:
  LoRA adapters in PEFT's format, or the trained top layers, ``trained_layers.safetensors``, as
  the shipped one), or full weights;
* ``gloss_encoder/``: the gloss encoder, the same way; absent when training kept the gloss
  encoder at the base model's weights (``head.json`` then says ``"gloss_encoder": "base"``);
* ``head.json``: task ``wsd``, how a gloss is read (:data:`workbench.lexicon.glosses.GlossText`),
  cut (``gloss_max_length`` subwords) and pooled (``gloss_pooling``);
* ``sense_counts.json.gz``: how often each sense key occurred in its training data (the
  senses it learnt from examples; every other sense it knows from its gloss alone);
* ``pos_probe.npz``: a linear probe from the context vector to the word's POS
  (:mod:`workbench.wsd.pos_probe`), asked when a user gives no POS;
* ``training_card.json``: how it was trained, written last (a directory without it is an
  unfinished run and is refused).

A word's vector is the context encoder's last hidden state, its subwords averaged
(:data:`CONTEXT_LAYERS`, :data:`CONTEXT_POOLING`); a sense's vector is its synset's gloss through
the gloss encoder; the score is their dot product. :meth:`BiEncoder.index` puts the gloss
vectors of the senses an input needs (or of all of WordNet) into a
:class:`~workbench.wsd.index.SenseIndex` whose rows are the gloss vectors as trained, not
normalised (the model was trained on the dot product; the index normalises the query only, which
keeps each query's ranking), so prediction, scoring, reports and the app work on it unchanged.
Gloss vectors come from a :class:`~workbench.wsd.gloss_cache.GlossCache` keyed by the gloss
encoder's fingerprint and the gloss text: nothing is built ahead.

Example::

    bi = load_biencoder()                            # the shipped one, on the packaged MiniLM
    index = bi.index([("bank", "NOUN")])             # bank's 10 noun senses, glosses encoded once
    emb = bi.encoder.encode([["He", "sat", "on", "the", "bank"]], keep=[[4]])
    index.candidate_scores(emb.select(CONTEXT_LAYERS)[0], "bank", "NOUN").keys[0]
"""

from __future__ import annotations

import dataclasses
import functools
import gzip
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from workbench.encoding import models
from workbench.encoding.adapters import read_base_record
from workbench.encoding.device import DtypeName
from workbench.encoding.encoder import Encoder
from workbench.encoding.exported.backend import Backend, requested_backend
from workbench.encoding.pooling import Pooling, pool_sequence_array
from workbench.encoding.rows import Progress
from workbench.errors import ModelLoadError, WorkbenchError
from workbench.fileio import atomic_path
from workbench.lexicon.glosses import GLOSS_TEXTS, GlossText, gloss_text
from workbench.lexicon.wordnet import WordNet, load_wordnet
from workbench.limits import read_gzip, read_limited
from workbench.wsd.config import EncoderInfo, SenseIndexConfig, TrainingInfo
from workbench.wsd.gloss_cache import GlossCache
from workbench.wsd.index import ORIGINS, SenseIndex
from workbench.wsd.levers import smoothed_rows
from workbench.wsd.pos_probe import PROBE_FILE, PosProbe, load_probe

#: The context vector of a bi-encoder: the last hidden state ...
CONTEXT_LAYERS = "-1"
#: ... of a word's subwords, averaged (the Encoder's default pooling).
CONTEXT_POOLING: Pooling = "mean"
#: How a bi-encoder's index is described: gloss vectors only, from its trained gloss encoder.
BIENCODER_CONFIG = SenseIndexConfig(layers=CONTEXT_LAYERS, gloss="only", gloss_pooling="trained")
#: What a bi-encoder answering is, in one line for a user (reports).
BIENCODER_DESCRIPTION = (
    "gloss-informed bi-encoder: the trained context encoder's word vector against each "
    "candidate's gloss vector (its definition, read by the gloss encoder)"
)
HEAD_CONFIG = "head.json"
CARD = "training_card.json"
GLOSS_ENCODER = "gloss_encoder"  # the gloss encoder's model directory inside a bi-encoder's
SENSE_COUNTS = "sense_counts.json.gz"  # training occurrences per sense key
#: The most occurrences of one sense a count may say (SemCor's most frequent has 15k).
MAX_SENSE_COUNT = 1 << 40
#: ``head.json``'s ``gloss_encoder`` when the gloss encoder is the base model itself.
BASE_GLOSS_ENCODER = "base"
#: Where the package keeps the bi-encoders it ships, one folder each.
SHIPPED_DIR = Path(__file__).resolve().parent / "shipped"
#: Padded gloss tokens per forward pass of the gloss encoder.
GLOSS_BATCH_TOKENS = 8192


def bi_encoder_head(directory: str | Path) -> dict[str, Any] | None:
    """The head config of a WSD bi-encoder directory (its ``head.json``, task ``wsd``); None for
    any other directory or model.

    Raises:
        ModelLoadError: such a directory whose ``head.json`` is not a readable WSD head
            (damaged, or missing the gloss pooling, text or cut), or whose gloss encoder is
            missing (an incomplete directory never answers as another system).
    """
    directory = Path(directory)
    config = directory / HEAD_CONFIG
    if not config.is_file():
        _refuse_headless(directory, f"it has no {HEAD_CONFIG}")
        return None
    try:
        head = json.loads(read_limited(config, what=str(config), error=ModelLoadError))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelLoadError(f"{config} cannot be read as JSON: {exc}") from exc
    if not isinstance(head, dict) or head.get("task") != "wsd":
        task = head.get("task") if isinstance(head, dict) else None
        _refuse_headless(directory, f"its {HEAD_CONFIG} is a {str(task)[:40]!r} task's head")
        return None
    gloss_side = head.get("gloss_encoder")
    if gloss_side != BASE_GLOSS_ENCODER and not (directory / GLOSS_ENCODER).is_dir():
        raise ModelLoadError(
            f"{directory} is an incomplete WSD bi-encoder: its gloss encoder "
            f"({directory / GLOSS_ENCODER}) is missing."
        )
    bad = [k for k in ("gloss_pooling", "gloss_text") if not isinstance(head.get(k), str)]
    cut = head.get("gloss_max_length")
    if isinstance(cut, bool) or not isinstance(cut, int) or not 4 <= cut <= 1 << 16:
        bad.append("gloss_max_length")  # an int of subwords, 4 and up, as training accepts
    if bad:
        raise ModelLoadError(f"{config} is a WSD head without a valid {' or '.join(bad)}.")
    if head["gloss_text"] not in GLOSS_TEXTS or head["gloss_pooling"] not in ("cls", "mean"):
        raise ModelLoadError(
            f"{config}: unknown gloss text '{head['gloss_text']}' or pooling "
            f"'{head['gloss_pooling']}'."
        )
    return head


def biencoder_traces(directory: Path) -> list[str]:
    """What in ``directory`` only a WSD bi-encoder holds (its gloss encoder, sense counts,
    POS probe, a training card of task ``wsd``), by name; [] for any other folder."""
    found = [name for name in (GLOSS_ENCODER, SENSE_COUNTS, PROBE_FILE)
             if (directory / name).exists()]  # fmt: skip
    try:
        card = json.loads(read_limited(directory / CARD, what=CARD))
    except (OSError, ValueError, RecursionError, WorkbenchError):
        card = None
    if isinstance(card, dict) and card.get("task") == "wsd":
        found.append(f"a {CARD} of task 'wsd'")
    return found


def _refuse_headless(directory: Path, why: str) -> None:
    """Refuse a folder that holds a bi-encoder's files but no WSD head (``why``): taken for a
    plain model, it would start a SemCor centroid build instead of answering as itself."""
    traces = biencoder_traces(directory)
    if traces:
        raise ModelLoadError(
            f"{directory} holds a WSD bi-encoder's files ({', '.join(traces)}) but {why}: "
            f"an incomplete or damaged bi-encoder; train it again (workbench finetune wsd) or "
            f"restore its {HEAD_CONFIG}."
        )


def check_model_folder(model: str | Path | None) -> None:
    """Refuse, before any work, a model folder that is a damaged WSD bi-encoder: its
    ``head.json`` missing, unreadable or another task's beside a bi-encoder's files, or a head
    without its finished training card. Anything else (a name, a plain model folder, a sound
    bi-encoder) passes; nothing is loaded.

    Raises:
        ModelLoadError: naming the folder and what is wrong.
    """
    if model is None:
        return
    directory = Path(model).expanduser()
    if not directory.is_dir():
        return
    if bi_encoder_head(directory) is not None:
        finished_card(directory)


def is_biencoder_dir(path: str | Path | None) -> bool:
    """Whether ``path`` is a WSD bi-encoder directory (checked without loading anything)."""
    if path is None or not Path(path).expanduser().is_dir():
        return False
    try:
        return bi_encoder_head(Path(path).expanduser()) is not None
    except ModelLoadError:
        return True  # a damaged one: loading it says what is wrong


def shipped_biencoders() -> list[Path]:
    """The bi-encoder directories the package ships (each one's base named in its record)."""
    if not SHIPPED_DIR.is_dir():
        return []
    return sorted(p for p in SHIPPED_DIR.iterdir() if is_biencoder_dir(p))


@functools.lru_cache(maxsize=8)
def _fingerprint_of(location: str, is_local: bool, name: str) -> str:
    return models.weights_fingerprint(models.ModelSource(name, location, is_local))


def shipped_biencoder(model: str | None = None) -> Path | None:
    """The shipped bi-encoder trained on ``model`` (None: the packaged default model), found by
    its base model's fingerprint; None when the package ships none for it."""
    try:
        source = models.resolve_model(model)
        if models.adapter_base(source) is not None or not source.is_local:
            return None
        fingerprint = _fingerprint_of(source.location, source.is_local, source.name)
    except (ModelLoadError, OSError, ValueError):
        return None
    for directory in shipped_biencoders():
        try:
            record = read_base_record(directory)
        except ModelLoadError:
            continue
        if record.fingerprint == fingerprint:
            return directory
    return None


def biencoder_dir(model: str | None = None) -> Path | None:
    """The bi-encoder directory that answers for ``model``: ``model`` itself when it is one,
    else the shipped bi-encoder of that base model (None: of the packaged default); None when
    there is none."""
    if model is not None and is_biencoder_dir(model):
        return Path(model).expanduser().resolve()
    return shipped_biencoder(model)


def gloss_source(directory: Path, head: dict[str, Any]) -> models.ModelSource:
    """The gloss encoder of a bi-encoder directory: its ``gloss_encoder/`` model directory, or
    the context encoder's base model when the head says the gloss side stayed at the base."""
    if head.get("gloss_encoder") == BASE_GLOSS_ENCODER:
        base = models.adapter_base(models.resolve_model(str(directory)))
        if base is None:
            raise ModelLoadError(
                f"{directory / HEAD_CONFIG} keeps the gloss encoder at the base model, but "
                f"{directory} holds no adapters that name a base model."
            )
        return base
    return models.resolve_model(str(directory / GLOSS_ENCODER))


def finished_card(directory: Path) -> dict[str, Any]:
    """The training card of a bi-encoder directory.

    Raises:
        ModelLoadError: no card (an unfinished run) or an unreadable one.
    """
    path = directory / CARD
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelLoadError(
            f"{directory} has no {CARD}: it is not a finished WSD bi-encoder (a run that was "
            "stopped before its end); finish it with --resume or train it again."
        ) from None
    except (OSError, ValueError, RecursionError) as exc:
        raise ModelLoadError(f"{path} cannot be read as JSON: {exc}") from exc
    if not isinstance(card, dict):
        raise ModelLoadError(f"{path} is not a training card.")
    return card


def write_sense_counts(directory: Path, counts: Mapping[str, int]) -> None:
    """Write :data:`SENSE_COUNTS` (gzip'd JSON, keys sorted), atomically."""
    data = json.dumps(dict(sorted(counts.items())), separators=(",", ":")).encode("utf-8")
    with atomic_path(directory / SENSE_COUNTS) as tmp:
        tmp.write_bytes(gzip.compress(data, mtime=0))


def read_sense_counts(directory: Path) -> dict[str, int]:
    """The training occurrences per sense key of a bi-encoder directory ({} without the file):
    a JSON object of whole counts, 0 and up, read from at most the ``json_bytes`` limit
    (:mod:`workbench.limits`) of gzip'd bytes and inflated no further than that limit.

    Raises:
        ModelLoadError: a damaged file, one that inflates past the limit, or a count that is
            not a whole number of occurrences (negative, fractional, non-finite, a string).
    """
    path = directory / SENSE_COUNTS
    if not path.is_file():
        return {}
    data = read_gzip(path, str(path), error=ModelLoadError)
    try:
        counts = json.loads(data.decode("utf-8"))
        if not isinstance(counts, dict):
            raise ValueError("not an object")
    except (ValueError, RecursionError) as exc:
        raise ModelLoadError(f"{path} cannot be read ({exc}).") from exc
    bad = [
        (k, v) for k, v in counts.items()
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_SENSE_COUNT
    ]  # fmt: skip
    if bad:
        key, value = bad[0]
        raise ModelLoadError(
            f"{path}: the count of {key!r} is {json.dumps(value)[:40]}, not a whole number of "
            f"training occurrences (0 to {MAX_SENSE_COUNT:,}); {len(bad)} such count(s)"
        )
    return {str(k): v for k, v in counts.items()}


def training_of(card: dict[str, Any], gloss_how: str) -> TrainingInfo:
    """Where a bi-encoder's training came from, as its index states it with every answer.

    The card's ``data.train`` source, after its ``earlier_training`` (a continued run), and how
    the weights came about: ``average`` (the mean of two runs), ``continued_from`` (a run
    continued from such an average) or neither (one run). Example: ``"builtin:semcor+examples
    (seed=0,n=83482) then builtin:semcor+examples(seed=1,n=8000), as a bi-encoder continued from
    the average of two with esr glosses"``.
    """
    data = card.get("data")
    data = data if isinstance(data, dict) else {}
    train = data.get("train")
    train = train if isinstance(train, dict) else {}
    source = str(train.get("source", "unrecorded data"))
    earlier = card.get("earlier_training")
    if isinstance(earlier, str) and earlier:
        source = f"{earlier} then {source}"
    continued = card.get("continued_from")
    if isinstance(card.get("average"), dict):
        how = "the average of two bi-encoders"
    elif isinstance(continued, dict) and isinstance(continued.get("average"), dict):
        how = "a bi-encoder continued from the average of two"
    else:
        how = "a bi-encoder"
    return TrainingInfo(
        corpus=f"{source}, as {how} with {gloss_how} glosses",
        sha256=str(train.get("sha256", "")),
        n_sentences=int(train.get("n", 0) or 0),
    )


def gloss_sense_index(
    keys: Sequence[str],
    vectors: np.ndarray,
    info: EncoderInfo,
    training: TrainingInfo,
    counts: Mapping[str, int] | None = None,
) -> SenseIndex:
    """A :class:`SenseIndex` (:data:`BIENCODER_CONFIG`) whose rows are the gloss vectors
    ``(len(keys), dim)`` as they are, for queries of the context encoder ``info`` describes at
    :data:`CONTEXT_LAYERS`; ``counts``: training occurrences per key."""
    index = SenseIndex(BIENCODER_CONFIG)
    origin = np.full(len(keys), ORIGINS.index("gloss"), dtype=np.int8)
    seen = np.array([(counts or {}).get(k, 0) for k in keys], dtype=np.int64)
    index.set_rows(tuple(keys), np.asarray(vectors, dtype=np.float32), origin, seen)
    index.correction_ = None
    index.encoder_ = info
    index.training_ = training
    return index


class BiEncoder:
    """A trained WSD bi-encoder, loaded for answers.

    Args:
        directory: a bi-encoder directory (see the module docstring).
        device: ``cpu``, ``cuda``, ...; default: the best available.
        dtype: the compute dtype of both encoders (:func:`workbench.encoding.device.choose_dtype`).
        card: the training card (default: read from the directory; a run that is still
            writing its directory passes the card it is about to write).
        backend: what runs both encoders (:mod:`workbench.encoding.exported.backend`).

    Attributes:
        directory, head, card: the directory, its ``head.json`` and training card.
        sense_counts: training occurrences per sense key.
        pos_probe: its POS probe (None when the directory has none).
        encoder: the context encoder (an :class:`~workbench.encoding.encoder.Encoder`).
        gloss_encoder: the gloss encoder (an :class:`~workbench.encoding.encoder.Encoder` on
            the same backend, loaded when first needed; :meth:`encode_texts` runs whole
            glosses through it).
        gloss_fingerprint: the gloss encoder's weights fingerprint.
        training: where it was trained (:func:`training_of`).
        cache: its gloss vectors on disk.

    Raises:
        ModelLoadError: not a finished bi-encoder directory, adapters damaged or for another
            base model.
    """

    def __init__(
        self,
        directory: str | Path,
        device: str | None = None,
        dtype: DtypeName = "auto",
        card: dict[str, Any] | None = None,
        backend: Backend = "auto",
    ) -> None:
        self.directory = Path(directory).expanduser().resolve()
        head = bi_encoder_head(self.directory)
        if head is None:
            raise ModelLoadError(f"{self.directory} is not a WSD bi-encoder directory.")
        self.head = head
        self.card = card if card is not None else finished_card(self.directory)
        files = self.card.get("files") or []
        missing = [f for f in files if not (self.directory / str(f)).exists()]
        if missing:
            raise ModelLoadError(
                f"{self.directory} is incomplete: {', '.join(map(str, missing[:3]))} listed in "
                f"its {CARD} {'is' if len(missing) == 1 else 'are'} missing."
            )
        self.sense_counts = read_sense_counts(self.directory)
        self.pos_probe: PosProbe | None = load_probe(self.directory / PROBE_FILE)
        self.gloss_how: GlossText = head["gloss_text"]
        self.gloss_pooling: str = head["gloss_pooling"]
        self.gloss_max_length = int(head["gloss_max_length"])
        self.encoder = Encoder(
            model=str(self.directory),
            device=device,
            dtype=dtype,
            pooling=CONTEXT_POOLING,
            backend=backend,
        )
        self._gloss_source = gloss_source(self.directory, head)
        self._dtype: DtypeName = dtype
        models.check_adapter(self._gloss_source)  # refused now, not when a gloss is missing
        self.gloss_fingerprint = models.weights_fingerprint(self._gloss_source)
        self.training = dataclasses.replace(
            training_of(self.card, self.gloss_how), n_occurrences=sum(self.sense_counts.values())
        )
        self.cache = GlossCache(
            {
                "gloss_encoder": self.gloss_fingerprint,
                "pooling": self.gloss_pooling,
                "max_length": self.gloss_max_length,
                "dtype": self.encoder.dtype_name,
                "inputs": "input_ids+attention_mask/1",
            },
            self.encoder.dim,
        )

    @functools.cached_property
    def gloss_encoder(self) -> Encoder:
        """The gloss encoder, loaded when a gloss vector is first missing from the cache (an
        answer whose glosses are all cached never loads it).

        Raises:
            ModelLoadError: it cannot be loaded, or differs in width from the context encoder.
        """
        tower = Encoder(
            model=self._gloss_source.location,
            device=self.encoder.device,
            dtype=self._dtype,
            backend=self.encoder.backend.name,
        )
        if tower.dim != self.encoder.dim:
            raise ModelLoadError(
                f"{self.directory}: the context and gloss encoders differ in width "
                f"({self.encoder.dim} and {tower.dim})."
            )
        return tower

    @property
    def name(self) -> str:
        """The bi-encoder's label: its directory's name, or the shipped model's."""
        return self.directory.name

    def describe(self) -> dict[str, Any]:
        """What answers, for reports: the directory, both encoders' identities, the gloss
        settings and the training data."""
        return {
            "biencoder": str(self.directory),
            "context_encoder": self.encoder.describe(),
            "gloss_encoder": {
                "fingerprint": self.gloss_fingerprint,
                "gloss_text": self.gloss_how,
                "gloss_pooling": self.gloss_pooling,
                "gloss_max_length": self.gloss_max_length,
            },
            "training": self.training.corpus,
            "command": self.card.get("command"),
        }

    # ------------------------------------------------------------------ glosses
    def encode_texts(self, texts: Sequence[str], progress: Progress = None) -> np.ndarray:
        """Gloss vectors ``(len(texts), dim)`` float32 of the gloss encoder, computed now (no
        cache): longest first, in passes of at most :data:`GLOSS_BATCH_TOKENS` padded tokens."""
        out = np.zeros((len(texts), self.encoder.dim), dtype=np.float32)
        if not texts:
            return out
        tower = self.gloss_encoder
        ids = tower.tokenizer(list(texts), truncation=True, max_length=self.gloss_max_length)[
            "input_ids"
        ]
        order = sorted(range(len(ids)), key=lambda i: (-len(ids[i]), i))
        pad = tower.specials.pad
        start = 0
        while start < len(order):
            width = len(ids[order[start]])
            stop = min(len(order), start + max(1, GLOSS_BATCH_TOKENS // max(width, 1)))
            part = order[start:stop]
            batch = np.full((len(part), width), pad, dtype=np.int64)
            mask = np.zeros((len(part), width), dtype=np.int64)
            for row, i in enumerate(part):
                batch[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1
            hidden = tower.last_hidden(batch, mask)
            out[part] = pool_sequence_array(hidden, mask, self.gloss_pooling)
            start = stop
            if callable(progress):
                progress(start / len(order))
        return out

    def gloss_vectors(
        self, synsets: Sequence[str], wordnet: WordNet | None = None, progress: Progress = None
    ) -> np.ndarray:
        """Gloss vectors ``(len(synsets), dim)`` float32: from the cache, the rest encoded now
        and stored there."""
        wordnet = wordnet or load_wordnet()
        texts = [gloss_text(wordnet, s, self.gloss_how) for s in synsets]
        vectors, found = self.cache.lookup(texts)
        missing = sorted({texts[i] for i in np.flatnonzero(~found)})
        if missing:
            fresh = self.encode_texts(missing, progress)
            self.cache.store(missing, fresh)
            row = {t: i for i, t in enumerate(missing)}
            for i in np.flatnonzero(~found):
                vectors[i] = fresh[row[texts[i]]]
        return vectors

    def index(
        self,
        lemmas: Sequence[tuple[str, str]] | None = None,
        wordnet: WordNet | None = None,
        progress: Progress = None,
        smoothing: float = 0.0,
    ) -> SenseIndex:
        """A :class:`SenseIndex` of the candidate senses of ``lemmas`` (``(lemma, POS)`` pairs;
        None: every WordNet sense), each row its synset's gloss vector, for queries of
        :attr:`encoder` at :data:`CONTEXT_LAYERS`; ``smoothing`` λ > 0: each row plus λ times
        the mean gloss vector of its synset's WordNet neighbours
        (:func:`workbench.wsd.levers.smoothed_rows`; their glosses encoded in the same pass as
        the candidates', under the one ``progress``, and cached too)."""
        wordnet = wordnet or load_wordnet()
        if lemmas is None:
            keys = sorted(wordnet.senses)
        else:
            keys = sorted({k for lemma, pos in lemmas for k in wordnet.candidates(lemma, pos)})
        synset_of = [wordnet.synset(k) for k in keys]
        synsets = sorted(set(synset_of))
        if smoothing:  # the neighbours' glosses encoded in the same pass, under one progress
            related = {s: wordnet.related(s) for s in synsets}
            wanted = sorted(set(synsets).union(*related.values()))
            found = self.gloss_vectors(wanted, wordnet, progress)
            at = {s: i for i, s in enumerate(wanted)}

            def of(names: Sequence[str]) -> np.ndarray:
                return found[np.array([at[n] for n in names], dtype=np.int64)]

            vectors = smoothed_rows(synsets, of(synsets), related.__getitem__, of, smoothing)
        else:
            vectors = self.gloss_vectors(synsets, wordnet, progress)
        row = {s: i for i, s in enumerate(synsets)}
        rows = vectors[np.array([row[s] for s in synset_of], dtype=np.int64)]
        restricted = tuple(f"{lemma}.{pos}" for lemma, pos in lemmas or ())
        return gloss_sense_index(
            keys,
            rows,
            EncoderInfo.of(self.encoder),
            dataclasses.replace(self.training, restricted_to=restricted),
            self.sense_counts,
        )


@functools.lru_cache(maxsize=4)
def _loaded(directory: str, device: str | None, dtype: str, backend: str) -> BiEncoder:
    return BiEncoder(directory, device, dtype, backend=backend)  # type: ignore[arg-type]


def load_biencoder(
    model: str | None = None, device: str | None = None, dtype: DtypeName = "auto"
) -> BiEncoder:
    """The bi-encoder for ``model`` (:func:`biencoder_dir`: a bi-encoder directory, or the
    shipped one of a base model; None: the packaged default's), loaded once per process.

    Raises:
        ModelLoadError: there is none for ``model``, or it cannot be loaded.
    """
    directory = biencoder_dir(model)
    if directory is None:
        what = "the packaged default model" if model is None else f"'{model}'"
        raise ModelLoadError(
            f"There is no WSD bi-encoder for {what}: train one with `workbench finetune wsd`, "
            "or choose another system (--system best, plain or wordnet)."
        )
    return _loaded(str(directory), device, dtype, requested_backend(None))
