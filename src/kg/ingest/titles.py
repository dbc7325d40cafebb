"""Titles for papers the corpus gives without one (the seed files have abstracts only).

A derived title should let a reader recognise the paper in a list:

* the name the abstract proposes, with what it is —
  "We propose EQ-VAE, a simple regularization approach that …" → "EQ-VAE: A simple regularization approach";
  "… we propose Noise Conditional Variational Score Distillation (NCVSD), …" → "NCVSD: Noise Conditional
  Variational Score Distillation";
* else the abstract's first clause, without a leading "We study"/"This paper addresses" —
  "We study universal properties in real-world … datasets." → "Universal properties in real-world … datasets".

Titles are cut at a word boundary to at most `MAX_TITLE` characters (with "…").
Plain string heuristics on purpose: ingestion must stay fast and free of spaCy.
"""

from __future__ import annotations

import re

from kg.model import Paper
from kg.text.words import TITLE_CLAUSE_WORDS, TITLE_PREPOSITIONS

MAX_TITLE = 100

# Markup that hides a name: $\texttt{CTRL}$, **TSV**, <em>X</em>.
_LATEX_WRAPPED = re.compile(r"\$?\\(?:texttt|textbf|textit|textsc|underline|mathrm|mathbf|mathsf|mathtt|mathcal|emph|text)\{([^{}]*)\}\$?")
_MARKUP = re.compile(r"\*\*|__|</?\w+>|\$")

# A sentence end: ". " before an upper-case letter, not after a common abbreviation.
_SENTENCE_END = re.compile(r"(?<!\be\.g)(?<!\bi\.e)(?<!\bet al)(?<!\bvs)(?<!\bcf)(?<![A-Z])[.!?]\s+(?=[A-Z(\[])")

_PROPOSAL = re.compile(
    r"\b(?:we|this (?:paper|work|study|article)|our (?:paper|work)|and)\s+(?:(?:\w+ly|thus|then|also|further|therefore|here|now|first)\s+)?"
    r"(?:propose|present|introduce|develop|design|call|name|term|dub)s?\b\s*",
    re.IGNORECASE,
)
# Words after the verb and before the name: articles, adjectives, generic nouns ("a novel training method").
_LEAD_WORD = re.compile(r"[a-z][a-z0-9\-]*,?|namely,?|called|dubbed|termed|named")
# A name: mixed case or several capitals/digits (KAN-AD, xLSTM, MedTok, TetraJet, GPT-4o), not a plain word.
_NAME = re.compile(r"^(?=\S*[A-Z]\S*[A-Z0-9]|[a-z]+[A-Z])[A-Za-z][\w.\-+]*[\w+]$")
# "(ACRO)" after its long form; the long form is found letter by letter (Schwartz & Hearst 2003).
_ACRONYM_IN_PARENS = re.compile(r"\((?P<acro>[A-Za-z][\w\-+]*[\w+])\)")
_MIN_DESCRIPTION = 4  # words; a shorter appositive ("a novel, …") runs on past its comma
_RELATIVE = re.compile(r"\s+(that|which|where|who|to|by|using)\s")
_VERSION = re.compile(r"(?:v?\d[\w.]*|[IVX]+),?")  # "7B", "v2", "2.0", "II" after a name

# "We study X" → "X": verbs that introduce the topic rather than belong to it.
_TOPIC_LEAD = re.compile(
    r"^(?:in this (?:paper|work|study),?\s+)?(?:we|this (?:paper|work|study|article)|our (?:paper|work))\s+"
    r"(?:\w+ly\s+)?(?:study|studies|investigate|investigates|consider|considers|address|addresses|"
    r"explore|explores|examine|examines|analy[sz]e|analy[sz]es|tackle|tackles|revisit|revisits|focus on|focuses on)\s+",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[;:]\s|,\s+(?:which|where|while|but|whereas|allowing|enabling|making)\b|\s[–—]\s|\s--+\s")
# A parenthesised citation, "(Kou et al., 2023; Cao et al., 2022)": noise in a title.
_CITATION = re.compile(r"\s*\([^()]*\b(?:19|20)\d\d[a-z]?\)")


def derive_title(abstract: str) -> str:
    """A short, readable title for an abstract that came without one."""
    text = _strip_markup(abstract)
    sentences = _sentences(text)
    proposed = _proposed_name_title(sentences)
    if proposed:
        return proposed
    return _truncate(_first_clause(sentences[0] if sentences else text))


def _strip_markup(text: str) -> str:
    for _ in range(3):  # \textbf{\underline{Mi}}xture: unwrap nested markup from the inside out
        text, count = _LATEX_WRAPPED.subn(r"\1", text)
        if not count:
            break
    return " ".join(_MARKUP.sub("", text).split())


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _proposed_name_title(sentences: list[str]) -> str | None:
    for sentence in sentences:
        verb = _PROPOSAL.search(sentence)
        if not verb:
            continue
        rest = sentence[verb.end() :]
        found = [
            candidate
            for candidate in (_from_acronym_definition(rest), _from_named_thing(rest, _first_clause(sentences[0])))
            if candidate
        ]
        if found:
            return min(found, key=lambda candidate: candidate[0])[1]  # the name that comes first; ties: acronym
    return None


def _from_acronym_definition(rest: str) -> tuple[int, str] | None:
    """'… framework, Truncated Q-driven Instant Policy Refinement (TIPR), to …' → 'TIPR: Truncated … Refinement'.

    Returns the title and where the definition starts in `rest` (to prefer whichever name comes first).
    """
    head = re.split(r"\b(?:for|to|of|that|which|with|using|by)\s+(?:the |a |an )?[a-z]", rest, maxsplit=1)[0]
    for match in _ACRONYM_IN_PARENS.finditer(head):
        acronym = match.group("acro")
        if not _NAME.match(acronym) and not acronym.isupper():
            continue
        long_form = _long_form(head[: match.start()], acronym)
        if long_form:
            start = head.rfind(long_form, 0, match.start())
            if any(word.strip(",").lower() in TITLE_PREPOSITIONS for word in head[:start].split()):
                return None
            return start, _truncate(f"{acronym}: {_capitalise(long_form)}")
    return None


def _long_form(before: str, acronym: str) -> str | None:
    """The shortest run of words ending `before` that spells `acronym` in order, first letter at a word start."""
    words = before.split()
    letters = [c.lower() for c in acronym if c.isalnum()]
    text = " ".join(words[-min(len(letters) + 5, 2 * len(letters)) :])
    position = len(text) - 1
    for index in range(len(letters) - 1, -1, -1):
        while position >= 0 and (
            text[position].lower() != letters[index] or (index == 0 and position > 0 and text[position - 1].isalnum())
        ):
            position -= 1
        if position < 0:
            return None
        position -= 1
    long_form = text[text.rfind(" ", 0, position + 1) + 1 :]
    if len(long_form.split()) < 2 and len(letters) > 2 or long_form.lower() == acronym.lower():
        return None
    return long_form


def _from_named_thing(rest: str, fallback: str) -> tuple[int, str] | None:
    """'MedTok, a multimodal medical code tokenizer that …' → 'MedTok: A multimodal medical code tokenizer'."""
    tokens = rest.split()
    before: list[str] = []
    for index, token in enumerate(tokens[:12]):
        bare = token.rstrip(",;:.")
        if _NAME.match(bare):
            after = tokens[index + 1 :]
            if not token.endswith(",") and after and after[0].islower() and after[0].rstrip(",") not in TITLE_CLAUSE_WORDS:
                before.append(token)  # "a novel MCTS algorithm, X": MCTS qualifies a noun; keep looking
                continue
            if not token.endswith(",") and after and _VERSION.fullmatch(after[0]):  # "xLSTM 7B, a …"
                bare, token, after = f"{bare} {after[0].rstrip(',')}", after[0], after[1:]
            description = (_appositive(after) if token.endswith(",") else None) or _description_before(before)
            return rest.find(bare) + 1, _truncate(f"{bare}: {description or fallback}")
        if bare.lower() in TITLE_CLAUSE_WORDS or not _LEAD_WORD.fullmatch(token):
            return None
        before.append(token)
    return None


def _appositive(tokens: list[str]) -> str | None:
    """The noun phrase after 'NAME,' when it starts with an article: 'a lightweight … vector'."""
    if not tokens or tokens[0].lower() not in {"a", "an", "the"}:
        return None
    phrase = ""
    for part in _first_clause(" ".join(tokens)).split(", "):  # "a novel, human-tunable extension, which"
        phrase = f"{phrase}, {part}" if phrase else part
        if len(phrase.split()) >= _MIN_DESCRIPTION:
            break
    for cut in _RELATIVE.finditer(phrase):
        short = phrase[: cut.start()]
        participle = short.split()[-1].endswith("ed") if short.split() else False
        if cut.group(1) in {"to", "by", "using"} and participle:
            continue  # "a benchmark designed to evaluate …": the purpose is the description
        if len(short.split()) >= 3:  # "a framework" alone says little: keep its relative clause then
            phrase = short
        break
    return _capitalise(phrase.rstrip(",;:."))


def _description_before(words: list[str]) -> str | None:
    """'a novel training method' (before 'TetraJet'), minus 'namely', as the description."""
    cleaned = [w.rstrip(",") for w in words if w.rstrip(",").lower() not in {"namely", "called", "dubbed", "termed", "named"}]
    if len(cleaned) < 2:  # "a" alone says nothing
        return None
    return _capitalise(" ".join(cleaned))


def _first_clause(sentence: str) -> str:
    sentence = _TOPIC_LEAD.sub("", _CITATION.sub("", sentence.strip()))
    clause = _CLAUSE_END.split(sentence, maxsplit=1)[0]
    return _capitalise(clause.strip().rstrip(".,;:"))


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def _truncate(title: str, limit: int = MAX_TITLE) -> str:
    if len(title) <= limit:
        return title
    cut = title[: limit - 1]
    if " " in cut:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(",;:-–— ") + "…"


def read_title(paper: Paper) -> str | None:
    """The title extraction reads besides the abstract (`kg.extract.runner`), or None: a title kg made
    up from the abstract (`derive_title`), or one the abstract opens with, says nothing the abstract
    does not, and its mentions would count twice."""
    title = paper.title.strip()
    if paper.title_derived or not title:
        return None
    opening = _comparable(title)
    if not opening or _comparable(paper.abstract[: len(title) + 40]).startswith(opening):
        return None
    return paper.title


def _comparable(text: str) -> str:
    """Letters and digits only, lower case: "A Survey." and "a survey" compare equal."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


_TITLE_CASED = re.compile(r"[A-Z][a-z]+")  # a word part capitalised only as a title capitalises it
_LOWER = re.compile(r"[a-z]+")
TITLE_CASE_SHARE = 0.6  # of the words of four letters or more capitalised: the title is in Title Case


def sentence_case(title: str) -> str:
    """`title` as a sentence would write it, for extraction, whose rules and recognizer read
    abstracts: in a Title Case title ("Towards Super Transferable Adversarial Attacks on CLIP") each
    word capitalised only as a title capitalises it is lower-cased ("towards super transferable
    adversarial attacks on CLIP"), except the first and the first after a colon. Names with another
    capital or a digit (CLIP, X-Transfer, GPT-4, HippoRAG) keep theirs; the text keeps its length,
    so offsets into it index the title."""
    words = list(re.finditer(r"\S+", title))
    long = [w.group() for w in words if sum(ch.isalpha() for ch in w.group()) >= 4]
    if not long or sum(w[:1].isupper() for w in long) < TITLE_CASE_SHARE * len(long):
        return title
    out = list(title)
    starts = True  # the title's first word, or the first after a colon
    for word in words:
        text = word.group()
        core = text.strip("\"'“”‘’()[],.;:!?")
        parts = core.split("-")
        if not starts and core and any(_TITLE_CASED.fullmatch(p) for p in parts) and all(_TITLE_CASED.fullmatch(p) or _LOWER.fullmatch(p) for p in parts):
            offset = word.start() + text.index(core)
            out[offset : offset + len(core)] = core.lower()
        starts = text.endswith(":")
    return "".join(out)
