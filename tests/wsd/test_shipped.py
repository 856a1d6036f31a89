"""The bi-encoder the package ships: it loads onto the packaged model, each file is small
enough to ship, a damaged copy is refused naming the file, and it answers the README's
example as the README shows."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from workbench.cli.main import main
from workbench.encoding.adapters import weights_file
from workbench.encoding.encoder import Encoder
from workbench.errors import ModelLoadError
from workbench.wsd.biencoder import GLOSS_ENCODER, BiEncoder, bi_encoder_head, shipped_biencoder
from workbench.wsd.levers import folder_levers

README = Path(__file__).resolve().parents[2] / "README.md"
MAX_FILE = 16 << 20  # a shipped file's size limit (bytes)


def _towers(directory: Path) -> list[Path]:
    head = bi_encoder_head(directory)
    assert head is not None
    return [directory] + (
        [] if head.get("gloss_encoder") == "base" else [directory / GLOSS_ENCODER]
    )


def test_the_shipped_bi_encoder_loads_onto_the_packaged_model_and_each_file_is_small():
    directory = shipped_biencoder()
    assert directory is not None
    sizes = {p.relative_to(directory).as_posix(): p.stat().st_size for p in directory.rglob("*")}
    assert all(size < MAX_FILE for size in sizes.values()), sizes
    packaged = Encoder(device="cpu").fingerprint
    for tower in _towers(directory):
        record = json.loads((tower / "base_model.json").read_text(encoding="utf-8"))
        assert record["packaged"] is True and record["fingerprint"] == packaged
        assert weights_file(tower).is_file()
    card = json.loads((directory / "training_card.json").read_text(encoding="utf-8"))
    assert set(card["files"]) <= set(sizes)
    bi = BiEncoder(directory, device="cpu")
    assert bi.describe()


@pytest.mark.parametrize("part", ["context", "gloss"])
@pytest.mark.parametrize("damage", ["truncated", "flipped"])
def test_a_damaged_copy_of_the_shipped_bi_encoder_is_refused_naming_the_file(
    part, damage, tmp_path
):
    directory = shipped_biencoder()
    assert directory is not None
    copy = Path(shutil.copytree(directory, tmp_path / "copy"))
    towers = _towers(copy)
    tower = towers[0] if part == "context" else towers[-1]
    weights = weights_file(tower)
    data = bytearray(weights.read_bytes())
    if damage == "truncated":
        data = data[: len(data) // 2]
    else:
        data[-5] ^= 0xFF  # one weight's bytes changed: the header still parses
    weights.write_bytes(bytes(data))
    with pytest.raises(ModelLoadError, match=re.escape(weights.name)):
        BiEncoder(copy, device="cpu")


def test_the_shipped_bi_encoder_answers_the_readmes_example(capsys):
    text = README.read_text(encoding="utf-8")
    command = re.search(r"\$ workbench wsd disambiguate \"([^\"]+)\" --word (\w+)", text)
    chosen = re.search(r"^\*\s+-?[0-9.]+\s+(\S+)", text, re.MULTILINE)
    assert command and chosen, "the README's disambiguate example"
    code = main(["wsd", "disambiguate", command[1], "--word", command[2], "--device", "cpu"])
    out = capsys.readouterr().out
    assert code == 0
    answer = re.search(r"^\*\s+(-?[0-9.]+)\s+(\S+)", out, re.MULTILINE)
    assert answer and answer[2] == chosen[1], out
    shown = re.search(r"^\*\s+(-?[0-9.]+)\s+" + re.escape(chosen[1]), text, re.MULTILINE)
    # the score as the README shows it (to the compute dtype's rounding: "auto" may be bfloat16)
    assert shown and abs(float(answer[1]) - float(shown[1])) <= 0.01, (answer[1], shown[1])


OPTIONS = ("--builtin", "--lr", "--top-layers", "--head-pooling", "--gloss-max-length",
           "--gloss-text", "--lemma-reweight", "--batch-size", "--epochs", "--seed",
           "--max-train")  # fmt: skip
DEFAULTS = {"--gloss-text": "definition"}
FLAGS = ("--freeze-glosses",)


def _readme_commands(readme: str, program: str) -> list[list[str]]:
    """The README's commands that start with ``program``, each as its words."""
    blocks = re.findall(r"```\n(.*?)\n```", readme, re.DOTALL)
    lines = [line for block in blocks for line in block.replace("\\\n", " ").splitlines()]
    return [line.split("#")[0].split() for line in lines if line.startswith(program)]


def _agrees(given: list[str], recorded: list[str]) -> bool:
    """Whether a README command sets every option the card's command records as the card does
    (an option the README leaves out at its default)."""

    def value(words: list[str], option: str) -> str | None:
        return words[words.index(option) + 1] if option in words else DEFAULTS.get(option)

    for option in OPTIONS:
        a, b = value(given, option), value(recorded, option)
        if a != b and not (a is not None and b is not None and float(a) == float(b)):
            return False
    return all((flag in given) == (flag in recorded) for flag in FLAGS)


def test_the_shipped_card_names_its_levers_and_the_commands_that_made_it():
    """The shipped folder's README gives every training command its card records (the
    continuation's, and the two runs' its average was made of), with every option the runs set
    apart from the defaults, the average between them, and the test-time levers its
    levers.json holds."""
    folder = shipped_biencoder()
    assert folder is not None
    card = json.loads((folder / "training_card.json").read_text(encoding="utf-8"))
    readme = (folder / "README.md").read_text(encoding="utf-8")
    trainings = _readme_commands(readme, "workbench finetune wsd")
    average = card["continued_from"]["average"]
    runs = [run["command"].split() for run in average["runs"].values()]
    for recorded in [card["command"].split(), *runs]:
        assert any(_agrees(given, recorded) for given in trainings), " ".join(recorded)
    assert all("--max-train" not in run for run in runs)  # the two runs: all the sentences
    # the chain: the continuation starts from the folder the README's average writes
    (averaged,) = _readme_commands(readme, "python -m bench run wsd_average")
    assert f"--weight {average['weight_a']:g}" in " ".join(averaged)
    continued = [given for given in trainings if "--model" in given]
    out = averaged[averaged.index("wsd_average") + 3]  # wsd_average A B OUT
    assert [given[given.index("--model") + 1] for given in continued] == [out]
    levers = folder_levers(folder)
    assert levers.describe()["smoothing"] > 0 and f"smoothing {levers.smoothing:g}" in readme
    assert card["options"]["lemma_reweight"] == 2.0 and "Z-reweighting" in readme
    training = BiEncoder(folder, device="cpu").describe()["training"]
    assert "continued from the average of two" in training
