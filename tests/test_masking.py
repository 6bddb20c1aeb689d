"""The secrets the agent knows, and how they are masked (`coder_agent.kit.masking`).

Each test learns values of its own (random), so what another test taught the process does not matter.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import secrets

from coder_agent.kit import masking
from coder_agent.kit.logs import mask_records


def fresh(prefix: str = "sk-") -> str:
    return prefix + secrets.token_hex(16)


def test_a_learned_key_is_masked_with_the_name_it_came_from_in_text_bytes_and_json() -> None:
    key = fresh()
    masking.learn("OPENAI_API_KEY", key)
    said = f"Incorrect API key provided: {key}."
    assert masking.mask(said) == "Incorrect API key provided: [secret OPENAI_API_KEY]."
    line = json.dumps({"error": {"message": said}}).encode()
    assert key.encode() not in masking.mask_bytes(line)
    assert json.loads(masking.mask_bytes(line))["error"]["message"] == masking.mask(said)


def test_a_key_json_escapes_is_masked_as_json_writes_it() -> None:
    key = 'quo"te\\' + secrets.token_hex(8)
    masking.learn("CODER_AGENT_API_KEY", key)
    for encoded in (json.dumps({"m": key}), json.dumps({"m": key}, ensure_ascii=False)):
        assert json.loads(masking.mask(encoded)) == {"m": "[secret CODER_AGENT_API_KEY]"}


def test_a_url_keeps_its_shape_and_loses_its_password_and_key_like_query_values() -> None:
    user, password, key = "user", "pw" + secrets.token_hex(2), "k" + secrets.token_hex(3)  # both under 8
    url = f"https://{user}:{password}@host.example/v1?key={key}&mode=fast"
    masking.learn_url("CODER_AGENT_API_BASE", url)
    shown = masking.mask(f"Could not reach the model provider at {url}/chat/completions: connection refused")
    assert password not in shown and key not in shown
    assert (
        "at https://user:[secret CODER_AGENT_API_BASE]@host.example/v1?key=[secret CODER_AGENT_API_BASE]"
        "&mode=fast/chat/completions: connection refused"
    ) in shown


def test_urls_are_read_as_urllib_reads_them() -> None:
    from urllib.parse import urlsplit

    for url in (
        "https://user:pw@host/v1?key=abc&x=1#frag",
        "http://h:1/v1",
        "https://user@host",
        "http://a:b@c?token=t",
        "git+ssh://u:p@example.com:22/repo",
        "https://host/p?q#f?x",
        "https://u:p%40x@h/",
        "https://u:p@h@x/?k=v",
    ):
        parts = urlsplit(url)
        assert masking._url_parts(url) == (parts.netloc.rpartition("@")[0], parts.query), url
    assert masking._url_parts("not a url") is None


def test_a_url_password_long_enough_is_masked_alone_too_and_as_basic_auth() -> None:
    password = secrets.token_hex(12)
    masking.learn_url("HTTPS_PROXY", f"http://me:{password}@proxy:3128")
    assert masking.mask(f"proxy said {password}") == "proxy said [secret HTTPS_PROXY]"
    basic = base64.b64encode(f"me:{password}".encode()).decode()
    assert masking.mask(f"Authorization: Basic {basic}") == "Authorization: Basic [secret HTTPS_PROXY]"


def test_short_values_are_no_secrets_and_ordinary_text_is_left_alone() -> None:
    masking.learn("CODER_AGENT_API_KEY", "ollama")
    masking.learn("OPENAI_API_KEY", "sk-test")
    text = "ollama serves sk-test models; " + "x" * 40
    assert masking.mask(text) == text
    assert masking.mask_bytes(text.encode()) == text.encode()


def test_the_environment_gives_its_credential_variables_and_the_secrets_of_its_urls() -> None:
    token, aws, proxy, model = fresh("ghp_"), fresh(""), secrets.token_hex(10), "openai/" + secrets.token_hex(8)
    path = "/home/someone/creds-" + secrets.token_hex(8) + ".json"
    masking.learn_environ(
        {
            "GITHUB_TOKEN": token,
            "AWS_SECRET_ACCESS_KEY": aws,
            "DJANGO_SECRET_KEY": aws + "x",
            "ALL_PROXY": f"socks5://u:{proxy}@proxy:1080",
            "CODER_AGENT_MODEL": model,  # a setting, not a secret
            "GOOGLE_APPLICATION_CREDENTIALS": path,  # a file's path, not the secret itself
        }
    )
    text = f"{token} {aws} {aws}x {proxy} {model} {path}"
    masked = "[secret GITHUB_TOKEN] [secret AWS_SECRET_ACCESS_KEY] [secret DJANGO_SECRET_KEY] [secret ALL_PROXY]"
    assert masking.mask(text) == f"{masked} {model} {path}"


def test_the_name_a_secret_was_first_known_by_stays_but_a_variable_names_a_models_key() -> None:
    key, other = fresh(), fresh()
    masking.learn("ANTHROPIC_API_KEY", key)
    masking.learn(masking.MODEL_KEY, key)
    masking.learn("OPENAI_API_KEY", key)
    masking.learn(masking.MODEL_KEY, other)  # a model made in code, before the settings were read
    masking.learn("CODER_AGENT_API_KEY", other)
    assert masking.mask(f"{key} {other}") == "[secret ANTHROPIC_API_KEY] [secret CODER_AGENT_API_KEY]"


def test_a_masked_stream_masks_text_and_bytes_and_is_otherwise_the_stream() -> None:
    key = fresh()
    masking.learn("CODER_AGENT_SERVE_TOKEN", key)
    raw = io.BytesIO()
    inner = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    stream = masking.masked(inner)
    print(f"token {key}", file=stream)
    stream.buffer.write(f"{key}\n".encode())
    assert raw.getvalue() == b"token [secret CODER_AGENT_SERVE_TOKEN]\n[secret CODER_AGENT_SERVE_TOKEN]\n"
    assert stream.isatty() is False and stream.encoding == "utf-8"
    assert masking.masked(stream) is stream


def test_every_log_record_is_masked_whichever_logger_makes_it_and_whichever_handler_writes_it() -> None:
    key = fresh()
    masking.learn("OPENAI_API_KEY", key)
    mask_records()
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)  # a library's own handler, as litellm puts on its loggers
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    logger = logging.getLogger("LiteLLM.secrets-test")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("model call failed (%s)", f"bad key {key}")
        try:
            raise ValueError(f"the provider said {key}")
        except ValueError:
            logger.exception("crashed")
        logger.warning("%s", "no secret here, args kept")
    finally:
        logger.removeHandler(handler)
    written = stream.getvalue()
    assert key not in written
    assert written.count("[secret OPENAI_API_KEY]") == 2  # the message's argument and the traceback
    assert "LiteLLM.secrets-test model call failed (bad key [secret OPENAI_API_KEY])" in written
