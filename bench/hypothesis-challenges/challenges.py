"""The classic shrinking challenges run with Hypothesis, for comparison with geist.

The same challenges as crates/engine/benches/shrinking_challenges.rs (from
github.com/jlink/shrinking-challenge, originally the Hypothesis ECOOP 2020
artifact), with the same definitions, seeds 0..N and the same table columns:

- the final (shrunk) example: the smallest of the examples Hypothesis replays
  at the end (it replays one per distinct failure, largest first);
- shrink execs: test function executions during Hypothesis's shrink phase
  (its own phase statistics);
- execs from 1st failure: engine executions from the first failing one
  (included) until the engine stops, final replays excluded (like the
  "evaluations" measure of the challenge collection's Hypothesis reports, but
  also counting executions whose generation was rejected or overran before the
  test body ran, as geist's count does: each is a round trip for a Hegel client);
- CPU ms/run: CPU time of this thread per run (other processes do not count).

Environment: GEIST_BENCH_SEEDS (default 50), GEIST_BENCH_ONLY (comma-separated
names), GEIST_BENCH_MAX_CASES (default 1,000,000 = max_examples).

Run: target/bench-venv-hyp/bin/python bench/hypothesis-challenges/challenges.py
(scripts/bench-shrinking.sh sets up that virtualenv with a pinned Hypothesis).
"""

import os
import statistics
import sys
import time
import warnings
from collections import Counter

import hypothesis
import hypothesis.strategies as st
from hypothesis import HealthCheck, Phase, Verbosity, assume, given, seed, settings
from hypothesis.errors import HypothesisDeprecationWarning, HypothesisException
from hypothesis.statistics import collector

# ---------------------------------------------------------------- the challenges
# Each challenge is (strategy, check); check raises on failure.


def bound5():
    int16s = st.integers(-32768, 32767)
    bounded_lists = st.lists(int16s, max_size=1).filter(lambda x: sum(x) < 256)
    problems = st.tuples(*[bounded_lists] * 5)

    def check(p):
        total = sum(x for sub in p for x in sub)
        wrapped = (total + 32768) % 65536 - 32768  # int16 arithmetic
        assert wrapped < 5 * 256

    return problems, check


def large_union_list():
    def check(ls):
        all_elements = set()
        for x in ls:
            all_elements.update(x)
        assert len(all_elements) < 5

    return st.lists(st.lists(st.integers())), check


def reverse():
    def check(ls):
        assert ls == list(reversed(ls))

    return st.lists(st.integers()), check


def calculator():
    expression = st.deferred(
        lambda: st.one_of(
            st.integers(),
            st.tuples(st.just("+"), expression, expression),
            st.tuples(st.just("/"), expression, expression),
        )
    )

    def div_subterms(e):
        if isinstance(e, int):
            return True
        if e[0] == "/" and e[-1] == 0:
            return False
        return div_subterms(e[1]) and div_subterms(e[2])

    def evaluate(e):
        if isinstance(e, int):
            return e
        if e[0] == "+":
            return evaluate(e[1]) + evaluate(e[2])
        return evaluate(e[1]) // evaluate(e[2])

    def check(e):
        assume(div_subterms(e))
        evaluate(e)

    return expression, check


def lengthlist():
    strategy = st.integers(1, 100).flatmap(
        lambda n: st.lists(st.integers(0, 1000), min_size=n, max_size=n)
    )

    def check(ls):
        assert max(ls) < 900

    return strategy, check


def difference(holds):
    positive = st.integers(1, 2**31 - 1)

    def check(pair):
        first, second = pair
        if first < 10:
            return
        assert holds(abs(first - second))

    return st.tuples(positive, positive), check


def binheap():
    @st.composite
    def heap1(draw, bound, size):
        branch = draw(st.integers(1, 8))
        if branch == 1 or size <= 0:
            return None
        key = st.integers()
        if bound is not None:
            key = key.filter(lambda n: n >= bound)
        head = draw(key)
        child_size = size // 2
        return (head, draw(heap1(head, child_size)), draw(heap1(head, child_size)))

    @st.composite
    def heap(draw):
        return draw(heap1(None, draw(st.integers(0, 20))))

    def to_list(h):
        result = []
        stack = [h]
        while stack:
            h = stack.pop()
            if h is None:
                continue
            result.append(h[0])
            stack.extend(h[1:])
        return result

    def merge_heaps(h1, h2):
        if h1 is None:
            return h2
        if h2 is None:
            return h1
        if h1[0] <= h2[0]:
            return (h1[0], merge_heaps(h1[2], h2), h1[1])
        return (h2[0], merge_heaps(h2[2], h1), h2[1])

    def wrong_to_sorted_list(h):
        if h is None:
            return []
        return [h[0]] + to_list(merge_heaps(h[1], h[2]))

    def check(h):
        l1 = to_list(h)
        l2 = wrong_to_sorted_list(h)
        assert l2 == sorted(l2)
        assert sorted(l1) == l2

    return heap(), check


def coupling():
    def check(ls):
        assume(all(v < len(ls) for v in ls))
        for i, j in enumerate(ls):
            if i != j:
                assert ls[j] != i

    return st.lists(st.integers(0, 10)), check


def deletion():
    def check(lsi):
        ls, i = lsi
        assume(i < len(ls))
        ls = list(ls)
        x = ls[i]
        ls.remove(x)
        assert x not in ls

    return st.tuples(st.lists(st.integers()), st.integers(0, 10)), check


def distinct():
    def check(ls):
        assert len(set(ls)) < 3

    return st.lists(st.integers()), check


def nestedlists():
    def check(ls):
        assert sum(map(len, ls), 0) <= 10

    return st.lists(st.lists(st.just(()))), check


CHALLENGES = [
    ("bound5", bound5),
    ("large_union_list", large_union_list),
    ("reverse", reverse),
    ("calculator", calculator),
    ("lengthlist", lengthlist),
    ("difference_must_not_be_zero", lambda: difference(lambda d: d != 0)),
    ("difference_must_not_be_small", lambda: difference(lambda d: not 1 <= d <= 4)),
    ("difference_must_not_be_one", lambda: difference(lambda d: d != 1)),
    ("binheap", binheap),
    ("coupling", coupling),
    ("deletion", deletion),
    ("distinct", distinct),
    ("nestedlists", nestedlists),
]

# ---------------------------------------------------------------- measuring


def run_seed(make, seed_value, max_cases):
    """Runs one challenge with one seed: (final example or None, shrink execs,
    execs from the first failure, seconds)."""
    strategy, check = make()
    state = {
        "after_first_failure": 0,
        "finished": False,
        "finals": [],
        "shrink_execs": 0,
        "executions": 0,
    }

    def recording(value):
        try:
            check(value)
        except HypothesisException:
            raise
        except Exception:
            if state["finished"]:
                # Hypothesis replays each final example once more to report it.
                state["finals"].append(repr(value))
            raise

    def on_statistics(stats):
        # Called when the engine is done, before the final replays. Every
        # engine execution is listed, including those whose generation was
        # rejected or overran before the test body ran.
        state["finished"] = True
        generated = [t["status"] for t in stats.get("generate-phase", {}).get("test-cases", [])]
        shrunk = stats.get("shrink-phase", {}).get("test-cases", [])
        state["shrink_execs"] = len(shrunk)
        state["executions"] = len(generated) + len(shrunk)
        if "interesting" in generated:
            first = generated.index("interesting")
            state["after_first_failure"] = len(generated) - first + len(shrunk)

    test = seed(seed_value)(
        settings(
            database=None,
            max_examples=max_cases,
            suppress_health_check=list(HealthCheck),
            phases=[Phase.generate, Phase.shrink],
            deadline=None,
            verbosity=Verbosity.quiet,
            report_multiple_bugs=True,
        )(given(strategy)(recording))
    )
    started = time.thread_time()
    with collector.with_value(on_statistics):
        try:
            test()
        except Exception:  # the expected failure (or a group of them)
            pass
    seconds = time.thread_time() - started
    final = state["finals"][-1] if state["finals"] else None
    return (
        final,
        state["shrink_execs"],
        state["after_first_failure"],
        state["executions"],
        seconds,
    )


def env_number(name, default):
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        return int(text)
    except ValueError:
        print(f"{name}={text!r} is not a number; using {default}", file=sys.stderr)
        return default


def main():
    sys.setrecursionlimit(100_000)
    # binheap's composite trips a heuristic of Hypothesis's (it does call draw).
    warnings.simplefilter("ignore", HypothesisDeprecationWarning)
    seeds = env_number("GEIST_BENCH_SEEDS", 50)
    max_cases = env_number("GEIST_BENCH_MAX_CASES", 1_000_000)
    only = os.environ.get("GEIST_BENCH_ONLY")
    only = {n.strip() for n in only.split(",")} if only else None
    print(
        f"Hypothesis {hypothesis.__version__} shrinking challenges: {seeds} seeds each "
        f"(seeds 0..{seeds}), max_examples={max_cases}, database=None, "
        "phases=[generate, shrink]\n"
    )
    print(
        "| challenge | found | most common final example | share | distinct finals | "
        "shrink execs mean | shrink execs median | execs from 1st failure mean | execs/run mean | CPU ms/run |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, make in CHALLENGES:
        if only is not None and name not in only:
            continue
        results = [run_seed(make, s, max_cases) for s in range(seeds)]
        found = [r for r in results if r[0] is not None]
        counts = Counter(r[0] for r in found)
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))
        top, top_count = ranked[0] if ranked else ("(none)", 0)
        shrink = [r[1] for r in found]
        after = [r[2] for r in found]
        executions = [r[3] for r in results]
        ms = [r[4] * 1000 for r in results]
        mean = lambda xs: statistics.fmean(xs) if xs else float("nan")  # noqa: E731
        median = lambda xs: statistics.median(xs) if xs else float("nan")  # noqa: E731
        print(
            f"| {name} | {len(found)}/{len(results)} | `{top}` | {top_count}/{len(found)} | "
            f"{len(ranked)} | {mean(shrink):.1f} | {median(shrink):.1f} | "
            f"{mean(after):.1f} | {mean(executions):.1f} | {mean(ms):.2f} |",
            flush=True,
        )
        if os.environ.get("GEIST_BENCH_VERBOSE"):
            for shown, n in ranked[1:]:
                print(f"    {name}: {n} x `{shown}`", file=sys.stderr)


if __name__ == "__main__":
    main()
