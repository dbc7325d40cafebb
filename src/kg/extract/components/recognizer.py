"""`kg_recognizer`: the trained entity recognizer (`kg train`) as a kg component.

Two kinds of model folder, told apart by their meta.json:

* **transformer** (``"arch": "transformer"``, `kg train --arch transformer`): a MiniLM token classifier
  in int8 ONNX, run on ONNX Runtime with its tokenizer (`kg.extract.tagging.OnnxTagger`: no torch, one
  thread, one window per run) over the doc's text, a batch of docs at a time. Its spans carry
  ``span._.kg_confidence`` (the mean probability of their type over their tokens), and
  ``doc._.kg_model_tags`` keeps every token's type probabilities, so the entity merger can say how
  much the recognizer believes any mention, whatever found it.
* **cnn** (a spaCy pipeline with ``ner``, `kg train --arch cnn`): its own small pipeline (tokenizer,
  tok2vec, ner), run on the doc's text; no confidence.

Either way the spans are mapped back onto the doc's tokens by character offsets and stored in
``doc.spans["kg_model"]`` (label = kg type) for the entity merger, which lets a rule (curated name,
acronym definition, coined name) win where both speak. Running the model apart keeps the tokenizer
it was trained with, whatever the main pipeline is.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc, Span

SPAN_KEY = "kg_model"
BATCH_SIZE = 64
TRANSFORMER = "transformer"

if not Span.has_extension("kg_confidence"):
    Span.set_extension("kg_confidence", default=None)
if not Doc.has_extension("kg_model_tags"):
    Doc.set_extension("kg_model_tags", default=None)


def model_arch(meta: dict[str, Any]) -> str:
    """"transformer" or "cnn" (a spaCy pipeline: the folders `kg train` wrote before there were two)."""
    return TRANSFORMER if meta.get("arch") == TRANSFORMER else "cnn"


class Recognizer:
    def __init__(self, nlp: Language, name: str, model: str) -> None:
        self.name = name
        self.model_dir = model
        meta = json.loads((Path(model) / "meta.json").read_text(encoding="utf-8"))
        self.arch = model_arch(meta)
        self.tagger: Any = None
        self.model: Any = None
        if self.arch == TRANSFORMER:
            from kg.extract.tagging import OnnxTagger

            self.tagger = OnnxTagger(model)
            self.labels = self.tagger.labels
        else:
            import spacy

            self.model = spacy.load(Path(model))
            ner: Any = self.model.get_pipe("ner")  # an EntityRecognizer: compiled, without types in spaCy
            self.labels = tuple(ner.labels)

    def __call__(self, doc: Doc) -> Doc:
        for _ in self._run([doc]):
            pass
        return doc

    def pipe(self, docs: Iterable[Doc], batch_size: int = BATCH_SIZE) -> Iterator[Doc]:
        batch: list[Doc] = []
        for doc in docs:
            batch.append(doc)
            if len(batch) >= batch_size:
                yield from self._run(batch)
                batch = []
        if batch:
            yield from self._run(batch)

    def _run(self, batch: list[Doc]) -> Iterator[Doc]:
        if self.tagger is not None:
            for doc, tagged in zip(batch, self.tagger.tag([d.text for d in batch]), strict=True):
                doc._.kg_model_tags = tagged
                spans = []
                for found in tagged.spans:
                    span = _on_tokens(doc, found.start, found.end, found.label)
                    if span is not None:
                        # The tokens spaCy keeps may be fewer than the tagger's: their own confidence.
                        exact = (span.start_char, span.end_char) == (found.start, found.end)
                        span._.kg_confidence = found.confidence if exact else tagged.confidence(span.start_char, span.end_char, found.label)
                        spans.append(span)
                doc.spans[SPAN_KEY] = spans
                yield doc
            return
        for doc, predicted in zip(batch, self.model.pipe((d.text for d in batch), batch_size=len(batch)), strict=True):
            doc.spans[SPAN_KEY] = [span for e in predicted.ents if (span := _on_tokens(doc, e.start_char, e.end_char, e.label_)) is not None]
            yield doc


def _on_tokens(doc: Doc, start: int, end: int, label: str) -> Span | None:
    """The doc's tokens inside characters [start, end), None when there are none."""
    span = doc.char_span(start, end, label=label, alignment_mode="contract")
    return span if span is not None and len(span) else None


@Language.factory("kg_recognizer", default_config={"model": ""})
def make_recognizer(nlp: Language, name: str, model: str) -> Recognizer:
    return Recognizer(nlp, name, model)
