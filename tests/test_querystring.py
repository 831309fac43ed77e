"""``query_string`` / ``simple_query_string`` syntax -> query-node trees
(``cluster/engine/query/query_string.py``)."""
from __future__ import annotations

import pytest

from shardsearch.cluster.errors import ParsingError, SearchError, TooManyClauses
from shardsearch.cluster.engine.query.parse_full_text import simple_flags
from shardsearch.cluster.engine.query.nodes import (Bool, DisMax, Exists, Fuzzy, FuzzyOptions,
                                                    Match, MatchAll, MatchNone, MatchPhrase,
                                                    MultiMatch, Prefix, QueryString, Range,
                                                    Wildcard)
from shardsearch.cluster.engine.query.query_string import expand_query_string

ALL = [("*", 1.0)]


def qs(query: str, fields=ALL, **kw):
    """Expand a ``query_string`` with ``fields`` as the default fields."""
    return expand_query_string(QueryString(query=query, **kw), fields)


F = [("f", 1.0)]


def sqs(query: str, fields=F, **kw):
    """Expand a ``simple_query_string`` with ``fields`` (one field ``f`` unless given) as the
    default fields."""
    return expand_query_string(QueryString(query=query, simple=True, **kw), fields)


def m(text: str, field: str = "*", **kw) -> Match:
    return Match(field=field, text=text, **kw)


def mm(text: str, fields=ALL, **kw) -> MultiMatch:
    """Words side by side over several fields (or a pattern): one ``best_fields`` text."""
    return MultiMatch(fields=tuple(fields), text=text, **kw)


def fz(text: str, options: FuzzyOptions, **kw) -> Fuzzy:
    """A query string's fuzzy term on the default fields (``*``, a pattern)."""
    return Fuzzy(field="*", value=text, options=options, **kw)


def sfz(text: str, options: FuzzyOptions, **kw) -> Fuzzy:
    """A simple query string's fuzzy term on field ``f``."""
    return Fuzzy(field="f", value=text, options=options, **kw)


def not_(*queries) -> Bool:
    return Bool(must=(MatchAll(),), must_not=tuple(queries))


# --------------------------------------------------------------------------- query_string: terms


def test_a_single_bare_word_is_a_match_on_the_default_field():
    assert qs("quick") == m("quick")


def test_bare_words_on_one_field_are_joined_with_the_default_operator():
    t = "title"
    assert qs("quick fox", [(t, 1.0)]) == Bool(should=(m("quick", t), m("fox", t)))
    assert qs("quick fox", [(t, 1.0)], default_operator="and") == Bool(
        must=(m("quick", t, operator="and"), m("fox", t, operator="and")))


def test_bare_words_side_by_side_over_several_fields_are_one_multi_match_of_the_type():
    assert qs("quick fox") == mm("quick fox")
    assert qs("quick fox", default_operator="and") == mm("quick fox", operator="and")
    two = [("title", 2.0), ("body", 1.0)]
    assert qs("quick fox", two, type="most_fields", tie_breaker=0.2) == mm(
        "quick fox", two, type="most_fields", tie_breaker=0.2)
    assert qs("fox", [("title", 1.0)], type="phrase") == mm("fox", [("title", 1.0)],
                                                            type="phrase")


def test_a_run_of_words_stops_at_a_boost_a_field_or_a_conjunction():
    assert qs("a b^2 c") == Bool(should=(m("a"), m("b", boost=2.0), m("c")))
    assert qs("a b title:c") == Bool(should=(mm("a b"), m("c", "title")))
    assert qs("a title:b c") == Bool(should=(m("a"), m("b", "title"), m("c")))
    assert qs("a OR b c") == Bool(should=(m("a"), m("b"), m("c")))


def test_other_per_field_queries_use_the_types_tie_breaker():
    assert qs("fo*", type="most_fields") == DisMax(queries=(Prefix(field="*", value="fo"),),
                                                   tie_breaker=1.0)
    assert qs("fo*", [("t", 1.0), ("u", 1.0)], tie_breaker=0.3) == DisMax(
        queries=(Prefix(field="t", value="fo"), Prefix(field="u", value="fo")),
        tie_breaker=0.3)


def test_field_value_is_a_match_on_that_field():
    assert qs("title:fox") == m("fox", "title")


def test_whitespace_after_the_field_colon_is_allowed():
    assert qs("title: fox") == m("fox", "title")


def test_explicit_fields_override_the_default_fields():
    assert qs("fox", fields=[("body", 1.0)]) == m("fox", "body")
    assert qs("title:fox", fields=[("body", 1.0)]) == m("fox", "title")


def test_qs_fields_take_precedence_over_default_fields():
    q = expand_query_string(QueryString(query="fox", fields=(("title", 1.0),)), [("body", 1.0)])
    assert q == m("fox", "title")


def test_several_default_fields_make_a_dis_max_with_field_boosts():
    assert qs("fox", fields=[("title", 2.0), ("body", 1.0)]) == DisMax(
        queries=(m("fox", "title", boost=2.0), m("fox", "body")), tie_breaker=0.0)


def test_a_single_boosted_default_field_boosts_the_match():
    assert qs("fox", fields=[("title", 3.0)]) == m("fox", "title", boost=3.0)


def test_field_patterns_are_left_for_the_caller_to_expand():
    assert qs("title\\*:fox") == m("fox", "title*")
    assert qs("fox", fields=[("name.*", 1.0)]) == m("fox", "name.*")


def test_an_unescaped_wildcard_field_name_is_a_syntax_error():
    with pytest.raises(ParsingError):
        qs("title*:fox")


def test_words_are_not_analyzed():
    assert qs("Quick-Brown") == m("Quick-Brown")


def test_the_analyzer_is_passed_to_match_and_phrase_nodes():
    assert qs('fox "a b"', analyzer="english") == Bool(should=(
        m("fox", analyzer="english"), MatchPhrase(field="*", text="a b", analyzer="english")))


def test_an_empty_query_matches_nothing():
    assert qs("") == MatchNone()
    assert qs("   ") == MatchNone()


# --------------------------------------------------------------------------- phrases


def test_a_quoted_phrase_is_a_match_phrase():
    assert qs('"quick brown fox"') == MatchPhrase(field="*", text="quick brown fox")
    assert qs('title:"quick fox"') == MatchPhrase(field="title", text="quick fox")


def test_phrase_slop_comes_from_the_tilde():
    assert qs('"quick fox"~2') == MatchPhrase(field="*", text="quick fox", slop=2)
    assert qs('"quick fox"~') == MatchPhrase(field="*", text="quick fox", slop=0)


def test_a_phrase_on_several_fields_is_a_dis_max():
    assert qs('"a b"', fields=[("t", 1.0), ("u", 2.0)]) == DisMax(queries=(
        MatchPhrase(field="t", text="a b"), MatchPhrase(field="u", text="a b", boost=2.0)))


def test_escaped_quotes_stay_inside_a_phrase():
    assert qs(r'"say \"hi\""') == MatchPhrase(field="*", text='say "hi"')


# --------------------------------------------------------------------------- boolean operators


def test_and_or_not_keywords():
    a, b = m("a"), m("b")
    assert qs("a AND b") == Bool(must=(a, b))
    assert qs("a OR b") == Bool(should=(a, b))
    assert qs("a AND NOT b") == Bool(must=(a,), must_not=(b,))


def test_symbol_operators_mean_the_same_as_the_keywords():
    assert qs("a && b") == qs("a AND b")
    assert qs("a || b") == qs("a OR b")
    assert qs("a && !b") == qs("a AND NOT b")


def test_lowercase_keywords_are_plain_words():
    assert qs("a and b") == mm("a and b")


def test_and_and_or_join_flat_as_lucenes_add_clause():
    """No precedence: ``AND`` requires both neighbours, ``OR`` leaves the next one optional."""
    a, b, c = m("a"), m("b"), m("c")
    assert qs("a AND b OR c") == Bool(must=(a, b), should=(c,))
    assert qs("a OR b AND c") == Bool(must=(b, c), should=(a,))


def test_or_under_the_and_default_makes_the_previous_clause_optional():
    a, b, c = (m(x, "t", operator="and") for x in "abc")
    assert qs("a b OR c", [("t", 1.0)], default_operator="and") == Bool(
        must=(a,), should=(b, c))
    assert qs("a OR b c", [("t", 1.0)], default_operator="and") == Bool(
        must=(c,), should=(a, b))


def test_chains_of_one_operator_are_flat():
    assert qs("a OR b OR c") == Bool(should=(m("a"), m("b"), m("c")))
    assert qs("a AND b AND c") == Bool(must=(m("a"), m("b"), m("c")))


def test_plus_makes_a_clause_required_and_minus_prohibits_it():
    assert qs("+a b -c") == Bool(must=(m("a"),), should=(m("b"),), must_not=(m("c"),))


def test_a_minus_inside_a_word_is_part_of_the_word():
    assert qs("wi-fi") == m("wi-fi")


def test_not_applies_to_the_next_clause_only():
    assert qs("NOT a b") == Bool(should=(m("b"),), must_not=(m("a"),))
    assert qs("!a b") == qs("NOT a b")


def test_queries_of_only_negative_clauses_match_everything_else():
    assert qs("-a") == not_(m("a"))
    assert qs("NOT a") == not_(m("a"))
    assert qs("-a -b") == not_(m("a"), m("b"))


def test_a_negative_only_group_matches_everything_except_its_clauses():
    assert qs("a AND (-b)") == Bool(must=(m("a"), not_(m("b"))))


def test_parentheses_group_clauses():
    assert qs("(a OR b) AND c") == Bool(must=(Bool(should=(m("a"), m("b"))), m("c")))
    assert qs("((a))") == m("a")


def test_a_field_before_a_group_applies_to_every_clause_in_it():
    assert qs("title:(quick fox)") == Bool(should=(m("quick", "title"), m("fox", "title")))
    assert qs('title:(a OR "b c")') == Bool(should=(
        m("a", "title"), MatchPhrase(field="title", text="b c")))


def test_a_field_inside_a_field_group_wins():
    assert qs("title:(a body:b)") == Bool(should=(m("a", "title"), m("b", "body")))


def test_operators_and_words_mix():
    assert qs('title:fox AND (body:"lazy dog" OR -body:cat)') == Bool(must=(
        m("fox", "title"),
        Bool(should=(MatchPhrase(field="body", text="lazy dog"),),
             must_not=(m("cat", "body"),))))


# --------------------------------------------------------------------------- boosts


def test_a_caret_boosts_a_term():
    assert qs("fox^2") == m("fox", boost=2.0)
    assert qs("title:fox^0.5") == m("fox", "title", boost=0.5)


def test_term_boost_multiplies_the_field_boost():
    assert qs("fox^2", fields=[("title", 3.0)]) == m("fox", "title", boost=6.0)
    assert qs("fox^2", fields=[("t", 3.0), ("u", 1.0)]) == DisMax(
        queries=(m("fox", "t", boost=3.0), m("fox", "u")), boost=2.0)


def test_a_caret_boosts_phrases_groups_and_ranges():
    assert qs('"a b"~1^3') == MatchPhrase(field="*", text="a b", slop=1, boost=3.0)
    assert qs('"a b"^3~1') == MatchPhrase(field="*", text="a b", slop=1, boost=3.0)
    assert qs("(a b)^2") == mm("a b", boost=2.0)
    assert qs("n:[1 TO 2]^4") == Range(field="n", gte="1", lte="2", boost=4.0)


def test_the_query_string_boost_applies_to_the_whole_query():
    assert qs("a b", boost=2.0) == mm("a b", boost=2.0)


def test_term_tilde_is_a_fuzzy_term_with_the_query_fuzziness_or_its_own():
    assert qs("fox~", fuzzy=FuzzyOptions(fuzziness=1, prefix_length=2)) == \
        fz("fox", FuzzyOptions(fuzziness=1, prefix_length=2))
    assert qs("fox~0") == fz("fox", FuzzyOptions(fuzziness="0"))
    assert qs("fox~1^2") == fz("fox", FuzzyOptions(fuzziness="1"), boost=2.0)
    assert qs("fo*~1") == Prefix(field="*", value="fo")   # a wildcard term is not fuzzy


# --------------------------------------------------------------------------- wildcards


def test_a_trailing_star_is_a_prefix_query():
    assert qs("qui*") == Prefix(field="*", value="qui")
    assert qs("title:qui*") == Prefix(field="title", value="qui")


def test_other_wildcards_are_wildcard_queries():
    assert qs("qu?ck") == Wildcard(field="*", pattern="qu?ck")
    assert qs("q*k") == Wildcard(field="*", pattern="q*k")
    assert qs("*ick") == Wildcard(field="*", pattern="*ick")
    assert qs("qu*ck*") == Wildcard(field="*", pattern="qu*ck*")
    assert qs("qui**") == Wildcard(field="*", pattern="qui**")


def test_prefix_and_wildcard_on_several_fields_make_a_dis_max():
    assert qs("qu*", fields=[("t", 1.0), ("u", 2.0)]) == DisMax(queries=(
        Prefix(field="t", value="qu"), Prefix(field="u", value="qu", boost=2.0)))


def test_a_lone_star_or_star_colon_star_matches_all():
    assert qs("*") == MatchAll()
    assert qs("*:*") == MatchAll()


def test_field_star_means_the_field_exists():
    assert qs("title:*") == Exists(field="title")


def test_escaped_wildcards_are_literal():
    assert qs(r"title:qui\*") == m("qui*", "title")
    assert qs(r"a\*b*") == Prefix(field="*", value="a*b")
    assert qs(r"a\*b?") == Wildcard(field="*", pattern=r"a\*b?")


# --------------------------------------------------------------------------- ranges


def test_square_brackets_are_an_inclusive_range():
    assert qs("age:[10 TO 20]") == Range(field="age", gte="10", lte="20")


def test_curly_brackets_are_an_exclusive_range():
    assert qs("age:{10 TO 20}") == Range(field="age", gt="10", lt="20")


def test_mixed_brackets_mix_inclusive_and_exclusive_ends():
    assert qs("age:[10 TO 20}") == Range(field="age", gte="10", lt="20")
    assert qs("age:{10 TO 20]") == Range(field="age", gt="10", lte="20")


def test_a_star_leaves_a_range_end_open():
    assert qs("age:[10 TO *]") == Range(field="age", gte="10")
    assert qs("age:{* TO 20}") == Range(field="age", lt="20")
    assert qs("age:[* TO *]") == Range(field="age")


def test_quoted_range_bounds_keep_spaces_and_stars():
    assert qs('d:["2020-01-01 00:00" TO "*"]') == Range(field="d", gte="2020-01-01 00:00",
                                                        lte="*")


def test_range_bounds_may_be_dates_and_to_is_optional():
    assert qs("d:[2020-01-01 TO 2020-12-31]") == Range(field="d", gte="2020-01-01",
                                                       lte="2020-12-31")
    assert qs("d:[a b]") == Range(field="d", gte="a", lte="b")


def test_a_range_without_a_field_goes_to_the_default_fields():
    assert qs("[1 TO 2]", fields=[("n", 1.0)]) == Range(field="n", gte="1", lte="2")


def test_comparison_operators_are_one_sided_ranges():
    assert qs("age:>5") == Range(field="age", gt="5")
    assert qs("age:>=5") == Range(field="age", gte="5")
    assert qs("age:<5") == Range(field="age", lt="5")
    assert qs("age:<=5") == Range(field="age", lte="5")
    assert qs("d:>=2020-01-01") == Range(field="d", gte="2020-01-01")


def test_comparison_operators_need_an_explicit_field():
    assert qs(">5") == m(">5")


# --------------------------------------------------------------------------- exists / escapes


def test_exists_field_is_an_exists_query():
    assert qs("_exists_:title") == Exists(field="title")
    assert qs("a AND NOT _exists_:title") == Bool(must=(m("a"),), must_not=(Exists(field="title"),))


def test_backslash_escapes_special_characters():
    assert qs(r"a\:b") == m("a:b")
    assert qs(r"\(x\)") == m("(x)")
    assert qs(r"\-x") == m("-x")
    assert qs(r"\AND") == m("AND")
    assert qs(r"title:a\ b") == m("a b", "title")


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("query", [
    "(a", "a)", "((a) b", "a (b))",             # unbalanced parentheses
    '"a b', 'title:"a',                          # unbalanced quote
    "a AND", "AND a", "a OR OR b", "a AND OR b", "NOT", "a NOT", "+", "a -", "!",  # operators
    "title:", "title: AND a", "title:)", "_exists_:",                            # empty field
    "()", "a^", "a^x", "a\\", "[1 TO 2", "f:[1 TO]", "a]", "~2", "^2", "a:b:c", "--a",
])
def test_bad_syntax_raises_a_query_shard_exception(query):
    with pytest.raises(ParsingError) as info:
        qs(query)
    err = info.value
    assert err.es_type == "query_shard_exception"
    assert err.reason == f"Failed to parse query [{query}]"
    assert err.status == 400


def test_thirty_levels_of_parentheses_are_allowed():
    assert qs("(" * 30 + "a" + ")" * 30) == m("a")


def test_more_than_thirty_levels_of_parentheses_are_too_many_nested_clauses():
    with pytest.raises(TooManyClauses) as info:
        qs("(" * 31 + "a" + ")" * 31)
    err = info.value
    assert err.es_type == "too_many_nested_clauses"
    assert err.reason == ("Query contains too many nested clauses; maxClauseCount is set to "
                          "1024")
    assert err.status == 400


def test_deep_nesting_is_refused_before_running_out_of_stack():
    with pytest.raises(TooManyClauses):
        qs("(" * 5000 + "a" + ")" * 5000)


# --------------------------------------------------------------------------- simple_query_string


def test_simple_bare_words_are_joined_with_the_default_operator():
    assert sqs("quick fox") == Bool(should=(m("quick", "f"), m("fox", "f")))
    assert sqs("quick fox", default_operator="and") == Bool(
        must=(m("quick", "f", operator="and"), m("fox", "f", operator="and")))


def test_simple_plus_is_and_and_pipe_is_or():
    assert sqs("a + b") == Bool(must=(m("a", "f"), m("b", "f")))
    assert sqs("a | b", default_operator="and") == Bool(
        should=(m("a", "f", operator="and"), m("b", "f", operator="and")))


def test_simple_operators_apply_left_to_right():
    assert sqs("a | b + c") == Bool(must=(Bool(should=(m("a", "f"), m("b", "f"))), m("c", "f")))
    assert sqs("a + b | c") == Bool(should=(Bool(must=(m("a", "f"), m("b", "f"))), m("c", "f")))


def test_simple_minus_negates_the_next_clause():
    assert sqs("-a") == not_(m("a", "f"))
    assert sqs("a -b") == Bool(should=(m("a", "f"), not_(m("b", "f"))))
    assert sqs("a + -b") == Bool(must=(m("a", "f"), not_(m("b", "f"))))


def test_simple_double_minus_cancels_and_a_detached_minus_is_ignored():
    assert sqs("--a") == m("a", "f")
    assert sqs("- a") == m("a", "f")


def test_simple_quoted_phrase_with_slop():
    assert sqs('"quick fox"') == MatchPhrase(field="f", text="quick fox")
    assert sqs('"quick fox"~3') == MatchPhrase(field="f", text="quick fox", slop=3)


def test_simple_trailing_star_is_a_prefix_and_other_stars_are_text():
    assert sqs("qui*") == Prefix(field="f", value="qui")
    assert sqs("q*k") == m("q*k", "f")
    assert sqs("*", ALL) == MatchAll()


def test_simple_parentheses_group_clauses():
    assert sqs("(a | b) + c") == Bool(must=(Bool(should=(m("a", "f"), m("b", "f"))), m("c", "f")))


def test_simple_term_tilde_is_a_fuzzy_term_of_n_edits_or_two():
    assert sqs("fox~0") == m("fox", "f")
    assert sqs("fox~1.5") == m("fox", "f")          # not an integer: no edits, as Lucene
    assert sqs("fox~1") == sfz("fox", FuzzyOptions(fuzziness=1))
    assert sqs("fox~") == sfz("fox", FuzzyOptions(fuzziness=2))


def test_simple_field_syntax_is_plain_text():
    assert sqs("title:fox") == m("title:fox", "f")


def test_simple_several_fields_add_their_scores():
    # Elasticsearch builds simple_query_string as most_fields: a dis_max with tie_breaker 1
    assert sqs("fox", fields=[("t", 1.0), ("u", 2.0)]) == DisMax(
        queries=(m("fox", "t"), m("fox", "u", boost=2.0)), tie_breaker=1.0)


def test_simple_escapes_operators():
    assert sqs(r"a\+b") == m("a+b", "f")
    assert sqs(r'"a \"b\""') == MatchPhrase(field="f", text='a "b"')


def test_simple_drops_an_unclosed_quote_or_parenthesis():
    assert sqs('"quick fox') == Bool(should=(m("quick", "f"), m("fox", "f")))
    assert sqs("(a b") == Bool(should=(m("a", "f"), m("b", "f")))
    assert sqs("a b)") == Bool(should=(m("a", "f"), m("b", "f")))


@pytest.mark.parametrize("query", [
    "(", ")", '"', "+", "|", "-", "()", '""', "a +", "| a", "((a)", "a))", '"a" "', "\\", "~2",
    "a^2", "AND OR NOT", "[1 TO", "title:", "((((", "a\\",
])
def test_simple_never_raises_on_bad_syntax(query):
    sqs(query)


def test_simple_with_nothing_to_search_matches_nothing():
    assert sqs("") == MatchNone()
    assert sqs("-") == MatchNone()
    assert sqs("()") == MatchNone()


def test_simple_more_than_thirty_levels_of_parentheses_are_too_many_nested_clauses():
    assert sqs("(" * 30 + "a" + ")" * 30) == m("a", "f")
    with pytest.raises(TooManyClauses):
        sqs("(" * 31 + "a" + ")" * 31)


def test_simple_unbalanced_input_stays_fast():
    assert sqs("(" * 50000 + '"' * 50000) == MatchNone()


# --------------------------------------------------------------------------- minimum_should_match


def test_minimum_should_match_applies_to_the_top_level_boolean_of_simple_query_string():
    assert sqs("a b c", minimum_should_match=2) == Bool(
        should=(m("a", "f"), m("b", "f"), m("c", "f")), minimum_should_match=2)


def test_minimum_should_match_applies_to_the_top_level_boolean_of_query_string():
    got = qs("a b c", [("title", 1.0)], minimum_should_match="2")
    assert isinstance(got, Bool) and got.minimum_should_match == "2"
    assert qs("a b c", minimum_should_match="2") == mm("a b c")   # no boolean on top


def test_minimum_should_match_leaves_a_single_clause_alone():
    assert sqs("a", minimum_should_match=2) == m("a", "f")


def test_simple_flags_without_fuzzy_keep_the_tilde_in_the_term():
    assert sqs("fox~1", fuzzy_operator=False) == m("fox~1", "f")
    assert simple_flags("ALL") and simple_flags(-1) and simple_flags("")
    assert not simple_flags("AND|OR|NOT|PREFIX|PHRASE|PRECEDENCE|ESCAPE|WHITESPACE|NEAR|SLOP")
    assert not simple_flags(0x3FF & ~256)


def test_simple_flags_that_turn_off_other_operators_are_refused_by_name():
    with pytest.raises(SearchError, match=r"\[simple_query_string\] \[flags\]"):
        simple_flags("OR|AND")
    with pytest.raises(SearchError, match=r"Unknown simple_query_string flag \[BOGUS\]"):
        simple_flags("ALL|BOGUS")


def test_simple_fuzziness_above_two_is_two():
    assert sqs("fox~3") == sfz("fox", FuzzyOptions(fuzziness=2))


def test_simple_query_string_sums_the_fields_of_a_pattern():
    assert sqs("fo*", ALL) == DisMax(queries=(Prefix(field="*", value="fo"),), tie_breaker=1.0)
    assert sqs("fox", ALL) == DisMax(queries=(m("fox"),), tie_breaker=1.0)
