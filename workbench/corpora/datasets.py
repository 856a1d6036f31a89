"""Where the WSD data lives, how to download it, and how to check it.

The data dir is the directory that holds ``WSD_Evaluation_Framework/`` (the unified evaluation
framework of Raganato et al. 2017, plus SemCor in the same format). It is, in order:

1. ``$WORKBENCH_DATA``;
2. the user data dir (``$XDG_DATA_HOME/workbench/wsd``, i.e. ``~/.local/share/workbench/wsd``;
   ``~/Library/Application Support/workbench/wsd`` on macOS, ``%APPDATA%/workbench/wsd`` on
   Windows) when it holds the framework;
3. as a convenience, ``../shared/data/wsd`` next to the repository, when it exists.

``workbench data download`` fills the user data dir from the framework's official zip archive.

Example::

    >>> from workbench.corpora.datasets import dataset_paths
    >>> xml, gold = dataset_paths("ALL")
"""

from __future__ import annotations

import functools
import http.client
import lzma
import os
import re
import sys
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from workbench.corpora.readers import Corpus, default_gold_path, read_xml
from workbench.errors import DataError
from workbench.fileio import (
    atomic_path,
    expand_home,
    input_problem,
    named_path,
    remove_path,
    remove_stale_temporaries,
    sha256_file,
    sha256_stream,
    temporary_path,
)
from workbench.limits import Deadline, extract_zip, limit

FRAMEWORK_DIR = "WSD_Evaluation_Framework"
#: The official distribution of the framework (Raganato et al. 2017).
DEFAULT_URL = "http://lcl.uniroma1.it/wsdeval/data/WSD_Evaluation_Framework.zip"
EVALUATION_SETS = ("senseval2", "senseval3", "semeval2007", "semeval2013", "semeval2015", "ALL")
DATASETS = (*EVALUATION_SETS, "semcor")
#: Instance counts published by Raganato et al. (2017), Table 2 (SemCor: 226,036).
PUBLISHED_INSTANCES = {
    "senseval2": 2282, "senseval3": 1850, "semeval2007": 455, "semeval2013": 1644,
    "semeval2015": 1022, "ALL": 7253, "semcor": 226036,
}  # fmt: skip
#: SHA-256 of the framework's evaluation files (the archive's ``Evaluation_Datasets/``): an
#: archive from :data:`DEFAULT_URL` (or any URL, unless ``sha256`` names another copy) is
#: taken only when every one of these files in it is byte-identical.
FRAMEWORK_SHA256 = {
    f"Evaluation_Datasets/{path}": digest
    for path, digest in {
        "ALL/ALL.data.xml": "27a9da01b6d4a1e4dc7c76d15148a38eaa56cc0df371cae4416d04e541b6fe36",
        "ALL/ALL.gold.key.txt": "0bf2ffc38f572587c72b59ea928da676423b99b5a54bd1a83eb4848b517d3170",
        "semeval2007/semeval2007.data.xml":
            "ff0cb1350acf7d0bf09f05b18c537870c8205f12daa2510099674a227c149f38",
        "semeval2007/semeval2007.gold.key.txt":
            "06dce0b5892bb5c625ebfd8755d1a31a5a04df6882709aa29c1dcd44befb3b41",
        "semeval2013/semeval2013.data.xml":
            "58682da53cdb24e7563f9a77bc357616eee6863399c2be62f8927c9d5eb20245",
        "semeval2013/semeval2013.gold.key.txt":
            "3dcedb0b9bed2906c3651d089236801c5353198ba6eda0575f864e3d18ee81cc",
        "semeval2015/semeval2015.data.xml":
            "e0804170a39fac9d0da6c707b0b974d493a385743557a40626abf36609372650",
        "semeval2015/semeval2015.gold.key.txt":
            "3a15c65607f27efb3846a71a303b21d0916b5bb527348bf27f526d6770301eaf",
        "senseval2/senseval2.data.xml":
            "5f5fe6a74fdd4ee85ca271c49a3b88131e4a7ba04a11a1392c1333efcbfe9be9",
        "senseval2/senseval2.gold.key.txt":
            "1e1c43116dadc796763c59f66cc61aa204cfb1886e5825836a96cf9b96a056e8",
        "senseval3/senseval3.data.xml":
            "ecd472808c5f3873b0e90fda6182519e5ed6081929435a67eb7f2c5a8fd36839",
        "senseval3/senseval3.gold.key.txt":
            "1faa09ca47a9c4627c0c1078dfc30e39c16d6ce728a532cc670007fbca0be70e",
    }.items()
}  # fmt: skip
_HINT = "run `workbench data download` or set WORKBENCH_DATA to the dir holding " + FRAMEWORK_DIR


def user_data_dir() -> Path:
    """The platform's per-user data dir for the workbench's WSD data."""
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif os.name == "nt":
        base = Path(os.environ.get("APPDATA", Path.home()))
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "workbench" / "wsd"


def _repo_shared_dir() -> Path:
    return Path(__file__).resolve().parents[3] / "shared" / "data" / "wsd"


def data_dir(required: bool = True) -> Path:
    """The data dir (see the module docstring for the order).

    Args:
        required: when True, a dir without ``WSD_Evaluation_Framework/`` raises.

    Raises:
        DataError: no data found (the message says how to get it).
    """
    env = os.environ.get("WORKBENCH_DATA")
    if env:
        path = Path(expand_home(env, "WORKBENCH_DATA"))
        if required and not (path / FRAMEWORK_DIR).is_dir():
            raise DataError(f"WORKBENCH_DATA={env}: no {FRAMEWORK_DIR}/ there; {_HINT}")
        return path
    user = user_data_dir()
    if (user / FRAMEWORK_DIR).is_dir():
        return user
    shared = _repo_shared_dir()
    if (shared / FRAMEWORK_DIR).is_dir():
        return shared
    if required:
        raise DataError(f"WSD data not found (looked in {user} and {shared}); {_HINT}")
    return user


def _first_existing(*paths: Path) -> Path | None:
    return next((p for p in paths if p.is_file()), None)


def dataset_paths(name: str, root: str | os.PathLike | None = None) -> tuple[Path, Path | None]:
    """``(xml, gold)`` paths of a dataset by name; ``.xz`` is used when only that exists.

    Raises:
        DataError: unknown name or missing file.
    """
    canonical = {d.lower(): d for d in DATASETS}.get(name.lower())
    if canonical is None:
        raise DataError(f"unknown dataset {name!r}; known: {', '.join(DATASETS)}")
    root = Path(root) if root is not None else data_dir()
    framework = root / FRAMEWORK_DIR
    if canonical == "semcor":
        base = framework / "Training_Corpora" / "SemCor" / "semcor"
    else:
        base = framework / "Evaluation_Datasets" / canonical / canonical
    xml = _first_existing(Path(f"{base}.data.xml"), Path(f"{base}.data.xml.xz"))
    if xml is None:
        raise DataError(f"dataset {canonical}: {base}.data.xml(.xz) not found; {_HINT}")
    gold = _first_existing(Path(f"{base}.gold.key.txt"), Path(f"{base}.gold.key.txt.xz"))
    return xml, gold


def corpus_files(
    name: str, gold: str | os.PathLike | None = None, need_gold: bool = True
) -> tuple[Path, Path | None]:
    """The files a corpus argument stands for, checked to exist, nothing read: a framework
    dataset by name (:func:`dataset_paths`) or a ``*.data.xml[.xz]`` path with its gold key file
    (``gold``, else the one beside it). Commands call it on every input before any work.

    Raises:
        DataError: an unknown name, a missing file, or (``need_gold``) no gold key file.
    """
    if name.endswith((".xml", ".xml.xz")) or os.path.lexists(name):  # a link too, if broken
        xml = Path(name)
        problem = input_problem(xml)
        if problem is not None:
            raise DataError(
                f"{xml}: file not found" if problem == "does not exist" else f"{xml} {problem}"
            )
        key = Path(gold) if gold is not None else default_gold_path(xml)
        problem = input_problem(key) if key is not None else None
        if problem is not None:
            missing = problem == "does not exist"
            raise DataError(
                f"{key}: gold key file not found" if missing else f"gold key file {key} {problem}"
            )
    else:
        xml, key = dataset_paths(name)
        if gold is not None:
            raise DataError(f"--gold is for a *.data.xml path, not the dataset name {name!r}")
    if key is None and need_gold:
        stem = xml.name.removesuffix(".xz").removesuffix(".data.xml")
        raise DataError(
            f"{xml}: no gold key file (looked for {stem}.gold.key.txt[.xz] beside it); "
            "pass its path with --gold"
        )
    return xml, key


def available_datasets(root: str | os.PathLike | None = None) -> dict[str, Path]:
    """Dataset name -> its XML path, for the datasets present under the data dir."""
    found = {}
    for name in DATASETS:
        try:
            found[name] = dataset_paths(name, root)[0]
        except DataError:
            continue
    return found


# --------------------------------------------------------------------------- download


def progress_printer(stream: TextIO | None = None) -> Callable[[int, int | None], None]:
    """A ``progress(done, total)`` callback for :func:`fetch` that rewrites one line on
    ``stream`` (stderr by default): a percentage when the size is known, else MiB received;
    it prints only when the figure changes."""
    stream = stream or sys.stderr
    last = [-1]

    def report(done: int, total: int | None) -> None:
        step = done * 100 // total if total else done >> 20
        if step != last[0]:
            last[0] = step
            text = f"{step:3d}%" if total else f"{step} MiB"
            print(f"\rdownloading: {text} ({done:,} bytes)", end="", file=stream, flush=True)

    return report


def fetch(url: str, dest: Path, progress: Callable[[int, int | None], None] | None = None) -> Path:
    """Download ``url`` to the file ``dest`` (written to a temporary name of this writer, then
    renamed: :func:`workbench.fileio.atomic_path`), within the ``download_seconds`` limit in
    all and ``read_seconds`` per read (:mod:`workbench.limits`), and no larger than the
    ``archive_bytes`` limit.

    Raises:
        DataError: the URL is not one, the network failed, a limit was passed.
    """

    def failed(exc: Exception) -> DataError:  # the network's failure, not the output's
        return DataError(f"download of {url} failed: {exc}")

    deadline = Deadline("download_seconds", f"the download of {url}")
    cap = limit("archive_bytes")
    try:
        response = urllib.request.urlopen(url, timeout=min(limit("read_seconds"), deadline.left()))
    except (OSError, ValueError, http.client.HTTPException) as exc:  # ValueError: not a URL
        raise failed(exc) from exc
    with response, atomic_path(dest) as tmp, open(tmp, "wb") as out:
        try:
            total = int(response.headers.get("Content-Length") or 0) or None
        except ValueError:
            total = None
        done = 0
        read = getattr(response, "read1", response.read)
        while True:
            deadline.check()
            try:
                block = read(1 << 16)  # what one receive brings: the deadline is checked often
            except (OSError, http.client.HTTPException) as exc:
                raise failed(exc) from exc
            if done + len(block) > cap:
                raise DataError(f"download of {url} is larger than the limit of {cap:,.0f} "
                                "bytes (WORKBENCH_LIMIT_ARCHIVE_BYTES sets it)")  # fmt: skip
            if not block:
                break
            out.write(block)
            done += len(block)
            if progress:
                progress(done, total)
    return dest


def download(
    url: str = DEFAULT_URL,
    dest: str | os.PathLike | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    sha256: str | None = None,
) -> Path:
    """Download and unpack the framework archive into ``dest`` (default: the user data dir).

    What arrives is verified before it is unpacked into place: with ``sha256``, the archive's
    SHA-256 must be that; without, every evaluation file in it must be the framework's own
    (:data:`FRAMEWORK_SHA256`). Anything else is refused and nothing is kept.

    The archive is fetched and extracted in a temp dir beside ``dest``; the extracted
    ``WSD_Evaluation_Framework/`` is then renamed into place, so an interrupted download never
    leaves a half-written data dir. An existing ``dest/WSD_Evaluation_Framework`` is kept.

    Returns:
        ``dest/WSD_Evaluation_Framework``.

    Raises:
        DataError: network failure, a bad archive, an archive without the framework dir, an
            archive or content of another digest, or a framework dir already there.
    """
    if sha256 is not None and not re.fullmatch(r"[0-9a-fA-F]{64}", sha256):
        raise DataError(f"--sha256 must be 64 hex digits, not {sha256!r}")
    dest = Path(expand_home(os.fspath(dest), "--dest")) if dest is not None else user_data_dir()
    final = dest / FRAMEWORK_DIR
    if os.path.lexists(final):  # a link too: nothing there is replaced
        raise DataError(f"{final} already exists; remove it first to download again")
    made = [d for d in (dest, *dest.parents) if not os.path.lexists(d)]
    dest.mkdir(parents=True, exist_ok=True)
    try:
        return _download_into(url, dest, final, progress, sha256)
    except BaseException:
        for folder in made:  # a failed download leaves no empty folder it made
            try:
                folder.rmdir()
            except OSError:
                break
        raise


def _download_into(
    url: str,
    dest: Path,
    final: Path,
    progress: Callable[[int, int | None], None] | None,
    sha256: str | None,
) -> Path:
    remove_stale_temporaries(dest, [FRAMEWORK_DIR])  # what a killed download left
    tmp = temporary_path(final)
    tmp.mkdir()
    try:
        archive = fetch(url, tmp / "archive.zip", progress)
        if sha256 is not None and sha256_file(archive) != sha256.lower():
            raise DataError(
                f"{url}: the archive's SHA-256 is {sha256_file(archive)}, not the {sha256} "
                "asked for; nothing was unpacked"
            )
        unpacked = tmp / "unpacked"
        extract_zip(archive, unpacked)
        found = [p for p in unpacked.rglob(FRAMEWORK_DIR) if p.is_dir()]
        if not found:
            raise DataError(f"{url}: the archive holds no {FRAMEWORK_DIR}/ dir")
        framework = min(found, key=lambda p: len(p.parts))
        if sha256 is None:
            check_framework(framework, url)
        os.replace(framework, final)
    finally:
        remove_path(tmp)
    return final


def check_framework(framework: Path, source: str) -> None:
    """Refuse an unpacked framework whose evaluation files are not the published ones
    (:data:`FRAMEWORK_SHA256`), naming the first that differs.

    Raises:
        DataError: a file missing or of another SHA-256.
    """
    for rel, digest in FRAMEWORK_SHA256.items():
        path = framework / rel
        if input_problem(path) is not None:
            raise DataError(f"{source}: the archive lacks {FRAMEWORK_DIR}/{rel}; nothing was kept "
                            "(--sha256 DIGEST takes another copy of the archive)")  # fmt: skip
        if sha256_file(path) != digest:
            raise DataError(
                f"{source}: {FRAMEWORK_DIR}/{rel} in the archive is not the published file "
                "(another SHA-256); nothing was kept (--sha256 DIGEST takes another copy)"
            )


# --------------------------------------------------------------------------- verify


@dataclass(frozen=True)
class DatasetCheck:
    """Counts of one dataset as read from disk (``error`` set when it failed to load)."""

    name: str
    path: Path | None
    sentences: int = 0
    tokens: int = 0
    instances: int = 0
    gold_keys: int = 0
    error: str = ""

    @property
    def matches_published(self) -> bool:
        """True when the instance count equals the published one (or none is known)."""
        expected = PUBLISHED_INSTANCES.get(self.name)
        return not self.error and (expected is None or self.instances == expected)


@dataclass(frozen=True)
class ChecksumResult:
    """Result of comparing files with a SHA256SUMS list (paths relative to the data dir)."""

    checked: tuple[str, ...] = ()
    failed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


def check_dataset(name: str, root: Path) -> DatasetCheck:
    """Load one dataset and count it; a failure is reported in ``error``, never raised."""

    try:
        corpus = load_dataset(name, root)
    except DataError as exc:
        return DatasetCheck(name, None, error=str(exc))
    return DatasetCheck(
        name,
        corpus.source[0],
        corpus.n_sentences,
        corpus.n_tokens,
        corpus.n_instances,
        corpus.n_gold_keys(),
    )


def check_sums(root: Path, sums_file: Path | None = None) -> ChecksumResult | None:
    """Check ``SHA256SUMS`` (default ``root/SHA256SUMS``); ``None`` when there is no such file.

    A listed ``X`` that is absent while ``X.xz`` exists is checked by decompressing ``X.xz``.
    Other absent files are reported as missing.

    Raises:
        DataError: an entry that names a file outside ``root`` (``../x``, an absolute path, a
            link leading out: :func:`workbench.fileio.named_path`).
    """
    sums_file = sums_file or root / "SHA256SUMS"
    if not sums_file.is_file():
        return None
    checked, failed, missing = [], [], []
    for line in sums_file.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        expected, rel = line.split(maxsplit=1)
        rel = rel.lstrip("*")
        path = named_path(root, rel, f"{sums_file.name} entry", nested=True, error=DataError)
        packed = root / (rel + ".xz")
        if path.is_file():
            actual = sha256_file(path)
        elif packed.is_file():
            with lzma.open(packed, "rb") as fh:
                actual = sha256_stream(fh)
        else:
            missing.append(rel)
            continue
        checked.append(rel)
        if actual != expected.lower():
            failed.append(rel)
    return ChecksumResult(tuple(checked), tuple(failed), tuple(missing))


def load_dataset(name: str, data_dir: str | os.PathLike | None = None) -> Corpus:
    """Load a framework dataset by name.

    Args:
        name: ``senseval2``, ``senseval3``, ``semeval2007``, ``semeval2013``,
            ``semeval2015``, ``ALL`` or ``semcor`` (case-insensitive).
        data_dir: the dir holding ``WSD_Evaluation_Framework/``; ``None`` ->
            :func:`workbench.corpora.datasets.data_dir`.

    Raises:
        DataError: unknown name, or the data is missing (the message says how to get it).

    The result is memoised per process (keyed by the files' paths, sizes and mtimes).
    """
    xml_path, gold_path = dataset_paths(name, data_dir)
    stamps = tuple(_stamp(p) for p in (xml_path, gold_path) if p is not None)
    return _load_memo(xml_path, gold_path, stamps)


def _stamp(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return str(path.resolve()), stat.st_mtime_ns, stat.st_size


@functools.lru_cache(maxsize=8)
def _load_memo(xml_path: Path, gold_path: Path | None, stamps: tuple) -> Corpus:
    # Corpora are immutable: one parse per process while the files are unchanged.
    return read_xml(xml_path, gold_path, name=xml_path.name.split(".")[0])
