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


def test_the_shipped_card_names_its_levers_and_the_command_that_made_it():
    """The shipped folder's README gives the training command its card records (every option
    the run set apart from the defaults) and the test-time levers its levers.json holds."""
    folder = shipped_biencoder()
    assert folder is not None
    card = json.loads((folder / "training_card.json").read_text(encoding="utf-8"))
    readme = (folder / "README.md").read_text(encoding="utf-8")
    command = re.search(r"```\n(workbench finetune wsd .*?)\n```", readme, re.DOTALL)
    assert command, "the README's training command"
    given = command[1].replace("\\\n", " ").split()
    recorded = card["command"].split()
    for option in ("--builtin", "--lr", "--top-layers", "--head-pooling", "--gloss-max-length",
                   "--gloss-text", "--lemma-reweight", "--batch-size", "--epochs",
                   "--seed"):  # fmt: skip
        value, card_value = given[given.index(option) + 1], recorded[recorded.index(option) + 1]
        assert value == card_value or float(value) == float(card_value), option
    assert "--max-train" not in given and "--max-train" not in recorded  # all the sentences
    levers = folder_levers(folder)
    assert levers.describe()["smoothing"] > 0 and f"smoothing {levers.smoothing:g}" in readme
    assert card["options"]["lemma_reweight"] == 2.0 and "Z-reweighting" in readme
    # an average of two runs: the card names both and its weight, the README gives each command
    average = card["average"]
    assert f"--weight {average['weight_a']:g}" in readme
    for run in average["runs"].values():
        option = dict(zip(run["command"].split()[::1], run["command"].split()[1:]))
        assert f"--gloss-max-length {option['--gloss-max-length']}" in readme
        gloss_text = option["--gloss-text"]
        assert gloss_text == "definition" or f"--gloss-text {gloss_text}" in readme
    training = BiEncoder(folder, device="cpu").describe()["training"]
    assert "the average of two bi-encoders" in training
