"""Check a reader's entity annotations and turn them into gold records with exact offsets.

    python bench/gold/resolve.py INPUT.jsonl ANNOTATED.jsonl [--out GOLD.jsonl]

INPUT holds the drawn abstracts (make_sample.py), ANNOTATED the reader's lines (BRIEF.md): per abstract, each
distinct surface string once, with its label and role. Every whole-word occurrence of a string is marked, except:
`only` picks occurrences by their 0-based index; a string lying inside an occurrence of a longer listed string is
not marked there unless it has `nested: true`. Every problem is printed as "ERROR id: ..."; with --out and no error,
the gold records are written (INPUT's fields plus "entities", each with character offsets, end exclusive)."""

from __future__ import annotations

import argparse
import json
import re
import sys

LABELS = {"METHOD", "DATASET", "TASK", "METRIC", "HARDWARE", "TERM"}
ROLES = {"proposed", "used"}
FIELDS = {"text", "label", "role", "only", "nested"}


def occurrences(text: str, phrase: str) -> list[int]:
    """Start offsets of `phrase` as a whole word (not inside a longer word) in `text`."""
    return [m.start() for m in re.finditer(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", text)]


def resolve(record: dict, raw: dict) -> tuple[list[dict], list[str]]:
    """The entities of one abstract, and what is wrong with the reader's line (empty when nothing is)."""
    text, errors, spans = record["text"], [], []
    mentions = raw.get("mentions")
    if not isinstance(mentions, list):
        return [], ["no 'mentions' list"]
    for n, mention in enumerate(mentions):
        where = f"mention {n} ({mention.get('text')!r})" if isinstance(mention, dict) else f"mention {n}"
        if not isinstance(mention, dict) or set(mention) - FIELDS or not {"text", "label", "role"} <= set(mention):
            errors.append(f"{where}: fields must be text, label, role (and only, nested)")
            continue
        phrase = mention["text"]
        if mention["label"] not in LABELS:
            errors.append(f"{where}: label {mention['label']!r} is not one of {sorted(LABELS)}")
        if mention["role"] not in ROLES:
            errors.append(f"{where}: role {mention['role']!r} is not proposed or used")
        if not isinstance(phrase, str) or not phrase.strip() or phrase != phrase.strip():
            errors.append(f"{where}: text must be a non-empty string without surrounding spaces")
            continue
        starts = occurrences(text, phrase)
        if not starts:
            errors.append(f"{where}: not found as a whole word in the abstract")
            continue
        only = mention.get("only")
        if only is not None:
            if not isinstance(only, list) or not only or any(not isinstance(k, int) or not 0 <= k < len(starts) for k in only):
                errors.append(f"{where}: only must list indexes among 0..{len(starts) - 1}")
                continue
            starts = [starts[k] for k in sorted(set(only))]
        spans.append((n, phrase, mention, starts))
    seen: dict[tuple[int, int], str] = {}
    entities = []
    for n, phrase, mention, starts in spans:
        for start in starts:
            end = start + len(phrase)
            inside = any(
                other_start <= start and end <= other_start + len(other)
                and (other_start, other_start + len(other)) != (start, end)
                for m, other, _, other_starts in spans if m != n for other_start in other_starts
            )
            if inside and not mention.get("nested"):
                continue
            if (start, end) in seen:
                errors.append(f"mention {n} ({phrase!r}): offset {start} already marked as {seen[(start, end)]} (use only)")
                continue
            seen[(start, end)] = mention["label"]
            entities.append({"start": start, "end": end, "label": mention["label"], "text": phrase, "role": mention["role"]})
    entities.sort(key=lambda e: (e["start"], -e["end"], e["label"]))
    return entities, errors


def read_jsonl(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def resolve_file(input_path: str, annotated_path: str) -> tuple[list[dict], list[str]]:
    records = read_jsonl(input_path)
    raws: dict[str, dict] = {}
    errors = []
    for raw in read_jsonl(annotated_path):
        if raw.get("id") in raws:
            errors.append(f"ERROR {raw.get('id')}: annotated twice")
        raws[raw.get("id")] = raw
    known = {record["id"] for record in records}
    errors += [f"ERROR {paper_id}: not an abstract of {input_path}" for paper_id in raws if paper_id not in known]
    gold = []
    missing = 0
    for record in records:
        raw = raws.get(record["id"])
        if raw is None:
            missing += 1
            continue
        entities, problems = resolve(record, raw)
        errors += [f"ERROR {record['id']}: {problem}" for problem in problems]
        gold.append({**record, "entities": entities})
    if missing:
        errors.append(f"ERROR {missing} abstracts still missing")
    return gold, errors


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("annotated")
    parser.add_argument("--out")
    args = parser.parse_args()
    gold, errors = resolve_file(args.input, args.annotated)
    for error in errors:
        print(error)
    print(f"{len(gold)} abstracts, {sum(len(r['entities']) for r in gold)} entities, {len(errors)} errors")
    if errors:
        return 1
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            for record in gold:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
