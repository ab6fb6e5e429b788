"""The proof inside upstream EvoScientist 0.3.8 (docs/upstream-adoption.md)."""

import pytest

# Its helpers assert the route's answer against upstream's state: pytest's own messages.
pytest.register_assert_rewrite("tests.upstream.implied")
