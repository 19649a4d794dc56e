import contextlib
import warnings

import pytest

from selfpara.config import EMBEDDED_MODEL, build_config, rename_deprecated
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
        {"agreement": "vibes"},
        {"bogus": 1},
    ],
)
def test_bad_values_are_one_clear_error(values):
    # (not `warns(...) or nullcontext()`: a recorder is empty, so false, until entered)
    deprecated = (
        pytest.warns(DeprecationWarning, match="agreement") if "agreement" in values else contextlib.nullcontext()
    )
    with deprecated, pytest.raises(ConfigError, match="invalid settings"):
        build_config(**values)


def test_overrides_return_a_new_object_and_key_stays_secret():
    cfg = build_config(model="openai/x", api_key="sk-abcdef123456")
    other = cfg.with_overrides(k=2)
    assert (cfg.k, other.k) == (5, 2)
    assert other.api_key.get_secret_value() == "sk-abcdef123456"
    assert "abcdef" not in repr(cfg) and "api_key" not in cfg.public_dict()


def test_agreement_is_a_deprecated_alias_of_equivalence():
    with pytest.warns(DeprecationWarning, match="equivalence") as built:
        cfg = build_config(model="openai/x", agreement="exact")
    assert cfg.equivalence == "exact" and cfg.equivalence_functions == ["exact"]
    with pytest.warns(DeprecationWarning) as overridden:
        assert cfg.with_overrides(agreement="exact,numeric").equivalence == "exact,numeric"
    # blamed on the code that named the old setting (here this file), not on pydantic or selfpara.config
    assert [w.filename for w in [*built, *overridden]] == [__file__, __file__]
    with pytest.raises(ConfigError, match="not both"):
        build_config(agreement="exact", equivalence="numeric")


@pytest.mark.parametrize(
    ("old", "new", "value"),
    [
        ("low_agreement", "low_vote_share", "abstain"),
        ("low_agreement_threshold", "low_vote_share_threshold", 0.4),
        ("adaptive_agreement", "adaptive_vote_share", 0.8),
    ],
)
def test_the_old_vote_share_settings_still_work_and_warn(old, new, value):
    assert getattr(build_config(**{new: value}), new) == value  # the new name: no warning (they would fail)
    with pytest.warns(DeprecationWarning, match=f"'{old}' is deprecated; use '{new}'") as built:
        cfg = build_config(model="openai/x", **{old: value})
    assert getattr(cfg, new) == value and old not in cfg.model_dump()
    with pytest.warns(DeprecationWarning, match=f"'{old}'") as overridden:
        assert getattr(build_config().with_overrides(**{old: value}), new) == value
    assert [w.filename for w in [*built, *overridden]] == [__file__, __file__]
    with pytest.raises(ConfigError, match="not both"):  # two values for one setting: an error, no rename
        build_config(**{old: value, new: {"abstain": "off", 0.4: 0.5, 0.8: 0.9}[value]})


def test_a_recorded_config_s_old_names_are_renamed_without_a_warning():
    recorded = {"low_agreement": "abstain", "low_agreement_threshold": 0.5, "k": 3}
    renamed = rename_deprecated(recorded, warn=False)  # a warning here would fail the test
    assert renamed == {"low_vote_share": "abstain", "low_vote_share_threshold": 0.5, "k": 3}


@pytest.mark.parametrize("module", ["selfpara.request", "evaluation.runner"])
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
    assert build_config(drift_checks="numbers, negation").drift_check_names == ["numbers", "negation"]
    assert build_config(drift_checks="off").drift_check_names == []
    with pytest.raises(ConfigError, match="unknown drift check"):
        build_config(drift_checks="numbers,vibes")


def test_adaptive_k_is_on_by_default_for_embedded_models_only() -> None:
    assert build_config().adapts  # the default embedded model
    assert build_config(model="local/smollm2").adapts
    assert not build_config(model="openai/gpt-4o-mini").adapts
    # where it would not combine, the default steps aside instead of refusing
    assert not build_config(top_up_temperature=0.7).adapts
    assert not build_config(overrule_rule="evidence").adapts
    # a choice made is kept
    assert not build_config(adaptive=False).adapts
    assert build_config(model="openai/gpt-4o-mini", adaptive=True).adapts
