"""The splits of one run (:class:`TaskData`): read from files (:func:`file_data`), from uploaded
bytes (:func:`uploaded_data`), or made by a built-in task (:func:`builtin_data`) from SemCor and
WordNet (``wic``, ``supersense``; the WSD task's :func:`wsd_splits`) or from WordNet's usage
examples alone, with no WSD data (``wordnet-wic``, ``wordnet-supersense``:
:mod:`workbench.finetune.data.wordnet_tasks`).

Example::

    data = builtin_data("wic", limits=(2000, 500, None))     # train, dev, test + how made
    data = builtin_data("wordnet-wic", limits=(512, 256, 256))   # offline
    data = file_data("pair", "train.csv", "dev.csv")
"""

from __future__ import annotations

import random
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from workbench.corpora.datasets import load_dataset
from workbench.corpora.occurrences import decode_text
from workbench.corpora.wordnet_examples import EXAMPLES_SUFFIX, example_corpus
from workbench.errors import InputError, WorkbenchError
from workbench.fileio import named_path, sha256_json
from workbench.finetune.data.readers import DataFile, LabelSet, in_memory
from workbench.finetune.data.supersense import SupersenseSplits, build_supersense
from workbench.finetune.data.wic import WicPair, WicSplits, build_wic, read_jsonl
from workbench.finetune.data.wordnet_tasks import build_wordnet_supersense, build_wordnet_wic
from workbench.finetune.tasks.registry import task_kind
from workbench.lexicon.wordnet import load_wordnet

#: WiC pairs of the train and dev splits (words and target positions, for the target probe).
WicPairs = tuple[tuple[WicPair, ...], tuple[WicPair, ...]]
#: The built-in tasks, and the task kind each one is: made from SemCor (+ WordNet), or from
#: WordNet's usage examples alone (:data:`OFFLINE_BUILTINS`).
BUILTINS = {
    "wic": "pair",
    "supersense": "token",
    "semcor": "wsd",
    "semcor+examples": "wsd",
    "wordnet-wic": "pair",
    "wordnet-supersense": "token",
}
#: The built-in tasks that need no WSD data (only WordNet 3.0, which installs with the package).
OFFLINE_BUILTINS = ("wordnet-wic", "wordnet-supersense")
#: The built-in WSD task's data: train on SemCor, select on SemEval-2007, test on ALL.
WSD_SPLITS = {"train": "semcor", "dev": "semeval2007", "test": "ALL"}


@dataclass(frozen=True)
class TaskData:
    """The data of one run.

    Attributes:
        train, dev, test: the splits (``dev``/``test`` may be None).
        extra: how built-in data was made (goes into the training card).
        pairs: for built-in WiC, the :class:`~workbench.finetune.data.wic.WicPair` of train and dev
            (the target-word probe needs the words and target positions).
        labels: a built-in task's label set, from its whole training split (so a subset
            without a rare class still knows it, and a dev example of it is scored as missed).
    """

    train: DataFile
    dev: DataFile | None
    test: DataFile | None
    extra: dict
    pairs: WicPairs | None = None
    labels: tuple[str, ...] | None = None


def _limit(data: DataFile | None, n: int | None) -> DataFile | None:
    if data is None or n is None or n >= len(data.examples):
        return data
    return in_memory(list(data.examples[:n]), f"{data.source}[:{n}]")


def redraw(data: DataFile, seed: int, n: int) -> DataFile:
    """``n`` examples of ``data`` drawn at random with ``seed`` (all of them, shuffled, when it
    holds fewer), named after it: what a second training stage reads
    (:mod:`workbench.finetune.tasks.wsd.stages`).

    Example::

        redraw(file_data("wsd", "semcor.xml").train, seed=1, n=8000).source
        # 'semcor.xml(seed=1,n=8000)'
    """
    examples = list(data.examples)
    random.Random(seed).shuffle(examples)
    examples = examples[:n]
    params = {"sha256": data.sha256, "seed": seed, "n": n}
    return DataFile(tuple(examples), f"{data.source}(seed={seed},n={len(examples)})",
                    sha256_json(params))  # fmt: skip


def file_data(
    kind: str,
    train: str | Path,
    dev: str | Path | None = None,
    test: str | Path | None = None,
    repair_bio: bool = False,
    limits: tuple[int | None, int | None, int | None] = (None, None, None),
) -> TaskData:
    """Read the splits of ``kind`` from files (format by task: :meth:`TaskKind.read`)."""
    spec = task_kind(kind)

    def read(path: str | Path | None) -> DataFile | None:
        return None if path is None else spec.read(path, repair_bio=repair_bio)

    splits = [_limit(read(p), n) for p, n in zip((train, dev, test), limits, strict=True)]
    if splits[0] is None:
        raise InputError(f"finetune {kind}: a training file is required.")
    return TaskData(splits[0], splits[1], splits[2], {}, _wic_pairs(kind, train, dev, limits))


def uploaded_data(
    kind: str, train: tuple[str, bytes], dev: tuple[str, bytes] | None = None
) -> TaskData:
    """Read the splits of ``kind`` from uploaded files, each ``(file name, bytes)``.

    A file that is not UTF-8 text raises the :class:`InputError` every upload gives
    (:func:`workbench.corpora.occurrences.decode_text`). Each file is written under its own
    name (the extension tells the format) into a temporary directory that is removed once it
    is read; a split's ``source`` is the uploaded file's name, and so is what an error message
    names (never the temporary folder).
    """
    uploads = {"train": train, "dev": dev}
    for upload in uploads.values():
        if upload is not None:
            decode_text(upload[1], upload[0])
    with tempfile.TemporaryDirectory(prefix="workbench-ft-") as folder:
        paths: dict[str, Path] = {}
        for split, upload in uploads.items():
            if upload is not None:
                name, content = upload
                leaf = Path(name).name or split  # an uploaded name, never a path
                try:
                    paths[split] = named_path(Path(folder) / split, leaf, "uploaded file")
                except InputError:  # the message names the upload, never the temp folder
                    raise InputError(f"uploaded file {name!r} has no plain file name") from None
                paths[split].parent.mkdir()
                paths[split].write_bytes(content)
        try:
            found = file_data(kind, paths["train"], paths.get("dev"))
        except WorkbenchError as exc:  # name the uploaded file, never the server's temp folder
            message = str(exc)
            for path in paths.values():
                message = message.replace(str(path), path.name)
            raise type(exc)(message.replace(folder, "<upload>")) from None
    dev_data = found.dev and replace(found.dev, source=paths["dev"].name)
    return replace(found, train=replace(found.train, source=paths["train"].name), dev=dev_data)


def _wic_pairs(
    kind: str,
    train: str | Path,
    dev: str | Path | None,
    limits: tuple[int | None, int | None, int | None],
) -> WicPairs | None:
    """WiC pairs (words + target positions) of exported built-in JSONL files, else None."""
    if kind != "pair" or dev is None or not all(str(p).endswith(".jsonl") for p in (train, dev)):
        return None
    train_pairs, dev_pairs = read_jsonl(train), read_jsonl(dev)
    if train_pairs is None or dev_pairs is None:
        return None
    return train_pairs[: limits[0]], dev_pairs[: limits[1]]


def builtin_data(
    name: str,
    data_dir: str | Path | None = None,
    seed: int = 0,
    limits: tuple[int | None, int | None, int | None] = (None, None, None),
) -> TaskData:
    """A built-in task's splits (:data:`BUILTINS`): ``wic``, ``supersense`` and ``semcor`` made
    from SemCor (+ WordNet; ``semcor`` is the WSD task's, :func:`wsd_splits`), ``wordnet-wic``
    and ``wordnet-supersense`` from WordNet's usage examples (no WSD data needed).

    ``limits``: at most this many train / dev / test examples (the first ones of each
    shuffled split), to size CPU runs.
    """

    if name not in BUILTINS:
        raise InputError(f"Unknown built-in task '{name}': choose one of {', '.join(BUILTINS)}.")
    if BUILTINS[name] == "wsd":
        return wsd_splits(data_dir, seed, limits, examples=name.endswith(EXAMPLES_SUFFIX))
    splits: WicSplits | SupersenseSplits
    if name == "wordnet-wic":
        splits = build_wordnet_wic(seed=seed)
    elif name == "wordnet-supersense":
        splits = build_wordnet_supersense(seed=seed)
    elif name == "wic":
        splits = build_wic(load_dataset("semcor", data_dir), seed=seed)
    else:
        splits = build_supersense(load_dataset("semcor", data_dir), load_wordnet(), seed=seed)
    pairs: WicPairs | None = None
    if isinstance(splits, WicSplits):
        pairs = (splits.train[: limits[0]], splits.dev[: limits[1]])
    data = [splits.data(s, n) for s, n in zip(("train", "dev", "test"), limits, strict=True)]
    extra = {
        "builtin": {
            "name": name,
            **splits.params,
            "sizes": {
                s: len(d.examples) for s, d in zip(("train", "dev", "test"), data, strict=True)
            },
        }
    }
    labels = LabelSet.from_examples(splits.data("train").examples).names
    return TaskData(data[0], data[1], data[2], extra, pairs, labels)


def wsd_splits(
    data_dir: str | Path | None = None,
    seed: int = 0,
    limits: tuple[int | None, int | None, int | None] = (None, None, None),
    examples: bool = False,
) -> TaskData:
    """The built-in WSD data (:data:`WSD_SPLITS`): SemCor's sentences with instances (and, with
    ``examples``, WordNet 3.0's usage examples, each with its one sense-tagged word:
    :func:`~workbench.corpora.wordnet_examples.example_corpus`) shuffled with ``seed`` (so
    ``limits[0]`` takes a random subset), the framework's SemEval-2007 (dev) and ALL (test, the
    five sets) in file order."""
    parts: list[DataFile] = []
    for split, limit in zip(("train", "dev", "test"), limits, strict=True):
        corpus = load_dataset(WSD_SPLITS[split], data_dir)
        sentences = [s for s in corpus.sentences if s.instances]
        params: dict[str, object] = {"corpus": corpus.name, "sha256": corpus.sha256}
        name = corpus.name
        if split == "train" and examples:
            extra = example_corpus()
            sentences += [s for s in extra.sentences if s.instances]
            params["examples"] = extra.sha256
            name += EXAMPLES_SUFFIX
        if split == "train":
            random.Random(seed).shuffle(sentences)
        if limit is not None:
            sentences = sentences[:limit]
        params.update(seed=seed, n=limit)
        if limit is not None or split == "train":
            name = f"builtin:{name}(seed={seed},n={len(sentences)})"
        parts.append(DataFile(tuple(sentences), name, sha256_json(params)))
    sizes = {s: len(d.examples) for s, d in zip(("train", "dev", "test"), parts, strict=True)}
    builtin = "semcor" + (EXAMPLES_SUFFIX if examples else "")
    extra_card = {"builtin": {"name": builtin, **WSD_SPLITS, "seed": seed, "sizes": sizes}}
    return TaskData(parts[0], parts[1], parts[2], extra_card)
