"""Corpus-wide resolution on hand-made extractions (no spaCy): merges, ids, labels, broader."""

from __future__ import annotations

from kg.concepts.resolve import CLEAR_SHARE, Ballot, TypeVote, resolve
from kg.model import GUESSED_CONFIDENCE, Definition, LocalMention, PaperExtraction
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


def scored(text: str, label: str, score: float, *, confidence: float = 1.0, start: int = 0, key: str | None = None) -> LocalMention:
    return LocalMention(start, start + len(text), text, label, key or normalize_key(text), None, "used", "test", score, 0, 100, confidence)


def test_the_type_vote_weighs_each_mention_by_its_score_and_confidence():
    papers = [PaperExtraction(p, (scored("widget net", "TASK", 0.2),)) for p in "ab"]
    papers.append(PaperExtraction("c", (scored("widget net", "METHOD", 0.9),)))  # 0.9 against 0.4
    # three guesses (confidence GUESSED_CONFIDENCE: they count once, 0.8) against one mention its context types (0.85)
    papers += [PaperExtraction(p, (scored("ZapBench", "METHOD", 0.8, confidence=GUESSED_CONFIDENCE),)) for p in "def"]
    papers.append(PaperExtraction("g", (scored("ZapBench", "DATASET", 0.85),)))
    result = resolve(papers)
    assert [c.id for c in result.concepts] == ["dataset/zapbench", "method/widget-net"]
    assert [[(x.concept, x.label) for x in e.mentions] for e in result.entities] == (
        [[("method/widget-net", "METHOD")]] * 3 + [[("dataset/zapbench", "DATASET")]] * 4
    )


def test_a_ballot_sums_evidence_and_counts_the_guesses_of_a_type_once():
    ballot = Ballot()
    for mention in (scored("X", "METHOD", 0.5), scored("X", "METHOD", 0.4, confidence=0.5), scored("X", "TASK", 0.3)):
        ballot.add(mention)
    for score in (0.7, 0.6, 0.7):
        ballot.add(scored("X", "DATASET", score, confidence=GUESSED_CONFIDENCE))
    vote = ballot.vote()
    assert vote.weights == (("METHOD", 0.7), ("DATASET", 0.7), ("TASK", 0.3))  # METHOD 0.5 + 0.4 × 0.5; DATASET its best guess
    assert (vote.winner, round(vote.share, 6), vote.clear) == ("METHOD", 0.411765, False)  # a tie: the first of ENTITY_TYPES
    assert TypeVote((("METHOD", 0.9), ("TASK", 0.3))).clear and CLEAR_SHARE == 0.6
    assert Ballot().vote().weights == ()
    unsure = Ballot()
    unsure.add(scored("X", "DATASET", 0.0, confidence=GUESSED_CONFIDENCE))  # kept with --min-score 0
    assert (unsure.vote().weights, unsure.vote().winner, unsure.vote().share) == ((("DATASET", 0.0),), "DATASET", 1.0)


def test_an_unclear_vote_leaves_each_paper_the_type_its_own_mentions_vote_for():
    """A word that is a TASK in some papers and a METHOD in others (share of the winner under
    CLEAR_SHARE) becomes one concept per type; a paper's acronym keeps its long form's type."""
    papers = [
        PaperExtraction("a", (scored("foo blarging", "TASK", 0.8), scored("foo blarging", "TASK", 0.8, start=40))),
        PaperExtraction(
            "b", (scored("foo blarging", "METHOD", 0.7), scored("FB", "METHOD", 0.7, start=20, key="foo blarging")),
            (Definition("FB", "foo blarging", "METHOD"),),
        ),
        PaperExtraction("c", (scored("foo blarging", "TASK", 0.5), scored("foo blargings", "METHOD", 0.9, start=30))),
    ]  # TASK 2.1 against METHOD 2.3: 52 % of the vote
    result = resolve(papers)
    assert [c.id for c in result.concepts] == ["method/foo-blarging", "task/foo-blarging"]
    assert [[(x.text, x.label, x.concept) for x in e.mentions] for e in result.entities] == [
        [("foo blarging", "TASK", "task/foo-blarging")] * 2,
        [("foo blarging", "METHOD", "method/foo-blarging"), ("FB", "METHOD", "method/foo-blarging")],
        [("foo blarging", "METHOD", "method/foo-blarging"), ("foo blargings", "METHOD", "method/foo-blarging")],
    ]


def test_a_curated_concept_keeps_its_type_whatever_the_vote():
    papers = [PaperExtraction(p, (LocalMention(0, 4, "BERT", "TASK", "bert", "method/bert", "used", "model", 0.9, 0, 10),)) for p in "ab"]
    result = resolve(papers)
    assert {(x.concept, x.label) for e in result.entities for x in e.mentions} == {("method/bert", "METHOD")}


def test_a_curated_acronym_stays_with_its_long_form_in_the_corpus_usual_spelling():
    """"mean squared error (MSE)" where the corpus writes "mean square error" more often: the paper's
    definition names the curated MSE all the same, so MSE and its long form stay one concept."""
    mse = "metric/mean-squared-error"
    papers = [
        PaperExtraction(
            "a",
            (
                LocalMention(0, 18, "mean squared error", "METRIC", "mean squared error", mse, "used", "vocab", 0.9, 0, 30),
                LocalMention(20, 23, "MSE", "METRIC", "mse", mse, "used", "vocab", 0.9, 0, 30),
            ),
            (Definition("MSE", "mean squared error", "METRIC"),),
        ),
        *(
            PaperExtraction(p, (m("mean square error", "METRIC"), m("MSE", "METRIC", start=20)), (Definition("MSE", "mean square error", "METRIC"),))
            for p in "bc"
        ),
    ]
    result = resolve(papers)
    assert [[x.concept for x in e.mentions] for e in result.entities][0] == [mse, mse]


def test_broader_from_size_suffix_and_curated_head():
    papers = [PaperExtraction("a", (m("xLSTM 7B", role="proposed"), m("Topic-Sensitive PageRank", start=20), m("FooNet"), m("FooNet 2", start=40)))]
    concepts = by_id(resolve(papers))
    assert concepts["method/xlstm-7b"].broader == ("method/xlstm",)  # xlstm is curated
    assert concepts["method/xlstm"].broader == ("method/recurrent-neural-network",)
    assert concepts["method/topic-sensitive-pagerank"].broader == ("method/pagerank",)
    assert concepts["method/foonet-2"].broader == ("method/foonet",)
    assert "method/neural-network" in concepts  # the whole chain up to the root


def test_a_family_of_concepts_sharing_a_modifier_gets_it_as_a_broader_concept():
    """Three concepts or more with two last words or more, named in five papers or more: "adversarial"
    ties "adversarial attack", "adversarial training" and "adversarial perturbation" together; a
    hyphenated modifier stays whole; a generic one, or too little support, makes no family."""
    names = ["adversarial attack", "Adversarial training", "adversarial perturbations", "adversarial attack", "adversarial training"]
    papers = [PaperExtraction(f"a{i}", (m(name, "TERM"),)) for i, name in enumerate(names)]
    names = ["self-supervised learning", "self-supervised pretraining", "self-supervised pretraining", "self-supervised features", "self-supervised features"]
    papers += [PaperExtraction(f"s{i}", (m(name, "TASK"),)) for i, name in enumerate(names)]
    papers += [PaperExtraction(f"n{i}", (m(f"novel {w}", "TERM"),)) for i, w in enumerate(["gizmo", "widget", "gadget", "sprocket", "doohickey"])]
    papers += [PaperExtraction(f"g{i}", (m(name, "TERM"),)) for i, name in enumerate(["gloopy sauce", "gloopy bread", "gloopy soup", "gloopy soup"])]
    concepts = by_id(resolve(papers))
    families = {cid: (c.type, c.pref_label) for cid, c in concepts.items() if cid.split("/")[1] in ("adversarial", "self-supervised", "novel", "gloopy")}
    assert families == {"method/adversarial": ("METHOD", "adversarial"), "task/self-supervised": ("TASK", "self-supervised")}
    assert [concepts[cid].broader for cid in ("method/adversarial-attack", "method/adversarial-training", "term/adversarial-perturbation")] == [
        ("method/adversarial",)
    ] * 3
    assert concepts["method/self-supervised-learning"].broader == ("method/unsupervised-learning", "task/self-supervised")  # after the curated one
    assert concepts["task/self-supervised-feature"].broader == ("task/self-supervised",)
    assert concepts["term/gloopy-soup"].broader == ()  # four papers only


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


def test_the_titles_own_mention_of_its_name_is_proposed_and_leaves_the_abstract_to_the_title_source():
    from dataclasses import replace

    from kg.concepts.title_roles import mark_title_names
    from kg.model import Paper

    abstract = "Graphs are big. ZipNet is small."
    in_title = replace(m("ZipNet"), where="title")  # extraction read the title; the abstract's ZipNet was missed
    (marked,) = mark_title_names([Paper("a", "ZipNet: Small Graphs", abstract)], [PaperExtraction("a", (in_title,))])
    assert [(x.where, x.start, x.text, x.role, x.source, x.confidence) for x in marked.mentions] == [
        ("abstract", 16, "ZipNet", "proposed", "title", GUESSED_CONFIDENCE),  # a method for want of evidence
        ("title", 0, "ZipNet", "proposed", "test", 1.0),
    ]


def test_resolved_mentions_keep_where_they_are_the_titles_first():
    from dataclasses import replace

    papers = [PaperExtraction("a", (m("FooNet", start=20), replace(m("FooNet", start=0), where="title"), m("BarNet", start=3)))]
    (entities,) = resolve(papers).entities
    assert [(x.where, x.start, x.text) for x in entities.mentions] == [("title", 0, "FooNet"), ("abstract", 3, "BarNet"), ("abstract", 20, "FooNet")]


def test_plural_folding_keeps_the_e_of_size():
    from kg.text.vocab import singularize

    assert [singularize(w) for w in ("stepsizes", "sizes", "quizzes", "classes", "patches", "queries")] == [
        "stepsize", "size", "quiz", "class", "patch", "query",
    ]
