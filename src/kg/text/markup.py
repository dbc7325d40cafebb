"""Masking markup out of abstracts: LaTeX, HTML, URLs and markdown emphasis become spaces.

Abstracts carry markup (``$\\texttt{GD-LS}$``, ``<i>…</i>``, URLs, ``**bold**``). Masking
replaces it by spaces of the same length, so every offset into the masked text still
points into the abstract as given (``abstract[start:end] == text``), while the arguments of
text commands stay readable (``$\\texttt{GD-LS}$`` still yields GD-LS). Extraction and
lexicon propagation both read abstracts through `mask_markup`; resolve strips emphasis
markers from display labels with `EMPHASIS`.
"""

from __future__ import annotations

import re

# LaTeX commands whose argument is text worth reading (\texttt{GD-LS}, \textsc{Foo}).
_TEXT_COMMANDS = r"(?:text(?:tt|sc|bf|it|rm|sf)?|math(?:rm|tt|sf|bf|it)|emph|textnormal|operatorname)"
_URL = re.compile(r"(?:https?://|www\.)[^\s<>\"')\]]+", re.I)
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9]*(?:\s[^<>]{0,200})?/?>")
_HTML_ENTITY = re.compile(r"&(?:[a-zA-Z]{2,8}|#\d{1,6});")
_MATH = re.compile(r"\$\$?([^$]{0,400}?)\$\$?")
_TEXT_ARG = re.compile(r"\\" + _TEXT_COMMANDS + r"\s*\{([^{}]*)\}")
_COMMAND = re.compile(r"\\[A-Za-z]+\*?|\\.")
EMPHASIS = re.compile(r"\*\*|__|(?<![\w*])\*(?=\w)|(?<=\w)\*(?![\w*])")  # "**Virtual-Fourier** layer", "*EF-Landing*"


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group())


def _mask_math(match: re.Match[str]) -> str:
    """Inside $…$ keep only the arguments of text commands; everything else becomes spaces."""
    body = match.group()
    out = [" "] * len(body)
    for arg in _TEXT_ARG.finditer(body):
        out[arg.start(1) : arg.end(1)] = arg.group(1)
    return "".join(out)


def mask_markup(text: str) -> str:
    """`text` with URLs, HTML tags/entities and LaTeX replaced by spaces: same length, same offsets."""
    if not any(ch in text for ch in "$\\<&/*_"):
        return text
    text = _URL.sub(_blank, text)
    text = _HTML_TAG.sub(_blank, text)
    text = _HTML_ENTITY.sub(_blank, text)
    text = EMPHASIS.sub(_blank, text)
    text = _MATH.sub(_mask_math, text)
    if "\\" in text:
        # Text-mode commands: keep the argument, blank the command and braces.
        text = _TEXT_ARG.sub(lambda m: " " * (m.start(1) - m.start()) + m.group(1) + " ", text)
        text = _COMMAND.sub(_blank, text)
    return text
