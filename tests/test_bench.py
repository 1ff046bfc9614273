"""The benchmark (python -m opendml.bench) runs end to end and times every contender from the same state."""

import json

import numpy as np

from opendml import bench


def test_flush_covers_the_caches():
    assert bench.flush_bytes() >= 64 << 20


def test_every_sample_follows_a_flush():
    """measure() calls flush before each sample of each contender (and never during one), in a shuffled order."""
    case = bench.make_case("softmax", "float32", (2, 16), (1,), np.random.default_rng(0))
    bench.add_bound(case)
    events = []
    for name, fn in list(case.contenders.items()):
        case.contenders[name] = lambda name=name, fn=fn: (events.append(name), fn())
    times = bench.measure(case, 3, flush=lambda: events.append("flush"))
    assert set(times) == set(case.contenders) and all(t > 0 for t in times.values())
    timed = events[len(case.contenders) :]  # (after the warm-up calls)
    assert timed[0::2] == ["flush"] * (3 * len(case.contenders))
    assert sorted(timed[1::2]) == sorted(list(case.contenders) * 3)


def test_an_in_cache_sample_is_a_burst_timed_per_call(monkeypatch):
    """Without flush, a sample is many back-to-back calls and the figure is seconds per call (a fake clock: each
    call of one contender takes exactly 2^-17 s, about 8 us, each of the other's 2^-10 s; powers of two keep the
    clock's sums exact)."""
    clock = [0.0]
    monkeypatch.setattr(bench.time, "perf_counter", lambda: clock[0])
    calls = {"fast": 0, "slow": 0}

    def contender(name, seconds):
        def call():
            calls[name] += 1
            clock[0] += seconds

        return call

    case = bench.make_case("softmax", "float32", (2, 16), (1,), np.random.default_rng(0))
    case.contenders.clear()
    case.contenders.update(fast=contender("fast", 2**-17), slow=contender("slow", 2**-10))
    times = bench.measure(case, 5)
    assert times == {"fast": 2**-17, "slow": 2**-10}
    burst = int(bench.SAMPLE_MIN / 2**-17)
    assert calls == {"fast": 4 + 5 * burst, "slow": 4 + 5}  # (4: the warm-up and the calibration)


def test_main_writes_its_rows(tmp_path, capsys):
    out = tmp_path / "bench.json"
    bench.main(["--ops", "hard_sigmoid", "argmax", "--shapes", "2x16", "--threads", "1", "--samples", "1",
                "--dtypes", "float32", "--json", str(out)])  # fmt: skip
    rows = json.loads(out.read_text())["rows"]
    assert [(r["op"], r["axes"]) for r in rows] == [("hard_sigmoid", []), ("argmax", [1]), ("argmax", [0, 1])]
    assert all(r["opendml"] > 0 and r["bound"] > 0 for r in rows)
    assert "| hard_sigmoid | float32 | 2x16 |" in capsys.readouterr().out
