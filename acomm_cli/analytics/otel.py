"""A trace's hops as OpenTelemetry spans: `acomm trace ID --otlp-endpoint URL` sends a whole
tree; with `traces.otlp_endpoint` set, every writing command sends the hops it made, after
its commit (`send_hops`).

The SDK (`opentelemetry-sdk`, the `otel` extra) is imported inside these functions only.
Each hop is one span of the trace's own id (a W3C id as it is, another id hashed to 128
bits): its span id is derived from the hop's key, its parent is its parent hop's span, it
starts at the hop's time and ends at a run's `finished_at`, else where it starts."""

from __future__ import annotations

import hashlib
from typing import Any


def ready() -> None:
    """Import what sending spans needs, before anything is printed (ModuleNotFoundError:
    the `otel` extra is missing, which the command line reports as exit 3)."""
    import opentelemetry.exporter.otlp.proto.http.trace_exporter
    import opentelemetry.sdk.trace  # noqa: F401


def _trace_int(trace_id: str) -> int:
    """A W3C trace id as it is; any other id as 128 bits of its sha256."""
    if len(trace_id) == 32:
        try:
            value = int(trace_id, 16)
        except ValueError:
            value = 0
        if value:
            return value
    return int.from_bytes(hashlib.sha256(trace_id.encode()).digest()[:16], "big") or 1


def _span_int(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") or 1


def export(tree: dict[str, Any], exporter: Any) -> int:
    """Every hop of `tree` (engine/traces.tree) as a span handed to `exporter` (an SDK
    SpanExporter); returns how many. Without the SDK the import fails, which the command
    line reports as the `otel` extra to install (exit 3)."""
    from opentelemetry import trace as api
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.id_generator import IdGenerator

    trace_int = _trace_int(tree["trace_id"])

    class _Ids(IdGenerator):  # the trace's own id, and each hop's span id as set
        span = 1

        def generate_span_id(self) -> int:
            return self.span

        def generate_trace_id(self) -> int:
            return trace_int

    ids = _Ids()
    provider = TracerProvider(resource=Resource.create({"service.name": "acomm"}), id_generator=ids)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("acomm")
    for hop in tree["hops"]:  # a parent before its children: the tree's order
        parent = hop["parent"]
        ctx = (
            api.set_span_in_context(
                api.NonRecordingSpan(
                    api.SpanContext(trace_int, _span_int(parent), False, api.TraceFlags(1))
                )
            )
            if parent is not None
            else None
        )
        attrs = {
            "acomm.kind": hop["kind"],
            "acomm.id": str(hop["id"]),
            "acomm.agent": hop["agent"] or "",
            "acomm.state": str(hop["state"]),
            "acomm.trace_id": tree["trace_id"],
        }
        if hop.get("node"):
            attrs["acomm.node"] = hop["node"]
        if hop.get("channel"):
            attrs["acomm.channel"] = hop["channel"]
        ids.span = _span_int(hop["key"])  # a parent sent by an earlier command has it too
        span = tracer.start_span(
            f"{hop['kind']} {hop['id']}",
            context=ctx,
            start_time=hop["at"] * 1_000_000,
            attributes=attrs,
        )
        span.end(end_time=(hop.get("finished_at") or hop["at"]) * 1_000_000)
    provider.shutdown()
    return len(tree["hops"])


def send(tree: dict[str, Any], endpoint: str) -> tuple[int, str | None]:
    """The spans to an OTLP/HTTP endpoint: (spans sent, None), or (0, a note) when the
    endpoint cannot take them: never an error (a collector that is down drops the spans)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    class _Checked(OTLPSpanExporter):
        ok = True

        def export(self, spans: Any) -> Any:
            result = super().export(spans)
            if result != SpanExportResult.SUCCESS:
                _Checked.ok = False
            return result

    url = endpoint.rstrip("/")
    if not url.endswith("/v1/traces"):
        url += "/v1/traces"
    exporter = _Checked(endpoint=url, timeout=5)
    import logging

    logging.getLogger("opentelemetry").setLevel(logging.CRITICAL)  # the note says it
    n = export(tree, exporter)
    if not _Checked.ok:
        return 0, f"note: {url} did not take the spans; {n} dropped"
    return n, None


def send_hops(trees: list[dict[str, Any]], endpoint: str, timeout_ms: int) -> tuple[int, int]:
    """The hops of `trees` (engine/traces.made_since) to an OTLP/HTTP endpoint in ONE
    request that waits at most `timeout_ms`: (spans sent, spans dropped). The spans are
    made in memory first, so an endpoint that is down costs one timeout, not one per span;
    it never raises (the command that made the hops has committed)."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    for tree in trees:
        export(tree, memory)
    spans = memory.get_finished_spans()
    if not spans:
        return 0, 0
    return (len(spans), 0) if deliver(spans, endpoint, timeout_ms) else (0, len(spans))


def deliver(spans: Any, endpoint: str, timeout_ms: int) -> bool:
    """Spans to `endpoint` (its /v1/traces), one request bounded by `timeout_ms`; whether
    it took them."""
    import logging

    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    logging.getLogger("opentelemetry").setLevel(logging.CRITICAL)  # the caller's note says it
    exporter = OTLPSpanExporter(endpoint=traces_url(endpoint), timeout=timeout_ms / 1000)
    try:
        return bool(exporter.export(spans) == SpanExportResult.SUCCESS)
    except Exception:  # whatever the exporter meets, the spans are dropped, never the command
        return False
    finally:
        exporter.shutdown()


def traces_url(endpoint: str) -> str:
    url = endpoint.rstrip("/")
    return url if url.endswith("/v1/traces") else url + "/v1/traces"
