"""The lexical signal, the reasons in words, and `kg related --text/--file` (no embeddings here:
the embedded cases are in test_embed.py)."""

from __future__ import annotations

import io
import json

import pytest

import kg
from kg.cli import main
from kg.related_work import lexical, text_query
from kg.related_work import rank as rel
from kg.related_work.index import Postings, RelatedIndex


def test_terms_are_words_and_pairs_within_a_clause():
    counts = lexical.terms("Policy gradients (PG) estimate gradients. We propose the eligibility traces, and more.")
    assert counts["gradient"] == 2 and counts["policy gradient"] == 1  # plural folded
    assert counts["eligibility trace"] == 1
    assert "pg estimate" not in counts  # a bracket ends a clause
    assert "gradient propose" not in counts and "trace more" not in counts  # nor a full stop or comma
    assert not {"the", "we", "propose", "and"} & set(counts)  # stop words and an abstract's own verbs


def test_urls_are_no_words_and_overlapping_pairs_read_as_one_phrase():
    assert not {"github", "com", "github com"} & set(lexical.terms("Code: https://github.com/a/b and www.x.org/y here"))
    assert lexical.joined(["retrieval augmented", "augmented generation", "graph"]) == ["retrieval augmented generation", "graph"]
    assert lexical.joined(["augmented generation", "retrieval augmented"]) == ["retrieval augmented generation"]
    assert lexical.joined(["policy gradient", "value function"]) == ["policy gradient", "value function"]


def test_bm25_weights_follow_the_formula():
    vocabulary, rows, idfs = lexical.postings(["graph graph network", "graph", "network"])
    number = {term: i for i, term in enumerate(vocabulary)}
    assert "graph network" not in number  # a pair in one paper only can never be shared
    mean = (3 + 1 + 1) / 3
    norm = lexical.K1 * (1 - lexical.B + lexical.B * 3 / mean)
    assert dict(rows[0])[number["graph"]] == pytest.approx(2 * (lexical.K1 + 1) / (2 + norm))
    assert idfs[number["graph"]] == pytest.approx(lexical.idf(3, 2)) and lexical.idf(3, 3) > 0


@pytest.fixture(scope="module")
def seeds_index(seeds_build):
    index, source = rel.open_index(seeds_build.out)
    assert source == "index"
    return index


def test_the_lexical_score_is_the_sum_over_the_querys_terms(seeds_index):
    index = seeds_index
    query = 0
    words = index.paper_words(query)
    scores = index.lexical_scores(words)
    for candidate in range(1, len(index.paper_ids)):
        mine = dict(index.paper_terms.row(candidate))
        expected = sum(mine.get(w, 0) for w in words) / 65536
        assert scores[candidate] == pytest.approx(expected, rel=1e-9)


def test_every_result_explains_itself_with_a_specific_concept_or_words(seeds_build):
    graph = kg.load(seeds_build.out)
    index = rel.index_of(graph)
    for pid in index.paper_ids:
        for result in kg.related(graph, pid, top=5):
            assert result.words or result.specific_reasons, (pid, result.id)
            # Generic concepts come after every specific one.
            flags = [reason.generic for reason in result.reasons]
            assert flags == sorted(flags)


def small_graph(links: dict, concepts: list, abstracts: dict | None = None):
    """A graph of papers mentioning concepts: links are {paper: [(concept, role, mentions)]}."""
    from kg.graph import build_graph
    from kg.model import Mention, Paper, PaperEntities

    entities = [
        PaperEntities(pid, tuple(Mention(start=i, end=i + 1, text="x", label=c.split("/")[0].upper(), concept=c, role=role, source="vocab", score=0.9, sent_start=0, sent_end=9)
                                 for c, role, count in rows for i in range(count)))
        for pid, rows in links.items()
    ]  # fmt: skip
    papers = [Paper(id=pid, title=f"Paper {pid}", abstract=(abstracts or {}).get(pid, f"Abstract of {pid}.")) for pid in links]
    return build_graph(papers, entities, concepts)


def test_a_generic_concept_is_never_the_first_reason():
    from kg.model import Concept

    links = {
        "a": [("method/dnn", "used", 4), ("task/kan-ad", "used", 1)],
        "b": [("method/dnn", "used", 4), ("task/kan-ad", "used", 1)],
        "c": [("task/other", "used", 1)],
    }
    concepts = [
        Concept("method/dnn", "METHOD", "deep neural network"),
        Concept("task/kan-ad", "TASK", "KAN anomaly detection"),
        Concept("task/other", "TASK", "speech recognition"),
    ]
    g = small_graph(links, concepts)
    top = kg.related(g, "a", signals=("concepts",))[0]
    assert top.id == "b"
    assert [(r.label, r.generic) for r in top.reasons] == [("KAN anomaly detection", False), ("deep neural network", True)]
    assert top.reasons[1].contribution > top.reasons[0].contribution  # it adds more, yet comes second


def text_of(out, pid: str) -> str:
    paper = next(d for _, d in kg.load(out).nodes(data=True) if d.get("kind") == "paper" and d["id"] == pid)
    return f"{paper['title']}. {paper['abstract']}"


def test_kg_related_text_ranks_the_corpus_against_a_draft(seeds_build, capsys):
    out = seeds_build.out
    index, _ = rel.open_index(out)
    pid = index.paper_ids[3]
    text = text_of(out, pid)
    # A paper's own text finds the paper first, then what `kg related PAPER` finds.
    found = rel.find_related_text(out, text, top=6)
    assert found.results[0].id == pid and found.query_id == "" and found.warnings == ()
    by_paper = rel.find_related(out, pid, top=5)
    assert {r.id for r in found.results[1:]} & {r.id for r in by_paper.results}
    assert found.signals == ("concepts", "lexical")
    assert found.results[0].reasons  # concepts found by their labels in the text
    assert main(["related", "--text", text, "--graph", str(out), "-k", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("Related to the text: ")
    assert lines[1] == "  by shared concepts and shared words"
    assert lines[2].startswith("  1. ") and pid in lines[2]


def test_kg_related_file_and_stdin(seeds_build, tmp_path, capsys, monkeypatch):
    out = seeds_build.out
    index, _ = rel.open_index(out)
    text = text_of(out, index.paper_ids[5])
    draft = tmp_path / "draft.txt"
    draft.write_text(text, encoding="utf-8")
    assert main(["related", "--file", str(draft), "--graph", str(out), "--json"]) == 0
    from_file = json.loads(capsys.readouterr().out)
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(text.encode("utf-8")), encoding="utf-8"))
    assert main(["related", "--file", "-", "--graph", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == from_file
    assert from_file["query"]["id"] is None and from_file["results"][0]["id"] == index.paper_ids[5]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give a PAPER, or a text with --text or --file"),
        (["p1", "--text", "x"], "give only one of PAPER, --text"),
        (["--text", "   "], "--text is empty"),
    ],
)
def test_kg_related_needs_exactly_one_query(seeds_build, capsys, args, message):
    assert main(["related", *args, "--graph", str(seeds_build.out)]) == 2
    assert message in capsys.readouterr().err


def test_a_text_naming_nothing_of_the_corpus_finds_nothing(seeds_build, capsys):
    assert main(["related", "--text", "zzzq xxyqv", "--graph", str(seeds_build.out)]) == 0
    assert "(no paper shares a concept or a word with it)" in capsys.readouterr().out


def test_text_concepts_match_labels_and_acronyms_in_their_case(seeds_index):
    index = seeds_index
    rag = next(n for n in range(len(index.concept_ids)) if index.concept_labels[n] == "retrieval-augmented generation")
    assert rag in text_query.text_concepts(index, "We study Retrieval-Augmented Generation for question answering.")
    # A short label (an acronym) is found only in its own case: "RAG", not "a rag doll".
    assert rag in text_query.text_concepts(index, "RAG helps.") and rag not in text_query.text_concepts(index, "a rag doll")


def test_index_roundtrip_keeps_the_lexical_postings(seeds_build, tmp_path):
    graph = kg.load(seeds_build.out)
    built = RelatedIndex.from_graph(graph)
    built.save(tmp_path / "r.idx")
    loaded, _ = RelatedIndex.load(tmp_path / "r.idx")
    assert list(loaded.terms) == list(built.terms) and list(loaded.concept_keys) == list(built.concept_keys)
    for name in ("term_papers", "paper_terms"):
        for part in ("ptr", "items", "values"):
            assert list(getattr(getattr(loaded, name), part)) == list(getattr(getattr(built, name), part)), (name, part)
    assert list(loaded.key_concepts) == list(built.key_concepts)


def test_near_concepts_share_a_telling_word_of_their_labels():
    from kg.model import Concept

    links = {
        "a": [("task/mde", "used", 1), ("method/dnn", "used", 1)],
        "b": [("task/dc", "used", 1), ("method/dnn", "used", 1)],
        "c": [("task/asr", "used", 1)],
    }
    concepts = [
        Concept("task/mde", "TASK", "monocular depth estimation"),
        Concept("task/dc", "TASK", "depth completion"),
        Concept("task/asr", "TASK", "speech recognition"),
        Concept("method/dnn", "METHOD", "deep neural network"),
    ]
    abstracts = {"a": "Monocular depth estimation with a network.", "b": "Depth completion with a network.", "c": "Speech recognition."}
    g = small_graph(links, concepts, abstracts)
    top = kg.related(g, "a")[0]
    assert top.id == "b"
    # The shared concept is a reason; the near one a "≈" with the word they share.
    assert [r.concept for r in top.reasons] == ["method/dnn"]
    assert [(n.query_label, n.label, n.word) for n in top.near] == [("monocular depth estimation", "depth completion", "depth")]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"RAG \xff\xfe memory", "not UTF-8 text (byte 4)"),
        (b"RAG\x00memory", "not text (a NUL byte at character 3)"),
        (b"x" * 800_001, "is over 800,000 bytes"),
    ],
)
def test_a_file_that_is_not_a_text_is_a_usage_error(seeds_build, tmp_path, capsys, content, message):
    draft = tmp_path / "draft.bin"
    draft.write_bytes(content)
    assert main(["related", "--file", str(draft), "--graph", str(seeds_build.out)]) == 2
    assert message in capsys.readouterr().err


def test_undecodable_argv_bytes_and_control_characters_in_a_text(seeds_build, capsys):
    assert main(["related", "--text", "retrieval-augmented generation \udcff\x1b[2J memory", "--graph", str(seeds_build.out), "-k", "1"]) == 0
    head = capsys.readouterr().out.splitlines()[0]
    assert "\x1b" not in head and "\udcff" not in head and head.startswith("Related to the text: retrieval-augmented generation")


def test_an_index_made_under_other_word_rules_is_stale(seeds_build, monkeypatch):
    assert rel.open_index(seeds_build.out)[1] == "index"
    monkeypatch.setattr(rel, "LEXICAL_RULES", "other rules")
    assert rel.open_index(seeds_build.out)[1] == "graph"  # rebuilt from graph.json, not trusted


def test_signals_are_checked(seeds_build):
    graph = kg.load(seeds_build.out)
    pid = rel.index_of(graph).paper_ids[0]
    for bad, message in (("concepts", "not one string"), (["bogus"], "unknown signal 'bogus'"), ([], "no signal chosen")):
        with pytest.raises(ValueError, match=message):
            kg.related(graph, pid, signals=bad)


def test_an_acronym_inside_a_compound_is_found(seeds_index):
    index = seeds_index
    llm = [n for n in range(len(index.concept_ids)) if "LLM" in (index.concept_labels[n], )]
    rag = next(n for n in range(len(index.concept_ids)) if index.concept_labels[n] == "retrieval-augmented generation")
    assert rag in text_query.text_concepts(index, "A RAG-based pipeline.")
    assert all(n in text_query.text_concepts(index, "LLM-based agents") for n in llm)


def test_a_name_is_never_generic_for_its_words():
    from kg.related_work import explain

    class Tiny:
        paper_ids = ["a", "b"]
        concept_papers = Postings.from_rows([[(0, 4)], [(1, 4)]])  # each concept on one paper of two
        concept_labels = ["Natural Questions", "natural question"]

    assert not explain.is_generic_concept(Tiny, 0) and explain.is_generic_concept(Tiny, 1)
