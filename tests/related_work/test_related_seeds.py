"""`kg related` on the graph `kg build seeds/` makes (the 38 ICML 2025 sample abstracts).

Seed papers have derived titles and ids, so papers are named here by a phrase of their
abstract. The expected neighbours were read off the abstracts: the two papers about
retrieval-augmented generation, the two quantisation papers, the two MDP/planning papers.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import kg
from kg.cli import main
from kg.related_work import rank as rel


@pytest.fixture(scope="module")
def out(copy_seeds_out, tmp_path_factory) -> Path:
    """A copy of the seeds output: the SPARQL test below caches an Oxigraph store in it."""
    return copy_seeds_out(tmp_path_factory.mktemp("related-seeds"))


@pytest.fixture(scope="module")
def graph(seeds_graph):
    return seeds_graph


def paper_with(graph, phrase: str) -> str:
    """The id of the one seed paper whose abstract contains `phrase`."""
    found = [d["id"] for _, d in graph.nodes(data=True) if d.get("kind") == "paper" and phrase in d["abstract"]]
    assert len(found) == 1, (phrase, found)
    return found[0]


def test_rag_papers_find_each_other(graph):
    hipporag = paper_with(graph, "HippoRAG 2")
    medical = paper_with(graph, "health information online")
    top = kg.related(graph, medical, top=3)
    assert top[0].id == hipporag
    reason = top[0].reasons[0]
    assert (reason.label, reason.query_role, reason.candidate_role) == ("retrieval-augmented generation", "used", "used")
    assert medical in [r.id for r in kg.related(graph, hipporag, top=2)]


@pytest.mark.parametrize(
    ("query", "neighbour", "concept"),
    [
        ("RWKVQuant", "TetraJet", "quantization"),
        ("TetraJet", "RWKVQuant", "quantization"),
        ("Quantum Natural Policy Gradient (QNPG)", "Stochastic-Power-HOOT", "Markov decision process"),
        ("EQ-VAE", "distinguish real data", "generative model"),
    ],
)
def test_topical_neighbours(graph, query, neighbour, concept):
    results = kg.related(graph, paper_with(graph, query), top=2, signals=("concepts",))
    match = [r for r in results if r.id == paper_with(graph, neighbour)]
    assert match, [r.title for r in results]
    assert concept in [reason.label for reason in match[0].reasons]


def test_lookup_by_fragment_and_cli_json(out, graph, capsys):
    hipporag = paper_with(graph, "HippoRAG 2")
    assert main(["related", "HippoRAG", "--graph", str(out), "--json", "--top", "3"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["query"]["id"] == hipporag
    assert [r["id"] for r in data["results"]] == [r.id for r in kg.related(graph, hipporag, top=3)]


def test_index_equals_graph_on_every_seed(out, graph):
    index, source = rel.open_index(out)
    assert source == "index"  # kg build wrote a fresh related.idx
    for number, pid in enumerate(index.paper_ids):
        assert rel.rank(index, number, top=10) == kg.related(graph, pid, top=10)


def test_sparql_weighted_query_ranks_like_python(out, graph):
    from kg.sparql.engine import example_queries, query

    text = example_queries()["related_weighted"]
    plain = rel.RelatedIndex.from_graph(graph, scoring={"k": 0.0, "broader": 0.0, "b": 0.0})
    for number, pid in enumerate(plain.paper_ids):
        rows = query(out, text, backend="oxigraph", bindings={"paperId": pid}).rows
        expected = rel.rank(plain, number, top=10, signals=("concepts",))
        assert [row[1].value for row in rows] == [r.id for r in expected]
        assert [float(row[3].value) for row in rows] == pytest.approx([r.score for r in expected], rel=1e-12)
        assert [int(row[4].value) for row in rows] == [len(r.reasons) for r in expected]


def test_cli_does_not_import_spacy(out):
    code = f"import sys; from kg.cli import main; main(['related', 'HippoRAG', '--graph', {str(out)!r}]); print('spacy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines()[-1] == "False"
