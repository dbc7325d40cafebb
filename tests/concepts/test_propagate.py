"""Lexicon propagation: concepts found again wherever an abstract names them."""

from __future__ import annotations

import json

import pytest

from kg.concepts.propagate import LEXICON_SCORE, LEXICON_SOURCE, build_lexicon, find_matches, propagate, propagate_paper
from kg.model import Concept, Mention, Paper, PaperEntities, Resolution
from kg.text.vocab import Vocabulary

NO_VOCABULARY = Vocabulary(entries=(), by_key={}, by_surface={}, by_id={}, digest="")

CONCEPTS = (
    Concept("method/graph-neural-network", "METHOD", "graph neural network", ("GNN", "GNNs", "graph neural networks")),
    Concept("method/large-language-model", "METHOD", "large language model", ("LLM", "large language models")),
    Concept("method/dynamic-programming", "METHOD", "dynamic programming", ("DP",)),
    Concept("method/convex-optimization", "METHOD", "convex optimization"),
    Concept("method/shot-algorithm", "METHOD", "shot algorithm"),
    Concept("task/knowledge-distillation", "TASK", "knowledge distillation"),
    Concept("method/pagerank", "METHOD", "PageRank"),
)


def lexicon(concepts=CONCEPTS, vocabulary=NO_VOCABULARY):
    return build_lexicon(concepts, vocabulary=vocabulary)


def found(text: str, **options) -> list[tuple[str, str]]:
    return [(text[m.start : m.end], m.concept) for m in find_matches(text, lexicon(), **options)]


def test_variants_of_case_plural_and_hyphen_match():
    text = "Graph Neural Networks and graph-neural-network layers; Large Language Models distil (knowledge distillation)."
    assert found(text) == [
        ("Graph Neural Networks", "method/graph-neural-network"),
        ("graph-neural-network", "method/graph-neural-network"),
        ("Large Language Models", "method/large-language-model"),
        ("knowledge distillation", "task/knowledge-distillation"),
    ]


def test_acronyms_and_camel_case_names_match_only_in_their_case():
    text = "PageRank, pagerank, Pagerank; the gnn and the llm."
    assert found(text) == [("PageRank", "method/pagerank")]


def test_words_inside_hyphenated_compounds_are_not_matched():
    text = "A one-shot algorithm for non-convex optimization, then convex optimization-free and convex optimization-based ones."
    assert found(text) == [("convex optimization", "method/convex-optimization")]


def test_masked_markup_hides_nothing_after_a_hyphen():
    text = "the $k$-graph neural network property; a \\emph{graph neural network}"
    assert [(m.start, m.concept) for m in find_matches(text, lexicon())] == [(text.index("graph neural network}"), "method/graph-neural-network")]


def test_existing_mentions_are_never_overlapped_and_longest_match_wins():
    text = "graph neural network graph neural network"
    assert found(text, taken=[(6, 12)]) == [("graph neural network", "method/graph-neural-network")]
    assert [(m.start, m.end) for m in find_matches(text, lexicon(), taken=[(6, 12)])] == [(21, 41)]


def test_sentence_punctuation_breaks_a_name():
    assert found("We use a graph. Neural network methods") == []
    assert found("a large language, model") == []


def test_acronyms_not_curated_are_found_only_where_the_paper_has_the_concept():
    text = "We solve it with DP and GNNs."
    assert found(text) == []
    assert found(text, linked={"method/dynamic-programming"}) == [("DP", "method/dynamic-programming")]


def test_curated_aliases_are_trusted_everywhere():
    from kg.text.vocab import VocabEntry

    entry = VocabEntry("method/graph-neural-network", "METHOD", "graph neural network", ("GNN",), ())
    vocabulary = Vocabulary(entries=(entry,), by_key={}, by_surface={}, by_id={entry.id: entry}, digest="")
    lex = build_lexicon(CONCEPTS, vocabulary=vocabulary)
    assert [m.concept for m in find_matches("GNNs help.", lex)] == ["method/graph-neural-network"]
    assert "GNN" not in lex.guarded and "DP" in lex.guarded


def test_a_papers_own_acronym_wins():
    text = "DP again"
    matches = find_matches(text, lexicon(), acronyms={"DP": "method/differential-privacy"})
    assert [(m.start, m.end, m.concept) for m in matches] == [(0, 2, "method/differential-privacy")]


def test_lexicon_leaves_out_generic_short_single_word_and_ambiguous_labels():
    concepts = (
        Concept("method/state-of-the-art", "METHOD", "state-of-the-art"),
        Concept("task/specific-task", "TASK", "specific task"),
        Concept("method/the-model", "METHOD", "the model"),
        Concept("method/transformer", "METHOD", "transformer"),
        Concept("method/abc", "METHOD", "abc def"),
        Concept("method/mae", "METHOD", "masked autoencoder", ("MAE",)),
        Concept("metric/mae", "METRIC", "mean absolute error", ("MAE",)),
        Concept("method/lda", "METHOD", "latent Dirichlet allocation", ("LDA", "linear discriminant analysis", "latent dirichlet allocations")),
        Concept("method/3dcnn", "METHOD", "3D CNN", ("3D",)),
        Concept("method/is", "METRIC", "inception score", ("IS",)),
    )
    lex = build_lexicon(concepts, vocabulary=NO_VOCABULARY)
    assert sorted(lex.phrases) == ["abc def", "inception score", "latent dirichlet allocation", "masked autoencoder", "mean absolute error"]
    assert sorted(lex.exact) == ["3D CNN", "LDA"]  # MAE names two concepts; "3D" has one letter; "IS" is a word


def test_propagate_adds_used_lexicon_mentions_with_spans_and_keeps_the_rest():
    abstract = "We distil a large language model. Large language models (LLMs) are big! So is knowledge distillation."
    paper = Paper(id="p1", title="T", abstract=abstract)
    record = PaperEntities("p1", (Mention(12, 32, "large language model", "METHOD", "method/large-language-model", "proposed", "vocab", 0.9, 0, 33),))
    result = propagate([paper], Resolution((record,), CONCEPTS), lexicon=lexicon())
    assert result.concepts == CONCEPTS
    (entities,) = result.entities
    rows = [(m.text, m.concept, m.role, m.source, m.score, abstract[m.sent_start : m.sent_end]) for m in entities.mentions]
    assert rows == [
        ("large language model", "method/large-language-model", "proposed", "vocab", 0.9, "We distil a large language model."),
        ("Large language models", "method/large-language-model", "used", LEXICON_SOURCE, LEXICON_SCORE, "Large language models (LLMs) are big!"),
        ("LLMs", "method/large-language-model", "used", LEXICON_SOURCE, LEXICON_SCORE, "Large language models (LLMs) are big!"),
        ("knowledge distillation", "task/knowledge-distillation", "used", LEXICON_SOURCE, LEXICON_SCORE, "So is knowledge distillation."),
    ]
    assert all(abstract[m.start : m.end] == m.text for m in entities.mentions)


def test_a_title_that_extraction_reads_is_looked_up_too():
    """Concepts are found again in the title, each part apart (a title mention's span never
    blocks the abstract's); a title kg derived from the abstract is not read."""
    abstract = "We study graph neural networks."
    title = "Large Language Models Meet Graph Neural Networks"
    record = PaperEntities("p", (Mention(9, 30, "graph neural networks", "METHOD", "method/graph-neural-network", "used", "vocab", 0.9, 0, 31),))
    (entities,) = propagate([Paper(id="p", title=title, abstract=abstract)], Resolution((record,), CONCEPTS), lexicon=lexicon()).entities
    rows = [(m.where, m.start, m.end, m.text, m.source, m.sent_start, m.sent_end) for m in entities.mentions]
    assert rows == [
        ("title", 0, 21, "Large Language Models", LEXICON_SOURCE, 0, 48),
        ("title", 27, 48, "Graph Neural Networks", LEXICON_SOURCE, 0, 48),
        ("abstract", 9, 30, "graph neural networks", "vocab", 0, 31),
    ]
    derived = Paper(id="p", title=title, abstract=abstract, title_derived=True)
    assert propagate([derived], Resolution((record,), CONCEPTS), lexicon=lexicon()).entities == (record,)


def test_a_known_sentence_span_is_reused():
    abstract = "Intro e.g. graph neural networks matter. End."
    record = PaperEntities("p", (Mention(0, 5, "Intro", "METHOD", "method/x", "used", "vocab", 0.9, 0, 40),))
    (entities,) = propagate([Paper(id="p", title="T", abstract=abstract)], Resolution((record,), CONCEPTS), lexicon=lexicon()).entities
    added = [m for m in entities.mentions if m.source == LEXICON_SOURCE]
    assert [(m.text, m.sent_start, m.sent_end) for m in added] == [("graph neural networks", 0, 40)]


def test_nothing_found_returns_the_same_record_and_mismatched_inputs_are_an_error():
    record = PaperEntities("p", ())
    paper = Paper(id="p", title="T", abstract="Nothing to see here.")
    assert propagate_paper(paper, record, lexicon(), types={}) is record
    with pytest.raises(ValueError, match="2 papers but 1 entity records"):
        propagate([paper, paper], Resolution((record,), CONCEPTS), lexicon=lexicon())


def test_deterministic():
    abstract = "GNNs and graph neural networks, DP and dynamic programming, convex optimization."
    paper = Paper(id="p", title="T", abstract=abstract)
    resolution = Resolution((PaperEntities("p", ()),), CONCEPTS)
    first = propagate([paper], resolution, lexicon=lexicon())
    second = propagate([paper], resolution, lexicon=build_lexicon(tuple(reversed(CONCEPTS)), vocabulary=NO_VOCABULARY))
    assert first == second


def test_seed_build_has_valid_lexicon_mentions(seeds_out):
    """A lexicon mention is scored as its concept's extracted mentions are on average (calibrated scores)."""
    papers = {p["id"]: p for p in map(json.loads, (seeds_out / "papers.jsonl").read_text().splitlines())}
    records = [json.loads(line) for line in (seeds_out / "entities.jsonl").read_text().splitlines()]
    extracted: dict[str, list[float]] = {}
    for record in records:
        for m in record["entities"]:
            if m["source"] != LEXICON_SOURCE:
                extracted.setdefault(m["concept"], []).append(m["score"])
    lexicon_mentions = 0
    for record in records:
        abstract = papers[record["id"]]["abstract"]
        for m in record["entities"]:
            assert abstract[m["start"] : m["end"]] == m["text"]
            if m["source"] == LEXICON_SOURCE:
                lexicon_mentions += 1
                scores = extracted[m["concept"]]
                assert (m["role"], m["score"]) == ("used", round(sum(scores) / len(scores), 4))
                others = [o for o in record["entities"] if o is not m]
                assert not any(o["start"] < m["end"] and m["start"] < o["end"] for o in others), m
    assert lexicon_mentions > 0


def test_kg_extract_reports_the_same_mentions_as_kg_build(seeds, seeds_build, capsys):
    from kg.cli import main

    assert seeds_build.summary.cached == 0  # the build ran spaCy on every paper, nothing came from a cache
    assert main(["extract", str(seeds)]) == 0
    extracted = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    built = [json.loads(line) for line in (seeds_build.out / "entities.jsonl").read_text().splitlines()]
    assert extracted == built
    assert any(e["source"] == LEXICON_SOURCE for record in extracted for e in record["entities"])
