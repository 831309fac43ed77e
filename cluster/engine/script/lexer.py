"""Painless source to tokens: numbers (``1``, ``2L``, ``1.5``, ``1e3``, ``0x1F``, ``2.0f``),
strings in single or double quotes, identifiers, keywords and operators (longest match first);
``//`` and ``/* */`` comments are skipped. Each token keeps its offsets for error positions."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .errors import ScriptFault

MAX_SOURCE = 16_384          # characters: Painless's own default max script length (16 KB)

OPERATORS = sorted("""
>>>= === !== >>> <<= >>= ?. ?: == != <= >= && || ++ -- += -= *= /= %= &= |= ^= << >> ->
=~ ==~ + - * / % < > = ! & | ^ ~ ? : ; , . ( ) [ ] { }
""".split(), key=len, reverse=True)

_NUMBER = re.compile(r"0[xX][0-9a-fA-F]+[lL]?|(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?[lLfFdD]?")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPACE = re.compile(r"(\s+|//[^\n]*|/\*.*?\*/)+", re.S)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str        # num | str | id | op | eof
    value: Any
    start: int
    end: int


class Long(int):
    """A Java ``long`` (a plain ``int`` is a Java ``int`` when it fits in 32 bits)."""

    __slots__ = ()


class Float(float):
    """A Java ``float`` literal (``2.0f``); arithmetic treats it as a double."""

    __slots__ = ()


def tokenize(source: str) -> list[Token]:
    """Every token of ``source`` then ``eof``; a character no token starts with is a fault."""
    if len(source) > MAX_SOURCE:
        raise ScriptFault("illegal_argument_exception",
                          f"Scripts may be no longer than {MAX_SOURCE} characters.  The passed "
                          f"in script is {len(source)} characters.", 0, 0)
    out: list[Token] = []
    i, n = 0, len(source)
    while True:
        m = _SPACE.match(source, i)
        if m:
            i = m.end()
        if i >= n:
            out.append(Token("eof", None, n, n))
            return out
        c = source[i]
        if c in "'\"":
            tok = _string(source, i)
        elif c.isdigit() or (c == "." and i + 1 < n and source[i + 1].isdigit()):
            tok = _number(source, i)
        elif (m := _IDENT.match(source, i)) is not None:
            tok = Token("id", m.group(), i, m.end())
        else:
            op = next((o for o in OPERATORS if source.startswith(o, i)), None)
            if op is None:
                raise ScriptFault("illegal_argument_exception",
                                  f"unexpected character [{c}].", i, i + 1)
            tok = Token("op", op, i, i + len(op))
        out.append(tok)
        i = tok.end


def _string(source: str, i: int) -> Token:
    quote, j, chars = source[i], i + 1, []
    while j < len(source):
        c = source[j]
        if c == "\\" and j + 1 < len(source) and source[j + 1] in ("\\", quote):
            chars.append(source[j + 1])
            j += 2
            continue
        if c == quote:
            return Token("str", "".join(chars), i, j + 1)
        chars.append(c)
        j += 1
    raise ScriptFault("illegal_argument_exception", "unterminated string.", i, len(source))


def _number(source: str, i: int) -> Token:
    m = _NUMBER.match(source, i)
    assert m is not None
    text = m.group()
    end = m.end()
    try:
        value = _number_value(text)
    except ValueError:
        raise ScriptFault("illegal_argument_exception", f"Invalid number [{text}].", i, end)
    return Token("num", value, i, end)


def _number_value(text: str) -> Any:
    suffix = text[-1].lower() if text[-1] in "lLfFdD" and not text.lower().startswith("0x") \
        or text[-1] in "lL" else ""
    body = text[:-1] if suffix else text
    if body.lower().startswith("0x"):
        value = int(body, 16)
    elif suffix in ("f", "d") or any(c in body for c in ".eE"):
        return Float(body) if suffix == "f" else float(body)
    else:
        value = int(body)
    if suffix == "l":
        if value >= 2 ** 63:
            raise ValueError(text)
        return Long(value)
    if value >= 2 ** 31:
        raise ValueError(text)
    return value
