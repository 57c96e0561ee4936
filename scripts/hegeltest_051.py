#!/usr/bin/env python3
"""Helpers of scripts/hegeltest-051.sh: which test binaries cargo built, and
what each engine made of them.

  features CARGO_TOML           the crate's optional features, comma-separated,
                                but `static-engine` (it links libhegel in, so a
                                binary built with it never loads geist's library)
  executables BUILD_JSON        one "name path" line per test binary built
  failed BUILD_JSON             the test targets that did not compile
  line RESULTS TEST             one line: TEST's passes on each engine
  summary RESULTS TEST...       the table, the tests that pass on libhegel and
                                fail on geist (exit 1 if any is not listed in
                                hegeltest-051-known-failures.txt), and timings
"""
import json
import re
import sys
import tomllib
from pathlib import Path

# Searched anywhere in a line: another test's output without a final
# newline (a debug-verbosity run's "Ending phase: Generate") can precede
# libtest's "test NAME ... ok" on the same line.
RESULT = re.compile(r"test (\S+(?: - should panic)?) \.\.\. (ok|FAILED|ignored)")


def messages(path):
    for raw in Path(path).read_text(errors="replace").splitlines():
        try:
            yield json.loads(raw)
        except json.JSONDecodeError:
            continue


def features(path):
    declared = tomllib.loads(Path(path).read_text()).get("features", {})
    print(",".join(sorted(f for f in declared if f not in ("default", "static-engine"))))


def executables(path):
    for m in messages(path):
        if (m.get("reason") == "compiler-artifact" and m.get("executable")
                and m["profile"]["test"]):
            print(m["target"]["name"], m["executable"])


def failed(path):
    names = sorted({m["target"]["name"] for m in messages(path)
                    if m.get("reason") == "compiler-message"
                    and m["message"]["level"] == "error"})
    print(" ".join(names) or "none")


def outcomes(results, test, engine):
    log = Path(results) / f"{test}.{engine}.log"
    found = {}
    if log.exists():
        for line in log.read_text(errors="replace").splitlines():
            m = RESULT.search(line)
            if m:
                found[m.group(1)] = m.group(2)
    return found


def line(results, test):
    parts = []
    for engine in ("libhegel", "geist"):
        o = outcomes(results, test, engine)
        if o:
            passed = sum(v == "ok" for v in o.values())
            run = sum(v != "ignored" for v in o.values())
            parts.append(f"{engine} {passed}/{run}")
    ignored = sum(v == "ignored" for v in outcomes(results, test, "libhegel").values())
    suffix = f" ({ignored} ignored)" if ignored else ""
    print(f"{test}: " + ", ".join(parts) + suffix, flush=True)


def summary(results, tests):
    rows, regressions = [], []
    totals = {"libhegel": [0, 0], "geist": [0, 0]}
    for test in tests:
        lib, geist = outcomes(results, test, "libhegel"), outcomes(results, test, "geist")
        names = sorted(set(lib) | set(geist))
        if not names:
            continue
        # Ignored on both (fixtures that other tests drive) are not run.
        ignored = [n for n in names if lib.get(n) == "ignored" and geist.get(n) == "ignored"]
        run = [n for n in names if n not in ignored]
        counts = {}
        for engine, o in (("libhegel", lib), ("geist", geist)):
            passed = sum(o.get(n) == "ok" for n in run)
            counts[engine] = passed
            totals[engine][0] += passed
            totals[engine][1] += len(run)
        totals["ignored"] = totals.get("ignored", 0) + len(ignored)
        rows.append((test, len(run), len(ignored), counts["libhegel"], counts["geist"]))
        regressions += [f"{test}::{n}" for n in names
                        if lib.get(n) == "ok" and geist.get(n) != "ok"]
    print("\n| test file | tests run | ignored | pass on libhegel | pass on geist |")
    print("|---|---:|---:|---:|---:|")
    for test, n, ignored, lib_passed, geist_passed in rows:
        print(f"| {test} | {n} | {ignored} | {lib_passed} | {geist_passed} |")
    print(f"| **total ({len(rows)} files)** | {totals['geist'][1]} | "
          f"{totals.get('ignored', 0)} | {totals['libhegel'][0]} | {totals['geist'][0]} |")
    times = Path(results) / "times.txt"
    if times.exists():
        spent = {"libhegel": 0, "geist": 0}
        for entry in times.read_text().split("\n"):
            parts = entry.split()
            if len(parts) == 3:
                spent[parts[1]] = spent.get(parts[1], 0) + int(parts[2].rstrip("s"))
        print(f"\nwall time: libhegel {spent['libhegel']} s, geist {spent['geist']} s")
    known = known_failures()
    print(f"\npass on libhegel, fail on geist: {len(regressions)}")
    for name in regressions:
        print(f"  {name}" + ("  [known: scripts/hegeltest-051-known-failures.txt]"
                            if name in known else ""))
    ran = {f"{test}::{n}" for test in tests
           for n in outcomes(results, test, "geist")}
    stale = sorted(n for n in known if n in ran and n not in regressions)
    if stale:
        print(f"\nlisted as known failures but passed on geist ({len(stale)}): remove them")
        for name in stale:
            print(f"  {name}")
    unexpected = [n for n in regressions if n not in known]
    if unexpected:
        print(f"\nnot listed as known failures ({len(unexpected)}): the stage fails")
    return 1 if unexpected else 0


def known_failures():
    """Tests listed in scripts/hegeltest-051-known-failures.txt: `file::test`
    lines, `#` comments. A listed test does not fail the summary."""
    path = Path(__file__).with_name("hegeltest-051-known-failures.txt")
    if not path.exists():
        return set()
    names = set()
    for raw in path.read_text().splitlines():
        entry = raw.split("#", 1)[0].strip()
        if entry:
            names.add(entry)
    return names


def main(argv):
    command, *args = argv
    if command == "features":
        features(args[0])
    elif command == "executables":
        executables(args[0])
    elif command == "failed":
        failed(args[0])
    elif command == "line":
        line(args[0], args[1])
    elif command == "summary":
        return summary(args[0], args[1:])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
