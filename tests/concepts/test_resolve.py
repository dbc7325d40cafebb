"""Corpus-wide resolution on hand-made extractions (no spaCy): merges, ids, labels, broader."""

from __future__ import annotations

from kg.concepts.resolve import resolve
from kg.model import Definition, LocalMention, PaperExtraction
from kg.text.vocab import concept_id, normalize_key


def m(
    text: str, label: str = "METHOD", *, key: str | None = None, vocab: str | None = None, role: str = "used", start: int = 0, source: str = "test"
) -> LocalMention:
    return LocalMention(start, start + len(text), text, label, key or normalize_key(text), vocab, role, source, 0.5, 0, 100)


def by_id(resolution):
    return {c.id: c for c in resolution.concepts}


def test_normalize_key_folds_case_plural_and_hyphens():
    assert normalize_key("Large Language Models") == "large language model"
    assert normalize_key("LLMs") == "llm"
    assert normalize_key("retrieval-augmented generation") == "retrieval augmented generation"
    assert normalize_key("Gaussian processes") == "gaussian process"
    assert normalize_key("text corpora") == "text corpus"
    assert normalize_key("training data") == "training data"
    assert normalize_key("statistics") == "statistics"
    assert concept_id("METHOD", "large language model") == "method/large-language-model"


def test_variants_and_acronyms_merge_into_one_curated_concept():
    papers = [
        PaperExtraction("a", (m("large language models"), m("LLMs", start=30))),
        PaperExtraction("b", (m("LLM"), m("Large Language Model", start=10))),
    ]
    result = resolve(papers)
    concepts = by_id(result)
    assert {mention.concept for e in result.entities for mention in e.mentions} == {"method/large-language-model"}
    llm = concepts["method/large-language-model"]
    assert llm.pref_label == "large language model"
    assert {"LLM", "LLMs", "large language models", "Large Language Model"} <= set(llm.alt_labels)
    assert llm.broader == ("method/language-model",)
    assert "method/language-model" in concepts  # broader concepts are records even if never mentioned


def test_acronym_learnt_from_another_papers_definition_in_either_direction():
    papers = [
        PaperExtraction("a", (m("Foo Bar Network", key="foo bar network"), m("FBN", key="foo bar network", start=17)),
                        (Definition("FBN", "Foo Bar Network", "METHOD"),)),
        PaperExtraction("b", (m("FBN"),)),  # used without a definition here
        PaperExtraction("c", (m("foo-bar networks"),)),
    ]
    result = resolve(papers)
    ids = [[x.concept for x in e.mentions] for e in result.entities]
    assert ids == [["method/foo-bar-network", "method/foo-bar-network"], ["method/foo-bar-network"], ["method/foo-bar-network"]]
    concept = by_id(result)["method/foo-bar-network"]
    assert concept.pref_label == "Foo Bar Network"
    assert concept.alt_labels == ("FBN", "foo-bar networks")


def test_type_is_the_majority_and_mentions_follow_it():
    papers = [PaperExtraction(p, (m("widget detection", "TASK"),)) for p in "abc"]
    papers.append(PaperExtraction("d", (m("widget detection", "METHOD"),)))
    result = resolve(papers)
    assert [c.id for c in result.concepts] == ["task/widget-detection"]
    assert {x.label for e in result.entities for x in e.mentions} == {"TASK"}


def test_broader_from_size_suffix_and_curated_head():
    papers = [PaperExtraction("a", (m("xLSTM 7B", role="proposed"), m("Topic-Sensitive PageRank", start=20), m("FooNet"), m("FooNet 2", start=40)))]
    concepts = by_id(resolve(papers))
    assert concepts["method/xlstm-7b"].broader == ("method/xlstm",)  # xlstm is curated
    assert concepts["method/xlstm"].broader == ("method/recurrent-neural-network",)
    assert concepts["method/topic-sensitive-pagerank"].broader == ("method/pagerank",)
    assert concepts["method/foonet-2"].broader == ("method/foonet",)
    assert "method/neural-network" in concepts  # the whole chain up to the root


def test_resolution_is_deterministic_and_sorted():
    papers = [PaperExtraction("b", (m("Zeta model"), m("alpha network"))), PaperExtraction("a", (m("BERT", vocab="method/bert"),))]
    first, second = resolve(papers), resolve(list(reversed(papers)))
    assert [c.id for c in first.concepts] == sorted(c.id for c in first.concepts)
    assert first.concepts == second.concepts
    assert [e.paper_id for e in first.entities] == ["b", "a"]  # input order kept


def test_a_papers_own_acronym_definition_beats_a_curated_acronym():
    # "AE" is curated as autoencoder, but this paper defines AEs as adversarial examples.
    own = PaperExtraction(
        "p1",
        (
            m("adversarial examples", key="adversarial example", vocab="method/autoencoder", source="acronym"),
            m("AEs", key="aes", vocab="method/autoencoder"),
        ),
        (Definition("AEs", "adversarial examples", "METHOD"),),
    )
    curated = PaperExtraction("p2", (m("AE", key="ae", vocab="method/autoencoder"),))
    resolution = resolve([own, curated])
    concepts = [[mention.concept for mention in entities.mentions] for entities in resolution.entities]
    assert concepts == [["method/adversarial-example", "method/adversarial-example"], ["method/autoencoder"]]


def _concepts_of(resolution):
    return [[mention.concept for mention in entities.mentions] for entities in resolution.entities]


def test_an_undefined_acronym_borrows_only_an_unambiguous_expansion():
    # LDS: two meanings in the corpus, so the paper that only says "LDS" borrows neither.
    papers = [
        PaperExtraction("a", (m("linear dynamical systems", source="acronym"), m("LDS", key="linear dynamical system", start=30)),
                        (Definition("LDS", "linear dynamical systems", "METHOD"),)),
        PaperExtraction("b", (m("low-density separator", source="acronym"), m("LDS", key="low density separator", start=30)),
                        (Definition("LDS", "low-density separator", "METHOD"),)),
        PaperExtraction("c", (m("LDS"),)),
    ]
    assert _concepts_of(resolve(papers)) == [
        ["method/linear-dynamical-system", "method/linear-dynamical-system"],
        ["method/low-density-separator", "method/low-density-separator"],
        ["method/lds"],
    ]


def test_spellings_of_one_long_form_are_one_expansion_and_one_concept():
    papers = [
        PaperExtraction("a", (m("graph convolutional networks", source="acronym"), m("GCN", key="graph convolutional network", start=40)),
                        (Definition("GCN", "graph convolutional networks", "METHOD"),)),
        PaperExtraction("b", (m("graph convolution network", source="acronym"), m("GCN", key="graph convolution network", start=40)),
                        (Definition("GCN", "graph convolution network", "METHOD"),)),
        PaperExtraction("c", (m("GCN"),)),
        PaperExtraction("d", (m("graph convolutional network"),)),
    ]
    resolution = resolve(papers)
    assert {cid for row in _concepts_of(resolution) for cid in row} == {"method/graph-convolutional-network"}


def test_names_that_differ_by_a_spelled_out_acronym_merge():
    # Curated: "Wasserstein GAN" (alias WGAN); GAN is curated as generative adversarial network.
    curated = [
        PaperExtraction("a", (m("Wasserstein GAN", vocab="method/wasserstein-gan"),)),
        PaperExtraction("b", (m("Wasserstein Generative Adversarial Networks"),)),
    ]
    assert _concepts_of(resolve(curated)) == [["method/wasserstein-gan"], ["method/wasserstein-gan"]]
    # Not curated: "Foo GAN" and "Foo generative adversarial network" are one concept too.
    coined = [PaperExtraction("a", (m("Foo GAN"),)), PaperExtraction("b", (m("Foo generative adversarial network"),))]
    resolution = resolve(coined)
    (cid,) = {c for row in _concepts_of(resolution) for c in row}
    concept = by_id(resolution)[cid]
    assert {"Foo GAN", "Foo generative adversarial network"} <= {concept.pref_label, *concept.alt_labels}
    # A paper's own definition of the acronym inside a name wins over the curated one.
    own = [PaperExtraction("a", (m("Foo AE"),), (Definition("AE", "adversarial example", "METHOD"),))]
    assert _concepts_of(resolve(own)) == [["method/foo-adversarial-example"]]


def test_the_name_a_title_opens_with_is_proposed():
    from kg.concepts.title_roles import mark_title_names, title_name
    from kg.model import Paper

    assert [title_name(t) for t in ("Glow: Generative Flow with Invertible 1x1 Convolutions", "HippoRAG 2: From RAG to Memory",
                                    "KAN-AD: Time Series Anomaly Detection", "Towards Robust X: a study", "Deep Learning: A Survey",
                                    "Attention Is All You Need")] == ["Glow", "HippoRAG 2", "KAN-AD", None, None, None]
    abstract = "We propose Glow, a flow. Glow is simple, and DiffNet too."
    papers = [Paper("a", "Glow: Generative Flow", abstract), Paper("b", "DiffNet: A Benchmark of Diffs", abstract)]
    found = PaperExtraction("a", (m("Glow", start=11),))
    marked = mark_title_names(papers, [found, PaperExtraction("b")])
    assert [(x.text, x.role, x.source) for x in marked[0].mentions] == [("Glow", "proposed", "test")]
    # Extraction missed DiffNet: its occurrence becomes a proposed mention of the type the title names.
    assert [(x.start, x.text, x.label, x.role, x.source) for x in marked[1].mentions] == [(45, "DiffNet", "DATASET", "proposed", "title")]
    assert abstract[45:52] == "DiffNet"


def test_plural_folding_keeps_the_e_of_size():
    from kg.text.vocab import singularize

    assert [singularize(w) for w in ("stepsizes", "sizes", "quizzes", "classes", "patches", "queries")] == [
        "stepsize", "size", "quiz", "class", "patch", "query",
    ]
