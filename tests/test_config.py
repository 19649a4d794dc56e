import warnings

import pytest

from selfpara.config import EMBEDDED_MODEL, build_config
from selfpara.errors import ConfigError


def test_defaults_use_embedded_model_with_cheap_equivalence():
    cfg = build_config()
    assert cfg.model == EMBEDDED_MODEL
    assert cfg.equivalence_functions == ["exact", "numeric", "contains", "distinct", "core"]
    assert cfg.resolved_paraphrase_check == "off"


def test_api_models_default_to_llm_judges():
    cfg = build_config(model="openai/gpt-4o-mini")
    assert cfg.equivalence_functions == ["exact", "numeric", "contains", "distinct", "core", "llm"]
    assert cfg.resolved_paraphrase_check == "llm"


@pytest.mark.parametrize(
    "values",
    [
        {"k": 0},
        {"k": 21},
        {"equivalence": "exact,vibes"},
        {"equivalence": " , "},
        {"temperature": -1},
        {"paraphrase_check": "maybe"},
        {"equivalence": "nli"},
        {"bogus": 1},
    ],
)
def test_bad_values_are_one_clear_error(values):
    with pytest.raises(ConfigError, match="invalid settings"):
        build_config(**values)


def test_overrides_return_a_new_object_and_key_stays_secret():
    cfg = build_config(model="openai/x", api_key="sk-abcdef123456")
    other = cfg.with_overrides(k=2)
    assert (cfg.k, other.k) == (3, 2)
    assert other.api_key.get_secret_value() == "sk-abcdef123456"
    assert "abcdef" not in repr(cfg) and "api_key" not in cfg.public_dict()


@pytest.mark.parametrize("module", ["selfpara.pipeline.request", "evaluation.runner"])
def test_a_deprecation_warning_from_the_projects_own_code_fails_the_tests(module):
    # pyproject's filterwarnings: the project's own modules may not use a deprecated name unnoticed
    with pytest.raises(DeprecationWarning, match="old"):
        warnings.warn_explicit("old name", DeprecationWarning, "x.py", 1, module=module)
    warnings.warn_explicit("old name", DeprecationWarning, "x.py", 1, module="litellm.x")  # third party: not ours


def test_validation_errors_read_as_one_line_per_problem():
    with pytest.raises(ConfigError) as info:
        build_config(k=0, equivalence="vibes")
    message = str(info.value)
    assert message.startswith("invalid settings: ")
    assert "k: Input should be greater than or equal to 1" in message
    assert "equivalence: unknown equivalence function(s) ['vibes']" in message  # no "Value error, " noise
    with pytest.raises(ConfigError, match=r"invalid settings: config: NLI equivalence .* needs nli_model"):
        build_config(equivalence="nli")  # a cross-field problem is named after the whole object


def test_config_error_can_name_fields_as_the_user_knows_them():
    from pydantic import BaseModel, ValidationError

    from selfpara.errors import config_error

    class Opts(BaseModel):
        max_items: int

    try:
        Opts(max_items="many")  # type: ignore[arg-type]
    except ValidationError as exc:
        err = config_error(exc, "bench settings", name=lambda loc: "--" + loc.replace("_", "-"))
    assert str(err).startswith("invalid bench settings: --max-items: Input should be a valid integer")


@pytest.mark.parametrize(
    "model, api_base, small",
    [
        ("local/smollm2", None, True),
        ("openai/qwen", "http://127.0.0.1:8080/v1", True),
        ("openai/qwen", "http://localhost:8080/v1", True),
        ("openai/gpt-4o", "http://localhost:8000", True),
        ("openai/gpt-4o", "http://127.0.0.1:1", True),
        ("openai/gpt-4o", "http://[::1]:8000/v1", True),
        ("openai/gpt-4o", "http://example.com", False),
        ("openai/gpt-4o", "http://0.0.0.0:8000/v1", False),  # as util/hosts: a listen address, not loopback
        ("openai/Qwen2.5-Coder-1.5B-Instruct", "https://api.example.com/v1", True),
        ("ollama/llama3.1:8b", None, True),
        ("openai/gpt-4o-mini", None, False),
        ("openai/llama-3.1-70b", "https://api.example.com/v1", False),
        ("anthropic/claude-3-5-sonnet", None, False),
    ],
)
def test_small_or_local(model, api_base, small):
    from selfpara.config import is_small_or_local

    assert is_small_or_local(model, api_base) is small


def test_judge_is_model_under_test():
    small = {"model": "openai/qwen2.5-1.5b", "api_base": "http://127.0.0.1:9/v1"}
    assert build_config(**small).judge_is_model_under_test
    assert not build_config(**small, judge_model="openai/gpt-4o").judge_is_model_under_test
    assert not build_config(**small, equivalence="exact,distinct", paraphrase_check="off").judge_is_model_under_test
    assert not build_config(model="openai/gpt-4o").judge_is_model_under_test


def test_drift_checks_setting():
    assert build_config(drift_checks="numbers, asks").drift_check_names == ["numbers", "asks"]
    assert build_config(drift_checks="off").drift_check_names == []
    with pytest.raises(ConfigError, match="unknown drift check"):
        build_config(drift_checks="numbers,vibes")


def test_adaptive_k_is_on_by_default_for_embedded_models_only() -> None:
    assert build_config().adapts  # the default embedded model
    assert build_config(model="local/smollm2").adapts
    assert not build_config(model="openai/gpt-4o-mini").adapts
    # where it would not combine, the default steps aside instead of refusing
    assert not build_config(top_up_temperature=0.7).adapts
    # a choice made is kept
    assert not build_config(adaptive=False).adapts
    assert build_config(model="openai/gpt-4o-mini", adaptive=True).adapts
