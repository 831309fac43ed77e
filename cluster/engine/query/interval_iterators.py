"""Lucene's interval iterators over one document, on materialised lists.

An interval is ``(start, end, gaps)`` in token positions (inclusive). Each function takes the
interval lists of its sources (in the order Lucene's iterators yield them: by start, then end)
and returns the list its Lucene counterpart would yield, walking the same pointer moves as
``OrderedIntervalsSource``, ``UnorderedIntervalsSource``, ``BlockIntervalsSource`` (phrase),
``DisjunctionIntervalsSource``, ``RepeatingIntervalsSource`` and the filters of ``Intervals``
(``containing``, ``before``, ...). A sub-list is walked once per document, so each function is
O(sum of its inputs' lengths x number of inputs).
"""
from __future__ import annotations

Interval = tuple[int, ...]   # (start, end, gaps[, width when it is not end - start + 1])
NO_MORE = 2147483647


class _It:
    """A position in one interval list, with Lucene's ``start()``/``end()`` conventions:
    -1 before the first interval, ``NO_MORE`` after the last."""

    __slots__ = ("items", "i")

    def __init__(self, items: list[Interval]) -> None:
        self.items, self.i = items, -1

    def start(self) -> int:
        return -1 if self.i < 0 else NO_MORE if self.i >= len(self.items) else self.items[self.i][0]

    def end(self) -> int:
        return -1 if self.i < 0 else NO_MORE if self.i >= len(self.items) else self.items[self.i][1]

    def width(self) -> int:
        x = self.items[self.i]
        return x[3] if len(x) > 3 else x[1] - x[0] + 1

    def next(self) -> int:
        self.i = min(self.i + 1, len(self.items))
        return self.start()


def ordered(lists: list[list[Interval]]) -> list[Interval]:
    """``OrderedIntervalIterator``: minimal intervals holding one interval of each source, in
    order and without overlap; gaps = width minus the parts' widths."""
    if any(not x for x in lists):
        return []
    its = [_It(x) for x in lists]
    its[0].next()
    out: list[Interval] = []
    state = [1]
    while True:
        got = _ordered_next(its, state)
        if got[0] == NO_MORE:
            return out
        out.append(got)


def _ordered_next(its: list[_It], state: list[int]) -> Interval:
    """One ``nextInterval()`` of Lucene's ordered iterator; ``state[0]`` is its ``i``."""
    start = end = gaps = NO_MORE
    last_start, minimizing = NO_MORE, False
    cur = state[0]
    while True:
        prev_end = its[cur - 1].end()
        while True:
            if prev_end >= last_start:
                state[0] = cur
                return start, end, gaps
            if cur == len(its):
                break
            it = its[cur]
            if minimizing and it.start() > prev_end:
                break
            while True:
                if it.end() >= last_start or it.next() == NO_MORE:
                    state[0] = cur
                    return start, end, gaps
                if it.start() > prev_end:
                    break
            cur += 1
            prev_end = it.end()
        first, last = its[0], its[-1]
        start = first.start()
        if start == NO_MORE:
            state[0] = cur
            return NO_MORE, NO_MORE, NO_MORE
        end = last.end()
        gaps = end - start + 1 - sum(x.width() for x in its)
        cur = 1
        if first.next() == NO_MORE:
            state[0] = cur
            return start, end, gaps
        last_start, minimizing = last.start(), True


def unordered(lists: list[list[Interval]]) -> list[Interval]:
    """``UnorderedIntervalIterator`` (overlaps allowed): minimal intervals holding one
    interval of each source, in any order."""
    if any(not x for x in lists):
        return []
    its = [_It(x) for x in lists]
    queue: list[_It] = []
    queue_end = -1
    for it in its:
        it.next()
        queue.append(it)
        queue_end = max(queue_end, it.end())

    def top() -> _It:
        return min(queue, key=lambda x: (x.start(), -x.end()))

    out: list[Interval] = []
    start = -1
    while True:
        while len(queue) == len(its) and top().start() == start:
            it = top()
            queue.remove(it)
            if it.next() != NO_MORE:
                queue.append(it)
                queue_end = max(queue_end, it.end())
        if len(queue) < len(its):
            return out
        while True:
            t = top()
            start, end = t.start(), queue_end
            gaps = end - start + 1 - sum(x.width() for x in its)
            if t.end() == end:
                break
            queue.remove(t)
            if t.next() != NO_MORE:
                queue.append(t)
                queue_end = max(queue_end, t.end())
            if not (len(queue) == len(its) and end == queue_end):
                break
        out.append((start, end, gaps))


def phrase(lists: list[list[Interval]]) -> list[Interval]:
    """``BlockIntervalIterator``: each source's interval starts right after the previous
    one's end."""
    if any(not x for x in lists):
        return []
    its = [_It(x) for x in lists]
    out: list[Interval] = []
    while True:
        if its[0].next() == NO_MORE:
            return out
        i = 1
        while i < len(its):
            while its[i].start() <= its[i - 1].end():
                if its[i].next() == NO_MORE:
                    return out
            if its[i].start() == its[i - 1].end() + 1:
                i += 1
            else:
                if its[0].next() == NO_MORE:
                    return out
                i = 1
        out.append((its[0].start(), its[-1].end(), 0))


def disjunction(lists: list[list[Interval]]) -> list[Interval]:
    """``DisjunctionIntervalIterator``: the sources' intervals by end, then narrowest first
    (Lucene's ``IntervalQueue``); after each one, the sources whose current interval contains
    it move on, so a wider interval holding an earlier one is never yielded."""
    its = [_It(x) for x in lists if x]
    for it in its:
        it.next()
    out: list[Interval] = []
    while its:
        cur = min(its, key=lambda x: (x.end(), -x.start()))
        s, e = cur.start(), cur.end()
        out.append(cur.items[cur.i])
        while its:
            t = min(its, key=lambda x: (x.end(), -x.start()))
            if not (t.start() <= s <= t.end() and t.start() <= e <= t.end()):
                break
            if t.next() == NO_MORE:
                its.remove(t)
    return out


def repeating(items: list[Interval], n: int) -> list[Interval]:
    """``RepeatingIntervalsSource``: every run of ``n`` consecutive intervals of one source.
    Its width is Lucene's ``DuplicateIntervalIterator.width()`` (the sum over the run of
    ``start - end + 1``, as written there) and its gaps the span minus that width."""
    out: list[Interval] = []
    for k in range(len(items) - n + 1):
        run = items[k:k + n]
        width = sum(x[0] - x[1] + 1 for x in run)
        out.append((run[0][0], run[-1][1], run[-1][1] - run[0][0] + 1 - width, width))
    return out


def filtered(kind: str, items: list[Interval], ref: list[Interval]) -> list[Interval]:
    """The filters of ``Intervals``: keep the intervals of ``items`` by where ``ref``'s are."""
    def any_ref(test: object) -> bool:
        return any(test(r) for r in ref)  # type: ignore[operator]
    keep = {
        "containing": lambda a: any_ref(lambda r: a[0] <= r[0] and r[1] <= a[1]),
        "contained_by": lambda a: any_ref(lambda r: r[0] <= a[0] and a[1] <= r[1]),
        "overlapping": lambda a: any_ref(lambda r: a[0] <= r[1] and r[0] <= a[1]),
        "before": lambda a: any_ref(lambda r: a[1] < r[0]),
        "after": lambda a: any_ref(lambda r: a[0] > r[1]),
    }
    if kind.startswith("not_"):
        test = keep[kind[4:]]
        return [a for a in items if not test(a)]
    return [a for a in items if keep[kind](a)]
