"""How much of a cached prompt a new prompt may keep, so that every prompt is computed alike.

llama.cpp's CPU kernels give a token slightly different values depending on where it
falls in an evaluation batch (rows are multiplied in groups; a lone row takes another
kernel). So that one prompt's logits never depend on the call before it (seeded samples
and near-tied greedy tokens reproduce), a prompt is always evaluated the same way: all but
its last token in chunks of `step` tokens from position 0, then the last token alone (or
beside other sequences' next tokens). A cached prefix may be kept only where a fresh
evaluation would have computed it identically: in whole chunks, or all of it when the new
prompt's body (all but its last token) is exactly the cached body.
"""

from __future__ import annotations

from collections.abc import Sequence


def reusable_prefix(cached: Sequence[int], cached_body: int, tokens: Sequence[int], step: int) -> int:
    """Tokens of `tokens` whose cached KV values may be kept.

    Args:
        cached: the tokens whose KV values the cache holds, in order from position 0.
        cached_body: how many of them were evaluated as a prompt body (in chunks of `step`
            from position 0); tokens past it were decoded one step at a time.
        tokens: the new prompt.
        step: the chunk size prompt bodies are evaluated in.
    """
    body = len(tokens) - 1
    limit = min(cached_body, len(cached), body)
    common = 0
    while common < limit and cached[common] == tokens[common]:
        common += 1
    if common == body == cached_body:
        return body
    return common // max(1, step) * max(1, step)
