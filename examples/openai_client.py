"""Talk to a running `selfpara serve` proxy with the official openai client.

selfpara serve &                      # the default embedded model on port 8000; or --model openai/gpt-4o-mini
python examples/openai_client.py
"""

from openai import OpenAI

client = OpenAI(base_url="http://127.0.0.1:8000/v1", api_key="unused-unless---api-key-env")
response = client.chat.completions.create(
    model="qwen2.5-coder-1.5b",  # the default model's bare name (also: selfpara/qwen2.5-coder-1.5b)
    messages=[{"role": "user", "content": "What is the capital of Spain?"}],
    extra_body={"selfpara": {"k": 3}},
)
print(response.choices[0].message.content)
print(response.model_extra["selfpara"]["vote_share"])
