"""Derived titles: the proposed name with what it is, else the first clause."""

from __future__ import annotations

import pytest

from kg.ingest.titles import MAX_TITLE, derive_title, read_title, sentence_case
from kg.model import Paper


@pytest.mark.parametrize(
    ("abstract", "title"),
    [
        # NAME, a description …
        ("Codes matter. We introduce MedTok, a multimodal medical code tokenizer that uses text.", "MedTok: A multimodal medical code tokenizer"),
        # Long form (ACRONYM), found letter by letter, lower-case words included.
        ("We introduce Sentient Agent as a Judge (SAGE), an automated evaluation framework.", "SAGE: Sentient Agent as a Judge"),
        ("We propose several hyperbolic mean curvature flow-driven ACMs (HMCF-ACMs), which help.", "HMCF-ACMs: Hyperbolic mean curvature flow-driven ACMs"),
        ("To this end, we propose the **T**ruthfulness **S**eparator **V**ector (**TSV**), a steering vector.", "TSV: Truthfulness Separator Vector"),
        # The name that comes first wins; nested LaTeX markup is unwrapped.
        (
            r"We propose MidPO, a \textbf{\underline{Mi}}xture of Experts (MoE) framework for safety.",
            "MidPO: A Mixture of Experts (MoE) framework for safety",
        ),
        # A short appositive keeps going past its comma; a purpose after a participle stays.
        ("We propose Winsor-CAM, a novel, human-tunable extension of Grad-CAM that generates maps.", "Winsor-CAM: A novel, human-tunable extension of Grad-CAM"),
        ("We present S2SBench, a benchmark designed to evaluate speech models.", "S2SBench: A benchmark designed to evaluate speech models"),
        # Description before the name; a qualifier acronym ("MCTS algorithm") is not the name.
        ("In this paper, we propose a novel MCTS algorithm, Stochastic-Power-HOOT, designed for MDPs.", "Stochastic-Power-HOOT: A novel MCTS algorithm"),
        # An acronym after a preposition is not what is proposed: fall back to the first clause.
        ("Reading is hard. We propose a method for question answering (QA).", "Reading is hard"),
        # No name: the first clause, without "We study", citations dropped.
        ("We study universal properties in real-world datasets. More text.", "Universal properties in real-world datasets"),
        ("Recent theoretical studies (Kou et al., 2023; Cao et al., 2022) revealed a phase transition.", "Recent theoretical studies revealed a phase transition"),
        # A name with nothing said about it takes the abstract's first clause.
        ("Time series anomaly detection is key, allowing rapid response. We thus propose KAN-AD, replacing splines.", "KAN-AD: Time series anomaly detection is key"),
    ],
)
def test_derive_title(abstract, title):
    assert derive_title(abstract) == title


def test_long_titles_are_cut_at_a_word_with_an_ellipsis():
    title = derive_title("Word " * 60 + "end.")
    assert len(title) <= MAX_TITLE and title.endswith("Word…") and "  " not in title


def test_the_title_extraction_reads():
    """A title the corpus gives is read unless the abstract opens with it; one kg derived never is."""
    abstract = "Graph neural networks fail on long graphs. We propose FooNet."
    assert read_title(Paper(id="a", title="FooNet: Graph Neural Networks Made Long", abstract=abstract)) == "FooNet: Graph Neural Networks Made Long"
    assert read_title(Paper(id="b", title="Graph Neural Networks Fail on Long Graphs.", abstract=abstract)) is None
    assert read_title(Paper(id="c", title="FooNet: Graph neural networks", abstract=abstract, title_derived=True)) is None
    assert read_title(Paper(id="d", title="  ", abstract=abstract)) is None


@pytest.mark.parametrize(
    ("title", "sentence"),
    [
        ("X-Transfer Attacks: Towards Super Transferable Adversarial Attacks on CLIP", "X-Transfer attacks: Towards super transferable adversarial attacks on CLIP"),
        ("BERT: Pre-training of Deep Bidirectional Transformers", "BERT: Pre-training of deep bidirectional transformers"),
        ("Contrastive Language-Image Pre-Training for “Zero-Shot” Tasks", "Contrastive language-image pre-training for “zero-shot” tasks"),
        ("GPT-4 Meets HippoRAG 2 in 3D", "GPT-4 meets HippoRAG 2 in 3D"),
        ("A theory of learning from different domains", "A theory of learning from different domains"),  # already a sentence
    ],
)
def test_a_title_case_title_is_read_in_sentence_case(title, sentence):
    assert sentence_case(title) == sentence and len(sentence) == len(title)
