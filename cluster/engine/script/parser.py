"""Tokens to a tree: a recursive-descent parser for the documented Painless subset.

Statements: expression statements, declarations (``def x = 1``, ``int i, j = 2``), blocks,
``if``/``else``, ``while``, ``for`` (classic and ``for (def x : list)``), ``return``,
``break``, ``continue``; a ``;`` may be left out before ``}`` and at the end. Expressions, from
the loosest: assignment (``=``, ``+=`` ...), ternary and Elvis ``?:``, ``||``, ``&&``,
``|``, ``^``, ``&``, equality (``==`` ``!=`` ``===`` ``!==``), comparison and
``instanceof``, shifts, ``+ -``, ``* / %``, unary (``! - + ~ ++ --``, casts), postfix
(``.f``, ``?.f``, ``.m(..)``, ``[i]``, ``++``, ``--``), primaries (literals, ``[1, 2]``,
``['a': 1]``, ``[:]``, ``new ArrayList()``, ``Math.max(..)``). Variables are resolved here:
a name that is neither declared nor one of the context's globals is a compile error, as in
Painless. Nesting is bounded, so no input reaches Python's recursion limit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import ScriptFault
from .lexer import Token, tokenize
from .score_helpers import HELPERS

MAX_DEPTH = 32           # nested expressions / statements (each level is ~15 Python frames)

TYPES = frozenset({
    "def", "int", "long", "short", "byte", "char", "float", "double", "boolean", "String",
    "Object", "Map", "HashMap", "LinkedHashMap", "List", "ArrayList", "Number", "Integer", "Long",
    "Double", "Float", "Boolean", "Collection"})
STATICS: dict[str, dict[str, tuple[int, ...]]] = {
    "Math": {"max": (2,), "min": (2,), "abs": (1,), "floor": (1,), "ceil": (1,),
             "round": (1,), "sqrt": (1,), "pow": (2,), "log": (1,), "log10": (1,),
             "exp": (1,), "signum": (1,), "cbrt": (1,), "hypot": (2,)},
    "String": {"valueOf": (1,), "join": (2,)},
    "Integer": {"parseInt": (1,), "valueOf": (1,), "toString": (1,)},
    "Long": {"parseLong": (1,), "valueOf": (1,), "toString": (1,)},
    "Double": {"parseDouble": (1,), "valueOf": (1,), "toString": (1,), "isNaN": (1,)},
}
CONSTANTS = {("Math", "PI"), ("Math", "E"), ("Integer", "MAX_VALUE"), ("Integer", "MIN_VALUE"),
             ("Long", "MAX_VALUE"), ("Long", "MIN_VALUE"), ("Double", "MAX_VALUE"),
             ("Double", "MIN_VALUE")}
NEW_TYPES = {"ArrayList": (0, 1), "HashMap": (0, 1), "LinkedHashMap": (0, 1)}
ASSIGN_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", ">>>="}
BINARY_LEVELS = [("|",), ("^",), ("&",), ("==", "!=", "===", "!=="),
                 ("<", "<=", ">", ">=", "instanceof"), ("<<", ">>", ">>>"), ("+", "-"),
                 ("*", "/", "%")]
REFUSED_OPS = {"->": "lambdas", "=~": "regexes", "==~": "regexes"}
REFUSED_WORDS = {"do", "try", "catch", "throw", "switch", "function", "void", "this",
                 "super", "class"}


@dataclass(frozen=True, slots=True)
class Node:
    """One node of the tree: ``kind`` names it, ``args`` its parts, offsets its source span."""

    kind: str
    args: tuple[Any, ...]
    start: int
    end: int


def parse(source: str, globals_: frozenset[str]) -> Node:
    """The tree of ``source`` (a ``block``) with ``globals_`` as the predefined variables."""
    return _Parser(tokenize(source), globals_).program()


def _fault(tok: Token, reason: str) -> ScriptFault:
    return ScriptFault("illegal_argument_exception", reason, tok.start, tok.end)


class _Parser:
    def __init__(self, tokens: list[Token], globals_: frozenset[str]) -> None:
        self.toks, self.i, self.depth = tokens, 0, 0
        self.scopes: list[set[str]] = [set(globals_)]

    # --- token helpers ---------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def at(self, *values: str) -> bool:
        t = self.tok
        return t.kind in ("op", "id") and t.value in values

    def take(self) -> Token:
        t = self.tok
        self.i = min(self.i + 1, len(self.toks) - 1)
        return t

    def expect(self, value: str) -> Token:
        if not self.at(value):
            raise self.unexpected()
        return self.take()

    def unexpected(self) -> ScriptFault:
        t = self.tok
        if t.kind == "eof":
            return _fault(t, "unexpected end of script.")
        if t.kind == "op" and t.value in REFUSED_OPS:
            return _fault(t, f"{REFUSED_OPS[t.value]} are not supported by this server's "
                             "Painless subset")
        return _fault(t, f"invalid sequence of tokens near ['{t.value}'].")

    def nest(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise _fault(self.tok, f"the script nests deeper than [{MAX_DEPTH}] levels")

    def declare(self, name_tok: Token) -> None:
        if any(name_tok.value in s for s in self.scopes[1:]) or name_tok.value in TYPES:
            raise _fault(name_tok, f"variable [{name_tok.value}] is already defined")
        self.scopes[-1].add(name_tok.value)

    # --- statements ------------------------------------------------------------------------
    def program(self) -> Node:
        start = self.tok.start
        self.scopes.append(set())
        stmts = []
        while self.tok.kind != "eof":
            stmts.append(self.statement())
        return Node("block", (tuple(stmts),), start, self.tok.end)

    def end_statement(self) -> None:
        if self.at(";"):
            self.take()
        elif not (self.at("}") or self.tok.kind == "eof"):
            raise self.unexpected()

    def statement(self) -> Node:
        self.nest()
        try:
            return self._statement()
        finally:
            self.depth -= 1

    def _statement(self) -> Node:
        t = self.tok
        if t.kind == "id" and t.value in REFUSED_WORDS:
            raise _fault(t, f"[{t.value}] is not supported by this server's Painless subset")
        if self.at("{"):
            return self.block()
        if self.at(";"):
            self.take()
            return Node("block", ((),), t.start, t.end)
        handler = {"if": self.if_, "while": self.while_, "for": self.for_,
                   "return": self.return_, "break": self.jump, "continue": self.jump}.get(
            t.value) if t.kind == "id" else None
        if handler is not None:
            return handler()
        if self.is_declaration():
            node = self.declaration()
        else:
            e = self.expression()
            node = Node("expr", (e,), e.start, e.end)
        self.end_statement()
        return node

    def block(self) -> Node:
        start = self.expect("{").start
        self.scopes.append(set())
        stmts = []
        while not self.at("}"):
            if self.tok.kind == "eof":
                raise self.unexpected()
            stmts.append(self.statement())
        self.scopes.pop()
        return Node("block", (tuple(stmts),), start, self.take().end)

    def scoped(self) -> Node:
        """A loop or branch body: its declarations end with it."""
        self.scopes.append(set())
        try:
            return self.statement()
        finally:
            self.scopes.pop()

    def is_declaration(self) -> bool:
        t, nxt = self.tok, self.peek()
        return t.kind == "id" and t.value in TYPES and nxt.kind == "id"

    def declaration(self) -> Node:
        type_tok = self.take()
        names = []
        while True:
            name = self.take()
            if name.kind != "id":
                raise _fault(name, f"invalid sequence of tokens near ['{name.value}'].")
            init = None
            if self.at("="):
                self.take()
                init = self.expression()
            self.declare(name)
            names.append((name.value, init))
            if not self.at(","):
                break
            self.take()
        return Node("decl", (type_tok.value, tuple(names)), type_tok.start, self.tok.start)

    def condition(self) -> Node:
        self.expect("(")
        c = self.expression()
        self.expect(")")
        return c

    def if_(self) -> Node:
        start = self.take().start
        cond = self.condition()
        then = self.scoped()
        other = None
        if self.at("else"):
            self.take()
            other = self.scoped()
        return Node("if", (cond, then, other), start, (other or then).end)

    def while_(self) -> Node:
        start = self.take().start
        cond = self.condition()
        body = self.scoped()
        return Node("while", (cond, body), start, body.end)

    def for_(self) -> Node:
        start = self.take().start
        self.expect("(")
        self.scopes.append(set())
        try:
            if self.is_declaration() and self.peek(2).kind == "op" and self.peek(2).value == ":":
                self.take()
                name = self.take()
                self.take()
                iterable = self.expression()
                self.expect(")")
                self.declare(name)
                body = self.scoped()
                return Node("foreach", (name.value, iterable, body), start, body.end)
            init = None
            if not self.at(";"):
                init = self.declaration() if self.is_declaration() else self.expression()
            self.expect(";")
            cond = None if self.at(";") else self.expression()
            self.expect(";")
            update = None if self.at(")") else self.expression()
            self.expect(")")
            body = self.scoped()
            return Node("for", (init, cond, update, body), start, body.end)
        finally:
            self.scopes.pop()

    def return_(self) -> Node:
        t = self.take()
        value = None
        if not (self.at(";", "}") or self.tok.kind == "eof"):
            value = self.expression()
        self.end_statement()
        return Node("return", (value,), t.start, t.end if value is None else value.end)

    def jump(self) -> Node:
        t = self.take()
        self.end_statement()
        return Node(t.value, (), t.start, t.end)

    # --- expressions -----------------------------------------------------------------------
    def expression(self) -> Node:
        self.nest()
        try:
            return self.assignment()
        finally:
            self.depth -= 1

    def assignment(self) -> Node:
        left = self.conditional()
        if self.tok.kind == "op" and self.tok.value in ASSIGN_OPS:
            op = self.take()
            if left.kind not in ("var", "field", "index"):
                raise _fault(op, "invalid assignment: cannot assign a value to this expression")
            if left.kind == "var" and left.args[0] in self.scopes[0] and \
                    not any(left.args[0] in s for s in self.scopes[1:]):
                raise _fault(op, f"invalid assignment: cannot assign a value to read-only "
                                 f"variable [{left.args[0]}]")
            value = self.expression()
            return Node("assign", (op.value, left, value), left.start, value.end)
        return left

    def conditional(self) -> Node:
        cond = self.binary_or()
        if self.at("?"):
            self.take()
            a = self.expression()
            self.expect(":")
            b = self.expression()
            return Node("cond", (cond, a, b), cond.start, b.end)
        if self.at("?:"):
            self.take()
            b = self.expression()
            return Node("elvis", (cond, b), cond.start, b.end)
        return cond

    def binary_or(self) -> Node:
        left = self.binary_and()
        while self.at("||"):
            self.take()
            right = self.binary_and()
            left = Node("or", (left, right), left.start, right.end)
        return left

    def binary_and(self) -> Node:
        left = self.binary(0)
        while self.at("&&"):
            self.take()
            right = self.binary(0)
            left = Node("and", (left, right), left.start, right.end)
        return left

    def binary(self, level: int) -> Node:
        if level == len(BINARY_LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while self.tok.kind in ("op", "id") and self.tok.value in BINARY_LEVELS[level]:
            op = self.take()
            if op.value == "instanceof":
                type_tok = self.take()
                if type_tok.value not in TYPES:
                    raise _fault(type_tok, f"cannot resolve type [{type_tok.value}]")
                left = Node("instanceof", (left, type_tok.value), left.start, type_tok.end)
                continue
            right = self.binary(level + 1)
            left = Node("bin", (op.value, left, right), left.start, right.end)
        return left

    def unary(self) -> Node:
        t = self.tok
        if self.at("!", "-", "+", "~"):
            self.take()
            self.nest()
            try:
                x = self.unary()
            finally:
                self.depth -= 1
            if t.value == "-" and x.kind == "lit" and isinstance(x.args[0], (int, float)) \
                    and not isinstance(x.args[0], bool):
                return Node("lit", (_negate(x.args[0]),), t.start, x.end)
            return Node("unary", (t.value, x), t.start, x.end)
        if self.at("++", "--"):
            self.take()
            x = self.unary()
            if x.kind not in ("var", "field", "index"):
                raise _fault(t, "invalid increment: cannot change this expression")
            return Node("incdec", (t.value, x, True), t.start, x.end)
        if self.at("(") and self.peek().kind == "id" and self.peek().value in TYPES \
                and self.peek(2).kind == "op" and self.peek(2).value == ")":
            self.take()
            type_tok = self.take()
            self.take()
            x = self.unary()
            return Node("cast", (type_tok.value, x), t.start, x.end)
        return self.postfix(self.primary())

    def postfix(self, x: Node) -> Node:
        while True:
            if self.at(".", "?."):
                nullsafe = self.take().value == "?."
                name = self.take()
                if name.kind != "id":
                    raise _fault(name, f"invalid sequence of tokens near ['{name.value}'].")
                if self.at("("):
                    args = self.arguments()
                    x = Node("call", (x, name.value, args, nullsafe), x.start, self.toks[
                        self.i - 1].end)
                else:
                    x = Node("field", (x, name.value, nullsafe), x.start, name.end)
            elif self.at("["):
                self.take()
                key = self.expression()
                end = self.expect("]").end
                x = Node("index", (x, key), x.start, end)
            elif self.at("++", "--") and x.kind in ("var", "field", "index"):
                op = self.take()
                x = Node("incdec", (op.value, x, False), x.start, op.end)
            else:
                return x

    def arguments(self) -> tuple[Node, ...]:
        self.expect("(")
        args = []
        while not self.at(")"):
            args.append(self.expression())
            if not self.at(")"):
                self.expect(",")
        self.take()
        return tuple(args)

    def primary(self) -> Node:
        t = self.tok
        if t.kind in ("num", "str"):
            self.take()
            return Node("lit", (t.value,), t.start, t.end)
        if self.at("("):
            self.take()
            e = self.expression()
            self.expect(")")
            return e
        if self.at("["):
            return self.collection()
        if t.kind == "id":
            return self.name()
        raise self.unexpected()

    def name(self) -> Node:
        t = self.take()
        if t.value in ("true", "false", "null"):
            return Node("lit", ({"true": True, "false": False, "null": None}[t.value],),
                        t.start, t.end)
        if t.value == "new":
            cls = self.take()
            if cls.value not in NEW_TYPES:
                raise _fault(cls, f"cannot resolve type [{cls.value}]")
            args = self.arguments()
            if len(args) not in NEW_TYPES[cls.value]:
                raise _fault(cls, f"constructor [{cls.value}, <init>/{len(args)}] not found")
            return Node("new", (cls.value, args), t.start, self.toks[self.i - 1].end)
        if t.value in STATICS and self.at("."):
            self.take()
            member = self.take()
            if self.at("("):
                args = self.arguments()
                if len(args) not in STATICS[t.value].get(member.value, ()):
                    raise _fault(member, f"unknown static method [{t.value}, {member.value}/"
                                         f"{len(args)}]")
                return Node("static", (t.value, member.value, args), t.start,
                            self.toks[self.i - 1].end)
            if (t.value, member.value) not in CONSTANTS:
                raise _fault(member, f"unknown field [{member.value}] for type [{t.value}]")
            return Node("constant", (t.value, member.value), t.start, member.end)
        if t.value in REFUSED_WORDS:
            raise _fault(t, f"[{t.value}] is not supported by this server's Painless subset")
        if t.value in HELPERS and self.at("(") and "_score" in self.scopes[0]:
            args = self.arguments()
            if len(args) != HELPERS[t.value][0]:
                raise _fault(t, f"Unknown call [{t.value}] with [{len(args)}] arguments.")
            return Node("static", ("", t.value, args), t.start, self.toks[self.i - 1].end)
        if not any(t.value in s for s in self.scopes):
            raise _fault(t, f"cannot resolve symbol [{t.value}]")
        return Node("var", (t.value,), t.start, t.end)

    def collection(self) -> Node:
        start = self.take().start
        if self.at(":"):
            self.take()
            return Node("map", ((),), start, self.expect("]").end)
        items: list[Any] = []
        is_map = None
        while not self.at("]"):
            key = self.expression()
            if is_map is None:
                is_map = self.at(":")
            if is_map:
                self.expect(":")
                items.append((key, self.expression()))
            else:
                items.append(key)
            if not self.at("]"):
                self.expect(",")
        end = self.take().end
        return Node("map" if is_map else "list", (tuple(items),), start, end)


def _negate(value: Any) -> Any:
    return type(value)(-value) if not isinstance(value, float) else -value
