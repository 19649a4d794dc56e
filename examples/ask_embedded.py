"""Answer one question on the embedded model (offline) and print the vote.

python examples/ask_embedded.py "What is the capital of Italy?"
"""

import sys

from selfpara import SelfParaphraser

question = sys.argv[1] if len(sys.argv) > 1 else "What is the capital of Italy?"
result = SelfParaphraser(k=3, max_tokens=48).answer(question)
for answer in result.answers:
    wording = result.variants[answer.variant].text
    print(f"[cluster {answer.cluster}] {wording!r} -> {answer.text!r}")
print(f"\nanswer: {result.answer}  (vote share {result.vote_share:.0%}, kept {result.k_kept}/{result.k_requested})")
