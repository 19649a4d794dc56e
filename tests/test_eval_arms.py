"""The evaluation arms on a fake model: prompts, call budgets, seeds, parsing, and the real pipeline."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from evaluation.arms import ARMS, make_arm, parse_arm_list, parse_arm_spec, templates
from evaluation.records import ItemVariant
from selfpara.errors import ConfigError, UpstreamError
from selfpara.models.client import ModelClient
from selfpara.testing import PARAPHRASE_MARKER, FakeBackend, last_user_text
from tests.helpers.backends import GatedBackend

MODEL = "local/smollm2"
Q = ItemVariant(id=0, question="What is the capital of France?")


def make_client(responder: Any) -> tuple[ModelClient, FakeBackend]:
    fake = FakeBackend(responder)
    return ModelClient(backend=fake, retries=0, backoff_s=0.001, timeout_s=5), fake


def answers(text: str) -> Any:
    return lambda model, messages, params: text


# --- registry and specs ---------------------------------------------------------------------


def test_registry_has_the_eight_arms() -> None:
    assert set(ARMS) == {"raw", "selfpara", "sc", "single_call", "rar", "oracle", "se", "hybrid"}


def test_parse_arm_list_keeps_commas_inside_brackets() -> None:
    specs = parse_arm_list("raw, self-consistency ,selfpara[k=5;equivalence=exact,numeric]")
    assert [s.name for s in specs] == ["raw", "sc", "selfpara"]
    assert specs[2].settings == {"k": 5, "equivalence": "exact,numeric"}
    assert specs[2].label == "selfpara[k=5;equivalence=exact,numeric]"
    assert parse_arm_spec(specs[2].label) == specs[2]  # labels round-trip


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("raw,bogus", "unknown arm 'bogus'; choose from raw, selfpara, sc, single_call, rar, oracle, se, hybrid"),
        ("sc[nope=1]", "unknown setting(s) ['nope']"),
        ("sc[k]", "is not key=value"),
        ("raw,raw", "named twice"),
        ("", "no arms given"),
        ("raw[", "bad arm"),
    ],
)
def test_bad_arm_specs_are_clear_errors(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_arm_list(text)


def test_bad_arm_settings_name_the_arm() -> None:
    client, _ = make_client(answers("x"))
    with pytest.raises(ConfigError, match=r"arm 'sc\[k=0\]': k must be between 1"):
        make_arm("sc[k=0]", client, MODEL)
    with pytest.raises(ConfigError, match=r"arm 'selfpara\[k=99\]'.*k"):
        make_arm("selfpara[k=99]", client, MODEL)
    with pytest.raises(ConfigError, match="with_original must be true or false"):
        make_arm("rar[with_original=maybe]", client, MODEL)


def test_run_k_applies_unless_the_arm_sets_its_own() -> None:
    client, _ = make_client(answers("x"))
    assert make_arm("sc", client, MODEL, k=4).settings["k"] == 4
    assert make_arm("sc[k=2]", client, MODEL, k=4).settings["k"] == 2
    assert make_arm("selfpara", client, MODEL, k=4).config.k == 4


def test_a_selfpara_arm_takes_wrapconfig_settings() -> None:
    client, _ = make_client(answers("x"))
    arm = make_arm("selfpara[low_vote_share=abstain;low_vote_share_threshold=0.9]", client, MODEL)
    assert (arm.config.low_vote_share, arm.config.low_vote_share_threshold) == ("abstain", 0.9)
    with pytest.raises(ConfigError, match=re.escape("unknown setting(s) ['low_agreement']")):
        make_arm("selfpara[low_agreement=abstain]", client, MODEL)


# --- prompts ----------------------------------------------------------------------------------


def test_answer_template_is_few_shot_with_the_question_last() -> None:
    msgs = templates.answer_messages("  What is 2 plus 2? ", "math")
    assert msgs[0]["role"] == "system" and "final number" in str(msgs[0]["content"])
    assert [m["role"] for m in msgs[1:-1]] == ["user", "assistant"] * (len(msgs[1:-1]) // 2)
    assert msgs[-1] == {"role": "user", "content": "What is 2 plus 2?"}
    factual = templates.answer_messages("Q?", "factual")
    assert "short phrase" in str(factual[0]["content"])


def test_context_goes_into_the_system_message_not_the_question() -> None:
    msgs = templates.answer_messages("Who won?", "factual", context="In 2020 the Reds won.")
    assert "In 2020 the Reds won." in str(msgs[0]["content"])
    assert msgs[-1]["content"] == "Who won?"


def test_few_shot_questions_are_not_in_the_sample_set() -> None:
    sample = Path(__file__).resolve().parents[1] / "evaluation" / "data" / "sample.jsonl"
    if not sample.exists():
        pytest.skip("no sample set")
    questions = {
        v["question"].strip().lower()
        for line in sample.read_text().splitlines()
        if line.strip()
        for v in json.loads(line)["variants"]
    }
    shots = [q for kind in ("factual", "math", "truthful") for q, _ in templates.shots(kind)]
    assert not [q for q in shots if q.strip().lower() in questions]


@pytest.mark.parametrize(
    ("reply", "expected", "found"),
    [
        ("1. Which city?\n2. France's capital?\nFinal answer: Paris", "Paris", True),
        ("1. a\n2. b\nFINAL ANSWER - Paris.", "Paris.", True),
        ("1. a\nFinal answer:\nParis", "Paris", True),
        ("Final answer: Lyon\nActually\nFinal answer: **Paris**", "Paris", True),
        ("1. a\n2. b\nAnswer: Paris", "Paris", False),
        ("1. Which city is it?\n2. Name it.\nParis", "Paris", False),
        ("1. only rewordings", "1. only rewordings", False),
    ],
)
def test_parse_final_answer(reply: str, expected: str, found: bool) -> None:
    assert templates.parse_final_answer(reply) == (expected, found)


def test_parse_rephrased_strips_labels() -> None:
    assert templates.parse_rephrased('Rephrased question: "Which city is France\'s capital?"\nmore') == (
        "Which city is France's capital?"
    )
    assert templates.parse_rephrased("  \n") == ""


# --- the arms -----------------------------------------------------------------------------------


async def test_raw_is_one_greedy_call_on_the_template() -> None:
    client, fake = make_client(answers("  Paris \n"))
    out = await make_arm("raw", client, MODEL, max_tokens=12).answer(Q, "factual")
    assert out.answer == "Paris" and out.error is None
    assert out.usage.calls == 1 and len(fake.calls) == 1
    _, messages, params = fake.calls[0]
    assert messages == templates.answer_messages(Q.question, "factual")
    assert params["temperature"] == 0.0 and params["max_tokens"] == 12
    assert out.latency_s >= 0


async def test_raw_failure_is_an_error_output() -> None:
    client, _ = make_client(lambda m, msgs, p: UpstreamError("boom", status=400))
    out = await make_arm("raw", client, MODEL).answer(Q)
    assert out.answer is None and "boom" in (out.error or "")
    assert out.usage.failed_calls == 1


async def test_sc_draws_k_plus_one_samples_with_distinct_seeds_and_votes() -> None:
    by_seed: dict[int, str] = {}

    def responder(model: str, messages: list, params: dict) -> str:
        seed = params["seed"]
        by_seed[seed] = ["Lyon", "Paris", "paris.", "The answer is Paris"][len(by_seed) % 4]
        return by_seed[seed]

    client, fake = make_client(responder)
    arm = make_arm("sc", client, MODEL, k=3)
    out = await arm.answer(Q, "factual", seed=7)
    assert len(fake.calls) == 4 and out.usage.calls == 4  # k + 1 calls: selfpara's budget
    temps = {p["temperature"] for _, _, p in fake.calls}
    assert temps == {0.7}
    seeds = [p["seed"] for _, _, p in fake.calls]
    assert len(set(seeds)) == 4
    assert all(msgs == templates.answer_messages(Q.question, "factual") for _, msgs, _ in fake.calls)
    assert out.answer is not None and "paris" in out.answer.lower()
    assert out.details["samples"] == 4 and out.details["vote_share"] == pytest.approx(0.75)
    # Another run seed gives other seeds; the same run seed the same ones.
    fake.calls.clear()
    await arm.answer(Q, "factual", seed=8)
    assert not set(seeds) & {p["seed"] for _, _, p in fake.calls}


async def test_sc_is_a_plain_majority_vote_sample_0_has_no_protection() -> None:
    # Measured on Qwen: samples Melbourne, Canberra, Canberra, Sydney returned "Melbourne" while
    # sc carried selfpara's overrule margin (2), which protects a user's original wording.
    drawn = iter(["Melbourne", "Canberra", "Canberra", "Sydney"])
    client, _ = make_client(lambda model, messages, params: next(drawn))
    out = await make_arm("sc[equivalence=exact]", client, MODEL, k=3).answer(Q, "factual", seed=0)
    assert out.answer == "Canberra" and out.details["vote_share"] == pytest.approx(0.5)


async def test_sc_temperature_must_be_positive() -> None:
    client, _ = make_client(answers("x"))
    with pytest.raises(ConfigError, match="temperature"):
        make_arm("sc[temperature=0]", client, MODEL)


def pipeline_responder(answer_for: dict[str, str]) -> Any:
    def respond(model: str, messages: list, params: dict) -> str:
        text = last_user_text(messages)
        if PARAPHRASE_MARKER in text:
            return (
                "1. Which city serves as France's capital?\n2. Name the French capital city.\n"
                "3. Tell me the capital city of the French Republic."
            )
        return answer_for.get(text, "Paris")

    return respond


async def test_selfpara_arm_runs_the_real_pipeline_with_the_template_as_context() -> None:
    client, fake = make_client(pipeline_responder({"Name the French capital city.": "Lyon"}))
    arm = make_arm(
        "selfpara[adaptive=false;renamings=false;paraphrase_method=list]", client, MODEL, k=3, max_tokens=20
    )  # fixed k: every answer
    out = await arm.answer(Q, "factual")
    assert out.answer == "Paris"
    assert out.details["k_kept"] == 3 and out.usage.calls == 1 + 1 + 3
    assert out.details["vote_share"] == pytest.approx(0.75)
    assert out.details["original_won"] is True
    template = templates.answer_messages(Q.question, "factual")
    answer_calls = [msgs for _, msgs, _ in fake.calls if PARAPHRASE_MARKER not in last_user_text(msgs)]
    assert len(answer_calls) == 4
    for msgs in answer_calls:  # every wording is asked with the same few-shot context
        assert msgs[:-1] == template[:-1]
    assert {p["max_tokens"] for _, msgs, p in fake.calls if msgs in answer_calls} == {20}


async def test_selfpara_arm_takes_any_wrap_settings() -> None:
    client, fake = make_client(pipeline_responder({}))
    arm = make_arm("selfpara[k=2;equivalence=exact;adaptive=false]", client, MODEL, k=5)
    out = await arm.answer(Q)
    assert arm.config.k == 2 and arm.config.equivalence == "exact"
    assert out.usage.calls == 1 + 2  # the original and two renamings answered; no paraphrase call was needed


async def test_single_call_is_one_call_and_parses_the_final_line() -> None:
    client, fake = make_client(answers("1. Which city is France's capital?\n2. Name it.\nFinal answer: Paris"))
    out = await make_arm("single_call", client, MODEL, k=2, max_tokens=10).answer(Q)
    assert out.answer == "Paris" and out.details["final_line_found"] is True
    assert len(fake.calls) == 1
    _, messages, params = fake.calls[0]
    assert "2 different ways" in str(messages[0]["content"]) and templates.FINAL_MARKER in str(messages[0]["content"])
    assert messages[-1]["content"] == Q.question
    assert params["max_tokens"] == 10 + 2 * 40


async def test_rar_rephrases_then_answers_with_the_original_beside_it() -> None:
    def responder(model: str, messages: list, params: dict) -> str:
        text = last_user_text(messages)
        return "Which city is the capital of France?" if text.startswith("Question:") else "Paris"

    client, fake = make_client(responder)
    out = await make_arm("rar", client, MODEL).answer(Q)
    assert out.answer == "Paris" and out.usage.calls == 2 and len(fake.calls) == 2
    assert out.details["rephrased"] == "Which city is the capital of France?"
    second = last_user_text(fake.calls[1][1])
    assert Q.question in second and "Which city is the capital of France?" in second
    fake.calls.clear()
    out = await make_arm("rar[with_original=false]", client, MODEL).answer(Q)
    assert last_user_text(fake.calls[1][1]) == "Which city is the capital of France?"


async def test_describe_holds_everything_that_decides_answers() -> None:
    client, _ = make_client(answers("x"))
    d = make_arm("selfpara[k=2]", client, MODEL, max_tokens=9).describe()
    assert d["arm"] == "selfpara" and d["label"] == "selfpara[k=2]" and d["max_tokens"] == 9
    assert d["config"]["k"] == 2 and "api_key" not in d["config"]


async def test_sc_draws_its_samples_at_once_through_the_pipeline() -> None:
    fake = GatedBackend(answers("Paris"), width=4)
    client = ModelClient(backend=fake, retries=0, timeout_s=5)
    for model in ("openai/gpt-4o-mini", MODEL):
        fake.peak = 0
        out = await make_arm("sc", client, model, k=3).answer(Q)
        assert out.answer == "Paris" and out.usage.calls == 4
        assert fake.peak == 4  # 4 samples at once, as the pipeline answers its variants


async def test_sc_answers_sample_j_with_seed_j_and_votes_them_with_the_pipeline() -> None:
    def responder(model: str, messages: list, params: dict) -> str:
        assert last_user_text(messages) == Q.question  # every sample is the original wording
        return {1: "Paris", 2: "the city of Paris", 3: "Lyon", 4: "paris"}[params["seed"]]

    client, fake = make_client(responder)
    out = await make_arm("sc[equivalence=exact]", client, MODEL, k=3).answer(Q, seed=0)
    assert out.details["seeds"] == [1, 2, 3, 4] and out.details["answers"] == [
        "Paris",
        "the city of Paris",
        "Lyon",
        "paris",
    ]
    assert out.details["clusters"] == [0, 1, 2, 0] and out.answer == "Paris"
    assert out.details["vote_share"] == pytest.approx(0.5) and len(fake.calls) == 4


async def test_a_failed_call_inside_selfpara_or_sc_marks_the_sample_failed() -> None:
    def responder(model: str, messages: list, params: dict) -> str | Exception:
        if PARAPHRASE_MARKER in last_user_text(messages):
            return UpstreamError("paraphraser down", status=400)
        if params.get("seed") == 2:
            return UpstreamError("one sample lost", status=400)
        return "Paris"

    client, _ = make_client(responder)
    # No renaming reads it: the request must ask the (failing) model for its rewordings.
    unrenamed = ItemVariant(id=0, question="Which city hosts the Louvre?")
    out = await make_arm("selfpara", client, MODEL).answer(unrenamed)
    assert out.answer == "Paris" and "paraphrase_failed" in (out.error or "")  # kept, but retried on resume
    out = await make_arm("sc", client, MODEL, k=3).answer(Q, seed=0)
    assert out.answer == "Paris" and out.error == "1 of 4 samples failed"


def test_prompt_kind_maps_only_math_to_its_worked_template() -> None:
    from evaluation.arms import templates

    assert templates.prompt_kind("math", "worked") == "math-worked"
    assert templates.prompt_kind("math", "short") == "math"
    assert templates.prompt_kind("factual", "worked") == "factual"
    assert templates.base_kind("math-worked") == "math"
    with pytest.raises(ValueError, match="answer style"):
        templates.prompt_kind("math", "long")
    # the single-call and rephrase arms keep their math questions under the worked template (the
    # single-call example's answer then shows its working: the test below)
    assert (
        templates.single_call_messages("Q?", "math-worked", 2)[1] == templates.single_call_messages("Q?", "math", 2)[1]
    )
    assert templates.rephrase_messages("Q?", "math-worked") == templates.rephrase_messages("Q?", "math")


def test_the_worked_single_call_prompt_shows_working_before_the_final_line() -> None:
    """Under worked answers the single-call example works the problem after its rewordings; short ones do not."""
    from evaluation.arms import templates

    worked = templates.single_call_messages("Q?", "math-worked", 2)
    example = worked[2]["content"].splitlines()
    assert example[0].startswith("1. ") and example[1].startswith("2. ")
    assert "3 × 8 = 24" in example[2] and example[3] == "Final answer: 24"
    assert "step by step" in worked[0]["content"] and "Then solve it" in worked[0]["content"]
    short = templates.single_call_messages("Q?", "math", 2)[2]["content"].splitlines()
    assert len(short) == 3 and short[2] == "Final answer: 24"
    assert templates.single_call_messages("Q?", "factual", 2)[2]["content"].endswith("Final answer: Mary Shelley")
    reply = "1. How many?\n2. What total?\nShe has 3 × 4 = 12. The answer is 12.\nFinal answer: 12"
    assert templates.parse_final_answer(reply) == ("12", True)
