"""Check a reader's result-claim annotations and turn them into gold records with exact offsets.

    python bench/gold/claims/resolve_claims.py INPUT.jsonl RAW.jsonl [--out GOLD.jsonl]

INPUT holds the drawn abstracts (make_sample.py), RAW the reader's lines (BRIEF.md). Every problem is
printed as "ERROR id: ..."; with --out and no error, the gold records are written (INPUT's fields plus
"claims", each with the value's character offsets)."""

import argparse
import json
import re
import sys

KINDS = {"absolute", "improvement"}
FIELDS = {"quote", "value", "unit", "kind", "metric", "dataset", "task", "method", "proposed", "baseline"}
NAMED = ("metric", "dataset", "task", "baseline")


def value_positions(quote: str, value: str) -> list[int]:
    """Where value stands in quote as a whole number (not inside a longer number)."""
    pattern = r"(?<![\w.])" + re.escape(value) + r"(?!\d|\.\d)"
    return [m.start() for m in re.finditer(pattern, quote)]


def whole_word(text: str, phrase: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", text) is not None


def resolve(record: dict, raw: dict) -> tuple[list[dict], list[str]]:
    text, errors, claims = record["text"], [], []
    for n, claim in enumerate(raw.get("claims", [])):
        where = f"claim {n} ({claim.get('value')!r})"
        unknown = set(claim) - FIELDS
        missing = FIELDS - set(claim)
        if unknown or missing:
            errors.append(f"{where}: unknown fields {sorted(unknown)} / missing fields {sorted(missing)}")
            continue
        quote = claim["quote"]
        value = re.sub(r"\s*(?:%|dB|x|×)$", "", str(claim["value"]))  # a unit glued to the number ("7.47dB") is not the value
        hits = [m.start() for m in re.finditer(re.escape(quote), text)]
        if len(hits) != 1:
            errors.append(f"{where}: quote found {len(hits)} times in the text (make it exact and unique)")
            continue
        inside = value_positions(quote, value)
        if len(inside) != 1:
            errors.append(f"{where}: value found {len(inside)} times as a whole number in the quote")
            continue
        if claim["kind"] not in KINDS:
            errors.append(f"{where}: kind must be one of {sorted(KINDS)}")
        if not isinstance(claim["proposed"], bool):
            errors.append(f"{where}: proposed must be true or false")
        for field in NAMED:
            if claim[field] is not None and not whole_word(text, claim[field]):
                errors.append(f"{where}: {field} {claim[field]!r} is not in the text as written")
        if claim["method"] not in ("(proposed)", "(baseline)") and not whole_word(text, claim["method"]):
            errors.append(f"{where}: method {claim['method']!r} is not in the text as written")
        start = hits[0] + inside[0]
        claims.append({"start": start, "end": start + len(value), **{k: claim[k] for k in sorted(FIELDS - {"quote"})}})
    return sorted(claims, key=lambda c: c["start"]), errors


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("raw")
    parser.add_argument("--out")
    args = parser.parse_args()
    records = [json.loads(line) for line in open(args.input, encoding="utf-8")]
    raws = {}
    for number, line in enumerate(open(args.raw, encoding="utf-8"), 1):
        if line.strip():
            try:
                raw = json.loads(line)
                raws[raw["id"]] = raw
            except (ValueError, KeyError) as error:
                print(f"ERROR {args.raw}:{number}: not a JSON object with an id ({error})")
    gold, problems = [], 0
    for record in records:
        if record["id"] not in raws:
            continue
        claims, errors = resolve(record, raws[record["id"]])
        for error in errors:
            print(f"ERROR {record['id']}: {error}")
        problems += len(errors)
        gold.append({**record, "claims": claims})
    missing = [r["id"] for r in records if r["id"] not in raws]
    print(f"{len(gold)} abstracts read, {sum(len(g['claims']) for g in gold)} claims, "
          f"{problems} errors, {len(missing)} abstracts still missing")
    if args.out and not problems:
        with open(args.out, "w", encoding="utf-8") as handle:
            for record in gold:
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
