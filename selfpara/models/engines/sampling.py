"""Choosing the next token from a row of logits: greedy, or temperature and top-p from a seed.

The batched llama.cpp engine samples each sequence itself (llama.cpp's sampler state is
per context, not per sequence), so every request owns a `TokenSampler` with its own
random generator: a seeded request draws the same tokens from the same logits, whatever
else is decoded beside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


class TokenSampler:
    """Picks tokens for one request.

    Args:
        temperature: 0 for greedy (the most likely token); otherwise logits are divided by it.
        top_p: keep the smallest set of most likely tokens whose probability reaches this (1: all).
        seed: seed of this request's random draws; None draws from fresh entropy.
    """

    def __init__(self, temperature: float = 0.0, top_p: float = 1.0, seed: int | None = None) -> None:
        import numpy as np

        self.temperature = temperature
        self.top_p = top_p
        self._rng = np.random.default_rng(seed)

    def pick(self, logits: np.ndarray) -> tuple[int, float]:
        """The next token and its log-probability under the model's raw (untempered) distribution."""
        import numpy as np

        values = logits.astype(np.float64)
        top = values.max()
        log_z = top + np.log(np.exp(values - top).sum())
        if self.temperature <= 0:
            token = int(values.argmax())
        else:
            probs = np.exp((values - top) / self.temperature)
            probs /= probs.sum()
            token = self._draw(probs)
        return token, float(values[token] - log_z)

    def _draw(self, probs: np.ndarray) -> int:
        import numpy as np

        # One uniform draw per token, located in the cumulative distribution (of the nucleus).
        if self.top_p >= 1.0:
            cumulative = np.cumsum(probs)
            at = np.searchsorted(cumulative, self._rng.random() * cumulative[-1], side="right")
            return int(min(at, len(probs) - 1))
        order = np.argsort(-probs, kind="stable")
        cumulative = np.cumsum(probs[order])
        keep = int(np.searchsorted(cumulative, self.top_p, side="left")) + 1
        at = np.searchsorted(cumulative[:keep], self._rng.random() * cumulative[keep - 1], side="right")
        return int(order[min(int(at), keep - 1)])
