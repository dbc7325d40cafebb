"""Label parameters: a bound label matches whatever its case, plural or hyphenation.

Every concept carries ``kg:key`` values (`kg.rdf.triples.lookup_keys`): `kg.text.vocab.normalize_key`
of its prefLabel and of each altLabel. A variable a query matches with ``kg:key ?v`` is a
*key variable*; binding it (``--bind v=…``) normalises the value the same way first, so
``imagenet``, ``ImageNets`` and ``ImageNet`` all find ImageNet, and an acronym finds its
long form through the altLabel it was seen as.

A binding ``NAME`` also reaches the key variable ``?NAMEKey`` when the query has one and no
key variable ``?NAME``: the example queries keep ``?dataset`` for the prefLabel they show and
match the label through ``?datasetKey``. A key variable the query does not SELECT is replaced
in the text by the string literal (SPARQL SEP-0007 *is* substitution; engines only insist on
the projection so they can output the value); a projected one is bound as usual.

`unmatched` tells, for a query that returned nothing, which bound labels name no concept at
all, with the closest labels the graph has (rapidfuzz, only on that path).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kg.sparql.guard import SPARQL_TOKEN
from kg.text.vocab import normalize_key

KEY_SUFFIX = "Key"
_KEY_PATTERN = re.compile(r"(?:(?<![\w:])kg:key|<https://w3id\.org/kg-ml/ontology#key>)\s+[?$]([A-Za-z_][A-Za-z0-9_]*)")
MAX_SUGGESTIONS = 5
SCORE_CUTOFF = 78  # rapidfuzz WRatio: keeps "mimic 3" → MIMIC-III (79), drops "resnet" → "representation" (75)


@dataclass(frozen=True, slots=True)
class LabelBinding:
    """A bound label: the name the caller bound, what it gave, the key variable it reached,
    and the normalised key that was matched."""

    name: str
    value: str
    variable: str
    key: str


@dataclass(frozen=True, slots=True)
class UnmatchedLabel:
    """A bound label that matches no concept's kg:key; `suggestions` are close labels, each
    ``label (Type)``, best first."""

    name: str
    value: str
    key: str
    suggestions: tuple[str, ...] = ()


def _masked(text: str) -> str:
    """`text` with comments and string literals blanked (same length), IRIs kept."""
    parts, last = [], 0
    for match in SPARQL_TOKEN.finditer(text):
        if match.lastgroup == "skip" and match.group()[0] in "#'\"":
            parts.append(text[last : match.start()])
            parts.append(" " * (match.end() - match.start()))
            last = match.end()
    parts.append(text[last:])
    return "".join(parts)


def key_variables(text: str) -> set[str]:
    """Variables the query matches with ``kg:key ?v`` (outside comments and strings)."""
    return set(_KEY_PATTERN.findall(_masked(text)))


def _literal(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def _projected(masked: str, variable: str) -> bool:
    """Whether ?variable appears before the query's first ``{`` (its SELECT clause)."""
    head = masked.split("{", 1)[0]
    return re.search(rf"[?$]{re.escape(variable)}(?!\w)", _strip_iris(head)) is not None


def _strip_iris(text: str) -> str:
    return re.sub(r"<[^<>\"{}|^`\\\x00-\x20]*>", lambda m: " " * len(m.group()), text)


def _substitute(text: str, masked: str, variable: str, literal: str) -> str:
    """Replace every ?variable / $variable token outside comments, strings and IRIs."""
    spots = [m.span() for m in re.finditer(rf"[?$]{re.escape(variable)}(?!\w)", _strip_iris(masked))]
    for start, end in reversed(spots):
        text = text[:start] + literal + text[end:]
    return text


def apply_label_bindings(text: str, bindings: Mapping[str, str]) -> tuple[str, dict[str, str], tuple[LabelBinding, ...]]:
    """The query text and bindings to run, and the label bindings made.

    Bindings that reach a key variable (see the module doc) are normalised; those the query
    does not SELECT are written into the text, the rest pass on as bindings. IRIs (``<…>``)
    are never labels.
    """
    keys = key_variables(text)
    if not keys:
        return text, dict(bindings), ()
    out: dict[str, str] = {}
    labels: list[LabelBinding] = []
    for name, value in bindings.items():
        bare = name.lstrip("?$")
        target = bare if bare in keys else bare + KEY_SUFFIX if bare + KEY_SUFFIX in keys else None
        if target is None or (value.startswith("<") and value.endswith(">")):
            out[name] = value
            continue
        key = normalize_key(value)
        labels.append(LabelBinding(bare, value, target, key))
        masked = _masked(text)
        if _projected(masked, target):
            out[target] = key
        else:
            text = _substitute(text, masked, target, _literal(key))
    return text, out, tuple(labels)


KEY_EXISTS = 'ASK { ?c kg:key %s }'
ALL_LABELS = """SELECT ?key ?label ?class WHERE {
  ?c kg:key ?key ; skos:prefLabel ?label ; a ?class .
  FILTER (?class != skos:Concept)
}"""


def unmatched(labels: tuple[LabelBinding, ...], ask: Callable[[str], bool], select: Callable[[str], list[tuple[str, ...]]]) -> tuple[UnmatchedLabel, ...]:
    """The label bindings whose key no concept has, each with close labels.

    `ask` runs an ASK query, `select` a SELECT returning rows of plain strings (the caller's
    backend): this module never opens a store itself.
    """
    missing = [label for label in labels if not ask(KEY_EXISTS % _literal(label.key))]
    if not missing:
        return ()
    from rapidfuzz import fuzz, process  # only on the nothing-matched path

    shown: dict[str, list[str]] = {}
    for key, name, cls in select(ALL_LABELS):
        entry = f"{name} ({cls.rsplit('#', 1)[-1].rsplit('/', 1)[-1]})"
        if entry not in shown.setdefault(key, []):
            shown[key].append(entry)
    choices = sorted(shown)
    compact = [key.replace(" ", "") for key in choices]  # "cifar10" is close to "cifar 10"
    found = []
    for label in missing:
        scores: dict[str, float] = {}
        for query, pool, scorer in ((label.key, choices, fuzz.WRatio), (label.key.replace(" ", ""), compact, fuzz.ratio)):
            for _, score, index in process.extract(query, pool, scorer=scorer, limit=MAX_SUGGESTIONS * 2, score_cutoff=SCORE_CUTOFF):
                scores[choices[index]] = max(score, scores.get(choices[index], 0.0))
        ranked = sorted(scores, key=lambda key: (-scores[key], len(key), key))
        suggestions: list[str] = []
        for key in ranked:
            for entry in shown[key]:
                if entry not in suggestions:
                    suggestions.append(entry)
        found.append(UnmatchedLabel(label.name, label.value, label.key, tuple(suggestions[:MAX_SUGGESTIONS])))
    return tuple(found)
