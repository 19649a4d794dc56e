"""What the model's rewordings cost a remote upstream: one list call against one call per form.

For the original wordings of the built-in sample set (renamings off, so that every slot is the
model's), the prompt tokens each method sends per question, counted with the default model's own
tokenizer (no model is run: the tokenizer loads alone), and the calls. The completion is about the
same for both (k rewordings of the question's length). A provider charges per token and per call,
and a call's latency is its round trip plus its output: the forms' calls run at once, each writing
one line, where the list writes all k one after another.

    python research/paraphrase_cost.py [--k 3 5]

Prints the figures and writes research/results/paraphrase_cost.json.
"""

from __future__ import annotations

import argparse
import statistics

from _results import write

from evaluation.datasets import load_sample
from selfpara.config import build_config
from selfpara.pipeline.paraphrase.calls import form_request, list_request
from selfpara.pipeline.prompts import forms_for


def tokenizer():  # type: ignore[no-untyped-def]
    """The default model's tokenizer (llama.cpp, vocabulary only: seconds, no weights)."""
    from llama_cpp import Llama

    from selfpara.models.engines.embedded import resolve

    llm = Llama(model_path=str(resolve("local/qwen2.5-coder-1.5b").locate(None)), vocab_only=True, verbose=False)
    return lambda messages: sum(len(llm.tokenize(str(m["content"]).encode(), add_bos=False)) + 4 for m in messages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=[3, 5])
    args = parser.parse_args()
    count = tokenizer()
    questions = [item.original.question for item in load_sample()]
    figures: dict[str, object] = {"questions": len(questions)}
    for k in args.k:
        cfg = build_config(model="openai/remote", k=k, renamings=False)
        rows: dict[str, list[tuple[int, int]]] = {"list": [], "forms": []}
        for q in questions:
            rows["list"].append((1, count(list_request(q, cfg, k)[1])))
            forms = forms_for(q)[:k]
            rows["forms"].append((len(forms), sum(count(form_request(q, cfg, f)[1]) for f in forms)))
        at_k: dict[str, dict[str, float]] = {
            method: {
                "calls_per_question": round(statistics.fmean(c for c, _ in made), 2),
                "prompt_tokens_per_question": round(statistics.fmean(t for _, t in made), 1),
            }
            for method, made in rows.items()
        }
        ratio = at_k["forms"]["prompt_tokens_per_question"] / at_k["list"]["prompt_tokens_per_question"]
        figures[f"k={k}"] = {**at_k, "forms_over_list_prompt_tokens": round(ratio, 2)}
        print(f"k={k}: {figures[f'k={k}']}")
    print(f"wrote {write('paraphrase_cost', figures)}")


if __name__ == "__main__":
    main()
