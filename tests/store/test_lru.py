"""The readers' bounded memory: least recently used out first."""

from __future__ import annotations

from evoscientist_final_answer.store.lru import LruCache


def test_the_least_recently_used_entry_goes_first() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # now "b" is the least recently used
    cache.put("c", 3)
    assert list(cache) == ["a", "c"]
    assert "b" not in cache and len(cache) == 2


def test_a_put_refreshes_an_entry() -> None:
    cache: LruCache[str, int] = LruCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    cache.put("c", 3)
    assert list(cache) == ["a", "c"]
    assert cache.get("a") == 10


def test_missing_keys_give_the_default_and_touch_nothing() -> None:
    unseen = object()
    cache: LruCache[str, int | None] = LruCache(2)
    cache.put("none", None)
    cache.put("b", 2)
    assert cache.get("none", unseen) is None  # a stored None is not a miss
    assert cache.get("missing", unseen) is unseen
    assert cache.get("missing") is None
    assert cache.pop("b") == 2 and cache.pop("b", unseen) is unseen
    cache.clear()
    assert len(cache) == 0
