"""``langgraph_dev.params``: every accepted and rejected path/query parameter."""

from __future__ import annotations

import uuid

import pytest
from starlette.datastructures import QueryParams

from evoscientist_final_answer.http.params import (
    MAX_ID_LENGTH,
    MAX_WAIT_SECONDS,
    FinalAnswerQuery,
    InvalidRequest,
    parse_bool,
    parse_query,
    parse_wait,
    validate_id,
)

# Fixed, not ``uuid4()``: test ids must be the same in every pytest-xdist worker.
A_UUID = "0f8fad5b-d9cb-469f-a165-70867728950e"


def query(thread_id: str = "a1b2c3d4", qs: str = "") -> FinalAnswerQuery:
    return parse_query(thread_id, QueryParams(qs))


def test_defaults() -> None:
    assert query() == FinalAnswerQuery(
        thread_id="a1b2c3d4", run_id=None, wait=0.0, include_reasoning=False, format="json"
    )


def test_everything_given() -> None:
    run_id = str(uuid.uuid4())
    parsed = query("t", f"run_id={run_id}&wait=2.5&include_reasoning=true&format=text")
    assert parsed == FinalAnswerQuery(
        thread_id="t", run_id=run_id, wait=2.5, include_reasoning=True, format="text"
    )


@pytest.mark.parametrize(
    "thread_id",
    ["a1b2c3d4", A_UUID, "x", "x" * MAX_ID_LENGTH, "tui session é", "ünï-😀", "a:b.c"],
)
def test_valid_ids(thread_id: str) -> None:
    assert validate_id(thread_id, "thread_id") == thread_id


@pytest.mark.parametrize(
    "thread_id",
    ["", "x" * (MAX_ID_LENGTH + 1), "a/b", "bad\x01id", "tab\tid", "new\nline", " edge", "edge "],
)
def test_invalid_ids(thread_id: str) -> None:
    with pytest.raises(InvalidRequest, match="thread_id"):
        validate_id(thread_id, "thread_id")


@pytest.mark.parametrize(
    ("raw", "seconds"),
    [
        (None, 0.0),
        ("", 0.0),
        ("0", 0.0),
        ("1", 1.0),
        ("0.25", 0.25),
        ("60", MAX_WAIT_SECONDS),
        ("1e1", 10.0),
    ],
)
def test_wait_accepted(raw: str | None, seconds: float) -> None:
    assert parse_wait(raw) == seconds


@pytest.mark.parametrize("raw", ["-1", "61", "60.001", "abc", " ", "nan", "inf", "-inf", "1s"])
def test_wait_rejected(raw: str) -> None:
    with pytest.raises(InvalidRequest, match="wait"):
        parse_wait(raw)


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (None, False),
        ("true", True),
        ("TRUE", True),
        ("1", True),
        ("yes", True),
        ("false", False),
        ("0", False),
        ("no", False),
        ("", False),
    ],
)
def test_bool_accepted(raw: str | None, value: bool) -> None:
    assert parse_bool(raw, "include_reasoning") is value


@pytest.mark.parametrize("raw", ["maybe", "2", "on?", "truee"])
def test_bool_rejected(raw: str) -> None:
    with pytest.raises(InvalidRequest, match="include_reasoning"):
        parse_bool(raw, "include_reasoning")


@pytest.mark.parametrize("fmt", ["json", "text", "TEXT", "Json"])
def test_formats_accepted(fmt: str) -> None:
    assert query(qs=f"format={fmt}").format == fmt.lower()


@pytest.mark.parametrize(
    ("qs", "name"),
    [
        ("format=xml", "format"),
        ("format=json&format=text", "format"),
        ("run_id=a&run_id=b", "run_id"),
        ("run_id=%20", "run_id"),
        ("run_id=" + "r" * (MAX_ID_LENGTH + 1), "run_id"),
        ("run_id=a%2Fb", "run_id"),
        ("wait=1&wait=1", "wait"),
        ("include_reasoning=1&include_reasoning=0", "include_reasoning"),
    ],
)
def test_rejected_queries_name_the_parameter(qs: str, name: str) -> None:
    with pytest.raises(InvalidRequest, match=name):
        query(qs=qs)


@pytest.mark.parametrize("name", ["run_id", "wait", "include_reasoning", "format"])
def test_an_empty_value_means_the_default(name: str) -> None:
    """docs/final-answer.md: "an empty value means the default", for every parameter."""
    assert query(qs=f"{name}=") == query()


def test_every_parameter_empty_at_once_means_every_default() -> None:
    assert query(qs="run_id=&wait=&include_reasoning=&format=") == query()


def test_an_empty_value_given_twice_is_still_given_twice() -> None:
    with pytest.raises(InvalidRequest, match="wait"):
        query(qs="wait=&wait=")


def test_unknown_parameters_are_ignored() -> None:
    assert query(qs="utm_source=x&_=123") == query()
