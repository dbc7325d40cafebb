"""kg.results.link: claims resolved to concepts, and carried on the graph's paper nodes."""

from __future__ import annotations

import pytest

from kg.concepts.find import find_concepts
from kg.graph import build_graph, paper_key
from kg.model import Paper

PAPERS = [
    Paper(id="a", title="FooNet", abstract="We propose FooNet for image classification. FooNet reaches 81.2% top-1 accuracy on ImageNet."),
    Paper(id="b", title="Other", abstract="We study ResNet-50, which reaches 76.1% top-1 accuracy on ImageNet, and report no more."),
]


@pytest.fixture(scope="module")
def front():
    return find_concepts(PAPERS, cache_dir=None)


def test_results_name_concepts(front):
    (own,), (theirs,) = front.results
    concepts = {c.id: c for c in front.resolution.concepts}
    assert own.number == 81.2 and own.unit == "%" and own.proposed
    assert own.method == concepts[own.method_concept].pref_label  # the proposed method kg found: FooNet
    assert "FooNet" in {concepts[own.method_concept].pref_label, *concepts[own.method_concept].alt_labels}
    assert own.dataset_concept == theirs.dataset_concept  # both on the one ImageNet concept
    assert concepts[own.dataset_concept].type == "DATASET" and concepts[own.metric_concept].type == "METRIC"
    assert theirs.method == "ResNet-50" and not theirs.proposed


def test_graph_carries_results_on_papers(front):
    graph = build_graph(PAPERS, front.resolution.entities, front.resolution.concepts, results=front.results)
    (stored,) = graph.nodes[paper_key("a")]["results"]
    assert stored["value"] == "81.2" and stored["metric"] == "top-1 accuracy" and "paper_id" not in stored


def test_a_claim_links_the_abstracts_mentions_not_a_title_mention_at_the_same_offsets():
    from kg.model import Concept, LocalClaim, Mention, PaperEntities
    from kg.results.link import link_claims

    paper = Paper(id="c", title="ImageNet Done Right", abstract="ImageNet gives 81.2% top-1 accuracy.")
    claim = LocalClaim(15, 19, "81.2", "%", "absolute", None, (0, 8), None, None, True, None, 0.9, 0, 36)
    title_only = PaperEntities("c", (Mention(0, 8, "ImageNet", "DATASET", "dataset/imagenet", "used", "vocab", 0.9, 0, 19, where="title"),))
    concepts = {"dataset/imagenet": Concept("dataset/imagenet", "DATASET", "ImageNet")}
    (result,) = link_claims(paper, [claim], title_only, concepts)
    assert (result.dataset, result.dataset_concept) == ("ImageNet", None)  # the abstract's words, no mention there
    both = PaperEntities("c", (*title_only.mentions, Mention(0, 8, "ImageNet", "DATASET", "dataset/imagenet", "used", "vocab", 0.9, 0, 36)))
    (result,) = link_claims(paper, [claim], both, concepts)
    assert (result.dataset, result.dataset_concept) == ("ImageNet", "dataset/imagenet")
