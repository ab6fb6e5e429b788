"""The JS package's shared answer cases (``clients/js/test/fixtures/answer/``) through
Python's ``answer_from_state``: the two languages give the same answer, field for field
and in the same order, from the same thread state and thread status. Cases marked
``route_only`` need the server's runs (the route's verdict) and are not for this entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evoscientist_final_answer.answer.state import answer_from_state

CASES_DIR = Path(__file__).resolve().parents[2] / "clients" / "js" / "test" / "fixtures" / "answer"
CASES = sorted(CASES_DIR.glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_cases_are_there() -> None:
    assert len([path for path in CASES if "route_only" not in load(path)]) >= 10


@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_python_gives_the_js_answer(path: Path) -> None:
    case = load(path)
    if "route_only" in case:
        pytest.skip(f"route only: {case['route_only']}")
    answer = answer_from_state(
        case["thread_id"], case["state"], thread_status=case["thread_status"]
    )
    expected = case["answer"]
    body = answer.to_json(include_reasoning=True)
    assert body == expected
    assert list(body) == list(expected)
    plain = {key: value for key, value in expected.items() if key != "reasoning"}
    assert answer.to_json() == plain
