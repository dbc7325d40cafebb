"""The numbers of a result sentence: where a value stands, its unit, and whether it can be a result.

Plain regular expressions over text, no spaCy: `find_values` lists every number with its unit
("92.3 %", "28.4 BLEU" is a number then a metric, "+2.3 points", "3x"), and drops the numbers no
leaderboard holds: years, ordinals, versions and names ("ResNet-50" is a mention's business),
counts and sizes ("7B", "10,000 images"), settings ("10 % of the labels").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# digits (thousands separators allowed), an optional range ("3-5"), then an optional unit
_VALUE = re.compile(
    r"(?P<sign>[+±])?(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?P<range>\s?[-–]\s?\d+(?:\.\d+)?(?=\s?%|\s?points?\b))?"
    r"(?P<unit>\s?%|\s?percent(?:age points?)?\b|\s?points?\b|\s?pp\b|\s?dB\b|\s?[x×](?![\w]))?"
)
# A value's next word that makes it a count, a size or a duration, not a result.
COUNT_WORDS = frozenset(
    """parameters params images samples examples instances layers languages datasets tasks benchmarks hours days
    minutes seconds epochs steps iterations classes categories people participants subjects users patients frames
    tokens words sentences documents years months weeks times fold folds shots shot gpus gpu cores nodes videos
    clips queries questions pairs objects scenes models agents annotators k m b billion million thousand hundred
    kb mb gb tb ms s fps hz khz mhz ghz w kw mw bits bit bytes characters dimensions dimensional d heads experts
    neurons units channels pixels px cm mm km kg degrees""".split()
)
_BEFORE_STOP = frozenset("top table figure fig section equation eq step layer version v rank level stage phase round year day".split())


@dataclass(frozen=True, slots=True)
class Value:
    start: int  # the digits (a range: both ends), without sign or unit
    end: int
    text: str
    unit: str | None  # "%", "points", "dB", "x", or None
    signed: bool  # written "+2.3": a gain

    @property
    def number(self) -> float:
        return number_of(self.text)


def number_of(value: str) -> float:
    """A value as written ("1,234.5", a range "3-5": its first end) as a number."""
    first = re.match(r"\.?\d[\d,]*(?:\.\d+)?", value)
    return float(first.group().replace(",", "")) if first else float("nan")


def _unit(raw: str | None) -> str | None:
    if not raw:
        return None
    raw = raw.strip().lower()
    if raw in ("%", "percent"):
        return "%"
    if raw in ("x", "×"):
        return "x"
    if raw == "db":
        return "dB"
    return "points"  # points, pp, percentage point(s)


def find_values(text: str) -> list[Value]:
    """Every number of `text` that could be a result's value, in order."""
    values: list[Value] = []
    for match in _VALUE.finditer(text):
        start, end = match.start("number"), match.end("range") if match.group("range") else match.end("number")
        before = text[max(0, start - 12) : start]
        after = text[match.end() : match.end() + 24]
        if start and (text[start - 1].isalnum() or text[start - 1] in "@_^/$#-.'" or (match.group("sign") is None and text[start - 1] in "+±")):
            continue  # inside a name ("GPT-4", "v2"), a ratio, a price, a decimal's tail
        if not match.group("unit") and (after[:1].isalpha() or after[:1] in "-–/:" and after[1:2].isalnum()):
            continue  # "7B", "3-layer", "10-fold", "1/2", a clock time
        number = match.group("number")
        unit = _unit(match.group("unit"))
        if unit is None and re.fullmatch(r"(19|20)\d\d", number):
            continue  # a year
        words = re.findall(r"[A-Za-z]+", before)
        if words and words[-1].lower() in _BEFORE_STOP and before.rstrip()[-1:].isalpha():
            continue  # "Table 3", "step 2", "top 5"
        next_word = re.match(r"\s*([A-Za-z]+\.?)", after)
        if unit in (None, "x") and next_word and next_word.group(1).lower().rstrip(".") in COUNT_WORDS:
            continue
        if unit == "%" and re.match(r"\s*of\b", after):
            continue  # "10 % of the labels": a share of something, a setting
        if values and re.fullmatch(r"\s*[(\[]\s*(?:[\d.]+\s*[,;–-]\s*)?", text[values[-1].end : start]) or re.search(r"±\s*$", text[:start]):
            continue  # a spread: "0.89 (0.84, 0.92)", "± 0.7"
        values.append(Value(start, end, text[start:end], unit, match.group("sign") == "+"))
    return values
