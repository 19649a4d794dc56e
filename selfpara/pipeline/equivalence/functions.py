"""Answer-equivalence functions, tried cheapest first, with a cache of pair verdicts (METHOD §2.4).

Each function returns True (equivalent), False (not equivalent) or None (cannot
decide: ask the next one). A pair no function decides is not equivalent. Cheap
functions decide both ways: `exact`, `numeric` and `contains` say "same", `distinct`
says "different" (two short answers naming different things), so that only what they
leave open reaches an NLI model or an LLM judge, which a small model answers poorly.

A new function is one small class registered by name:

    @register_equivalence("length")
    class SameLength:
        async def __call__(self, question, a, b, usage):
            return True if len(a) == len(b) else None

The decorator gives the class its `name`; a name already taken is an error. The registry
(`EQUIVALENCE_FUNCTIONS`, a `selfpara.util.registry.Registry`) is what `WrapConfig.equivalence`
is validated against; a class that needs the judge model or the NLI model defines
`from_deps(cls, deps: EquivalenceDeps)`.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from selfpara.errors import ConfigError, UpstreamError
from selfpara.pipeline import prompts
from selfpara.pipeline.equivalence.answer_core import same_core
from selfpara.pipeline.lexicon import quantities
from selfpara.pipeline.lexicon.quantities import number_set
from selfpara.pipeline.lexicon.tables import LEXICON
from selfpara.pipeline.lexicon.text import (
    STOPWORDS,
    as_heads,
    contains_phrase,
    entity_words,
    normalize_answer,
    stems,
    unaccented,
    words,
)
from selfpara.pipeline.paraphrase import parse_yes_no
from selfpara.result import Usage
from selfpara.util.registry import Registry

if TYPE_CHECKING:  # types only: the config validates names against this module's registry
    from selfpara.models.client import ModelClient
    from selfpara.pipeline.equivalence.nli import NLIModel


class EquivalenceFn(Protocol):
    """Decides whether answers `a` and `b` to `question` say the same thing."""

    name: str

    async def __call__(self, question: str, a: str, b: str, usage: Usage | None) -> bool | None: ...


@dataclass(frozen=True)
class EquivalenceDeps:
    """What building an equivalence function may use.

    Attributes:
        client: the model door, for judges that ask a model.
        judge_model: the model the LLM judge asks.
        nli: the loaded NLI model, when the settings name one.
    """

    client: ModelClient
    judge_model: str
    nli: NLIModel | None = None


@dataclass(frozen=True)
class Registered:
    """One registry entry: how to build the function, whether it needs an NLI model, whether it calls one."""

    build: Callable[[EquivalenceDeps], EquivalenceFn]
    needs_nli: bool = False
    calls_model: bool = False
    """Whether deciding a pair runs a model (a judge call or an NLI forward pass), so offline re-votes cannot."""


def model_free(names: list[str]) -> list[str]:
    """The names among `names` whose functions decide without any model, in their order."""
    return [n for n in names if n in EQUIVALENCE_FUNCTIONS and not EQUIVALENCE_FUNCTIONS[n].calls_model]


EQUIVALENCE_FUNCTIONS: Registry[Registered] = Registry("equivalence function")
"""Answer-equivalence functions by name, in registration order (cheapest first)."""

_C = TypeVar("_C", bound=type)


def register_equivalence(name: str, *, needs_nli: bool = False, calls_model: bool = False) -> Callable[[_C], _C]:
    """Class decorator: register the class under `name` (which it gets as its `name`), built by
    its `from_deps(deps)` classmethod when it has one, else by calling it with no arguments.
    ValueError when `name` is taken.

    Args:
        name: the name settings use.
        needs_nli: building it needs the NLI model.
        calls_model: deciding a pair runs a model (NLI or a judge); implied by `needs_nli`.
    """

    def add(cls: _C) -> _C:
        build = getattr(cls, "from_deps", None) or (lambda deps: cls())
        EQUIVALENCE_FUNCTIONS.add(
            name, Registered(build=build, needs_nli=needs_nli, calls_model=calls_model or needs_nli)
        )
        setattr(cls, "name", name)  # noqa: B010  (given once, here; Equivalence.decide reports it)
        return cls

    return add


@register_equivalence("exact")
class ExactMatch:
    """Equal after normalisation (case, punctuation, articles, whitespace); otherwise undecided."""

    async def __call__(self, question: str, a: str, b: str, usage: Usage | None) -> bool | None:
        return True if normalize_answer(a) == normalize_answer(b) else None


@register_equivalence("numeric")
class NumericMatch:
    """Compares final numeric/symbolic answers when both answers state one.

    An answer "states" one when it marks it (\\boxed, ####, "the answer is") or is a short
    answer holding a number, so that a date inside a long sentence does not decide.
    """

    async def __call__(self, question: str, a: str, b: str, usage: Usage | None) -> bool | None:
        fa, fb = _stated(a), _stated(b)
        if fa is None or fb is None:
            return None
        return quantities.same_value(fa, fb)


def _stated(text: str) -> str | None:
    marked = quantities.marks_answer(text)
    if not marked and len(words(text)) > 6:
        return None
    found = quantities.final_answer(text)
    if found is None or quantities.to_number(found) is None and not marked:
        return None
    return found


@register_equivalence("contains")
class ContainsMatch:
    """A short answer (≤ 6 words) occurring as a phrase inside the other: "Paris" ~ "It is Paris."."""

    async def __call__(self, question: str, a: str, b: str, usage: Usage | None) -> bool | None:
        short, long_ = sorted((a, b), key=lambda s: len(words(s)))
        if 0 < len(words(short)) <= 6 and contains_phrase(long_, short):
            return True
        return None


@register_equivalence("distinct")
class DistinctAnswers:
    """Two short answers (≤ 30 words) that name different things are different, without a judge.

    Decides only "different", when both answers have, beyond what the question already
    says, opposite yes/no, numbers of which none is shared, or names (capitalised words;
    every content word for answers of ≤ 4 words) of which none is shared: "Canberra" vs
    "Sydney is the capital.", "1 hour" vs "120 miles", "The heart." vs "The liver.". Run it
    after the positive functions (an answer containing the other was matched already).
    """

    async def __call__(self, question: str, a: str, b: str, usage: Usage | None) -> bool | None:
        return False if distinct_answers(question, a, b) else None


MAX_DISTINCT_WORDS = 30
_SHORT = 4
_YES_NO = LEXICON.word_set("answers.yes_no")


def distinct_answers(question: str, a: str, b: str) -> bool:
    """Whether two short answers to `question` plainly name different things (see DistinctAnswers)."""
    a, b = as_heads(a, question), as_heads(b, question)  # "Islam" and "Muslims" name one thing
    wa, wb = words(a), words(b)
    if not wa or not wb or max(len(wa), len(wb)) > MAX_DISTINCT_WORDS:
        return False
    if wa[0] in _YES_NO and wb[0] in _YES_NO and wa[0] != wb[0]:
        return True
    asked = number_set(question)
    na, nb = number_set(a) - asked, number_set(b) - asked
    if na and nb and na.isdisjoint(nb):
        return True
    q_stems = stems(words(question), 4)
    ka, kb = _names(a, wa, q_stems), _names(b, wb, q_stems)
    if not (ka and kb and ka.isdisjoint(kb)):
        return False
    # A name of one that the other says in lower case ("One pound." vs "... the British pound (GBP).") is shared.
    return ka.isdisjoint(stems(wb, 4)) and kb.isdisjoint(stems(wa, 4))


def _names(text: str, text_words: list[str], q_stems: set[str]) -> set[str]:
    """4-letter stems of the names an answer gives that the question does not already hold."""
    if len(text_words) <= _SHORT:
        found = {w for w in text_words if w not in STOPWORDS and not number_set(w) and len(w) > 1}
    else:
        found = entity_words(text)
    return stems(found, 4) - q_stems


@register_equivalence("core")
class CoreMatch:
    """Sentence answers that add the same thing to the question: "The capital of France is Paris." ~
    "The capital city of France's nation is Paris." (see `answer_core`). Decides only "same"; run it after
    `distinct`, whose "different" stands."""

    async def __call__(self, question: str, a: str, b: str, usage: Usage | None) -> bool | None:
        return True if same_core(question, a, b) else None


@register_equivalence("nli", needs_nli=True)
class NLIEquivalence:
    """Bidirectional entailment conditioned on the question ("q a" vs "q b").

    strict: entailment both ways. lenient: no contradiction either way and not neutral both ways.
    """

    def __init__(self, nli: NLIModel, *, strict: bool = True) -> None:
        self.nli = nli
        self.strict = strict
        self.name = "nli" if strict else "nli-lenient"

    @classmethod
    def from_deps(cls, deps: EquivalenceDeps) -> NLIEquivalence:
        return cls(_needs_nli(deps, "nli"))

    async def __call__(self, question: str, a: str, b: str, usage: Usage | None) -> bool | None:
        qa, qb = f"{question} {a}", f"{question} {b}"
        ab, ba = await self.nli.aprobs([(qa, qb), (qb, qa)])
        label = lambda p: max(("entailment", "neutral", "contradiction"), key=lambda n: getattr(p, n))  # noqa: E731
        la, lb = label(ab), label(ba)
        if self.strict:
            return la == "entailment" and lb == "entailment"
        return "contradiction" not in (la, lb) and not (la == "neutral" and lb == "neutral")


@register_equivalence("nli-lenient", needs_nli=True)
class LenientNLIEquivalence(NLIEquivalence):
    """NLIEquivalence in its lenient form: no contradiction either way and not neutral both ways."""

    @classmethod
    def from_deps(cls, deps: EquivalenceDeps) -> NLIEquivalence:
        return cls(_needs_nli(deps, "nli-lenient"), strict=False)


def _needs_nli(deps: EquivalenceDeps, name: str) -> NLIModel:
    if deps.nli is None:
        raise ConfigError(f"equivalence function {name!r} needs an NLI model (nli_model)")
    return deps.nli


@register_equivalence("llm", calls_model=True)
class LLMJudge:
    """Asks a model whether the two answers say the same thing; undecided if it answers neither YES nor NO."""

    def __init__(self, client: ModelClient, model: str) -> None:
        self.client = client
        self.model = model

    @classmethod
    def from_deps(cls, deps: EquivalenceDeps) -> LLMJudge:
        return cls(deps.client, deps.judge_model)

    async def __call__(self, question: str, a: str, b: str, usage: Usage | None) -> bool | None:
        prompt = prompts.same_answer(question, a, b)
        reply = await self.client.complete(
            self.model, [{"role": "user", "content": prompt}], usage=usage, temperature=0.0, max_tokens=8, kind="judge"
        )
        return parse_yes_no(reply.text)


class Equivalence:
    """Runs equivalence functions cheapest first and caches verdicts per (question, pair).

    Args:
        functions: tried in order; the first that decides wins.
        cache_size: pair verdicts kept (least recently used dropped first).
    """

    UNDECIDED = "none"
    """`decided_by` of a pair no function decided (it counts as not equivalent)."""

    def __init__(self, functions: list[EquivalenceFn], *, cache_size: int = 50_000) -> None:
        self.functions = functions
        self.cache_size = cache_size
        self._cache: OrderedDict[tuple[str, str, str], tuple[bool, str]] = OrderedDict()
        self.cache_hits = 0

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.functions]

    async def decide(
        self, question: str, a: str, b: str, usage: Usage | None = None, wordings: Sequence[str] = ()
    ) -> tuple[bool, str]:
        """(whether answers `a` and `b` to `question` are equivalent, name of the function that decided).

        `wordings`: the other wordings the answers replied to. An answer restates the wording it was asked
        in ("The sea that separates the United Kingdom from Scandinavia is the North Sea." to a wording that
        says "uk"), so the functions that read text without a model take every wording's words as asked,
        and read the texts without accents ("René" is "Rene"); a model that judges (NLI, LLM) is shown the
        question itself. A cached pair reports the function that decided it first. A function whose model
        call fails (an LLM judge after its retries) decides nothing: the next function is asked, the failure
        counts in `usage.judge_failures`, and a pair it leaves undecided is not cached.
        """
        heard = heard_question(question, wordings)
        first, second = sorted((a.strip(), b.strip()))
        key = (heard, first, second)
        if key in self._cache:
            self.cache_hits += 1
            self._cache.move_to_end(key)
            return self._cache[key]
        found, failed = (False, self.UNDECIDED), False
        read = unaccented(heard), unaccented(a), unaccented(b)
        for fn in self.functions:
            entry = EQUIVALENCE_FUNCTIONS.get(fn.name) if fn.name in EQUIVALENCE_FUNCTIONS else None
            shown = (question, a, b) if entry is None or entry.calls_model else read
            try:
                decided = await fn(*shown, usage)
            except UpstreamError:  # a judge's call failed: the pair is left to the others, counted, not cached
                failed = True
                if usage is not None:
                    usage.judge_failures += 1
                continue
            if decided is not None:
                found = (decided, fn.name)
                break
        if failed and found[1] == self.UNDECIDED:
            return found
        self._cache[key] = found
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return found

    async def equivalent(
        self, question: str, a: str, b: str, usage: Usage | None = None, wordings: Sequence[str] = ()
    ) -> bool:
        """Whether answers `a` and `b` to `question` are equivalent (`wordings`: see `decide`)."""
        return (await self.decide(question, a, b, usage, wordings))[0]

    async def decide_all(
        self, question: str, a: str, others: list[str], usage: Usage | None = None, wordings: Sequence[str] = ()
    ) -> list[tuple[bool, str]]:
        """`decide` for `a` against each of `others`, concurrently."""
        return list(await asyncio.gather(*(self.decide(question, a, o, usage, wordings) for o in others)))


def heard_question(question: str, wordings: Sequence[str] = ()) -> str:
    """What the text-reading functions take as asked: the question and every other wording of it, once each."""
    return " ".join(dict.fromkeys(w.strip() for w in (question, *wordings) if w.strip()))


def build_equivalence(
    names: list[str], *, client: ModelClient, judge_model: str, nli: NLIModel | None = None
) -> Equivalence:
    """An Equivalence over the named functions, tried in the order given (see `EQUIVALENCE_FUNCTIONS`)."""
    deps = EquivalenceDeps(client=client, judge_model=judge_model, nli=nli)
    fns: list[EquivalenceFn] = []
    for name in names:
        fns.append(EQUIVALENCE_FUNCTIONS.get_entry(name).build(deps))
    return Equivalence(fns)
