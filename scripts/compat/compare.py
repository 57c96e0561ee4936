#!/usr/bin/env python3
"""Compares a Hegel client's own test suite run against two servers.

Each run is a report a test runner wrote: JUnit XML (vitest, ctest, pytest) or
`go test -json` output. A test counts as passed on a server only if it passed
in every run given for that server (several runs of geist-server catch flaky
tests; with no geist-server report, only the reference run is counted).
Prints, per server, how many tests passed and failed, then the tests
that fail only on geist-server; exits 1 when one of those is not listed as an
environment-only failure of this client (environment-failures.txt), as a
test that never starts the server under test (client-only-tests.txt), nor as
a known geist failure that is being worked on elsewhere (known-failures.txt),
2 when a report is missing or empty.

usage: compare.py CLIENT FORMAT REFERENCE_REPORT [GEIST_REPORT ...]
  FORMAT: junit | gotest
  environment-only failures: scripts/compat/environment-failures.txt
  tests that run no server under test: scripts/compat/client-only-tests.txt
  known geist-server failures: scripts/compat/known-failures.txt
"""

import json
import os
import sys
import xml.etree.ElementTree as ElementTree

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"


def junit_outcomes(path):
    """Test id -> outcome, from a JUnit XML report."""
    outcomes = {}
    for case in ElementTree.parse(path).getroot().iter("testcase"):
        classname, test = case.get("classname", ""), case.get("name", "")
        # ctest names each case twice (classname == name).
        name = test if classname in ("", test) else f"{classname} > {test}"
        if case.find("failure") is not None or case.find("error") is not None:
            outcome = FAILED
        elif case.find("skipped") is not None:
            outcome = SKIPPED
        else:
            outcome = PASSED
        # ctest marks a test that did not run as status="notrun"/"disabled".
        if case.get("status") in ("notrun", "disabled"):
            outcome = SKIPPED if case.get("status") == "disabled" else FAILED
        outcomes[name] = outcome
    return outcomes


def gotest_outcomes(path):
    """Test id -> outcome, from `go test -json` output (subtests included).

    A package that fails to build or panics outside a test reports no test
    events for the tests it held: they count as missing, hence failed.
    """
    outcomes = {}
    with open(path, encoding="utf-8", errors="replace") as report:
        for line in report:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            test, action = event.get("Test"), event.get("Action")
            if not test or action not in ("pass", "fail", "skip"):
                continue
            name = f"{event.get('Package', '')} {test}"
            outcomes[name] = {"pass": PASSED, "fail": FAILED, "skip": SKIPPED}[action]
    return outcomes


def listed_tests(client, listing_name):
    """Tests of this client listed in scripts/compat/LISTING_NAME (`client: test id  # why`)."""
    listing = os.path.join(os.path.dirname(os.path.abspath(__file__)), listing_name)
    names = set()
    with open(listing, encoding="utf-8") as lines:
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            owner, _, name = line.partition(":")
            if owner.strip() == client:
                names.add(name.strip())
    return names


def tally(outcomes):
    counts = {PASSED: 0, FAILED: 0, SKIPPED: 0}
    for outcome in outcomes.values():
        counts[outcome] += 1
    return counts


def merge_runs(runs):
    """One outcome per test over several runs: passed only if passed in all of them."""
    merged = {}
    for outcomes in runs:
        for name, outcome in outcomes.items():
            previous = merged.get(name, outcome)
            merged[name] = outcome if previous == PASSED else previous
    for outcomes in runs:
        for name in merged:
            if name not in outcomes:
                merged[name] = FAILED
    return merged


def main(argv):
    if len(argv) < 4 or argv[2] not in ("junit", "gotest"):
        sys.stderr.write(__doc__)
        return 2
    client, form, reference_path, geist_paths = argv[1], argv[2], argv[3], argv[4:]
    read = junit_outcomes if form == "junit" else gotest_outcomes
    for path in [reference_path, *geist_paths]:
        if not os.path.isfile(path):
            print(f"{client}: no test report at {path} (the suite did not run)")
            return 2
    reference = read(reference_path)
    if not geist_paths:
        counts = tally(reference)
        print(
            f"{client} on hegel-core: {counts[PASSED]} passed, {counts[FAILED]} failed, "
            f"{counts[SKIPPED]} skipped of {len(reference)} (no geist-server report to compare)"
        )
        return 0 if reference else 2
    geist_runs = [read(path) for path in geist_paths]
    geist = merge_runs(geist_runs)
    if not reference or not geist:
        print(f"{client}: a report holds no tests ({reference_path}, {' '.join(geist_paths)})")
        return 2

    environment = listed_tests(client, "environment-failures.txt")
    known = listed_tests(client, "known-failures.txt")
    client_only = listed_tests(client, "client-only-tests.txt")
    runs = f" ({len(geist_runs)} runs, passed in all)" if len(geist_runs) > 1 else ""
    for server, outcomes, suffix in (("hegel-core", reference, ""), ("geist-server", geist, runs)):
        counts = tally(outcomes)
        print(
            f"{client} on {server}: {counts[PASSED]} passed, {counts[FAILED]} failed, "
            f"{counts[SKIPPED]} skipped of {len(outcomes)}{suffix}"
        )

    regressions = sorted(
        name
        for name, outcome in reference.items()
        if outcome == PASSED and geist.get(name, FAILED) != PASSED
    )
    unexpected = [name for name in regressions if name not in environment | known | client_only]
    both = sorted(
        name for name, outcome in reference.items() if outcome == FAILED and geist.get(name) == FAILED
    )
    only_reference = sorted(
        name for name, outcome in reference.items() if outcome == FAILED and geist.get(name) == PASSED
    )
    if both:
        print(f"fail on both servers ({len(both)}):")
        for name in both:
            note = " [environment-only]" if name in environment else ""
            print(f"  {name}{note}")
    if only_reference:
        print(f"fail only on hegel-core ({len(only_reference)}):")
        for name in only_reference:
            print(f"  {name}")
    if regressions:
        print(f"fail only on geist-server ({len(regressions)}):")
        for name in regressions:
            if name in environment:
                note = " [environment-only, allowed]"
            elif name in client_only:
                note = " [runs no server under test, allowed: client-only-tests.txt]"
            elif name in known:
                note = " [known, see known-failures.txt]"
            else:
                note = ""
            print(f"  {name}{note}")
    else:
        print("fail only on geist-server: none")
    stale = sorted(name for name in known if geist.get(name) == PASSED)
    if stale:
        print(f"listed in known-failures.txt but passed on geist-server ({len(stale)}):")
        for name in stale:
            print(f"  {name}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
