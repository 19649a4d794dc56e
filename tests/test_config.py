import pytest

from selfpara.config import EMBEDDED_MODEL, build_config
from selfpara.errors import ConfigError


def test_defaults_use_embedded_model_with_cheap_equivalence():
    cfg = build_config()
    assert cfg.model == EMBEDDED_MODEL
    assert cfg.equivalence_functions == ["exact", "numeric", "contains"]
    assert cfg.resolved_paraphrase_check == "off"


def test_api_models_default_to_llm_judges():
    cfg = build_config(model="openai/gpt-4o-mini")
    assert cfg.equivalence_functions == ["exact", "numeric", "llm"] and cfg.resolved_paraphrase_check == "llm"


@pytest.mark.parametrize("values", [{"k": 0}, {"k": 21}, {"equivalence": "exact,vibes"}, {"equivalence": " , "},
                                    {"temperature": -1}, {"paraphrase_check": "maybe"}, {"equivalence": "nli"}, {"agreement": "vibes"},
                                    {"bogus": 1}])
def test_bad_values_are_one_clear_error(values):
    with pytest.raises(ConfigError, match="invalid settings"):
        build_config(**values)


def test_overrides_return_a_new_object_and_key_stays_secret():
    cfg = build_config(model="openai/x", api_key="sk-abcdef123456")
    other = cfg.with_overrides(k=2)
    assert (cfg.k, other.k) == (5, 2)
    assert other.api_key.get_secret_value() == "sk-abcdef123456"
    assert "abcdef" not in repr(cfg) and "api_key" not in cfg.public_dict()


def test_agreement_is_a_deprecated_alias_of_equivalence():
    with pytest.warns(DeprecationWarning, match="equivalence"):
        cfg = build_config(model="openai/x", agreement="exact")
    assert cfg.equivalence == "exact" and cfg.equivalence_functions == ["exact"]
    with pytest.warns(DeprecationWarning):
        assert cfg.with_overrides(agreement="exact,numeric").equivalence == "exact,numeric"
    with pytest.raises(ConfigError, match="not both"):
        build_config(agreement="exact", equivalence="numeric")
