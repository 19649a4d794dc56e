"""One language's data, read once: the word lists, tables and patterns of its folder (`lexicon/en/`).

The folder holds TOML files: `words.toml` (word lists and tables), `patterns.toml` (phrases as regular
expressions), `synonyms.toml` (what the drift checks read one phrase as), `renamings.toml` (the
renamings table) and `prompts.toml` (the prompts, their examples and forms). Every key is reached by
its dotted path ("common.stopwords"); a path that names nothing is a KeyError when the module that
reads it is imported, so a misspelt list fails at once.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from selfpara.util.extras import toml_reader

FILES = ("words", "patterns", "synonyms", "renamings", "prompts")
_REFERENCE = re.compile(r"\{([a-z_]+(?:\.[a-z_ ]+)+)\}")
"""`{section.name}` inside a pattern: another entry (never a regex quantifier such as `{2,5}`)."""


class Lexicon:
    """The data of one language folder.

    Args:
        folder: the folder of the language's TOML files.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.data: dict[str, Any] = {}
        self.word_lists: set[str] = set()  # the paths of words.toml's entries: a reference to one is an alternation
        for name in FILES:
            loaded = toml_reader().loads((folder / f"{name}.toml").read_text(encoding="utf-8"))
            paths = _merge(self.data, loaded, f"{folder / name}.toml")
            if name == "words":
                self.word_lists |= paths

    def raw(self, path: str) -> Any:
        """The value at `path` ("section.name") as the file holds it. KeyError when there is none."""
        value: Any = self.data
        for part in path.split("."):
            value = value[part]
        return value

    def words(self, path: str) -> tuple[str, ...]:
        """The word list at `path`, in the order written (a whitespace-separated string or an array)."""
        value = self.raw(path)
        return tuple(value.split() if isinstance(value, str) else value)

    def word_set(self, path: str) -> frozenset[str]:
        """The word list at `path` as a set."""
        return frozenset(self.words(path))

    def table(self, path: str) -> dict[str, Any]:
        """The table at `path` (a word -> a word, a number or a list)."""
        value = self.raw(path)
        if not isinstance(value, dict):
            raise KeyError(f"{path} is not a table")
        return dict(value)

    def regex(self, path: str) -> str:
        """The pattern at `path` with every `{section.name}` inside it written out: a pattern as itself (in a
        non-capturing group), a word list as an alternation of its words in order."""
        return self.expand(self.raw(path))

    def expand(self, pattern: str) -> str:
        """`pattern` with its `{section.name}` references written out (see `regex`)."""

        def written(match: re.Match[str]) -> str:
            value = self.raw(match.group(1))
            if isinstance(value, str) and match.group(1) not in self.word_lists:
                return f"(?:{self.expand(value)})"
            return "(?:" + "|".join(re.escape(w) for w in self.words(match.group(1))) + ")"

        return _REFERENCE.sub(written, pattern)

    def pattern(self, path: str, *, case: bool = False) -> re.Pattern[str]:
        """The compiled pattern at `path`: case-insensitive unless `case`."""
        return re.compile(self.regex(path), 0 if case else re.IGNORECASE)


def _merge(into: dict[str, Any], new: dict[str, Any], source: str, prefix: str = "") -> set[str]:
    """Merge the tables of `new` into `into` (a section may span files); the dotted paths of the values added.
    ValueError when a value is given twice."""
    added: set[str] = set()
    for key, value in new.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and isinstance(into.get(key, {}), dict):
            added |= _merge(into.setdefault(key, {}), value, source, f"{path}.")
        elif key in into:
            raise ValueError(f"{source} gives {path} again")
        else:
            into[key] = value
            added.add(path)
    return added


LEXICON = Lexicon(Path(__file__).parent / "en")
"""The English the method reads and writes."""
