"""Release on data: encoding records, exact query answers, bad data, and adding the noise."""

from __future__ import annotations

import importlib.util
import re

import numpy as np
import pandas as pd
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.errors import InvalidDataError, ParameterTypeError, PufferfishError
from pufferfish_pgm.queries import Count, Histogram, LinearQuery
from pufferfish_pgm.queries._encoding import encode, evaluate, evaluate_codes

HAS_NOISE = importlib.util.find_spec("pufferfish_pgm.noise") is not None and hasattr(
    importlib.import_module("pufferfish_pgm.noise"), "add_noise")


@pytest.fixture(scope="module")
def chain_fw() -> pp.Framework:
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4, states=["a", "b"])
    return pp.Framework(mc)


@pytest.fixture(scope="module")
def int_chain_fw() -> pp.Framework:
    return pp.Framework(pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4))


@pytest.fixture(scope="module")
def asia_fw(asia) -> pp.Framework:
    return pp.Framework(asia)


def asia_record(asia, **changes) -> dict:
    record = {v: "no" for v in asia.nodes}
    record.update(changes)
    return record


# ----------------------------------------------------------------------------- encoding

def test_encode_chain_forms(chain_fw) -> None:
    cls = chain_fw.scenarios
    expected_one = np.array([[0, 1, 1, 0]])
    for data in (["a", "b", "b", "a"], np.array(["a", "b", "b", "a"]),
                 pd.Series(["a", "b", "b", "a"]), {0: "a", 1: "b", 2: "b", 3: "a"}):
        codes, single = encode(cls, data)
        assert single and codes.tolist() == expected_one.tolist()
    many = [["a", "b", "b", "a"], ["b", "b", "b", "b"]]
    expected = [[0, 1, 1, 0], [1, 1, 1, 1]]
    for data in (many, [tuple(r) for r in many], np.array(many),
                 pd.DataFrame(many, columns=["t0", "t1", "t2", "t3"]),
                 [{0: "a", 1: "b", 2: "b", 3: "a"}, {3: "b", 2: "b", 1: "b", 0: "b"}]):
        codes, single = encode(cls, data)
        assert not single and codes.tolist() == expected
        assert codes.dtype == np.int64


def test_encode_integer_chain_fast_path(int_chain_fw) -> None:
    cls = int_chain_fw.scenarios
    data = np.array([[0, 1, 1, 0], [1, 1, 1, 1]], dtype=np.int32)
    assert encode(cls, data)[0].tolist() == data.tolist()
    assert encode(cls, data.astype(np.uint8))[0].tolist() == data.tolist()
    assert encode(cls, data.astype(float))[0].tolist() == data.tolist()  # 1.0 == 1
    assert encode(cls, [0, 1, 1, 0])[0].tolist() == [[0, 1, 1, 0]]


def test_encode_network_forms(asia, asia_fw) -> None:
    cls = asia_fw.scenarios
    record = asia_record(asia, smoke="yes", lung="yes", either="yes")
    expected = [[0 if record[v] == "yes" else 1 for v in asia.nodes]]
    codes, single = encode(cls, record)
    assert single and codes.tolist() == expected
    assert encode(cls, pd.Series(record))[0].tolist() == expected
    shuffled = pd.DataFrame([record, asia_record(asia)])[sorted(record, reverse=True)]
    codes, single = encode(cls, shuffled)  # columns are matched by name, any order
    assert not single and codes.tolist() == [expected[0], [1] * 8]
    positional = [[record[v] for v in asia.nodes]]  # sequences are in model node order
    assert encode(cls, positional)[0].tolist() == expected
    assert encode(cls, np.array(positional))[0].tolist() == expected


# ----------------------------------------------------------------------------- evaluation

def test_evaluate_count_histogram_linear_golden(chain_fw) -> None:
    data = [["a", "b", "b", "a"], ["b", "b", "b", "b"], ["a", "a", "a", "a"]]
    np.testing.assert_array_equal(evaluate(chain_fw, Count("b"), data), [2, 4, 0])
    np.testing.assert_array_equal(evaluate(chain_fw, Count("a"), data), [2, 0, 4])
    np.testing.assert_array_equal(evaluate(chain_fw, Count("b", nodes=[0, 3]), data), [0, 2, 0])
    np.testing.assert_array_equal(evaluate(chain_fw, Histogram(), data),
                                  [[2, 2], [0, 4], [4, 0]])
    np.testing.assert_array_equal(evaluate(chain_fw, Histogram(nodes=[1, 2]), data),
                                  [[0, 2], [0, 2], [2, 0]])
    # F = sum of weights: a -> 2, b -> -1
    np.testing.assert_array_equal(evaluate(chain_fw, LinearQuery({"a": 2, "b": -1}), data),
                                  [2, -4, 8])
    answers = evaluate(chain_fw, Count("b"), data)
    assert answers.dtype == np.int64


def test_evaluate_non_integer_weights(chain_fw) -> None:
    query = LinearQuery({"a": 0.5, "b": 0.25}, integer=False)
    out = evaluate(chain_fw, query, [["a", "b", "b", "a"]])
    assert out.dtype == np.float64 and out.tolist() == [1.5]


def test_evaluate_network_golden(asia, asia_fw) -> None:
    sick = asia_record(asia, smoke="yes", lung="yes", either="yes", xray="yes", dysp="yes")
    np.testing.assert_array_equal(evaluate(asia_fw, Count("yes"), [sick, asia_record(asia)]),
                                  [5, 0])
    np.testing.assert_array_equal(evaluate(asia_fw, Count("yes", nodes=["smoke", "asia"]), sick),
                                  [1])
    np.testing.assert_array_equal(evaluate(asia_fw, Histogram(), sick), [[5, 3]])


def test_evaluate_codes_directly(int_chain_fw) -> None:
    codes = np.array([[0, 1, 1, 0]])
    assert evaluate_codes(int_chain_fw.scenarios, Count(1), codes).tolist() == [2]


# ----------------------------------------------------------------------------- bad data

def without(record: dict, node: str) -> dict:
    return {v: s for v, s in record.items() if v != node}


# (id, framework, data (a function of the asia network), message fragment)
BAD_DATA = [
    ("chain-unknown-state", "chain", lambda _: [["a", "b", "x", "a"]],
     "record 0, node 2: value 'x'"),
    ("chain-second-record", "chain", lambda _: [["a", "b", "b", "a"], ["a", "c", "b", "a"]],
     "record 1, node 1: value 'c'"),
    ("chain-nan", "chain", lambda _: np.array([["a", "b", "b", np.nan]], dtype=object),
     "record 0, node 3: value nan"),
    ("chain-none", "chain", lambda _: [["a", None, "b", "a"]], "record 0, node 1: value None"),
    ("int-chain-out-of-range", "int", lambda _: np.array([[0, 1, 5, 0]]),
     "record 0, node 2: value 5 "),
    ("int-chain-float-nan", "int", lambda _: np.array([[0.0, 1.0, 0.0, np.nan]]),
     "record 0, node 3: value nan"),
    ("int-chain-fraction", "int", lambda _: np.array([[0.0, 0.5, 0.0, 1.0]]),
     "node 1: value 0.5"),
    ("chain-too-short", "chain", lambda _: [["a", "b", "b"]],
     "record 0 has 3 values but the model has 4"),
    ("chain-ragged", "chain", lambda _: [["a", "b", "b", "a"], ["a", "b"]],
     "record 1 has 2 values"),
    ("chain-array-too-long", "int", lambda _: np.zeros((2, 5), dtype=int), "has 5 values"),
    ("chain-3d", "int", lambda _: np.zeros((2, 2, 4), dtype=int), "3 dimensions"),
    ("chain-no-rows", "int", lambda _: np.zeros((0, 4), dtype=int), "no records"),
    ("chain-empty-list", "chain", lambda _: [], "record 0 has 0 values"),
    ("chain-dict-unknown-node", "chain", lambda _: {0: "a", 1: "a", 2: "a", 3: "a", 4: "a"},
     "record 0: unknown node 4"),
    ("network-unknown-state", "asia", lambda bn: asia_record(bn, smoke="maybe"),
     "record 0, node 'smoke': value 'maybe'"),
    ("network-unknown-key", "asia", lambda bn: asia_record(bn, smoker="yes"),
     "record 0: unknown node 'smoker'"),
    ("network-missing-key", "asia", lambda bn: without(asia_record(bn), "asia"),
     "record 0: no value for node 'asia'"),
    ("network-nan", "asia", lambda bn: asia_record(bn, lung=float("nan")),
     "record 0, node 'lung': value nan"),
    ("network-unknown-column", "asia", lambda bn: pd.DataFrame([asia_record(bn, id=7)]),
     "column 'id' that is not a node"),
    ("network-missing-column", "asia",
     lambda bn: pd.DataFrame([without(asia_record(bn), "smoke")]), "no column for node 'smoke'"),
    ("network-frame-second-row", "asia",
     lambda bn: pd.DataFrame([asia_record(bn), asia_record(bn, dysp="often")]),
     "record 1, node 'dysp': value 'often'"),
    ("network-records-list", "asia",
     lambda bn: [asia_record(bn), asia_record(bn, xray="positive")],
     "record 1, node 'xray': value 'positive'"),
    ("network-series-unknown-index", "asia", lambda bn: pd.Series(asia_record(bn, Xray="yes")),
     "unknown node 'Xray'"),
]


@pytest.mark.parametrize(("kind", "make", "fragment"), [case[1:] for case in BAD_DATA],
                         ids=[case[0] for case in BAD_DATA])
def test_bad_data_raises_naming_row_and_value(kind, make, fragment, asia, chain_fw,
                                              int_chain_fw, asia_fw) -> None:
    fw = {"chain": chain_fw, "int": int_chain_fw, "asia": asia_fw}[kind]
    query = Count(fw.scenarios.states_of(fw.scenarios.nodes[0])[0])
    with pytest.raises(InvalidDataError) as info:
        evaluate(fw, query, make(asia))
    assert fragment in str(info.value)
    assert isinstance(info.value, PufferfishError) and isinstance(info.value, ValueError)


def test_unreadable_data_types(chain_fw) -> None:
    for data in (5, {"a", "b"}, "abba"):
        with pytest.raises((ParameterTypeError, InvalidDataError)):
            evaluate(chain_fw, Count("a"), data)
    with pytest.raises(ParameterTypeError, match="cannot read data of type int"):
        evaluate(chain_fw, Count("a"), 5)


# ----------------------------------------------------------------------------- release

class TestReleaseAnswer:
    @staticmethod
    def calibration(fw, query, scale=2.0):
        from pufferfish_pgm.mechanisms.base import Calibration

        return Calibration(mechanism="Test", epsilon=0.5, scale=scale, query=query, framework=fw)

    def test_release_is_reproducible_with_a_seed(self, chain_fw) -> None:
        cal = self.calibration(chain_fw, Count("b"))
        data = [["a", "b", "b", "a"], ["b", "b", "b", "b"]]
        one = cal.release(data, rng=np.random.default_rng(5))
        two = cal.release(data, rng=np.random.default_rng(5))
        np.testing.assert_array_equal(one.value, two.value)
        assert one.value.shape == (2,) and one.value.dtype.kind == "i"
        assert (one.scale, one.epsilon, one.mechanism, one.query) == (2.0, 0.5, "Test",
                                                                      "count(b)")

    def test_single_record_gives_a_scalar(self, chain_fw) -> None:
        cal = self.calibration(chain_fw, Count("b"))
        out = cal.release(["a", "b", "b", "a"], rng=np.random.default_rng(0))
        assert isinstance(out.value, int)

    def test_aggregate_over_users(self, chain_fw) -> None:
        cal = self.calibration(chain_fw, Count("b"), scale=1e-3)  # nearly no noise
        data = [["a", "b", "b", "a"], ["b", "b", "b", "b"]]
        out = cal.release(data, rng=np.random.default_rng(0), per_user=False)
        assert out.value == 6

    def test_histogram_release_has_one_value_per_bar(self, chain_fw) -> None:
        cal = self.calibration(chain_fw, Histogram(), scale=1e-3)
        out = cal.release(["a", "b", "b", "a"], rng=np.random.default_rng(0))
        assert np.asarray(out.value).tolist() == [2, 2]

    def test_noise_is_centred_on_the_answer(self, int_chain_fw) -> None:
        cal = self.calibration(int_chain_fw, Count(1), scale=1.0)
        data = np.tile([0, 1, 1, 0], (20000, 1))
        out = cal.release(data, rng=np.random.default_rng(1))
        # discrete Laplace(1): variance 2q/(1-q)^2 with q = e^-1, about 1.84
        assert abs(out.value.mean() - 2.0) < 5 * np.sqrt(1.84 / 20000)
        assert cal.answer(data[:1]).tolist() == [2]

    def test_bad_data_releases_nothing(self, chain_fw) -> None:
        cal = self.calibration(chain_fw, Count("b"))
        with pytest.raises(InvalidDataError, match="record 1"):
            cal.release([["a", "b", "b", "a"], ["a", "b", "q", "a"]], rng=np.random.default_rng(0))


def _mean_abs_discrete_laplace(scale: float) -> float:
    # E|K| for P(k) = (1-q)/(1+q) q^|k|, q = e^(-1/scale): 2q / ((1-q)(1+q))
    q = np.exp(-1.0 / scale)
    return 2 * q / ((1 - q) * (1 + q))


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@pytest.mark.parametrize("rng_seed", [3, None])  # seeded and the secure default
@pytest.mark.parametrize("mechanism", ["MarkovQuilt", "ExactLaplace"])
def test_release_mean_absolute_noise_equals_the_calibrated_scale(mechanism, rng_seed) -> None:
    import pufferfish_pgm as pp

    mc = pp.MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", 30)
    fw = pp.Framework(mc)
    cal = getattr(pp, f"{mechanism}Mechanism")(epsilon=1.0).calibrate(fw, pp.Count(1))
    data = np.tile(np.r_[np.zeros(10, int), np.ones(20, int)], (20000, 1))
    rng = None if rng_seed is None else np.random.default_rng(rng_seed)
    noise = np.asarray(cal.release(data, rng=rng).value) - 20
    want = _mean_abs_discrete_laplace(cal.scale)  # about scale - 1/(6 scale): 2 % off at 3
    assert abs(want - cal.scale) < 0.05 * cal.scale
    # the standard deviation of |K| is below its mean's sqrt(2) times: 5 standard errors
    assert abs(np.abs(noise).mean() - want) < 5 * np.sqrt(2) * want / np.sqrt(noise.size)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_aggregate_over_independent_users_never_leaks_more_than_one_users_release() -> None:
    # per_user=False releases the sum over users. Another user's count is independent of this
    # user's secret, so the aggregate's laws are this user's laws convolved with the same
    # distribution: the exact audit must give a realised epsilon no larger.
    import pufferfish_pgm as pp
    from pufferfish_pgm.privacy_loss import laplace_pair_epsilon
    from pufferfish_pgm.queries import query_distribution

    mc = pp.MarkovChainScenario([[0.85, 0.15], [0.25, 0.75]], "stationary", 8)
    fw = pp.Framework(mc)
    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.Count(1))
    other = query_distribution(mc, pp.Count(1))  # another user, no secret conditioned
    for pair in fw.pairs:
        mu_a, mu_b = (query_distribution(mc, pp.Count(1), s.evidence)
                      for s in (pair.first, pair.second))
        alone, _ = laplace_pair_epsilon(mu_a, mu_b, cal.scale)
        summed, _ = laplace_pair_epsilon(mu_a.convolve(other), mu_b.convolve(other), cal.scale)
        assert summed <= alone + 1e-12 and alone <= 1.0 + 1e-9


# ----------------------------------------------------------------------------- intervals

def _coverage_by_summation(scale: float, h: int) -> float:
    """P(|Z| <= h) for P(k) = (1-q)/(1+q) q^|k|, by summing the pmf (no closed form)."""
    q = np.exp(-1.0 / scale)
    k = np.arange(-h, h + 1)
    return float(((1 - q) / (1 + q) * q ** np.abs(k)).sum())


def _smallest_h_by_summation(scale: float, confidence: float) -> int:
    h = 0
    while _coverage_by_summation(scale, h) < confidence:
        h += 1
    return h


@pytest.mark.parametrize("scale", [0.05, 0.3, 0.5, 1.0, 2.0, 3.0, 10.0])
@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.95, 0.99])
def test_integer_interval_is_the_smallest_by_summation(scale, confidence) -> None:
    rel = pp.Release(value=7, scale=scale, epsilon=1.0, mechanism="m", query="q")
    low, high = rel.interval(confidence)
    h = _smallest_h_by_summation(scale, confidence)
    assert (low, high) == (7 - h, 7 + h)
    assert isinstance(low, int) and isinstance(high, int)


def test_interval_golden_values() -> None:
    # h by hand from P(|Z| > h) = 2 q^(h+1) / (1 + q), q = exp(-1/scale):
    # scale 1, 90 %: h = 1 leaves 2e^-2/(1+e^-1) = 0.198, h = 2 leaves 0.0728 -> 2
    # scale 2, 90 %: h = 4 leaves 2e^-2.5/(1+e^-0.5) = 0.1018, h = 5 leaves 0.0617 -> 5
    golden = {(1.0, 0.9): 2, (2.0, 0.9): 5, (1.0, 0.95): 3, (2.0, 0.95): 6, (0.5, 0.95): 1,
              (10.0, 0.95): 30, (0.1, 0.5): 0}
    for (scale, conf), h in golden.items():
        rel = pp.Release(value=0, scale=scale, epsilon=1.0, mechanism="m", query="q")
        assert rel.interval(conf) == (-h, h), (scale, conf)


def test_scale_zero_interval_is_the_value() -> None:
    for value in (4, 2.5, np.array([1, 2]), np.array([0.5, 1.5])):
        rel = pp.Release(value=value, scale=0.0, epsilon=1.0, mechanism="m", query="q")
        low, high = rel.interval(0.99, simultaneous=True)
        np.testing.assert_array_equal(low, value)
        np.testing.assert_array_equal(high, value)


class TestIntervalCoverage:
    """Coverage measured by simulation.

    Power: with n = 20,000 independent draws, the empirical coverage of a true probability p
    near 0.9 has standard deviation sqrt(p (1-p) / n) = 0.0021, and the tests allow 4 of them
    (0.0085; a false failure has probability about 6e-5). At scale 10 the 90 % half-width is
    23; a width 10 % too narrow (h = 21) covers 0.884 and h = 20 covers 0.871, 7.5 and 14
    standard deviations below 0.9: such a bug fails. The half-width one below ours must also
    cover less than the confidence by summation, so the width is not simply too wide.
    """

    N = 20_000
    SD4 = 4 * np.sqrt(0.9 * 0.1 / 20_000)

    def test_count_release_coverage(self, int_chain_fw) -> None:
        cal = TestReleaseAnswer.calibration(int_chain_fw, Count(1), scale=10.0)
        data = np.tile([0, 1, 1, 0], (self.N, 1))  # true answer 2 for every user
        rel = cal.release(data, rng=np.random.default_rng(11))
        low, high = rel.interval(0.9)
        assert low.dtype.kind == "i" and low.shape == (self.N,)
        h = int(rel.value[0] - low[0])
        assert h == 23 and np.all(rel.value - low == h) and np.all(high - rel.value == h)
        covered = np.mean((low <= 2) & (2 <= high))
        exact = _coverage_by_summation(10.0, h)
        assert exact >= 0.9 > _coverage_by_summation(10.0, h - 1)
        assert abs(covered - exact) < self.SD4
        assert covered > 0.9 - self.SD4

    def test_secure_default_coverage(self, int_chain_fw) -> None:
        cal = TestReleaseAnswer.calibration(int_chain_fw, Count(1), scale=3.0)
        data = np.tile([0, 1, 1, 0], (self.N, 1))
        low, high = cal.release(data).interval(0.9)  # OS randomness
        covered = np.mean((low <= 2) & (2 <= high))
        assert abs(covered - _coverage_by_summation(3.0, 7)) < self.SD4

    def test_histogram_per_user_is_per_coordinate(self, int_chain_fw) -> None:
        cal = TestReleaseAnswer.calibration(int_chain_fw, Histogram(), scale=2.0)
        data = np.tile([0, 1, 1, 1], (self.N // 2, 1))
        rel = cal.release(data, rng=np.random.default_rng(2))
        low, high = rel.interval(0.9)
        assert low.shape == (self.N // 2, 2)
        truth = np.array([1, 3])
        covered = np.mean((low <= truth) & (truth <= high), axis=0)  # marginal, per bar
        assert np.all(np.abs(covered - _coverage_by_summation(2.0, 5)) < self.SD4 * np.sqrt(2))

    def test_simultaneous_covers_every_entry_at_once(self) -> None:
        # 5 entries per release, 4,000 releases: joint coverage sd sqrt(.9 .1 / 4000) = 0.0047
        entries, trials, scale = 5, 4_000, 3.0
        probe = pp.Release(value=np.zeros(entries, dtype=np.int64), scale=scale, epsilon=1.0,
                           mechanism="m", query="q")
        h = int(probe.interval(0.9, simultaneous=True)[1][0])
        marginal = int(probe.interval(0.9)[1][0])
        assert _coverage_by_summation(scale, h) ** entries >= 0.9
        assert _coverage_by_summation(scale, h - 1) ** entries < 0.9 and h > marginal
        noise = pp.noise.add_noise(np.zeros((trials, entries), dtype=np.int64), scale,
                                   rng=np.random.default_rng(4))
        joint = np.mean(np.all(np.abs(noise) <= h, axis=1))
        marginal_joint = np.mean(np.all(np.abs(noise) <= marginal, axis=1))
        sd4 = 4 * np.sqrt(0.9 * 0.1 / trials)
        assert joint > 0.9 - sd4
        assert marginal_joint < 0.9 - sd4  # the marginal intervals are not simultaneous

    def test_real_valued_noise_on_a_coarse_grid(self) -> None:
        # answers off the grid: rounding (up to grid/2) and the inflated grid scale both count
        from pufferfish_pgm.noise import add_noise, noise_halfwidth

        answers = np.full(self.N, 0.3)
        scale, delta, grid = 1.0, 1.0, 0.25
        noisy = add_noise(answers, scale, rng=np.random.default_rng(3), sensitivity=delta,
                          grid=grid)
        # noise in grid units is discrete Laplace(5): h = 11, half-width 0.25 * 11.5
        half = noise_halfwidth(scale, 0.9, integer=False, sensitivity=delta, grid=grid)
        assert half == 2.875
        covered = np.mean(np.abs(noisy - 0.3) <= half)
        assert covered > 0.9 - self.SD4
        with pytest.raises(pp.errors.InvalidParameterError, match="pass both"):
            noise_halfwidth(scale, 0.9, integer=False, grid=grid)

    @pytest.mark.parametrize("sensitivity", [1e-3, 1.0, 2.0, 1e6])
    def test_real_valued_bound_holds_for_every_sensitivity(self, sensitivity: float) -> None:
        from pufferfish_pgm.noise import noise_halfwidth

        rel = pp.Release(value=1.5, scale=2.0, epsilon=1.0, mechanism="m", query="q")
        for conf in (0.5, 0.9, 0.999):
            bound = rel.interval(conf)[1] - 1.5
            exact = noise_halfwidth(2.0, conf, integer=False, sensitivity=sensitivity)
            assert exact <= bound <= exact * (1 + 1e-5)

    def test_real_valued_release_through_a_calibration(self, chain_fw) -> None:
        query = LinearQuery({"a": 0.5, "b": 0.25}, integer=False)
        cal = TestReleaseAnswer.calibration(chain_fw, query, scale=2.0)
        data = [["a", "b", "b", "a"]] * self.N  # 1.5 for every user
        rel = cal.release(data, rng=np.random.default_rng(8))
        low, high = rel.interval(0.9)
        half = high - rel.value
        # the noise is Laplace(2) to within a relative 2**-20: its half-width is 2 log 10
        assert np.allclose(half, 2 * np.log(10), rtol=1e-5)
        assert np.all(half >= pp.noise.laplace_halfwidth(2.0, 0.9))
        covered = np.mean((low <= 1.5) & (1.5 <= high))
        assert abs(covered - 0.9) < self.SD4


@pytest.mark.parametrize("bad", [0, 1, 0.0, 1.0, -0.5, 1.5, float("nan"), float("inf")])
def test_interval_rejects_confidence_outside_zero_one(bad) -> None:
    rel = pp.Release(value=1, scale=1.0, epsilon=1.0, mechanism="m", query="q")
    with pytest.raises(pp.errors.InvalidParameterError, match=re.escape(repr(float(bad)))) as info:
        rel.interval(bad)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize("bad", [True, np.bool_(False), "0.9", None, [0.9]])
def test_interval_rejects_confidence_of_the_wrong_type(bad) -> None:
    rel = pp.Release(value=1, scale=1.0, epsilon=1.0, mechanism="m", query="q")
    with pytest.raises(ParameterTypeError, match=re.escape(repr(bad))) as info:
        rel.interval(bad)
    assert isinstance(info.value, PufferfishError)


def test_interval_rejects_a_non_bool_simultaneous() -> None:
    rel = pp.Release(value=1, scale=1.0, epsilon=1.0, mechanism="m", query="q")
    with pytest.raises(ParameterTypeError, match="simultaneous"):
        rel.interval(0.9, simultaneous="yes")


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_a_table_needs_only_the_columns_the_query_reads(asia, asia_fw) -> None:
    # issue 19 item 7a: a column for every node was demanded though the query reads two
    import pickle

    from pufferfish_pgm.queries._encoding import _Absent

    query = Count("yes", ("lung", "tub"))
    frame = pd.DataFrame({"lung": ["yes", "no", "yes"], "tub": ["yes", "no", "no"]})
    assert evaluate(asia_fw, query, frame).tolist() == [2, 0, 1]
    bars = evaluate(asia_fw, Histogram(("lung",)), frame[["lung"]])   # one bar per state
    assert bars.shape == (3, 2) and bars.sum(axis=1).tolist() == [1, 1, 1]
    cal = pp.GroupDPMechanism(epsilon=1.0).calibrate(asia_fw, query)
    rel = cal.release(frame, np.random.SeedSequence(1), chunk_size=1)   # chunked path
    assert np.asarray(rel.value).shape == (3,)
    with pytest.raises(InvalidDataError, match="no column for node 'lung', which the query "
                                               r"count\(yes\) reads"):
        evaluate(asia_fw, query, frame[["tub"]])
    with pytest.raises(InvalidDataError, match="no column for node 'tub'"):
        cal.release(frame[["lung"]])
    assert pickle.loads(pickle.dumps(_Absent.COLUMN)) is _Absent.COLUMN   # chunks on processes


# ----------------------------------------------------------------------------- at scale (issue 25)

def _reference_answers(cls, query, codes: np.ndarray) -> np.ndarray:
    """The answers by the definition, one node at a time in int64 (slow and obviously right)."""
    from pufferfish_pgm.queries import WindowedQuery

    if isinstance(query, Histogram):
        return np.stack([_reference_answers(cls, bar, codes) for bar in query.bars(cls)], -1)
    if isinstance(query, WindowedQuery):
        return query.answer_codes(cls, codes.astype(np.int64))
    index = {v: j for j, v in enumerate(cls.nodes)}
    table = query.weight_table(cls)
    return sum(table[i][codes[:, index[v]].astype(np.int64)]
               for i, v in enumerate(query.node_list(cls))).astype(np.int64)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int16, np.int64])
def test_integer_answers_equal_the_definition(dtype) -> None:
    mc = pp.MarkovChainScenario(np.full((3, 3), 1 / 3), "stationary", 50)
    cls = pp.ScenarioClass(mc)
    codes = np.random.default_rng(0).integers(0, 3, (700, 50)).astype(dtype)
    for query in (Count(2), Count(1, nodes=[3, 7, 49]), Count(0, nodes=range(10, 20)),
                  LinearQuery({0: 3, 1: -2}), Histogram(), pp.WindowedCount(1, 7),
                  pp.WindowedCount(2, 50), pp.WindowedHistogram(12)):
        got = evaluate_codes(cls, query, codes)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, _reference_answers(cls, query, codes))


def test_network_weights_that_differ_by_node(asia, asia_fw) -> None:
    # 'yes' is code 0 in every asia node, so Count('yes') weighs each node alike; a query over
    # two states weighs them alike too; check the per-node path on random records anyway
    cls = asia_fw.scenarios
    codes = np.random.default_rng(1).integers(0, 2, (300, len(cls.nodes))).astype(np.int8)
    for query in (Count("yes"), LinearQuery({"yes": 5, "no": -1}), Histogram()):
        np.testing.assert_array_equal(evaluate_codes(cls, query, codes),
                                      _reference_answers(cls, query, codes))
    from pufferfish_pgm.queries._integer_answers import per_node_sums

    table = np.array([[1, 2], [0, 5]])
    np.testing.assert_array_equal(per_node_sums(codes, [0, 3], table),
                                  table[0][codes[:, 0]] + table[1][codes[:, 3]])


def test_integer_codes_are_read_as_given() -> None:
    # the release reads a chain's int8 codes in place: no int64 copy of the data
    from pufferfish_pgm.queries._encoding import encode_rows

    cls = pp.ScenarioClass(pp.MarkovChainScenario(np.full((4, 4), 0.25), "stationary", 6))
    codes = np.random.default_rng(2).integers(0, 4, (10, 6)).astype(np.int8)
    assert encode_rows(cls, codes) is codes
    labelled = pp.ScenarioClass(pp.MarkovChainScenario(np.full((2, 2), 0.5), "stationary", 3,
                                                       states=[10, 20]))
    shifted = encode_rows(labelled, np.array([[10, 20, 20]], dtype=np.int16))
    assert shifted.dtype == np.int8 and shifted.tolist() == [[0, 1, 1]]
    with pytest.raises(InvalidDataError, match="record 0, node 2: value 15"):
        encode_rows(labelled, np.array([[10, 20, 15]]))


def test_release_memory_stays_near_the_data() -> None:
    # issue 25: a release copied the codes to int64 and took float weights per entry (16 bytes
    # per int8 code); now its temporaries are blocks of a few MB and the answers
    import tracemalloc

    mc = pp.MarkovChainScenario(np.full((4, 4), 0.25), "stationary", 1440)
    cal = TestReleaseAnswer.calibration(pp.Framework(mc), Count(2))
    codes = np.random.default_rng(3).integers(0, 4, (20_000, 1440)).astype(np.int8)  # 29 MB
    for per_user in (True, False):
        tracemalloc.start()
        rel = cal.release(codes, np.random.SeedSequence(0), per_user=per_user)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert peak < 0.5 * codes.nbytes, peak
        assert np.ndim(rel.value) == (1 if per_user else 0)
