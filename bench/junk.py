"""Junk spans in kg's mentions on real abstracts, counted per class and per 1,000 mentions.

    .venv/bin/python bench/junk.py [--n 1500] [--model MODEL/|none] [--show 5] [--files NAME ...]

Abstracts: the first N/k with an abstract of each of k corpus files under ../shared/corpus (by default
the papercopilot files ml_core, ml_other and nlp_ai), reserved papers (sha1 of the id starting with
"f") left out. The mentions are those `kg extract` reports (extraction, resolve,
propagation). A mention is junk when its text (``abstract[start:end]``) has

* ``latex``: a LaTeX command, brace or ``$``;
* ``markdown``: emphasis markers (``**``, ``__``, a ``*`` touching a letter);
* ``citation``: a citation key (devlin2018bert);
* ``inside-word``: a start or end inside a word (a letter or digit right outside the span);
* ``hyphen-edge``: a first or last character that is a hyphen;
* ``determiner``: a first word that is an article or demonstrative;
* ``state-of-the-art``: a start on "art" of "state of the art";
* ``bracket``: an unbalanced bracket ("vision language models(LVLMs", "CNN)-based models");
* ``number-glue``: a trailing number that belongs to what follows ("BNN 7 times faster").

and, for the concept a mention resolves to, when its preferred label has

* ``label-edge``: a first character that is no letter or digit, or a last one that is a hyphen ("-art").

A mention in a title (``where``) is checked against the title's text.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
FILES = ("papercopilot_ml_core.jsonl", "papercopilot_ml_other.jsonl", "papercopilot_nlp_ai.jsonl")


def _unbalanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if depth < 0:
            return True
    return depth != 0


CHECKS = {
    "latex": lambda text, before, after: bool(re.search(r"\\[A-Za-z]|[{}$]", text)),
    "markdown": lambda text, before, after: bool(re.search(r"\*\*|__|\*(?=\w)|(?<=\w)\*", text)),
    "citation": lambda text, before, after: bool(re.search(r"\b[a-z]{2,}(?:19|20)\d\d[a-z]+\b", text)),
    "inside-word": lambda text, before, after: bool(before[-1:].isalnum() or after[:1].isalnum()),
    "hyphen-edge": lambda text, before, after: text[:1] in "-\u2010\u2011\u2013" or text[-1:] in "-\u2010\u2011\u2013",
    "determiner": lambda text, before, after: text.split(" ", 1)[0].lower() in {"a", "an", "the", "this", "these", "those", "that"},
    "state-of-the-art": lambda text, before, after: text.lower().startswith("art ") and before.lower().rstrip().endswith("of the"),
    "bracket": lambda text, before, after: _unbalanced(text),
    "number-glue": lambda text, before, after: bool(re.search(r"\s\d+(?:\.\d+)?$", text) and re.match(r"\s*(?:times|x\b|×|%|-?fold|faster|slower|fewer|more|less)", after)),
}


def reserved(paper_id: str) -> bool:
    return hashlib.sha1(paper_id.encode()).hexdigest().startswith("f")


LABEL_CHECKS = {
    "label-edge": lambda label: not label[:1].isalnum() or label[-1:] in "-\u2010\u2011\u2013",
}


def load_papers(n: int, files: tuple[str, ...] = FILES) -> list:
    from kg.model import Paper

    per_file, papers = n // len(files), []
    for name in files:
        taken = 0
        with (CORPUS / name).open(encoding="utf-8") as handle:
            for line in handle:
                record = json.loads(line)
                if (record.get("abstract") or "").strip() and not reserved(str(record.get("id"))):
                    papers.append(Paper(id=f"{name}:{taken}", title=record.get("title") or "", abstract=record["abstract"]))
                    taken += 1
                    if taken == per_file:
                        break
    return papers


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1500)
    parser.add_argument("--model", default=None, help="recognizer folder, or 'none' for rules alone (default: the shipped one)")
    parser.add_argument("--show", type=int, default=5, help="examples shown per class")
    parser.add_argument("--files", nargs="+", default=list(FILES), help="corpus files to draw from (names under ../shared/corpus)")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 1
    from kg.concepts.find import find_concepts
    from kg.model import DEFAULT_RECOGNIZER

    recognizer = DEFAULT_RECOGNIZER if args.model is None else (None if args.model == "none" else args.model)
    papers = load_papers(args.n, tuple(args.files))
    found = find_concepts(papers, recognizer=recognizer)
    labels = {concept.id: concept.pref_label for concept in found.resolution.concepts}
    counts: Counter[str] = Counter()
    examples: dict[str, list[str]] = {name: [] for name in (*CHECKS, *LABEL_CHECKS)}
    total = 0
    for paper, entities in zip(papers, found.resolution.entities, strict=True):
        for mention in entities.mentions:
            total += 1
            text = paper.title if getattr(mention, "where", "abstract") == "title" else paper.abstract
            before, after = text[max(0, mention.start - 12) : mention.start], text[mention.end : mention.end + 12]
            for name, check in CHECKS.items():
                if check(mention.text, before, after):
                    counts[name] += 1
                    if len(examples[name]) < args.show:
                        examples[name].append(f"{before[-12:]!r} [{mention.text}] {after!r}  ({mention.source})")
            for name, label_check in LABEL_CHECKS.items():
                if label_check(labels[mention.concept]):
                    counts[name] += 1
                    if len(examples[name]) < args.show:
                        examples[name].append(f"[{mention.text}] → {mention.concept} labelled {labels[mention.concept]!r}  ({mention.source})")
    junk = sum(counts.values())
    print(f"papers {len(papers):,}  mentions {total:,}  recognizer {args.model or 'shipped'}")
    print(f"junk {junk:,} = {1000 * junk / max(total, 1):.2f} per 1,000 mentions")
    for name in (*CHECKS, *LABEL_CHECKS):
        print(f"  {name:<17} {counts[name]:>5}  {1000 * counts[name] / max(total, 1):6.2f} / 1,000")
        for example in examples[name]:
            print(f"      {example}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
