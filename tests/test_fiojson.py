"""The fio JSON parser on small recorded fixtures: text around the document, missing keys, old versions."""

from pathlib import Path

import pytest

from ssdpts.engines.fiojson import load_document, parse_output
from ssdpts.engines.results import percentile_from_bins
from ssdpts.errors import SsdptsError

FIX = Path(__file__).parent / "fixtures"


def test_text_preface_and_trailer_are_skipped():
    text = (FIX / "fio-3.33-prerun-preface.json").read_text()
    assert text.startswith("randread_4K : Saving output")
    doc, cells = parse_output(text)
    assert doc["fio version"] == "fio-3.33"
    (c,) = cells
    assert c.name == "randread_4K"
    assert c.read.iops > 0 and c.read.ios > 0
    assert c.iops == pytest.approx(c.read.iops)          # write did nothing
    assert set(c.read.percentiles) == {"99", "99.9"}     # total-latency percentiles
    assert c.latency_source == "lat"
    # the write direction has N=0 and no 'percentile' key at all
    assert c.write.ios == 0 and c.write.percentiles == {}


def test_fio2_microsecond_keys_and_clat_fallback():
    doc, (c,) = parse_output((FIX / "fio-2.x-usec.json").read_text())
    assert c.read.lat_mean_ns == pytest.approx(202_500)   # lat in µs -> ns
    assert c.read.bw_bytes == pytest.approx(2000 * 1024)  # no bw_bytes before fio 3.2
    assert c.read.bytes == 409600
    assert c.read.percentiles["99.9"] == pytest.approx(800_000)
    assert c.latency_source == "clat"                    # only clat had percentiles


def test_braces_in_preface_do_not_confuse_the_parser():
    text = 'fio: {weird} notice {"not": "fio"}\n' + (FIX / "fio-2.x-usec.json").read_text()
    assert load_document(text)["fio version"] == "fio-2.2.10"


def test_no_document_is_a_clear_error():
    with pytest.raises(SsdptsError, match="no JSON result"):
        load_document("fio: failed to open /dev/nope: No such file or directory\n")


def test_job_error_is_reported():
    text = '{"fio version": "fio-3.33", "jobs": [{"jobname": "x", "error": 5, "read": {}, "write": {}}]}'
    with pytest.raises(SsdptsError, match="error 5"):
        parse_output(text)


def test_percentile_from_bins():
    bins = {1000: 90, 2000: 9, 50000: 1}
    assert percentile_from_bins(bins, 50) == 1000
    assert percentile_from_bins(bins, 99) == 2000
    assert percentile_from_bins(bins, 99.9) == 50000
    assert percentile_from_bins({}, 99) is None
