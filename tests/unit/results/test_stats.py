from wsgibench.results.stats import summarise, trimmed


def test_trimmed_drops_highest_and_lowest():
    assert trimmed([4.0, 1.0, 3.0, 2.0], 1) == [2.0, 3.0]
    assert trimmed([1.0, 2.0], 1) == [1.0, 2.0]  # too few to trim: keep all


def test_summary_values():
    s = summarise([10.0, 12.0, 11.0, 100.0], trim=1)
    assert s.median == 11.5
    assert s.trimmed_mean == 11.5
    assert s.min == 10.0 and s.max == 100.0
    assert s.noisy  # one wild repeat makes the spread far above 5 %


def test_steady_repeats_not_noisy():
    s = summarise([1000.0, 1010.0, 990.0])
    assert not s.noisy and abs(s.cv - 0.01) < 1e-9


def test_empty_is_none():
    assert summarise([]) is None
