"""The proxy's key and the secrets in its logs (issue 34's probes): an empty SELFPARA_PROXY_KEY must
not turn auth off silently, a short key is refused at startup (masking a one-letter key made every
such letter `***`, so the key could be read off the log), and upstream error text in the log has
passwords, JWTs, AWS access key ids and GitHub tokens masked besides bearer tokens and URL
passwords. The CLI as users run it, and the real proxy with the fake upstream."""

from __future__ import annotations

import io
import json
import logging

import httpx
import pytest
from typer.testing import CliRunner

from selfpara.cli import app
from selfpara.server.logs import RedactingFilter, TextFormatter, server_log_handler
from selfpara.server.settings import MIN_PROXY_KEY_CHARS
from selfpara.server.stream_scrub import StreamScrubber
from selfpara.util.redaction import MIN_MASKED_CHARS, redact
from tests.fake_upstream import FakeUpstream
from tests.helpers.proxy import (  # fake, reset_fake: the module's fake upstream, reset before each test
    AUTH,
    CHUNK,
    UPSTREAM_KEY,
    assert_openai_error,
    chat,
    fake,
    post,
    reset_fake,
    settings_for,
    sse,
    sse_lines,
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


# ---- a key split across stream events (issue 45, item 2) ----------------------------------------------------------


def pieces(text: str, size: int = 8) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def split_key_stream(route: str) -> list[bytes]:
    """An upstream's stream whose text says "Authorization: Bearer <the server's key>" 8 characters an event."""
    said = f"the header was Authorization: Bearer {UPSTREAM_KEY} and more"
    if route == "completions":
        shell = '{"id":"c","object":"text_completion","created":1,"model":"fake","choices":[{"index":0,"text":'
        body = [shell + json.dumps(p) + ',"finish_reason":null}]}' for p in pieces(said)]
        return sse(*body, shell + '"","finish_reason":"stop"}]}', "[DONE]")
    body = [CHUNK + '{"content":' + json.dumps(p) + '},"finish_reason":null}]}' for p in pieces(said)]
    return sse(
        CHUNK + '{"role":"assistant","content":""},"finish_reason":null}]}',
        *body,
        CHUNK + '{},"finish_reason":"stop"}]}',
        "[DONE]",
    )


def streamed_text(lines: list[str]) -> str:
    text = ""
    for line in lines:
        if line.startswith("data: {"):
            for choice in json.loads(line[len("data: ") :]).get("choices") or []:
                text += choice.get("text") or (choice.get("delta") or {}).get("content") or ""
    return text


@pytest.mark.parametrize("transport", ["http", "litellm"])
@pytest.mark.parametrize("route", ["chat/completions", "completions"])
def test_a_key_split_across_stream_events_is_masked(fake: FakeUpstream, transport: str, route: str) -> None:
    """The probe: the server's key streamed 8 characters an event reached the client on both passthrough
    routes (each event was scrubbed alone, and no event held the whole key)."""
    fake.raw(split_key_stream(route), stream=True, times=None, when="completion" if route == "completions" else "any")
    body = chat(stream=True, selfpara={"enabled": False})
    if route == "completions":
        body = {"model": "openai/fake", "prompt": "Which header?", "stream": True}
    with start(settings_for(fake, upstream_transport=transport)) as server:
        r = httpx.post(f"{server.base}/v1/{route}", json=body, headers=AUTH, timeout=30)
    lines = sse_lines(r)
    assert r.status_code == 200 and lines[-1] == "data: [DONE]"
    assert streamed_text(lines) == "the header was Authorization: Bearer *** and more"
    assert not any(p in r.text for p in pieces(UPSTREAM_KEY, 12))  # not even a long piece of it


def test_held_text_is_sent_when_a_stream_ends_without_finishing() -> None:
    scrubber = StreamScrubber([UPSTREAM_KEY])
    start_of_key = {"id": "c", "choices": [{"index": 0, "delta": {"content": "ends with sk-upstr"}}]}
    assert scrubber.events(start_of_key)[0]["choices"][0]["delta"]["content"] == "ends with "
    (rest,) = scrubber.rest()
    assert rest["id"] == "c" and rest["choices"][0]["delta"]["content"] == "sk-upstr"  # no key, so sent as it was
    assert scrubber.events({"choices": [{"index": 0, "text": UPSTREAM_KEY[:20]}]})[0]["choices"][0]["text"] == ""
    done = scrubber.events({"choices": [{"index": 0, "text": UPSTREAM_KEY[20:] + "!", "finish_reason": "stop"}]})
    assert done[0]["choices"][0]["text"] == "***!"


def test_responses_deltas_are_scrubbed_across_events_and_flushed_before_done() -> None:
    scrubber = StreamScrubber([UPSTREAM_KEY])
    part = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
    sent = []
    for piece in pieces(f"key: {UPSTREAM_KEY[:-3]}"):
        sent += scrubber.events({"type": "response.output_text.delta", **part, "delta": piece})
    sent += scrubber.events({"type": "response.output_text.done", **part, "text": "key: ***"})
    assert "".join(e.get("delta", "") for e in sent) == f"key: {UPSTREAM_KEY[:-3]}"  # not the key: sent whole
    assert sent[-2]["type"] == "response.output_text.delta" and sent[-1]["type"] == "response.output_text.done"


# ---- what the fourth round found in the logs (issue 45, item 5) ---------------------------------------------------

ROUND4 = {
    "redis url, no user": ("cache redis://:RedisPass123@10.0.0.5:6379/0 down", "RedisPass123"),
    "url password with a slash": ("db postgres://admin:pa/ss99@db/prod refused", "pa/ss99"),
    "url password with an @": ("proxy https://user:p@ss99@gw.internal/v1 failed", "ss99@"),
    "escaped json": ('config {\\"password\\": \\"Hunter-2-again\\"} rejected', "Hunter-2-again"),
    "aws secret": ("env aws_secret_access_key=wJalrXUtnFEMIK7MDENGbPxRfiCY denied", "wJalrXUtnFEMI"),
    "token scheme": ("sent Authorization: Token tok0123456789abcdef upstream", "tok0123456789abcdef"),
}


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_upstream_error_text_is_masked_in_every_log_format(fake: FakeUpstream, fmt: str) -> None:
    """The probe: an upstream 500 body holding these was logged verbatim, in text and JSON logs."""
    out = io.StringIO()
    settings = settings_for(fake)
    handler = server_log_handler(fmt, settings.secrets(), out)
    logger = logging.getLogger("selfpara")
    logger.addHandler(handler)
    old_level = logger.level
    logger.setLevel(logging.DEBUG)  # debug records too: every line the handler writes is redacted
    try:
        with start(settings) as server:
            for message, _ in ROUND4.values():
                fake.reset()
                fake.fail(500, when="answer", times=None, message=message)
                assert_openai_error(post(server, chat()), 502, "upstream_failed")
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old_level)
    text = out.getvalue()
    for message, secret in ROUND4.values():
        assert message.split()[0] in text  # the details are logged ...
        assert secret not in text, secret  # ... without the secret


@pytest.mark.parametrize("name", list(ROUND4))
def test_redaction_masks_what_the_fourth_round_found(name: str) -> None:
    message, secret = ROUND4[name]
    clean = redact(message)
    assert secret not in clean and "***" in clean, clean
    assert clean.split()[0] == message.split()[0] and clean.split()[-1] == message.split()[-1]  # only the secret


def test_serve_check_masks_a_password_in_the_api_base() -> None:
    result = runner.invoke(
        app,
        ["serve", "--model", "openai/m", "--api-base", "http://svc:S3cret-Pass_99@up:8001/v1", "--check"],
        env={"SELFPARA_PROXY_KEY": None, "SELFPARA_CONFIG": None},
    )
    assert result.exit_code == 0 and "S3cret-Pass_99" not in result.output
    assert json.loads(result.output)["upstream"]["api_base"] == "http://svc:***@up:8001/v1"


@pytest.mark.parametrize(
    "key", ["k" * 24 + "\n", " " * 16, "\t" + "k" * 20, "schlüssel-für-den-proxy", "k" * 12 + " " + "k" * 12]
)
def test_a_proxy_key_no_client_can_send_is_a_startup_error(key: str) -> None:
    """The probe: a key with a trailing newline, or of 16 spaces, started "auth on" and every client got 401;
    a non-ASCII key started though no client can send it."""
    code, output = serve_check(SELFPARA_PROXY_KEY=key)
    assert code == 1 and "no client can send" in output
    assert key.strip() not in output or not key.strip()


def test_serve_takes_the_metrics_key_from_the_variable_it_names() -> None:
    code, output = serve_check("--metrics-key-env", "MK", MK="m" * 24)
    assert code == 0 and json.loads(output)["metrics_key"] is True and "m" * 24 not in output
    code, output = serve_check("--metrics-key-env", "MK", MK="m" * 24, SELFPARA_PROXY_KEY="m" * 24)
    assert code == 1 and "must differ from the proxy key" in output
    code, output = serve_check("--metrics-key-env", "MK", MK="")
    assert code == 1 and "metrics key variable MK is not set" in output
