"""Targets grouped into kinds: the study's patterns first, then by rule (numbers, UUIDs, long
hex, query values), or not at all."""

from __future__ import annotations

import pytest

from wsgibench.errors import UsageError
from wsgibench.traffic.grouping import Grouping, segment_rule


def test_rules_group_ids_uuids_and_hex_and_leave_words():
    g = Grouping.of([])
    assert g.group("/items/17") == "/items/{id}"
    assert g.group("/u/0f8fad5b-d9cb-469f-a165-70867728950e/x") == "/u/{uuid}/x"
    assert g.group("/blob/3f786850e387550fdab836ed7e6dc881de23001b") == "/blob/{hex}"
    assert g.group("/about/team") == "/about/team"
    assert g.group("/deadbeefdeadbeefcafe") == "/deadbeefdeadbeefcafe"  # no digit: a word
    assert [segment_rule(s) for s in ("2024", "v2", "")] == ["{id}", None, None]


def test_a_query_keeps_its_keys_each_value_grouped():
    g = Grouping.of([])
    assert g.group("/search?q=fig&page=2") == "/search?q={}&page={}"
    assert g.group("/search?page=3&q=apple") == "/search?page={}&q={}"
    assert g.group("/search?") == "/search"


def test_the_studys_patterns_come_first_and_match_whole_segments():
    g = Grouping.of(["/items/{id}", "/users/{user}/posts"])
    assert g.group("/items/abc") == "/items/{id}"
    assert g.group("/users/ada/posts") == "/users/{user}/posts"
    assert g.group("/users/ada/posts/7") == "/users/ada/posts/{id}"  # no pattern: by rule
    assert g.group("/items/a/b") == "/items/a/b"


def test_without_rules_only_patterns_group():
    g = Grouping.of(["/items/{id}"], auto=False)
    assert g.group("/items/9?b=1") == "/items/{id}?b=1"
    assert g.group("/orders/9") == "/orders/9"


@pytest.mark.parametrize("bad", ["items/{id}", "/items?{q}", "/items/x{id}"])
def test_a_pattern_that_cannot_be_is_refused(bad):
    with pytest.raises(UsageError, match="path pattern"):
        Grouping.of([bad])


def test_a_million_distinct_targets_keep_the_cache_bounded():
    g = Grouping.of([])
    for i in range(70_000):
        assert g.group(f"/items/{i}") == "/items/{id}"
    assert len(g._seen) <= 65_536
