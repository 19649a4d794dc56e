"""The dataset-format registry: a public benchmark's layout is one module that registers its loader.

    @register_format("mine", detect=lambda columns, rows: {"q", "a"} <= columns, files=("mine.csv",))
    def load_mine(path, *, limit=None) -> list[Item]: ...

Once its module is imported, `load_dataset("mine")` finds the file in the data folder under
one of `files`, `load_dataset("mine:PATH")` reads PATH with it, and `load_dataset(PATH)`
uses it for a file whose columns it recognises (`detect`). `evaluation.datasets.formats`
imports the built-in ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from evaluation.records import Item
from selfpara.util import Registry

FormatLoader = Callable[..., list[Item]]
"""`loader(path, *, limit=None) -> items` of one format."""

Detector = Callable[[set[str], list[Mapping[str, Any]]], bool]
"""`detect(columns, rows) -> bool`: whether a file with these column names (BOM and spaces
stripped) and first rows (up to 20) is in the format."""

LoaderT = TypeVar("LoaderT", bound=FormatLoader)


@dataclass(frozen=True)
class DatasetFormat:
    """One registered format.

    Attributes:
        name: what `load_dataset` calls it.
        load: reads a file of the format.
        detect: recognises a file of the format by its columns and first rows; None: only by name.
        files: the names its public file is distributed under, looked up in the data folder.
        hf: the Hugging Face dataset it is published as (named when its file is missing).
    """

    name: str
    load: FormatLoader
    detect: Detector | None = None
    files: tuple[str, ...] = ()
    hf: str | None = None


def format_key(name: str) -> str:
    """The registry spelling of a format name (case, `-` and `_` do not matter)."""
    return name.strip().lower().replace("-", "").replace("_", "")


FORMATS: Registry[DatasetFormat] = Registry("dataset format", normalize=format_key)
"""Dataset formats by name, in registration order (which is also the order detection tries them)."""


def register_format(
    name: str, *, detect: Detector | None = None, files: tuple[str, ...] = (), hf: str | None = None
) -> Callable[[LoaderT], LoaderT]:
    """Decorator: make the loader it decorates the format called `name` (see `DatasetFormat`
    for the other arguments). ValueError when `name` is taken."""

    def add(load: LoaderT) -> LoaderT:
        FORMATS.add(name, DatasetFormat(name=format_key(name), load=load, detect=detect, files=files, hf=hf))
        return load

    return add
