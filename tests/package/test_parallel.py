"""Scale-out: every executor (threads, processes, a Dask cluster) gives the serial result, and
seeded releases never give two chunks the same noise."""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest
from helpers import load_network

import pufferfish_pgm as pp
from pufferfish_pgm._parallel import chunk_rngs, run_map
from pufferfish_pgm.errors import InvalidParameterError, ParameterTypeError
from pufferfish_pgm.noise import add_noise

CLASS = pp.ScenarioClass([
    pp.MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", 12, name="a"),
    pp.MarkovChainScenario([[0.6, 0.4], [0.1, 0.9]], "stationary", 12, name="b"),
    pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [1.0, 0.0], 12, name="c"),
])


@pytest.fixture(scope="module")
def processes():
    with ProcessPoolExecutor(2) as pool:
        yield pool


def test_run_map_keeps_the_order_on_every_executor(processes) -> None:
    items = [3, -1, 4, -1, 5, -9]
    with ThreadPoolExecutor(3) as threads:
        assert run_map(abs, items, threads) == run_map(abs, items, processes) == \
            run_map(abs, items) == [3, 1, 4, 1, 5, 9]


@pytest.mark.parametrize("bad", ["threads", 2, ThreadPoolExecutor])
def test_a_wrong_executor_is_named(bad) -> None:
    with pytest.raises(ParameterTypeError, match="concurrent.futures.Executor"):
        run_map(abs, [1], bad)
    with pytest.raises(ParameterTypeError, match="executor"):
        pp.GroupDPMechanism(epsilon=1.0).calibrate(pp.Framework(CLASS), pp.Count(1),
                                                   executor=bad)


@pytest.mark.parametrize("mech", [pp.ExactLaplaceMechanism(epsilon=1.0),
                                  pp.WassersteinMechanism(epsilon=1.0),
                                  pp.KantorovichMechanism(epsilon=1.0)],
                         ids=lambda m: m.name)
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_exact_engines_give_the_serial_result_on_threads_and_processes(mech, processes) -> None:
    fw = pp.Framework(CLASS)
    serial = mech.calibrate(fw, pp.Count(1))
    with ThreadPoolExecutor(2) as threads:
        threaded = mech.calibrate(fw, pp.Count(1), executor=threads)
    forked = mech.calibrate(fw, pp.Count(1), executor=processes)
    # the certificate holds the scale and every evidence field: equal to the byte
    assert serial.to_json() == threaded.to_json() == forked.to_json()


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_the_network_planner_gives_the_serial_plan_in_parallel(processes) -> None:
    alarm = load_network("alarm")
    fw = pp.Framework(alarm, pp.secret_pairs(alarm, nodes=list(alarm.nodes)[:8]))
    query = pp.Count("HIGH", [v for v in alarm.nodes if "HIGH" in alarm.states_of(v)])
    mqm = pp.MarkovQuiltMechanism(epsilon=1.0)
    serial = mqm.calibrate(fw, query)
    with ThreadPoolExecutor(2) as threads:
        assert mqm.calibrate(fw, query, executor=threads).plan == serial.plan
    assert mqm.calibrate(fw, query, executor=processes).plan == serial.plan


def _calibration() -> pp.Calibration:
    return pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(pp.Framework(CLASS), pp.Count(1))


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_seeded_releases_do_not_depend_on_the_executor(processes) -> None:
    cal = _calibration()
    data = np.random.default_rng(1).integers(0, 2, size=(1000, 12))
    serial = cal.release(data, np.random.SeedSequence(42), chunk_size=64)
    with ThreadPoolExecutor(2) as threads:
        threaded = cal.release(data, np.random.SeedSequence(42), chunk_size=64,
                               executor=threads)
    forked = cal.release(data, np.random.SeedSequence(42), chunk_size=64, executor=processes)
    np.testing.assert_array_equal(serial.value, threaded.value)
    np.testing.assert_array_equal(serial.value, forked.value)
    assert serial.value.shape == (1000,)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_no_two_chunks_draw_the_same_noise() -> None:
    cal = _calibration()
    same_user = np.zeros((256, 12), dtype=int)      # every answer 0: the values are the noise
    noise = cal.release(same_user, np.random.SeedSequence(7), chunk_size=64).value
    chunks = noise.reshape(4, 64)
    assert len({tuple(c) for c in chunks}) == 4
    # about half of a Laplace(σ) draw's values are non-zero; chunks are not shifted copies
    assert not any(np.array_equal(chunks[i], chunks[j]) for i in range(4) for j in range(i))


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_a_generator_cannot_be_shared_by_workers() -> None:
    cal = _calibration()
    data = np.zeros((10, 12), dtype=int)
    with ThreadPoolExecutor(2) as threads, pytest.raises(InvalidParameterError,
                                                          match="SeedSequence"):
        cal.release(data, np.random.default_rng(0), executor=threads)
    # serially a Generator still works, and gives the same as before chunking existed
    a = cal.release(data, np.random.default_rng(0)).value
    b = add_noise(cal.answer(data), cal.scale, rng=np.random.default_rng(0))
    np.testing.assert_array_equal(a, b)


def test_chunk_rngs_refuses_other_sources() -> None:
    with pytest.raises(ParameterTypeError, match="SeedSequence"):
        chunk_rngs(42, 2)
    assert chunk_rngs(None, 3) == [None, None, None]


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_secure_releases_in_parallel_keep_their_shape() -> None:
    cal = _calibration()
    data = np.ones((300, 12), dtype=int)
    with ThreadPoolExecutor(2) as threads:
        out = cal.release(data, executor=threads, chunk_size=100).value
    assert out.shape == (300,) and out.dtype.kind == "i"


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.filterwarnings("ignore::ResourceWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_a_dask_cluster_gives_the_serial_result() -> None:
    distributed = pytest.importorskip("distributed")
    fw = pp.Framework(CLASS)
    exact = pp.ExactLaplaceMechanism(epsilon=1.0)
    serial = exact.calibrate(fw, pp.Count(1))
    cal = _calibration()
    data = np.random.default_rng(3).integers(0, 2, size=(500, 12))
    expected = cal.release(data, np.random.SeedSequence(5), chunk_size=100).value
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        pool = client.get_executor()
        on_dask = exact.calibrate(fw, pp.Count(1), executor=pool)
        released = cal.release(data, np.random.SeedSequence(5), chunk_size=100, executor=pool)
    assert on_dask.to_json() == serial.to_json()
    np.testing.assert_array_equal(released.value, expected)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_chunked_releases_name_the_bad_record_by_its_place_in_the_data() -> None:
    cal = _calibration()
    data = [[0] * 12 for _ in range(9)]
    data[5][3] = 7
    with pytest.raises(pp.errors.InvalidDataError, match="record 5, node 3: value 7"):
        cal.release(data, np.random.SeedSequence(0), chunk_size=2)
    with ThreadPoolExecutor(2) as threads, pytest.raises(pp.errors.InvalidDataError,
                                                          match="record 5"):
        cal.release(data, chunk_size=2, executor=threads)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_an_aggregate_release_sums_every_chunk_before_one_draw() -> None:
    cal = _calibration()
    data = np.ones((1000, 12), dtype=int)
    whole = cal.release(data, np.random.SeedSequence(3), per_user=False).value
    chunked = cal.release(data, np.random.SeedSequence(3), per_user=False, chunk_size=7).value
    assert whole == chunked      # same total (12,000), same single draw
    assert np.ndim(whole) == 0
