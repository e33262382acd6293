"""Text that crashes upstream MLIR 22.1.8's parser, refused before parsing.

cuvil-fuzz found assertions in the parsers of some linalg ops (fuzz/README.md,
test/upstream-crashes/): on malformed input they abort the process instead of
reporting an error. Cuvil parses text in the user's process (importer output,
transform scripts a user writes), so the shapes that reach those assertions
are looked for first and reported as an error with a location. Each pattern
matches only text the parser would reject anyway: well-formed IR never trips
one.
"""
from __future__ import annotations

import re
from typing import Optional, Tuple

_INT_LIST = r"\[\s*(?:-?\d+\s*(?:,\s*-?\d+\s*)*)?\]"
_ITERATOR = r'(?:"[a-z_]+"|#linalg\.iterator_type<\s*[a-z_]+\s*>)'
_PATTERNS = [
    # linalg.transpose / broadcast / reduce: their keyword attribute must be
    # an integer list; anything else reaches NamedAttrList::set as null.
    (re.compile(r"\b(?:permutation|dimensions)\s*=(?!\s*" + _INT_LIST
                + r"|array<|dense<|dense_resource<|#|\")"),
     "a `permutation =` / `dimensions =` that is not an integer list"),
    # Named linalg ops cast their `<...>` properties to a dictionary.
    (re.compile(r"(?<![#!\w.])linalg\.[a-z_0-9]+(?=\s*<)(?!\s*<\s*\{)"),
     "linalg op properties `<...>` that are not a dictionary `<{...}>`"),
    # linalg.generic casts each iterator type to a string.
    (re.compile(r"\biterator_types\s*=(?=\s*\[)(?!\s*\[\s*(?:" + _ITERATOR + r"\s*(?:,\s*" + _ITERATOR
                + r"\s*)*)?\])"),
     "an `iterator_types` list whose entries are not iterator types"),
]


# The transform dialect's `transform.with_named_sequence` verifier builds a
# call graph before the symbol table is verified: a symbol defined twice
# asserts in SymbolTable's constructor.
_WITH_NAMED_SEQUENCE = re.compile(r"\btransform\.with_named_sequence\b")
_SYMBOL_DEFINITION = re.compile(
    r"\b(?:func\.func|transform\.named_sequence)\s+(?:(?:private|public|nested)\s+)?@([\w$.]+)")


_COMMENT = re.compile(r"//[^\n]*")


def _position(text: str, offset: int) -> Tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def find_parser_crash(text: str) -> Optional[Tuple[int, int, str]]:
    """(line, column, what) of the first pattern in `text` that would crash
    the parser (or the verifier run right after it), or None."""
    # Comments blanked out, positions kept: a CHECK line is not IR.
    text = _COMMENT.sub(lambda m: " " * len(m.group()), text)
    for pattern, what in _PATTERNS:
        m = pattern.search(text)
        if m:
            return (*_position(text, m.start()), what)
    if _WITH_NAMED_SEQUENCE.search(text):
        seen = set()
        for m in _SYMBOL_DEFINITION.finditer(text):
            if m.group(1) in seen:
                return (*_position(text, m.start()),
                        f"@{m.group(1)} defined twice in a module with transform.with_named_sequence")
            seen.add(m.group(1))
    return None


def describe(found: Tuple[int, int, str]) -> str:
    line, column, what = found
    return (f"{line}:{column}: {what}: MLIR 22.1.8's parser would abort the process on it "
            f"(an upstream bug); the text is malformed there, fix it")
