"""The evaluator: walks the parsed tree over plain values (no ``eval``, no Python attribute
access: fields of Maps are entries, methods come from ``methods.py``'s tables).

Bounded as Painless is: every statement run inside a loop counts against
:data:`MAX_LOOP_STATEMENTS` (Painless's ``script.painless.max_loop_counter``), and past it the
script stops with Painless's ``painless_error``; Strings and collections are bounded in
``methods.py``; a :class:`~..cancellation.Cancellation` is checked every few thousand loop steps.
"""
from __future__ import annotations

from typing import Any

from ..cancellation import NO_LIMIT, Cancellation
from .errors import ScriptFault
from .javavalues import (arithmetic, bitwise, cast, compare, declare, equals, instance_of,
                         is_long, is_number, truth, type_name, wrap)
from .methods import (CONSTANT_VALUES, DocField, call_method, call_static, check_size)
from .parser import Node

MAX_LOOP_STATEMENTS = 1_000_000
LOOP_LIMIT_TEXT = "The maximum number of statements that can be executed in a loop has been reached."


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class Interpreter:
    """One run of one script: its variables and its loop budget."""

    def __init__(self, variables: dict[str, Any], cancel: Cancellation = NO_LIMIT) -> None:
        self.scopes: list[dict[str, Any]] = [variables]
        self.loop_budget = MAX_LOOP_STATEMENTS
        self.cancel = cancel

    def run(self, tree: Node) -> Any:
        """The script's value: its ``return``, or the value of its last expression statement."""
        try:
            return self.block(tree, top=True)
        except _Return as r:
            return r.value

    # --- statements ------------------------------------------------------------------------
    def execute(self, node: Node) -> Any:
        try:
            return getattr(self, "s_" + node.kind)(node)
        except ScriptFault as f:
            if f.end == 0 and f.start == 0:
                f.start, f.end = node.start, node.end
            raise

    def block(self, node: Node, top: bool = False) -> Any:
        self.scopes.append({})
        last = None
        try:
            for stmt in node.args[0]:
                last = self.execute(stmt)
        finally:
            self.scopes.pop()
        return last if top else None

    s_block = block

    def s_expr(self, node: Node) -> Any:
        return self.eval(node.args[0])

    def s_decl(self, node: Node) -> None:
        type_, names = node.args
        for name, init in names:
            value = None if init is None else self.eval(init)
            if init is None and type_ in ("int", "long", "short", "byte", "double", "float"):
                value = 0.0 if type_ in ("double", "float") else 0
            elif init is None and type_ == "boolean":
                value = False
            self.scopes[-1][name] = declare(type_, value)

    def s_if(self, node: Node) -> None:
        cond, then, other = node.args
        if self.condition(cond):
            self.scoped(then)
        elif other is not None:
            self.scoped(other)

    def scoped(self, node: Node) -> None:
        self.scopes.append({})
        try:
            self.execute(node)
        finally:
            self.scopes.pop()

    def tick(self) -> None:
        self.loop_budget -= 1
        if self.loop_budget < 0:
            raise ScriptFault("painless_error", LOOP_LIMIT_TEXT, 0, 0)
        if self.loop_budget % 4096 == 0:
            self.cancel.check()

    def loop_body(self, body: Node) -> bool:
        """Run one iteration; False when the loop must stop (``break``)."""
        self.tick()
        try:
            self.scoped(body)
        except _Break:
            return False
        except _Continue:
            pass
        return True

    def s_while(self, node: Node) -> None:
        cond, body = node.args
        while self.condition(cond):
            if not self.loop_body(body):
                return

    def s_for(self, node: Node) -> None:
        init, cond, update, body = node.args
        self.scopes.append({})
        try:
            if init is not None:
                self.execute(init) if init.kind == "decl" else self.eval(init)
            while cond is None or self.condition(cond):
                if not self.loop_body(body):
                    return
                if update is not None:
                    self.eval(update)
        finally:
            self.scopes.pop()

    def s_foreach(self, node: Node) -> None:
        name, iterable, body = node.args
        values = self.eval(iterable)
        if isinstance(values, dict):
            values = list(values)
        elif isinstance(values, DocField):
            values = values.values
        if not isinstance(values, list):
            raise ScriptFault("null_pointer_exception" if values is None else
                              "class_cast_exception",
                              f"Cannot iterate over [{type_name(values)}]", iterable.start,
                              iterable.end)
        for value in list(values):
            self.scopes.append({name: value})
            try:
                if not self.loop_body(body):
                    return
            finally:
                self.scopes.pop()

    def s_return(self, node: Node) -> None:
        raise _Return(None if node.args[0] is None else self.eval(node.args[0]))

    def s_break(self, node: Node) -> None:
        raise _Break()

    def s_continue(self, node: Node) -> None:
        raise _Continue()

    # --- expressions -----------------------------------------------------------------------
    def condition(self, node: Node) -> bool:
        return truth(self.eval(node))

    def eval(self, node: Node) -> Any:
        try:
            return getattr(self, "e_" + node.kind)(node)
        except ScriptFault as f:
            if f.end == 0 and f.start == 0:
                f.start, f.end = node.start, node.end
            raise
        except (TypeError, ValueError, ArithmeticError, LookupError) as e:
            # a value our tables did not foresee (an unhashable Map key, an infinite cast):
            # a runtime error of the script, never an error of the server
            raise ScriptFault("illegal_argument_exception", f"{type(e).__name__}: {e}",
                              node.start, node.end) from None

    def e_lit(self, node: Node) -> Any:
        return node.args[0]

    def e_var(self, node: Node) -> Any:
        name = node.args[0]
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise ScriptFault("illegal_argument_exception", f"cannot resolve symbol [{name}]",
                          node.start, node.end)

    def e_list(self, node: Node) -> list[Any]:
        return check_size([self.eval(x) for x in node.args[0]])

    def e_map(self, node: Node) -> dict[Any, Any]:
        return check_size({self.eval(k): self.eval(v) for k, v in node.args[0]})

    def e_new(self, node: Node) -> Any:
        cls, args = node.args
        values = [self.eval(a) for a in args]
        if cls == "ArrayList":
            src = values[0] if values else []
            if not isinstance(src, list):
                raise ScriptFault("class_cast_exception",
                                  f"Cannot cast {type_name(src)} to java.util.Collection", 0, 0)
            return list(src)
        src = values[0] if values and not is_number(values[0]) else {}
        if not isinstance(src, dict):
            raise ScriptFault("class_cast_exception",
                              f"Cannot cast {type_name(src)} to java.util.Map", 0, 0)
        return dict(src)

    def e_static(self, node: Node) -> Any:
        cls, name, args = node.args
        return call_static(cls, name, [self.eval(a) for a in args])

    def e_constant(self, node: Node) -> Any:
        return CONSTANT_VALUES[node.args]

    def e_field(self, node: Node) -> Any:
        target, name, nullsafe = node.args
        obj = self.eval(target)
        if obj is None and nullsafe:
            return None
        return read_field(obj, name)

    def e_index(self, node: Node) -> Any:
        return read_index(self.eval(node.args[0]), self.eval(node.args[1]))

    def e_call(self, node: Node) -> Any:
        target, name, args, nullsafe = node.args
        obj = self.eval(target)
        if obj is None and nullsafe:
            return None
        return call_method(obj, name, [self.eval(a) for a in args])

    def e_unary(self, node: Node) -> Any:
        op, x = node.args
        v = self.eval(x)
        if op == "!":
            return not truth(v)
        if v is None:
            raise ScriptFault("null_pointer_exception", f"cannot apply [{op}] to null", 0, 0)
        if not is_number(v):
            raise ScriptFault("class_cast_exception",
                              f"Cannot apply [{op}] operation to type [{type_name(v)}].", 0, 0)
        if op == "~":
            if isinstance(v, float):
                raise ScriptFault("class_cast_exception",
                                  "Cannot apply [~] operation to type [java.lang.Double].", 0, 0)
            return wrap(~v, is_long(v))
        if op == "-":
            return -v if isinstance(v, float) else wrap(-v, is_long(v))
        return v

    def e_and(self, node: Node) -> bool:
        return self.condition(node.args[0]) and self.condition(node.args[1])

    def e_or(self, node: Node) -> bool:
        return self.condition(node.args[0]) or self.condition(node.args[1])

    def e_cond(self, node: Node) -> Any:
        c, a, b = node.args
        return self.eval(a) if self.condition(c) else self.eval(b)

    def e_elvis(self, node: Node) -> Any:
        v = self.eval(node.args[0])
        return self.eval(node.args[1]) if v is None else v

    def e_instanceof(self, node: Node) -> bool:
        return instance_of(self.eval(node.args[0]), node.args[1])

    def e_cast(self, node: Node) -> Any:
        return cast(node.args[0], self.eval(node.args[1]))

    def e_bin(self, node: Node) -> Any:
        op, a, b = node.args
        return binary(op, self.eval(a), self.eval(b))

    def e_assign(self, node: Node) -> Any:
        op, target, value = node.args
        if op == "=":
            v = self.eval(value)
        else:
            v = binary(op[:-1], self.eval(target), self.eval(value))
            v = _compound_cast(self.eval(target), v)
        self.store(target, check_size(v))
        return v

    def e_incdec(self, node: Node) -> Any:
        op, target, prefix = node.args
        old = self.eval(target)
        new = _compound_cast(old, arithmetic("+" if op == "++" else "-", old, 1))
        self.store(target, new)
        return new if prefix else old

    def store(self, target: Node, value: Any) -> None:
        if target.kind == "var":
            name = target.args[0]
            for scope in reversed(self.scopes[1:]):
                if name in scope:
                    scope[name] = value
                    return
            raise ScriptFault("illegal_argument_exception",
                              f"cannot assign to [{name}]", target.start, target.end)
        obj = self.eval(target.args[0])
        key = target.args[1] if target.kind == "field" else self.eval(target.args[1])
        write_slot(obj, key, value, target)


def binary(op: str, a: Any, b: Any) -> Any:
    """``a op b`` for every binary operator of the subset."""
    if op in ("+", "-", "*", "/", "%"):
        return arithmetic(op, a, b)
    if op in ("&", "|", "^", "<<", ">>", ">>>"):
        return bitwise(op, a, b)
    if op == "==":
        return equals(a, b)
    if op == "!=":
        return not equals(a, b)
    if op == "===":
        return a is b or (is_number(a) and is_number(b) and type(a) is type(b) and a == b) \
            or (a is None and b is None)
    if op == "!==":
        return not binary("===", a, b)
    return compare(op, a, b)


def _compound_cast(old: Any, new: Any) -> Any:
    """``x += y`` keeps ``x``'s numeric type, as Java's compound assignment casts back."""
    if isinstance(old, int) and not isinstance(old, bool) and isinstance(new, float):
        return cast("long" if is_long(old) else "int", new)
    if isinstance(old, int) and not isinstance(old, bool) and isinstance(new, int) \
            and not is_long(old):
        return wrap(new, False)
    return new


def read_field(obj: Any, name: str) -> Any:
    """``obj.name``: a Map's entry, a List's ``length``/``empty``, ``doc['f'].value``."""
    if obj is None:
        raise ScriptFault("null_pointer_exception",
                          f"cannot access field [{name}] of a null value", 0, 0)
    if isinstance(obj, dict):
        return obj.get(name)
    if isinstance(obj, DocField):
        if name == "value":
            return obj.value()
        if name == "values":
            return list(obj.values)
        if name == "empty":
            return not obj.values
        if name == "length":
            return len(obj.values)
    if isinstance(obj, list) and name in ("length", "empty"):
        return len(obj) if name == "length" else not obj
    if isinstance(obj, str) and name == "empty":
        return not obj
    raise ScriptFault("illegal_argument_exception",
                      f"dynamic getter [{type_name(obj)}, {name}] not found", 0, 0)


def read_index(obj: Any, key: Any) -> Any:
    """``obj[key]``: a Map entry or a List element (Painless allows negative list indexes)."""
    if obj is None:
        raise ScriptFault("null_pointer_exception", "cannot index a null value", 0, 0)
    if isinstance(obj, dict):
        return obj.get(key)
    if isinstance(obj, (list, DocField)):
        values = obj if isinstance(obj, list) else obj.values
        return values[_list_slot(values, key)]
    raise ScriptFault("illegal_argument_exception",
                      f"Attempting to address a non-array-like type [{type_name(obj)}] as an "
                      "array.", 0, 0)


def _list_slot(values: list[Any], key: Any) -> int:
    if not isinstance(key, int) or isinstance(key, bool):
        raise ScriptFault("class_cast_exception",
                          f"Cannot cast {type_name(key)} to java.lang.Integer", 0, 0)
    i = key + len(values) if key < 0 else key
    if not 0 <= i < len(values):
        raise ScriptFault("index_out_of_bounds_exception",
                          f"Index {key} out of bounds for length {len(values)}", 0, 0)
    return i


def write_slot(obj: Any, key: Any, value: Any, target: Node) -> None:
    """``obj.key = value`` or ``obj[key] = value`` on a Map or a List."""
    if obj is None:
        raise ScriptFault("null_pointer_exception",
                          f"cannot set [{key}] on a null value", target.start, target.end)
    if isinstance(obj, dict):
        obj[key] = value
        check_size(obj)
    elif isinstance(obj, list) and target.kind == "index":
        obj[_list_slot(obj, key)] = value
    else:
        raise ScriptFault("illegal_argument_exception",
                          f"dynamic setter [{type_name(obj)}, {key}] not found",
                          target.start, target.end)
