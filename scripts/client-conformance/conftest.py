"""pytest setup for geist's run of hegel-core's client conformance suite."""

import pytest

# The suite's validate() methods use plain asserts; rewrite them so a
# failure shows the values involved.
pytest.register_assert_rewrite("hegel.conformance")
