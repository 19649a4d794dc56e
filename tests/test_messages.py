import pytest

from selfpara.errors import InputError
from selfpara.util.messages import content_text, is_text_content


def test_strings_and_none():
    assert content_text("What is 2+2?") == "What is 2+2?"
    assert content_text(None) == ""
    assert is_text_content("x") and is_text_content(None)


def test_text_parts_are_joined_with_a_newline():
    parts = [{"type": "text", "text": "Context: Paris."}, {"type": "text", "text": "Capital of France?"}]
    assert content_text(parts) == "Context: Paris.\nCapital of France?"
    assert is_text_content(parts)
    assert content_text([]) == ""


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ([{"type": "image_url", "image_url": {"url": "http://x/a.png"}}], "only text content"),
        ([{"type": "text", "text": "hi"}, {"type": "input_audio", "input_audio": {}}], "'input_audio' part"),
        (["plain string part"], "only text content"),
        ([{"type": "text", "text": 42}], "string `text`"),
        ([{"type": "text"}], "string `text`"),
        (42, "string or a list"),
        ({"type": "text", "text": "x"}, "string or a list"),
    ],
)
def test_anything_but_text_is_an_input_error(content, message):
    assert not is_text_content(content)
    with pytest.raises(InputError, match=message):
        content_text(content)


async def test_the_pipeline_refuses_non_text_questions():
    from selfpara import SelfParaphraser
    from selfpara.models.client import ModelClient
    from selfpara.testing import FakeBackend

    fake = FakeBackend()
    sp = SelfParaphraser(model="openai/fake", k=2, client=ModelClient(backend=fake))
    image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/a.png"}}]}]
    with pytest.raises(InputError, match="only text"):
        await sp.aanswer(image)
    bad_text = [{"role": "user", "content": [{"type": "text", "text": ["not", "a", "string"]}]}]
    with pytest.raises(InputError, match="string `text`"):
        await sp.aanswer(bad_text)
    assert fake.calls == []
