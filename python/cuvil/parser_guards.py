"""Text that crashes upstream MLIR 22.1.8's parser, refused before parsing.

cuvil-fuzz found assertions in the parsers of some linalg ops (fuzz/README.md,
test/upstream-crashes/): on malformed input they abort the process instead of
reporting an error. Cuvil parses text in the user's process (importer output,
transform scripts a user writes), so the shapes that reach those assertions
are looked for first and reported as an error with a location. Each pattern
matches only text the parser would reject anyway, but for the nesting limit
(1,000 levels, far past any real IR, well short of the ~8,000 that overflow
the stack): well-formed IR never trips one.
"""
from __future__ import annotations

import re
from typing import Optional, Tuple

_INT_LIST = r"\[\s*(?:-?\d+\s*(?:,\s*-?\d+\s*)*)?\]"
_ITERATOR = r'(?:"[a-z_]+"|#linalg\.iterator_type<\s*[a-z_]+\s*>)'
# (literals that start every match, pattern, what it is). The literals are
# found with str.find, and the pattern tried only there: importer text runs
# to megabytes, and a regex scanning every position costs 0.1 s per 6 MB.
_PATTERNS = [
    # linalg.transpose / broadcast / reduce: their keyword attribute must be
    # an integer list; anything else reaches NamedAttrList::set as null.
    (("permutation", "dimensions"),
     re.compile(r"\b(?:permutation|dimensions)\s*=(?!\s*(?:" + _INT_LIST
                + r"|array<|dense<|dense_resource<|#|\"))"),
     "a `permutation =` / `dimensions =` that is not an integer list"),
    # Named linalg ops cast their `<...>` properties to a dictionary.
    (("linalg.",),
     re.compile(r"(?<![#!\w.])linalg\.[a-z_0-9]+(?=\s*<)(?!\s*<\s*\{)"),
     "linalg op properties `<...>` that are not a dictionary `<{...}>`"),
    # linalg.generic casts each iterator type to a string.
    (("iterator_types",),
     re.compile(r"\biterator_types\s*=(?=\s*\[)(?!\s*\[\s*(?:" + _ITERATOR + r"\s*(?:,\s*" + _ITERATOR
                + r"\s*)*)?\])"),
     "an `iterator_types` list whose entries are not iterator types"),
]


def _first_match(text: str, literals, pattern) -> Optional[int]:
    found = []
    for literal in literals:
        i = text.find(literal)
        while i >= 0:
            if pattern.match(text, i):
                found.append(i)
                break
            i = text.find(literal, i + 1)
    return min(found) if found else None


# The transform dialect's `transform.with_named_sequence` verifier builds a
# call graph before the symbol table is verified: a symbol defined twice
# asserts in SymbolTable's constructor.
_SYMBOL_DEFINITION = re.compile(
    r"\b(?:func\.func|transform\.named_sequence)\s+(?:(?:private|public|nested)\s+)?@([\w$.]+)")


_COMMENT = re.compile(r"//[^\n]*")
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
# The parser recurses once per nesting level: some 8,000 levels overflow an
# 8 MB stack. Real IR nests a few dozen deep.
MAX_NESTING = 1000
def _steps():
    import numpy as np
    steps = np.zeros(256, dtype=np.int8)
    for c in "[{(":
        steps[ord(c)] = 1
    for c in "]})":
        steps[ord(c)] = -1
    return steps


_STEPS = _steps()
# A pattern op (transform.apply_patterns.*) belongs in an apply_patterns
# region; elsewhere, transform.foreach's side-effect query casts it to a
# transform op (an assertion).
_PATTERN_SCOPE = re.compile(r"[{}]|\btransform\.apply_patterns(\.[\w.]+)?")


def _too_deep(text: str) -> Optional[int]:
    """Offset where bracket nesting first exceeds MAX_NESTING, or None.
    Vectorized: importer text runs to megabytes."""
    import numpy as np
    data = np.frombuffer(text.encode(), dtype=np.uint8)
    depth = np.cumsum(_STEPS[data], dtype=np.int32)
    if data.size == 0 or depth.max() <= MAX_NESTING:
        return None
    first = int(np.argmax(depth > MAX_NESTING))
    return len(text.encode()[:first].decode(errors="ignore"))


def _pattern_op_outside_apply_patterns(text: str) -> Optional[int]:
    regions: list = []
    opens_patterns = False
    for m in _PATTERN_SCOPE.finditer(text):
        token = m.group()
        if token == "{":
            regions.append(opens_patterns)
            opens_patterns = False
        elif token == "}":
            if regions:
                regions.pop()
        elif m.group(1):   # transform.apply_patterns.<pattern>
            if not (regions and regions[-1]):
                return m.start()
        else:              # transform.apply_patterns: its region comes next
            opens_patterns = True
    return None


def _position(text: str, offset: int) -> Tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def find_parser_crash(text: str) -> Optional[Tuple[int, int, str]]:
    """(line, column, what) of the first pattern in `text` that would crash
    the parser (or the verifier run right after it), or None."""
    # Comments blanked out, positions kept: a CHECK line is not IR.
    text = _COMMENT.sub(lambda m: " " * len(m.group()), text)
    for literals, pattern, what in _PATTERNS:
        at = _first_match(text, literals, pattern)
        if at is not None:
            return (*_position(text, at), what)
    unquoted = _STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)
    deep = _too_deep(unquoted)
    if deep is not None:
        return (*_position(text, deep), f"brackets nested more than {MAX_NESTING} deep")
    stray = _pattern_op_outside_apply_patterns(unquoted) if "transform.apply_patterns." in text else None
    if stray is not None:
        return (*_position(text, stray), "a transform.apply_patterns.* op outside a "
                                         "transform.apply_patterns region")
    if "transform.with_named_sequence" in text:
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
