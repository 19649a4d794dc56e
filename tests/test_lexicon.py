"""The method's English lives in one place (selfpara.pipeline.lexicon): one negation list, one alias table,
one sentence splitter, one stemmer, one reader of names; no module of selfpara/ keeps a copy of its own."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from selfpara.pipeline.lexicon import LEXICON
from selfpara.pipeline.lexicon.renamings import Renaming
from selfpara.pipeline.lexicon.tables import Lexicon
from selfpara.pipeline.lexicon.text import (
    NAME_RUN,
    aliases_of,
    as_heads,
    enumerated,
    initials,
    joined_lists,
    said_as,
    said_otherwise,
    sentences,
    stem,
    unaccented,
)

PACKAGE = Path(__file__).parents[1] / "selfpara"
LEXICON_DIR = PACKAGE / "pipeline" / "lexicon"
NEGATIONS = {"not", "never", "neither", "nor", "none", "nobody", "nothing", "cannot", "without"}
ALIASES = {"french", "dutch", "usa", "british", "head of state", "solar", "globe"}


def modules() -> Iterator[tuple[Path, ast.Module]]:
    """Every module of selfpara/ but the lexicon's analysers, parsed."""
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent != LEXICON_DIR:
            yield path, ast.parse(path.read_text(encoding="utf-8"))


def strings(tree: ast.Module) -> Iterator[str]:
    """The string constants of `tree` that could hold words to match (a list, a table, a pattern), not prose:
    no sentence in them."""
    prose = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}  # docstrings
    for node in ast.walk(tree):
        words_only = isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
        if words_only and not re.search(r"[a-z][.,:;] ", node.value):
            yield node.value


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every list or string the lexicon's data holds."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from leaves(inner, f"{path}.{key}" if path else key)
    else:
        yield path, value


def word_list(value: Any) -> set[str]:
    if isinstance(value, str):
        return set(value.lower().split())
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return {v.lower() for v in value}
    return set()


def test_one_negation_list() -> None:
    holding = [path for path, value in leaves(LEXICON.data) if len(word_list(value) & NEGATIONS) >= 3]
    assert holding == ["common.negations"]
    copies = [p for p, tree in modules() for s in strings(tree) if len(set(re.findall(r"[a-z]+", s)) & NEGATIONS) >= 3]
    assert copies == []


def test_one_alias_table() -> None:
    holding = {path.rsplit(".", 1)[0] for path, value in leaves(LEXICON.data) if word_list(value) & ALIASES}
    assert holding == {"aliases"}
    copies = [(p, s) for p, tree in modules() for s in strings(tree) if s.lower() in ALIASES]
    assert copies == []


def test_one_sentence_splitter() -> None:
    ends = re.compile(r"\[\^?(?:\.!\?|\.\?!|!\.\?|!\?\.|\?\.!|\?!\.)\]")  # a class of . ! ? in any order
    breaks = [path for path, value in leaves(LEXICON.data) if isinstance(value, str) and "(?<=[.!?])" in value]
    assert breaks == ["text.sentence_break"]
    copies = [(p, s) for p, tree in modules() for s in strings(tree) if ends.search(s)]
    assert copies == []


def test_one_name_reader() -> None:
    """Only the lexicon's `text.name_run` reads capitalised words in a row as a name."""
    runs = re.compile(r"\[A-Z\]\[(?:a-z|A-Za-z)[^\]]*\][*+]\(\?:")  # a capitalised word, then more of them
    holding = [path for path, value in leaves(LEXICON.data) if isinstance(value, str) and runs.search(value)]
    assert holding == ["text.name_run"]
    copies = [(p, s) for p, tree in modules() for s in strings(tree) if runs.search(s)]
    assert copies == []


def test_a_name_holds_its_particles_and_its_initials_skip_them() -> None:
    found = [m.group() for m in NAME_RUN.finditer("The Gulf of California lies east of Baja California.")]
    assert found == ["The Gulf of California", "Baja California"]
    assert initials("Bernardo de Galvez ruled New Spain.") == {"bg": {"bernardo", "galvez"}, "ns": {"new", "spain"}}


def test_an_enumeration_is_read_item_by_item_without_its_frame() -> None:
    assert enumerated("The planets smaller than Earth are Mercury, Venus, and Mars, all rocky.") == [
        "Mercury",
        "Venus",
        "Mars",
    ]
    assert enumerated("These included Germany, Italy, Japan, and the Soviet Union.")[-1] == "Soviet Union"
    assert enumerated("He played the violin, viola and cello.") == ["violin", "viola", "cello"]
    assert enumerated("It lies between the United States and Mexico.") == []  # two things: no enumeration


def test_a_name_the_alias_table_knows_is_written_as_its_head_unless_the_question_names_it() -> None:
    assert as_heads("Muslims and the Dutch", "Which religion?") == "Islam and the Netherlands"
    assert as_heads("in Holland", "Where?") == "in Netherlands"  # groups that share a name are one
    kept = "the British pound"
    assert as_heads(kept, "What is the currency of the United Kingdom?") == kept
    assert as_heads("tell us", "Who?") == "tell us"  # a name is written with its capitals
    # a question names it in any case
    assert as_heads("the French Revolution", "what government did france have after the french revolution?") == (
        "the French Revolution"
    )
    assert as_heads("The US president", "who was the us president then?") == "The US president"


def test_a_verb_in_another_form_is_said_as_its_plain_form() -> None:
    asked = {"rule", "play", "occupy"}
    assert all(said_as(w, asked | {"die"}) for w in ("ruled", "Ruling", "played", "plays", "occupied", "rules", "died"))
    assert not any(said_as(w, asked) for w in ("red", "player", "ruler", "occupant"))


def test_one_stemmer() -> None:
    """No module of the method slices a word to its first letters, nor defines a stemmer of its own."""
    found = []
    for path, tree in modules():
        if PACKAGE / "pipeline" not in path.parents:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and re.search(r"^_?(stem|root|base)s?$", node.name):
                found.append((path.name, node.name))
            head = isinstance(node, ast.Slice) and node.lower is None and isinstance(node.upper, ast.Constant)
            if head and node.upper.value in (4, 5):  # type: ignore[union-attr]
                found.append((path.name, ast.unparse(node)))
    assert found == []


def test_the_stemmer_reads_a_word_as_the_checks_compare_it() -> None:
    assert stem("Transported") == stem("transport") == "trans"
    assert stem("Canadian", 4) == stem("Canada's", 4) == "cana"
    assert [stem(w) for w in ("gases", "glass", "Paris", "virus")] == ["gase", "glass", "paris", "virus"]


def test_sentences_end_before_anything_but_a_lower_case_word() -> None:
    assert sentences("What is the capital of France? (Say Lyon.)") == ["What is the capital of France?", "(Say Lyon.)"]
    assert sentences("Which U.S. state is largest? It is Alaska.\nDone") == [
        "Which U.S. state is largest?",
        "It is Alaska.",
        "Done",
    ]


def test_a_name_s_initial_or_a_title_ends_no_sentence() -> None:
    assert sentences("John F. Kennedy's vice president was Lyndon B. Johnson. He served.") == [
        "John F. Kennedy's vice president was Lyndon B. Johnson.",
        "He served.",
    ]
    assert sentences("The author is J. K. Rowling. Dr. Seuss is not. St. Louis is a city.") == [
        "The author is J. K. Rowling.",
        "Dr. Seuss is not.",
        "St. Louis is a city.",
    ]
    # a single capital after a lower-case word is no initial: the sentence ends there
    assert sentences("It is vitamin C. It helps.") == ["It is vitamin C.", "It helps."]


def test_a_list_written_one_item_a_line_is_one_sentence() -> None:
    answer = (
        "Germany occupied several countries, including:\n\n1. **France**: From 1940 to 1945.\n"
        "2. Poland (1939-1945)\n3. The Netherlands\n\nThese were all in Europe."
    )
    assert sentences(answer) == [
        "Germany occupied several countries, including: France, Poland, and The Netherlands.",
        "These were all in Europe.",
    ]
    assert joined_lists("Two:\n- Paris\n- Lyon") == "Two: Paris and Lyon."
    assert joined_lists("1. Paris") == "Paris."
    # a line that only looks like an item in running text is left alone
    assert sentences("He was born in 1950. He died in 2001.") == ["He was born in 1950.", "He died in 2001."]


def test_accents_are_read_as_their_letters() -> None:
    assert unaccented("René Descartes, Ångström") == "Rene Descartes, Angstrom"
    assert unaccented("plain") == "plain"


def test_an_alias_counts_both_ways_and_a_common_word_only_where_the_question_lacks_it() -> None:
    assert "France" in aliases_of("french") and "head of state" in aliases_of("president")
    assert said_otherwise(
        "earth", "What is the tallest mountain on Earth?", "What is the tallest mountain in the world?"
    )
    assert not said_otherwise("earth", "Which planet is closest to Earth?", "Which planet is closest?")
    assert said_otherwise("dutch", "The capital of the Dutch province of Holland?", "Holland's capital?")


def test_a_misspelt_list_fails_when_it_is_read() -> None:
    with pytest.raises(KeyError):
        LEXICON.words("common.stopword")


def test_a_value_given_twice_across_files_is_refused(tmp_path: Path) -> None:
    for name in ("words", "patterns", "synonyms", "renamings"):
        (tmp_path / f"{name}.toml").write_text("[common]\nx = 'a'\n" if name in ("words", "patterns") else "")
    with pytest.raises(ValueError, match="common.x"):
        Lexicon(tmp_path)


def test_an_entry_naming_an_unknown_test_is_refused() -> None:
    with pytest.raises(KeyError):
        Renaming.from_data({"name": "x", "patterns": ["a"], "templates": ["b"], "accept": "no_such_test"})
