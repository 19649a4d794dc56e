"""NLI backend: any local sequence-classification model directory with entailment/neutral/contradiction labels."""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import weakref
from pathlib import Path

from pydantic import BaseModel

from selfpara.errors import ConfigError
from selfpara.util.extras import requires_extra

log = logging.getLogger(__name__)


class NLIProbs(BaseModel):
    """Probabilities that a premise entails, is neutral to, or contradicts a hypothesis."""

    entailment: float
    neutral: float
    contradiction: float


class NLIModel:
    """A local NLI classifier (e.g. an MNLI DeBERTa/RoBERTa directory), batched, CPU by default.

    Args:
        path: directory holding config.json, weights and tokenizer files.
        batch_size: premise/hypothesis pairs per forward pass.
    """

    def __init__(self, path: str | Path, *, batch_size: int = 16) -> None:
        directory = Path(path).expanduser()
        if not (directory / "config.json").is_file():
            raise ConfigError(f"NLI model path {str(directory)!r} is not a model directory (no config.json)")
        with requires_extra("nli", "the NLI model"):
            import torch  # noqa: F401  (transformers runs the model on it; missing, it fails late and obscurely)
            from transformers import AutoModelForSequenceClassification, AutoTokenizer

        try:
            self.tokenizer = AutoTokenizer.from_pretrained(directory, local_files_only=True)
            self.model = AutoModelForSequenceClassification.from_pretrained(directory, local_files_only=True)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot load NLI model from {str(directory)!r}: {exc}") from None
        self.model.eval()
        self.batch_size = batch_size
        self.label_index = _label_index(self.model.config.id2label, directory)
        self._lock = threading.Lock()  # one forward pass at a time; torch uses every core already
        self.forward_passes = 0
        # Pairs asked for on each event loop, waiting for its next turn (see `aprobs`).
        self._waiting: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, list[tuple[list[tuple[str, str]], asyncio.Future[list[NLIProbs]]]]
        ] = weakref.WeakKeyDictionary()
        self._batches: set[asyncio.Task[None]] = set()

    def probs(self, pairs: list[tuple[str, str]]) -> list[NLIProbs]:
        """NLI probabilities for each (premise, hypothesis) pair, in order."""
        import torch

        out: list[NLIProbs] = []
        for start in range(0, len(pairs), self.batch_size):
            chunk = pairs[start : start + self.batch_size]
            enc = self.tokenizer(
                [p for p, _ in chunk],
                [h for _, h in chunk],
                padding=True,
                truncation=True,
                max_length=512,
                return_tensors="pt",
            )
            with self._lock, torch.inference_mode():
                logits = self.model(**enc).logits
                self.forward_passes += 1
            soft = logits.softmax(-1).tolist()
            out.extend(NLIProbs(**{name: row[i] for name, i in self.label_index.items()}) for row in soft)
        return out

    async def aprobs(self, pairs: list[tuple[str, str]]) -> list[NLIProbs]:
        """`probs` in a worker thread, so the event loop keeps serving. Calls made at the same moment
        (the pairs of one clustering step, the checks of a paraphrase list, concurrent requests)
        share forward passes: they are gathered until the loop's next turn and run as one batch."""
        loop = asyncio.get_running_loop()
        waiting = self._waiting.get(loop)
        if waiting is None:
            waiting = self._waiting[loop] = []
            loop.call_soon(self._start_batch, loop)
        future: asyncio.Future[list[NLIProbs]] = loop.create_future()
        waiting.append((pairs, future))
        return await future

    def _start_batch(self, loop: asyncio.AbstractEventLoop) -> None:
        task = loop.create_task(self._run_batch(loop))
        self._batches.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(self._batches.discard)

    async def _run_batch(self, loop: asyncio.AbstractEventLoop) -> None:
        """One `probs` call over every pair gathered on `loop`, each caller given its own slice."""
        waiting = self._waiting.pop(loop, [])
        try:
            out = await asyncio.to_thread(self.probs, [pair for pairs, _ in waiting for pair in pairs])
        except Exception as exc:
            for _, future in waiting:
                if not future.done():
                    future.set_exception(exc)
            return
        start = 0
        for pairs, future in waiting:
            if not future.done():  # a caller cancelled meanwhile
                future.set_result(out[start : start + len(pairs)])
            start += len(pairs)


def _label_index(id2label: dict[int, str], directory: Path) -> dict[str, int]:
    found: dict[str, int] = {}
    for idx, label in id2label.items():
        low = str(label).lower()
        for name in ("entailment", "neutral", "contradiction"):
            if low.startswith(name[:6]):
                found[name] = int(idx)
    if len(found) != 3:
        raise ConfigError(
            f"NLI model {str(directory)!r} must label its 3 classes entailment/neutral/contradiction "
            f"(config.json id2label); it has {dict(id2label)}"
        )
    return found


@functools.lru_cache(maxsize=4)
def load_nli(path: str) -> NLIModel:
    """Load (once per process and path) the NLI model in `path`."""
    log.info("loading NLI model from %s", path)
    return NLIModel(path)
