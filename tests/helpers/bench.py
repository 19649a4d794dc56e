"""The bench tests' helpers: a small capitals dataset and a fake model that answers it."""

from __future__ import annotations

from evaluation.records import Item, ItemVariant
from selfpara.testing import PARAPHRASE_MARKER, last_user_text


def make_items(n: int = 4) -> list[Item]:
    cities = [
        ("France", "Paris"),
        ("Japan", "Tokyo"),
        ("Peru", "Lima"),
        ("Kenya", "Nairobi"),
        ("Chile", "Santiago"),
        ("Egypt", "Cairo"),
    ]
    items = []
    for i, (country, city) in enumerate(cities[:n]):
        items.append(
            Item(
                id=f"cap-{i}",
                kind="factual",
                gold=[city],
                category="capitals",
                variants=[
                    ItemVariant(id=0, question=f"What is the capital of {country}?"),
                    ItemVariant(id=1, question=f"Which city is the capital of {country}?"),
                ],
            )
        )
    return items


def responder(model: str, messages: list, params: dict) -> str | Exception:
    text = last_user_text(messages)
    if PARAPHRASE_MARKER in text:
        q = text.rsplit("Question:", 1)[-1].strip()
        return f"1. Tell me, friend: {q.lower()} eh\n2. I wonder what answers this properly"
    for country, city in [("France", "Paris"), ("Japan", "Tokyo"), ("Peru", "Lima"), ("Kenya", "Nairobi")]:
        if country in text:
            return city if (params.get("seed") or 0) % 3 else f"It is {city}."
    return "I don't know"
