"""The extraction cache keys on a declared version, not on source files: this golden extraction
guards it. When extraction output changes, the test fails until `EXTRACTION_VERSION` is bumped
and the golden file is written anew:

    KG_UPDATE_GOLDEN=1 python -m pytest tests/extract/test_extraction_version.py tests/rdf/test_turtle_version.py

A new recognizer, statistical model, spaCy or changed word lists change the cache key by
themselves; the golden file records them, so then it only needs writing anew (no bump)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "extraction.json"
# Fixed abstracts: clean modern text, an old OCR'd one with PDF debris and a citation, markup.
ABSTRACTS = {
    "modern": (
        "We propose LoRA-Prune, a structured pruning method for large language models (LLMs) that "
        "fine-tunes low-rank adapters with a contrastive loss. On GLUE and SQuAD it keeps 98% of BERT's "
        "accuracy and F1 while running 2.1x faster on an NVIDIA A100 GPU."
    ),
    "debris": (
        "We describe an analog VLSI chip for blind separation of sources [Le Cun, Denker and Solla, 1990]. "
        "The prob(cid:173) lems of training hidden Markov models (HMMs) with the EM algorithm are "
        "discussed, and the network is tested on the TIMIT corpus for speech recognition."
    ),
    "markup": (
        "Our method $\\texttt{GD-LS}$ improves <em>gradient descent</em> with a line search; "
        "see https://example.org/code. Experiments on MNIST and CIFAR-10 report top-1 error."
    ),
}


def current(recognizer: str | None) -> dict:
    from kg.extract.papers import extract_papers
    from kg.extract.pipeline import EXTRACTION_VERSION, pipeline_version
    from kg.model import Paper

    papers = [Paper(id=name, title="", abstract=text) for name, text in ABSTRACTS.items()]
    return {
        "extraction_version": EXTRACTION_VERSION,
        "pipeline_version": pipeline_version(recognizer=recognizer),
        "papers": {x.paper_id: x.to_dict() for x in extract_papers(papers, recognizer=recognizer)},
    }


def _setups() -> dict[str, str | None]:
    from kg.model import DEFAULT_RECOGNIZER

    return {"shipped": DEFAULT_RECOGNIZER, "rules": None}


def write_golden() -> None:
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    golden = {name: current(recognizer) for name, recognizer in _setups().items()}
    GOLDEN.write_text(json.dumps(golden, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")


UPDATE = "KG_UPDATE_GOLDEN=1 python -m pytest tests/extract/test_extraction_version.py tests/rdf/test_turtle_version.py"


@pytest.mark.parametrize("setup", ["shipped", "rules"])
def test_extraction_output_changes_only_with_its_version(setup: str) -> None:
    if os.environ.get("KG_UPDATE_GOLDEN") == "1":
        write_golden()
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))[setup]
    now = current(_setups()[setup])
    if now["extraction_version"] != golden["extraction_version"] or now["pipeline_version"] != golden["pipeline_version"]:
        pytest.fail(
            f"the cache key changed ({golden['pipeline_version']} → {now['pipeline_version']}): "
            f"write the golden file anew with `{UPDATE}`"
        )
    assert now["papers"] == golden["papers"], (
        "extraction output changed under the same cache key: bump EXTRACTION_VERSION in kg's pipeline module, "
        f"then run `{UPDATE}`"
    )


def test_the_golden_abstracts_exercise_extraction() -> None:
    """The guard is not vacuous: every golden abstract yields mentions with both recognizer setups."""
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    for setup in ("shipped", "rules"):
        assert all(len(p["mentions"]) >= 3 for p in golden[setup]["papers"].values()), setup

