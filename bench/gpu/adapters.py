"""Adapters trained on a remote GPU machine, re-recorded against the packaged model they belong to.

The ``lora`` step of ``bench/gpu/session.py`` trains on the float16 copy of the packaged model
that ``bench/gpu/prepare.py`` carries (the float32 weights do not fit what travels), so the
adapters it brings back (``$OUT/wsd-lora.tar.gz.part-*``, one archive cut in parts) record that
copy's fingerprint, and the workbench refuses them against the packaged float32 model. This
script joins the parts, unpacks the archive,
checks that every adapter's recorded base is exactly the float16 copy of the packaged model
(made here the same way and fingerprinted), and records the packaged model instead (name,
fingerprint; the adapter weights' SHA-256 stays), so ``--model DIR`` and the shipped model load
them onto the packaged base. Anything else (adapters of another model) is refused.

Run::

    python -m bench run gpu/adapters OUT/wsd-lora.tar.gz.part-* --out runs/wsd-lora-gpu
"""

from __future__ import annotations

import argparse
import sys
import tarfile
import tempfile
from pathlib import Path

from bench.gpu.prepare import write_minilm
from workbench.encoding.adapters import (
    BASE_RECORD,
    is_adapter_dir,
    read_base_record,
    write_base_record,
)
from workbench.encoding.encoder import Encoder
from workbench.encoding.models import DEFAULT_MODEL_LABEL


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("parts", type=Path, nargs="+",
                    help="wsd-lora.tar.gz.part-* from a GPU session, in order")  # fmt: skip
    ap.add_argument("--out", type=Path, required=True, help="where the model directory goes")
    args = ap.parse_args()
    if args.out.exists():
        print(f"{args.out} exists: choose a new directory", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "minilm-float16"
        write_minilm(copy)
        carried = Encoder(model=str(copy), device="cpu", dtype="float32").fingerprint
        packaged = Encoder(device="cpu", dtype="float32").fingerprint
        archive = Path(tmp) / "wsd-lora.tar.gz"
        with archive.open("wb") as whole:  # the parts, joined again
            for part in sorted(args.parts):
                whole.write(part.read_bytes())
        with tarfile.open(archive) as tar:
            tar.extractall(Path(tmp) / "unpacked", filter="data")
        (run,) = list((Path(tmp) / "unpacked").iterdir())
        for directory in [run, run / "gloss_encoder"]:
            if not is_adapter_dir(directory):
                continue
            record = read_base_record(directory)
            if record.fingerprint != carried:
                print(f"{directory / BASE_RECORD}: base {record.fingerprint}, not the carried "
                      f"float16 copy {carried}", file=sys.stderr)  # fmt: skip
                return 2
            write_base_record(directory, DEFAULT_MODEL_LABEL, True, packaged)
        run.rename(args.out)
    print(f"{args.out}: adapters recorded against the packaged model ({packaged})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
