"""`kg_recognizer`: the trained entity recognizer (spaCy NER, `kg train`) as a kg component.

The recognizer is its own small pipeline (tokenizer, tok2vec, ner) loaded from a model folder,
run on the doc's text; its entities are mapped back onto the doc's tokens by character
offsets and stored in ``doc.spans["kg_model"]`` (label = kg type) for the entity merger,
which lets a rule (curated name, acronym definition, coined name) win where both speak.
Running it apart keeps the tokenizer and features it was trained with, whatever the main
pipeline is.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from spacy.language import Language
from spacy.tokens import Doc, Span

SPAN_KEY = "kg_model"
BATCH_SIZE = 64


class Recognizer:
    def __init__(self, nlp: Language, name: str, model: str) -> None:
        import spacy

        self.name = name
        self.model_dir = model
        self.model = spacy.load(Path(model))
        ner: Any = self.model.get_pipe("ner")  # an EntityRecognizer: compiled, without types in spaCy
        self.labels = tuple(ner.labels)

    def _spans(self, doc: Doc, predicted: Doc) -> list[Span]:
        spans = []
        for entity in predicted.ents:
            span = doc.char_span(entity.start_char, entity.end_char, label=entity.label_, alignment_mode="contract")
            if span is not None and len(span):
                spans.append(span)
        return spans

    def __call__(self, doc: Doc) -> Doc:
        doc.spans[SPAN_KEY] = self._spans(doc, self.model(doc.text))
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
        for doc, predicted in zip(batch, self.model.pipe((d.text for d in batch), batch_size=len(batch)), strict=True):
            doc.spans[SPAN_KEY] = self._spans(doc, predicted)
            yield doc


@Language.factory("kg_recognizer", default_config={"model": ""})
def make_recognizer(nlp: Language, name: str, model: str) -> Recognizer:
    return Recognizer(nlp, name, model)
