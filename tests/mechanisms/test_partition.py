"""The partition kernel and exact combine (issue 25 item 2): ``Calibration.answers`` per
partition, ``Calibration.add_noise`` where the release is made, equal to the serial release bit
for bit under a SeedSequence; pickled or rebuilt from the certificate on each worker; inside
Dask (delayed always, DataFrame ``map_partitions`` when installed), Arrow, Polars, Spark, Ray."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.errors import InvalidDataError, ParameterTypeError

CHUNK = 50          # users per partition (and per chunk of the serial release)
PARTS = 3
T = 24


def _calibration(query) -> pp.Calibration:
    mc = pp.MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", T)
    with warnings.catch_warnings():          # a usefulness note is not the point here
        warnings.simplefilter("ignore")
        return pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(pp.Framework(mc), query)


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    codes = np.random.default_rng(0).integers(0, 2, (CHUNK * PARTS, T)).astype(np.int8)
    return pd.DataFrame(codes, index=[f"u{i}" for i in range(len(codes))])


QUERIES = [pp.Count(1), pp.WindowedCount(1, 6), pp.Histogram()]


def _parts(frame: pd.DataFrame) -> list[pd.DataFrame]:
    return [frame.iloc[i:i + CHUNK] for i in range(0, len(frame), CHUNK)]


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_per_user_partitions_equal_the_serial_release(frame, query) -> None:
    cal = _calibration(query)
    seeds = np.random.SeedSequence(7).spawn(PARTS)
    noisy = [cal.add_noise(cal.answers(part), seed)
             for part, seed in zip(_parts(frame), seeds, strict=True)]
    serial = cal.release(frame, np.random.SeedSequence(7), chunk_size=CHUNK).value
    np.testing.assert_array_equal(pd.concat(noisy).to_numpy(), serial)
    assert list(pd.concat(noisy).index) == list(frame.index)


@pytest.mark.parametrize("query", QUERIES, ids=lambda q: q.name)
def test_aggregate_sums_exact_partials_and_draws_once(frame, query) -> None:
    cal = _calibration(query)
    total = sum(cal.answers(part).sum() for part in _parts(frame))
    np.testing.assert_array_equal(total, cal.answer(frame).sum(axis=0))   # exact combine
    noisy = cal.add_noise(total, np.random.SeedSequence(3).spawn(1)[0])    # piece 0
    serial = cal.release(frame, np.random.SeedSequence(3), per_user=False).value
    np.testing.assert_array_equal(np.asarray(noisy), serial)


def test_answers_are_labelled(frame) -> None:
    cal = _calibration(pp.WindowedCount(1, 6))
    out = cal.answers(frame)
    assert list(out.columns) == [f"count(1)@[{a},{a + 6})" for a in range(0, T, 6)]
    assert out.to_numpy().dtype == np.int64 and list(out.index) == list(frame.index)
    count = _calibration(pp.Count(1)).answers(frame)
    assert count.name == "count(1)" and count.tolist() == frame.to_numpy().sum(axis=1).tolist()
    assert cal.answers(frame.to_numpy()).shape == (len(frame), 4)       # arrays give numpy


def test_worker_copies_pickled_or_from_the_certificate(frame) -> None:
    cal = _calibration(pp.Count(1))
    seed = np.random.SeedSequence(11)
    want = cal.add_noise(cal.answers(frame), seed)
    shipped = pickle.loads(pickle.dumps(cal))
    pd.testing.assert_series_equal(shipped.add_noise(shipped.answers(frame), seed), want)
    rebuilt = pp.Calibration.from_json(cal.to_json(), cal.framework)   # fingerprints checked
    pd.testing.assert_series_equal(rebuilt.add_noise(rebuilt.answers(frame), seed), want)


def test_secure_by_default_and_bad_inputs(frame) -> None:
    cal = _calibration(pp.Count(1))
    assert cal.add_noise(cal.answers(frame)).shape == (len(frame),)     # OS randomness
    with pytest.raises(ParameterTypeError, match="SeedSequence"):
        cal.add_noise(cal.answers(frame), rng=7)
    bad = frame.copy()
    bad.iloc[3, 5] = 4
    with pytest.raises(InvalidDataError, match="record 3, node 5: value 4"):
        cal.answers(bad)


def test_dask_delayed_partitions_equal_the_serial_release(frame) -> None:
    dask = pytest.importorskip("dask")
    cal = _calibration(pp.Count(1))
    seeds = np.random.SeedSequence(5).spawn(PARTS)
    tasks = [dask.delayed(cal.add_noise)(dask.delayed(cal.answers)(part), seed)
             for part, seed in zip(_parts(frame), seeds, strict=True)]
    noisy = pd.concat(dask.compute(*tasks, scheduler="threads"))
    serial = cal.release(frame, np.random.SeedSequence(5), chunk_size=CHUNK).value
    np.testing.assert_array_equal(noisy.to_numpy(), serial)


def test_dask_dataframe_map_partitions(frame) -> None:
    dd = pytest.importorskip("dask.dataframe")
    cal = _calibration(pp.WindowedCount(1, 6))
    ddf = dd.from_pandas(frame, npartitions=PARTS, sort=False)
    assert [len(p) for p in ddf.partitions] == [CHUNK] * PARTS
    seeds = np.random.SeedSequence(9).spawn(ddf.npartitions)
    meta = cal.answers(frame.iloc[:1]).iloc[:0]

    def kernel(part: pd.DataFrame, partition_info: dict | None = None) -> pd.DataFrame:
        return cal.add_noise(cal.answers(part), seeds[partition_info["number"]])

    noisy = ddf.map_partitions(kernel, meta=meta).compute()
    serial = cal.release(frame, np.random.SeedSequence(9), chunk_size=CHUNK).value
    np.testing.assert_array_equal(noisy.to_numpy(), serial)
    total = ddf.map_partitions(cal.answers, meta=meta).sum().compute()
    np.testing.assert_array_equal(total, cal.answer(frame).sum(axis=0))


def test_arrow_and_polars_batches(frame) -> None:
    cal = _calibration(pp.WindowedCount(1, 6))
    plain = frame.reset_index(drop=True)
    plain.columns = [str(c) for c in plain.columns]
    want = cal.answers(plain)
    pa = pytest.importorskip("pyarrow")
    for batch in (pa.Table.from_pandas(plain, preserve_index=False),
                  pa.RecordBatch.from_pandas(plain, preserve_index=False)):
        pd.testing.assert_frame_equal(cal.answers(batch), want)
    labelled = pp.Calibration(mechanism="by hand", epsilon=1.0, scale=1.0, query=pp.Count("b"),
                              framework=pp.Framework(pp.MarkovChainScenario(
                                  [[0.5, 0.5], [0.5, 0.5]], "stationary", 3, states=["a", "b"])))
    strings = pa.RecordBatch.from_pydict({"t0": ["a", "b"], "t1": ["b", "b"], "t2": ["a", "a"]})
    assert labelled.answers(strings).tolist() == [1, 2]     # strings are not zero-copy
    pl = pytest.importorskip("polars")
    pd.testing.assert_frame_equal(cal.answers(pl.from_numpy(plain.to_numpy(),
                                                            schema=list(plain.columns))), want)


def test_spark_map_in_pandas(frame) -> None:   # pragma: no cover - needs a Spark install
    pytest.importorskip("pyspark")
    from pyspark.sql import SparkSession

    cal = _calibration(pp.Count(1))
    spark = SparkSession.builder.master("local[1]").getOrCreate()
    plain = frame.reset_index(drop=True)
    plain.columns = [f"t{c}" for c in plain.columns]
    sdf = spark.createDataFrame(plain)

    def kernel(batches):
        for batch in batches:
            yield cal.answers(batch).to_frame("answer")

    got = sdf.mapInPandas(kernel, schema="answer long").toPandas()["answer"]
    assert sorted(got) == sorted(cal.answer(plain).tolist())


def test_ray_map_batches(frame) -> None:        # pragma: no cover - needs a Ray install
    ray_data = pytest.importorskip("ray.data")
    cal = _calibration(pp.Count(1))
    plain = frame.reset_index(drop=True)
    plain.columns = [f"t{c}" for c in plain.columns]
    out = ray_data.from_pandas(plain).map_batches(
        lambda b: cal.answers(b).to_frame("answer"), batch_format="pandas").to_pandas()
    assert sorted(out["answer"]) == sorted(cal.answer(plain).tolist())
