"""Arm spec strings: `name` or `name[key=value;...]`, parsed into ArmSpec (the arm's label in reports)."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from evaluation.arms.base import Arm
from evaluation.arms.registry import ARMS, resolve_arm_name
from selfpara.errors import ConfigError
from selfpara.models import ModelClient


class ArmSpec(BaseModel):
    """An arm named in a run: its registry name, its settings, and its label."""

    name: str
    settings: dict[str, Any] = Field(default_factory=dict)

    @property
    def label(self) -> str:
        if not self.settings:
            return self.name
        inner = ";".join(f"{k}={_show(v)}" for k, v in self.settings.items())
        return f"{self.name}[{inner}]"


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


_SPEC = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*(?:\[(.*)\])?\s*$", re.S)


def _value(text: str) -> Any:
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    if t.lower() in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(t)
        except ValueError:
            pass
    return t


def parse_arm_spec(spec: str) -> ArmSpec:
    """`name` or `name[key=value;key=value]` -> ArmSpec. ConfigError on bad syntax or unknown names."""
    m = _SPEC.match(spec)
    if not m:
        raise ConfigError(
            f"bad arm {spec!r}: write a name, optionally with settings, e.g. selfpara[k=5;equivalence=exact]"
        )
    name = resolve_arm_name(m.group(1))
    settings: dict[str, Any] = {}
    for part in (m.group(2) or "").split(";"):
        if not part.strip():
            continue
        if "=" not in part:
            raise ConfigError(f"bad arm {spec!r}: setting {part.strip()!r} is not key=value")
        key, value = part.split("=", 1)
        key = key.strip().replace("-", "_")
        if key in settings:
            raise ConfigError(f"bad arm {spec!r}: {key} given twice")
        settings[key] = _value(value)
    options = ARMS[name].options
    unknown = sorted(set(settings) - set(options))
    if unknown:
        raise ConfigError(
            f"arm {spec.strip()!r}: unknown setting(s) {unknown}; {name} takes: {', '.join(sorted(options)) or 'none'}"
        )
    return ArmSpec(name=name, settings=settings)


def parse_arm_list(text: str | list[str]) -> list[ArmSpec]:
    """Arm specs from `raw,sc,selfpara[k=5;equivalence=exact,numeric]` (commas inside brackets kept)."""
    parts: list[str] = []
    if isinstance(text, str):
        depth, current = 0, ""
        for ch in text:
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
            if ch == "," and depth == 0:
                parts.append(current)
                current = ""
            else:
                current += ch
        parts.append(current)
    else:
        parts = list(text)
    specs = [parse_arm_spec(p) for p in parts if p.strip()]
    if not specs:
        raise ConfigError("no arms given; choose from " + ", ".join(ARMS))
    labels = [s.label for s in specs]
    dupes = sorted({label for label in labels if labels.count(label) > 1})
    if dupes:
        raise ConfigError(f"arm(s) named twice: {', '.join(dupes)}")
    return specs


def make_arm(
    spec: ArmSpec | str,
    client: ModelClient,
    model: str,
    *,
    k: int | None = None,
    max_tokens: int = 64,
    api_base: str | None = None,
) -> Arm:
    """Build the arm `spec` names. Run-wide `k` applies to arms that take k and do not set their own."""
    if isinstance(spec, str):
        spec = parse_arm_spec(spec)
    cls = ARMS[resolve_arm_name(spec.name)]
    settings = dict(spec.settings)
    if k is not None and "k" in cls.options and not any(name in settings for name in cls.k_settings):
        settings["k"] = k
    given = [name for name in cls.k_settings if settings.get(name) is not None]
    if len(given) > 1:
        raise ConfigError(f"arm {spec.label!r}: give one of {', '.join(given)}, not both (they set the same count)")
    return cls(client, model, label=spec.label, max_tokens=max_tokens, api_base=api_base, **settings)
