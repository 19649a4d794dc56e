"""The proxy's key and the secrets in its logs (issue 34's probes): an empty SELFPARA_PROXY_KEY must
not turn auth off silently, a short key is refused at startup (masking a one-letter key made every
such letter `***`, so the key could be read off the log), and upstream error text in the log has
passwords, JWTs, AWS access key ids and GitHub tokens masked besides bearer tokens and URL
passwords. The CLI as users run it, and the real proxy with the fake upstream."""

from __future__ import annotations

import json
import logging

import pytest
from typer.testing import CliRunner

from selfpara.cli import app
from selfpara.server.logs import RedactingFilter, TextFormatter
from selfpara.server.settings import MIN_PROXY_KEY_CHARS
from selfpara.util.redaction import MIN_MASKED_CHARS, redact
from tests.fake_upstream import FakeUpstream
from tests.helpers.proxy import (  # fake, reset_fake: the module's fake upstream, reset before each test
    assert_openai_error,
    chat,
    fake,
    post,
    reset_fake,
    settings_for,
    start,
)

FIXTURES = (fake, reset_fake)
runner = CliRunner()
SERVE = ["serve", "--model", "openai/m", "--api-base", "http://up/v1", "--check"]


def serve_check(*args: str, **env: str | None) -> tuple[int, str]:
    result = runner.invoke(app, [*SERVE, *args], env={"SELFPARA_PROXY_KEY": None, "SELFPARA_CONFIG": None, **env})
    return result.exit_code, result.output


# ---- the proxy key ---------------------------------------------------------------------------------


def test_an_empty_proxy_key_is_an_error_unless_auth_is_turned_off() -> None:
    code, output = serve_check(SELFPARA_PROXY_KEY="")
    assert code == 1 and "SELFPARA_PROXY_KEY" in output and "--no-auth" in output
    code, output = serve_check("--no-auth", SELFPARA_PROXY_KEY="")
    assert code == 0 and json.loads(output)["auth"] is False
    code, output = serve_check()  # no variable at all: an open proxy, as before (bound to loopback by default)
    assert code == 0 and json.loads(output)["auth"] is False


def test_no_auth_and_a_key_contradict_each_other() -> None:
    code, output = serve_check("--no-auth", SELFPARA_PROXY_KEY="k" * 32)
    assert code == 1 and "--no-auth" in output and "k" * 32 not in output
    code, output = serve_check("--no-auth", "--api-key-env", "MY_KEY", MY_KEY="k" * 32)
    assert code == 1 and "--no-auth" in output


@pytest.mark.parametrize("key", ["a", "hunter2", "x" * (MIN_PROXY_KEY_CHARS - 1)])
def test_a_short_proxy_key_is_a_startup_error_that_does_not_show_it(key: str) -> None:
    code, output = serve_check(SELFPARA_PROXY_KEY=key)
    assert code == 1 and f"at least {MIN_PROXY_KEY_CHARS} characters" in output
    assert (key not in output) if len(key) > 1 else ("'a'" not in output and '"a"' not in output)
    code, output = serve_check(SELFPARA_PROXY_KEY="x" * MIN_PROXY_KEY_CHARS)
    assert code == 0 and json.loads(output)["auth"] is True


def test_masking_never_reveals_a_short_secret() -> None:
    line = "a banana and an apple, path /var/data"
    assert redact(line, ["a"]) == line  # masking it would print every other letter as ***
    assert redact("token=EMPTY sent", ["EMPTY"]) == "token=EMPTY sent"  # vLLM's dummy key: no secret
    secret = "s" * MIN_MASKED_CHARS
    assert redact(f"key {secret} leaked", [secret]) == "key *** leaked"
    record = logging.LogRecord("selfpara.server", logging.INFO, __file__, 1, "a banana", None, None)
    RedactingFilter(["a"]).filter(record)
    assert TextFormatter().format(record).endswith("a banana")


# ---- what upstream error text may bring -------------------------------------------------------------------

JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
LEAKS = {
    "password": "db password=Tr0ub4dor-and-3 rejected",
    "quoted password": 'config {"password": "Tr0ub4dor-and-3"}',
    "passwd": "login passwd: Tr0ub4dor-and-3 failed",
    "jwt": f"token {JWT} expired",
    "aws": "credentials AKIAIOSFODNN7EXAMPLE denied",
    "github": "clone with ghp_16C7e42F292c6912E7710c838347Ae178B4a failed",
    "github pat": "pushed with github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV0123",
}
SECRETS = ["Tr0ub4dor-and-3", JWT, "AKIAIOSFODNN7EXAMPLE", "ghp_16C7e42F292c6912E7710c838347Ae178B4a", "github_pat_11"]


@pytest.mark.parametrize("name", list(LEAKS))
def test_redaction_masks_passwords_tokens_and_access_keys(name: str) -> None:
    clean = redact(LEAKS[name])
    assert not any(s in clean for s in SECRETS), clean
    assert "***" in clean


def test_upstream_error_text_reaches_the_log_with_those_secrets_masked(
    fake: FakeUpstream, caplog: pytest.LogCaptureFixture
) -> None:
    with start(settings_for(fake)) as server, caplog.at_level(logging.INFO, logger="selfpara"):
        for message in LEAKS.values():
            fake.reset()
            fake.fail(500, when="answer", times=None, message=message)
            assert_openai_error(post(server, chat()), 502, "upstream_failed")
            context = message.split()[0]
            assert context in caplog.text  # the details are in the log ...
    assert not any(s in caplog.text for s in SECRETS)  # ... without the secrets
