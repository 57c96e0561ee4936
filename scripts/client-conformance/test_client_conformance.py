"""hegel-core's client conformance suite (hegel.conformance) against geist.

The binaries are built from crates/client-conformance (one property each,
run over the wire against the `hegel` server of this virtualenv, which the
stage script puts in GEIST_SERVER_COMMAND). Every test class the suite
registers runs, the error-handling ones included; none is skipped.
"""

import os
from pathlib import Path

from hegel.conformance import (
    BinaryConformance,
    BooleanConformance,
    DictConformance,
    EmptyTestConformance,
    ErrorResponseConformance,
    FloatConformance,
    IntegerConformance,
    ListConformance,
    OneOfConformance,
    OriginDeduplicationConformance,
    SampledFromConformance,
    StopTestOnCollectionMoreConformance,
    StopTestOnGenerateConformance,
    StopTestOnMarkCompleteConformance,
    StopTestOnNewCollectionConformance,
    TextConformance,
    run_conformance_tests,
)

BIN = Path(os.environ["GEIST_CONFORMANCE_BIN_DIR"])

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


def test_conformance(subtests):
    # The error-handling servers write no per-test-case metrics.
    errors = {"skip_server_metrics": True}
    run_conformance_tests(
        [
            BooleanConformance(BIN / "test_booleans"),
            IntegerConformance(
                BIN / "test_integers", min_value=INT64_MIN, max_value=INT64_MAX
            ),
            FloatConformance(BIN / "test_floats"),
            # Rust strings cannot hold surrogates.
            TextConformance(BIN / "test_text", no_surrogates=True),
            BinaryConformance(BIN / "test_binary"),
            ListConformance(
                BIN / "test_lists", min_value=INT64_MIN, max_value=INT64_MAX
            ),
            SampledFromConformance(BIN / "test_sampled_from"),
            OneOfConformance(BIN / "test_one_of"),
            DictConformance(
                BIN / "test_hashmaps",
                min_key=INT32_MIN,
                max_key=INT32_MAX,
                min_value=INT32_MIN,
                max_value=INT32_MAX,
            ),
            OriginDeduplicationConformance(BIN / "test_origin_deduplication"),
            StopTestOnGenerateConformance(BIN / "test_booleans", **errors),
            StopTestOnMarkCompleteConformance(BIN / "test_booleans", **errors),
            ErrorResponseConformance(BIN / "test_booleans", **errors),
            EmptyTestConformance(BIN / "test_booleans", **errors),
            StopTestOnCollectionMoreConformance(BIN / "test_boolean_lists", **errors),
            StopTestOnNewCollectionConformance(BIN / "test_boolean_lists", **errors),
        ],
        subtests,
    )
