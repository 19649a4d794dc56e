"""The default of every setting at every entry point, from one source: WrapConfig's fields.

The library (`WrapConfig()`) and the proxy (`selfpara serve`, whose upstream settings are a
WrapConfig; its flags default to None, so the settings file or WrapConfig decides) take
WrapConfig's defaults. `selfpara ask` and `selfpara bench` differ on one setting, each
named here once with its reason; their options and `BenchConfig` read their defaults through
`default()`. docs/cli.md's "Defaults by entry point" table is made from PRESETS
(`python scripts/doc_tables.py`; tests/test_settings_source.py checks it, and that every
option of a WrapConfig setting defaults to what `default()` says).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from selfpara.config import WrapConfig

ENTRY_POINTS = ("library", "serve", "ask", "bench")
"""Where settings are given: `WrapConfig(...)` / `SelfParaphraser`, and three commands."""


@dataclass(frozen=True)
class Preset:
    """An entry point's own default for one setting.

    Attributes:
        value: the default there.
        reason: why it differs from WrapConfig's, one line for the docs' table.
    """

    value: Any
    reason: str


PRESETS: dict[str, dict[str, Preset]] = {
    "ask": {
        "max_tokens": Preset(
            128,
            "a reply read at a terminal, often from the CPU model: 128 tokens (where the recorded Qwen answers "
            "of docs/guards.md were cut) halve the longest wait per answer against 256",
        ),
    },
    "bench": {
        "max_tokens": Preset(
            32,
            "`--answers short` asks for the final answer alone, graded by match; 32 tokens hold it and bound each "
            "call's time (`--answers worked` needs about 256, `natural` about 128)",
        ),
    },
}
"""Entry point -> setting -> its own default, for the settings where it differs from WrapConfig's."""


def default(setting: str, entry: str = "library") -> Any:
    """The default of WrapConfig field `setting` at `entry` (one of ENTRY_POINTS)."""
    if entry not in ENTRY_POINTS:
        raise ValueError(f"unknown entry point {entry!r}; choose from {ENTRY_POINTS}")
    preset = PRESETS.get(entry, {}).get(setting)
    return preset.value if preset is not None else WrapConfig.model_fields[setting].default


def defaults_table() -> str:
    """The markdown table of the settings whose default differs by entry point, with the reasons."""
    lines = [
        "| setting | library, `serve` | `ask` | `bench` | why `ask` / `bench` differ |",
        "|---|---|---|---|---|",
    ]
    settings = sorted({name for presets in PRESETS.values() for name in presets})
    for name in settings:
        values = " | ".join(str(default(name, entry)) for entry in ("library", "ask", "bench"))
        reasons = "; ".join(
            f"`{entry}`: {PRESETS[entry][name].reason}" for entry in ("ask", "bench") if name in PRESETS[entry]
        )
        lines.append(f"| `{name}` | {values} | {reasons} |")
    return "\n".join(lines)
