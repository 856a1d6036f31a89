"""A system added to the registry shows up in every front end with no other change: the command
line's ``--system`` choices and help, the app's choice of systems, and the one door.

The test system is WordNet's gloss system under another name, registered for one test by a
fixture (which removes it afterwards).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from webapp.caches.indexes import system_options
from workbench.cli.main import build_parser
from workbench.cli.wsd import system_help
from workbench.errors import InputError
from workbench.wsd.presets import PACKAGED_FINGERPRINT
from workbench.wsd.systems import missing_systems, offered_systems, open_system
from workbench.wsd.systems.base import System
from workbench.wsd.systems.registry import SYSTEMS
from workbench.wsd.systems.wordnet import WORDNET_SYSTEM

NAME = "glosses-again"


@pytest.fixture
def added(monkeypatch: pytest.MonkeyPatch) -> Iterator[System]:
    """WordNet's gloss system registered as :data:`NAME` for one test."""
    system = dataclasses.replace(
        WORDNET_SYSTEM, name=NAME, label="WordNet glosses again (a test system)",
        help="a test system: WordNet's glosses under another name",
    )  # fmt: skip
    monkeypatch.setitem(SYSTEMS, NAME, system)
    yield system


def test_an_added_system_is_a_choice_of_the_command_line(added, capsys):
    parser = build_parser(["wsd"])
    args = parser.parse_args(["wsd", "disambiguate", "a bank", "--word", "bank", "--system", NAME])
    assert args.system == NAME
    with pytest.raises(SystemExit):
        parser.parse_args(["wsd", "disambiguate", "a bank", "--word", "bank", "--system", "x"])
    refused = capsys.readouterr().err  # one line, naming every choice
    assert "invalid choice: 'x'" in refused and NAME in refused.split("choose from")[1]
    with pytest.raises(SystemExit):
        parser.parse_args(["wsd", "disambiguate", "--help"])
    shown = capsys.readouterr().out
    assert f"{NAME} (a test system: WordNet's glosses under another name)" in system_help()
    assert "a test system: WordNet's glosses" in " ".join(shown.split())  # in --help
    assert f"change single settings of best, plain, wordnet or {NAME}." in system_help()


def test_an_added_system_is_offered_by_the_app_and_opened_by_the_door(added, tiny_encoder):
    options = system_options(None, PACKAGED_FINGERPRINT, "float32")
    assert options[NAME] == "WordNet glosses again (a test system)"  # no F1: a gloss system
    assert list(options)[-1] == NAME and NAME in offered_systems(None)
    assert NAME not in missing_systems(None)  # offered everywhere, as WordNet's glosses are
    opened = open_system(NAME, encoder=tiny_encoder)  # nothing loads here
    assert opened.name == NAME and opened.description == added.description
    # WordNet's gloss settings read the last four layers, which the 2-layer model lacks:
    # refused when its encoder is first used, before a gloss is encoded
    with pytest.raises(InputError, match="Layer -4 does not exist"):
        opened.describe()


def test_without_it_nothing_names_it():
    assert NAME not in SYSTEMS
    parser = build_parser(["wsd"])
    with pytest.raises(SystemExit):
        parser.parse_args(["wsd", "disambiguate", "a bank", "--word", "bank", "--system", NAME])
