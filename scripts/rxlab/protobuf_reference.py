"""The reference side of the protobuf exposition tests: client_model's proto2 `metrics.proto`
(io.prometheus.client) built as a descriptor at run time and encoded by Google's `protobuf`
package, never by our code.

  scripts/lab protobuf golden [--check]
      Encodes the fixture (Tests/ReachabilityTests/Fixtures/protobuf/exposition.json) once per
      histogram mode into <mode>.pb beside it. The native buckets are computed here, independently
      of the Swift code (math.frexp and the schema formulas of the native-histogram spec).
      With --check, compares with the committed files instead of writing them; the Swift test
      ProtobufExpositionTests compares the exporter's encoder with the same files.

  scripts/lab protobuf decode FILE|-
      Parses a delimited scrape with the reference decoder, re-encodes every message and checks
      the bytes are identical (our output is canonical: field order, no unknown fields), then
      prints a JSON summary (families, series per type, native histograms, bytes).
"""

import json
import math
import os
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, unknown_fields

from .util import ROOT

FIXTURES = os.path.join(ROOT, "Tests/ReachabilityTests/Fixtures/protobuf")
ZERO_THRESHOLD = 2.0**-128
MAX_BUCKETS = 160
INITIAL_SCHEMA = 3

F = descriptor_pb2.FieldDescriptorProto
OPT, REP = F.LABEL_OPTIONAL, F.LABEL_REPEATED


def _messages():
    """client_model's metrics.proto (proto2), the parts the exporter writes (exemplars and
    timestamps left out: an unknown field would fail the re-encode check)."""
    fd = descriptor_pb2.FileDescriptorProto(name="metrics.proto", package="io.prometheus.client", syntax="proto2")

    def msg(name, *fields):
        m = fd.message_type.add(name=name)
        for fname, number, label, ftype, type_name in fields:
            f = m.field.add(name=fname, number=number, label=label, type=ftype)
            if type_name:
                f.type_name = ".io.prometheus.client." + type_name

    e = fd.enum_type.add(name="MetricType")
    for n, v in [
        ("COUNTER", 0),
        ("GAUGE", 1),
        ("SUMMARY", 2),
        ("UNTYPED", 3),
        ("HISTOGRAM", 4),
        ("GAUGE_HISTOGRAM", 5),
    ]:
        e.value.add(name=n, number=v)
    msg("LabelPair", ("name", 1, OPT, F.TYPE_STRING, None), ("value", 2, OPT, F.TYPE_STRING, None))
    msg("Gauge", ("value", 1, OPT, F.TYPE_DOUBLE, None))
    msg("Counter", ("value", 1, OPT, F.TYPE_DOUBLE, None))
    msg("Untyped", ("value", 1, OPT, F.TYPE_DOUBLE, None))
    msg(
        "Bucket",
        ("cumulative_count", 1, OPT, F.TYPE_UINT64, None),
        ("upper_bound", 2, OPT, F.TYPE_DOUBLE, None),
        ("cumulative_count_float", 4, OPT, F.TYPE_DOUBLE, None),
    )
    msg("BucketSpan", ("offset", 1, OPT, F.TYPE_SINT32, None), ("length", 2, OPT, F.TYPE_UINT32, None))
    msg(
        "Histogram",
        ("sample_count", 1, OPT, F.TYPE_UINT64, None),
        ("sample_sum", 2, OPT, F.TYPE_DOUBLE, None),
        ("bucket", 3, REP, F.TYPE_MESSAGE, "Bucket"),
        ("sample_count_float", 4, OPT, F.TYPE_DOUBLE, None),
        ("schema", 5, OPT, F.TYPE_SINT32, None),
        ("zero_threshold", 6, OPT, F.TYPE_DOUBLE, None),
        ("zero_count", 7, OPT, F.TYPE_UINT64, None),
        ("zero_count_float", 8, OPT, F.TYPE_DOUBLE, None),
        ("negative_span", 9, REP, F.TYPE_MESSAGE, "BucketSpan"),
        ("negative_delta", 10, REP, F.TYPE_SINT64, None),
        ("negative_count", 11, REP, F.TYPE_DOUBLE, None),
        ("positive_span", 12, REP, F.TYPE_MESSAGE, "BucketSpan"),
        ("positive_delta", 13, REP, F.TYPE_SINT64, None),
        ("positive_count", 14, REP, F.TYPE_DOUBLE, None),
    )
    msg(
        "Metric",
        ("label", 1, REP, F.TYPE_MESSAGE, "LabelPair"),
        ("gauge", 2, OPT, F.TYPE_MESSAGE, "Gauge"),
        ("counter", 3, OPT, F.TYPE_MESSAGE, "Counter"),
        ("untyped", 5, OPT, F.TYPE_MESSAGE, "Untyped"),
        ("timestamp_ms", 6, OPT, F.TYPE_INT64, None),
        ("histogram", 7, OPT, F.TYPE_MESSAGE, "Histogram"),
    )
    family = fd.message_type.add(name="MetricFamily")
    for fname, number, label, ftype, type_name in [
        ("name", 1, OPT, F.TYPE_STRING, None),
        ("help", 2, OPT, F.TYPE_STRING, None),
        ("type", 3, OPT, F.TYPE_ENUM, "MetricType"),
        ("metric", 4, REP, F.TYPE_MESSAGE, "Metric"),
    ]:
        f = family.field.add(name=fname, number=number, label=label, type=ftype)
        if type_name:
            f.type_name = ".io.prometheus.client." + type_name
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    get = getattr(message_factory, "GetMessageClass", None)
    return lambda name: get(pool.FindMessageTypeByName("io.prometheus.client." + name))


MESSAGE = _messages()
MetricFamily = MESSAGE("MetricFamily")


def value(v):
    # Strings are the special values or exact decimal text (read with Double(_:) on the Swift side).
    return (
        {"+Inf": math.inf, "-Inf": -math.inf, "NaN": math.nan}.get(
            v, float(v) if isinstance(v, str) and v[0] not in "+-N" else v
        )
        if isinstance(v, str)
        else float(v)
    )


SCHEMA3_BOUNDS = [
    0.5,
    0.5452538663326288,
    0.5946035575013605,
    0.6484197773255048,
    0.7071067811865475,
    0.7711054127039704,
    0.8408964152537144,
    0.9170040432046711,
]


def native_index(v, schema):
    """The native-histogram bucket of |v| > 0 at `schema` (bucket i holds (b^(i-1), b^i])."""
    frac, exp = math.frexp(v)
    if schema > 0:
        per = 1 << schema
        # 2^(j/8 - 1) as the literal doubles of Prometheus' and client_golang's tables.
        bounds = SCHEMA3_BOUNDS[:: 1 << (3 - schema)]
        key = next((j for j, b in enumerate(bounds) if b >= frac), per)
        return key + (exp - 1) * per
    key = exp - 1 if frac == 0.5 else exp
    return (key + (1 << -schema) - 1) >> -schema


def native_buckets(observations):
    # NaN is in no bucket; ±Inf counts as ±(largest double), as in client_golang.
    counted = [math.copysign(sys.float_info.max, o) if math.isinf(o) else o for o in observations if not math.isnan(o)]
    zero = sum(1 for o in counted if abs(o) <= ZERO_THRESHOLD)
    rest = [o for o in counted if abs(o) > ZERO_THRESHOLD]
    schema = INITIAL_SCHEMA
    while True:
        pos, neg = {}, {}
        for o in rest:
            side = pos if o > 0 else neg
            i = native_index(abs(o), schema)
            side[i] = side.get(i, 0) + 1
        if len(pos) + len(neg) <= MAX_BUCKETS or schema == -4:
            return schema, zero, pos, neg
        schema -= 1


def fill_side(h, side, spans, deltas):
    previous_end, previous = 0, 0
    keys = sorted(side)
    i = 0
    while i < len(keys):
        j = i + 1
        while j < len(keys) and keys[j] == keys[j - 1] + 1:
            j += 1
        s = spans.add()
        s.offset = keys[i] - previous_end
        s.length = j - i
        previous_end = keys[j - 1] + 1
        i = j
    for k in keys:
        deltas.append(side[k] - previous)
        previous = side[k]


def family_message(fam, mode):
    series = fam["series"]
    if not series:
        return None
    mf = MetricFamily()
    mf.name = fam["name"]
    mf.help = fam["help"]
    mf.type = {"counter": 0, "gauge": 1, "histogram": 4}[fam["type"]]
    for s in sorted(series, key=lambda s: s["labels"]):
        m = mf.metric.add()
        for n, v in zip(fam["labels"], s["labels"], strict=False):
            lp = m.label.add()
            lp.name = n
            lp.value = v
        if fam["type"] == "counter":
            m.counter.value = value(s["value"])
        elif fam["type"] == "gauge":
            m.gauge.value = value(s["value"])
        else:
            obs = [value(o) for o in s["observations"]]
            h = m.histogram
            h.sample_count = len(obs)
            total = 0.0
            for o in obs:  # in observation order, as the exporter adds them
                total += o
            h.sample_sum = total
            if mode != "native":
                for bound in fam["buckets"]:
                    b = h.bucket.add()
                    b.cumulative_count = sum(1 for o in obs if o <= bound)
                    b.upper_bound = bound
            if mode != "classic":
                schema, zero, pos, neg = native_buckets(obs)
                h.schema = schema
                h.zero_threshold = ZERO_THRESHOLD
                h.zero_count = zero
                if neg:
                    fill_side(h, neg, h.negative_span, h.negative_delta)
                if pos:
                    fill_side(h, pos, h.positive_span, h.positive_delta)
                elif not neg:
                    s0 = h.positive_span.add()
                    s0.offset = 0
                    s0.length = 0
    return mf


def varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def delimited(messages):
    out = bytearray()
    for m in messages:
        body = m.SerializeToString(deterministic=True)
        out += varint(len(body)) + body
    return bytes(out)


def golden(check):
    with open(os.path.join(FIXTURES, "exposition.json")) as f:
        fixture = json.load(f)
    bad = 0
    for mode in ["classic", "native", "both"]:
        families = sorted(fixture["families"], key=lambda fam: fam["name"])
        data = delimited([m for m in (family_message(fam, mode) for fam in families) if m is not None])
        path = os.path.join(FIXTURES, f"{mode}.pb")
        if check:
            with open(path, "rb") as f:
                committed = f.read()
            same = committed == data
            print(
                f"  {'ok  ' if same else 'FAIL'} {mode}.pb: reference encoder {len(data)} bytes, committed {len(committed)}"
            )
            bad += not same
        else:
            with open(path, "wb") as f:
                f.write(data)
            print(f"wrote {path} ({len(data)} bytes)")
    return 1 if bad else 0


def read_varint(data, pos):
    shift = result = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def has_unknown_fields(message):
    if len(unknown_fields.UnknownFieldSet(message)):
        return True
    for field, v in message.ListFields():
        if field.type == F.TYPE_MESSAGE:
            repeated = field.is_repeated if hasattr(field, "is_repeated") else field.label == REP
            for sub in v if repeated else [v]:
                if has_unknown_fields(sub):
                    return True
    return False


def decode(data):
    pos = 0
    summary = {
        "bytes": len(data),
        "families": 0,
        "series": {"counter": 0, "gauge": 0, "histogram": 0},
        "native_histograms": 0,
        "classic_buckets": 0,
        "native_buckets": 0,
        "not_canonical": [],
    }
    names = {0: "counter", 1: "gauge", 4: "histogram"}
    while pos < len(data):
        n, pos = read_varint(data, pos)
        body = data[pos : pos + n]
        pos += n
        mf = MetricFamily()
        mf.ParseFromString(body)
        if mf.SerializeToString(deterministic=True) != body or has_unknown_fields(mf):
            summary["not_canonical"].append(mf.name)
        summary["families"] += 1
        for m in mf.metric:
            summary["series"][names.get(mf.type, str(mf.type))] += 1
            if m.HasField("histogram"):
                h = m.histogram
                summary["classic_buckets"] += len(h.bucket)
                if h.HasField("schema") or len(h.positive_span):
                    summary["native_histograms"] += 1
                    summary["native_buckets"] += len(h.positive_delta) + len(h.negative_delta)
    return summary


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "golden":
        return golden("--check" in sys.argv[2:])
    if len(sys.argv) == 3 and sys.argv[1] == "decode":
        data = sys.stdin.buffer.read() if sys.argv[2] == "-" else open(sys.argv[2], "rb").read()
        summary = decode(data)
        print(json.dumps(summary))
        return 1 if summary["not_canonical"] else 0
    print(__doc__)
    return 64


if __name__ == "__main__":
    sys.exit(main())
