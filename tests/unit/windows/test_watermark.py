from hypothesis import given, settings
from hypothesis import strategies as st

from streameval.windows import WatermarkTracker


def test_minimum_over_active_sources_less_lateness() -> None:
    wm = WatermarkTracker(allowed_lateness_ms=10)
    assert wm.watermark is None
    wm.observe("p0", 100)
    assert wm.watermark == 90
    wm.observe("p1", 50)
    # p1 is behind: the watermark cannot move back, it stays at 90 until p1 passes it
    assert wm.watermark == 90
    wm.observe("p1", 200)
    wm.observe("p0", 150)
    assert wm.watermark == 140  # min(150, 200) - 10


def test_out_of_order_events_do_not_lower_a_source() -> None:
    wm = WatermarkTracker(allowed_lateness_ms=0)
    wm.observe("p0", 100)
    wm.observe("p0", 40)
    assert wm.watermark == 100


def test_idle_partition_does_not_hold_the_watermark_back() -> None:
    wm = WatermarkTracker(allowed_lateness_ms=5)
    wm.register("quiet")  # (else busy's first event, read at once, already moves it to 995)
    wm.observe("busy", 1_000)
    wm.observe("quiet", 100)
    assert wm.watermark == 95
    wm.set_idle("quiet")
    assert wm.watermark == 995
    # it wakes up with an old event: the watermark stays where it was
    wm.observe("quiet", 200)
    assert wm.watermark == 995
    wm.observe("busy", 2_000)
    wm.observe("quiet", 1_500)
    assert wm.watermark == 1_495


def test_all_idle_uses_the_newest_event() -> None:
    wm = WatermarkTracker(allowed_lateness_ms=5)
    wm.observe("a", 100)
    wm.observe("b", 300)
    wm.set_idle("a")
    wm.set_idle("b")
    assert wm.watermark == 295


def test_all_idle_is_every_source_read_here_idle() -> None:
    wm = WatermarkTracker(allowed_lateness_ms=0)
    assert not wm.all_idle  # no source at all: nothing to say
    wm.register("a")
    wm.register("b")
    wm.set_idle("a")
    assert not wm.all_idle
    wm.set_idle("b")
    assert wm.all_idle  # never spoken, both read to their (empty) ends
    wm.observe("b", 100)  # a record read: b is active again
    assert not wm.all_idle
    wm.set_idle("b")
    wm.forget("a")
    assert wm.all_idle


def test_forget_and_advance() -> None:
    wm = WatermarkTracker(allowed_lateness_ms=0)
    wm.advance_to(500)
    wm.observe("a", 100)
    assert wm.watermark == 500  # a watermark is never undone
    wm.observe("b", 900)
    wm.forget("a")
    assert wm.watermark == 900
    wm.advance_to(5_000)
    assert wm.watermark == 5_000
    assert wm.newest == 900


def test_a_registered_source_holds_the_watermark_until_it_speaks() -> None:
    wm = WatermarkTracker(allowed_lateness_ms=0)
    wm.register("impressions")
    wm.observe("clicks", 1_000)
    assert wm.watermark is None  # impressions may still hold anything
    wm.observe("impressions", 500)
    assert wm.watermark == 500
    wm.register("late-joiner")
    wm.observe("impressions", 2_000)
    wm.observe("clicks", 2_000)
    assert wm.watermark == 500  # held, never moved back
    wm.set_idle("late-joiner")
    assert wm.watermark == 2_000


class _Model:
    """The definition, recomputed from scratch at every read: the tracker's oracle."""

    def __init__(self, lateness: int) -> None:
        self.lateness = lateness
        self.newest: dict[str, int | None] = {}
        self.idle: set[str] = set()
        self.watermark: int | None = None

    def read(self) -> int | None:
        active = [t for s, t in self.newest.items() if s not in self.idle]
        if None in active:
            return self.watermark
        known = [t for t in self.newest.values() if t is not None]
        if active:
            candidate = min(t for t in active if t is not None) - self.lateness
        elif known:
            candidate = max(known) - self.lateness
        else:
            return self.watermark
        if self.watermark is None or candidate > self.watermark:
            self.watermark = candidate
        return self.watermark


_SOURCES = st.sampled_from(["a", "b", "c", "d"])
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("observe"), _SOURCES, st.integers(0, 1_000)),
        st.tuples(st.just("idle"), _SOURCES, st.booleans()),
        st.tuples(st.just("register"), _SOURCES, st.none()),
        st.tuples(st.just("forget"), _SOURCES, st.none()),
        st.tuples(st.just("read"), st.none(), st.none()),
    ),
    max_size=60,
)


@given(_OPS)
@settings(max_examples=400, deadline=None)
def test_the_tracker_agrees_with_the_definition_recomputed_at_every_read(
    ops: list[tuple[str, str | None, object]],
) -> None:
    """The tracker skips recomputing when a source ahead of the slowest one moves; whatever the
    order of operations, every read (and observe, which returns the watermark before and after
    the event) equals the minimum recomputed from scratch."""
    tracker = WatermarkTracker(allowed_lateness_ms=7)
    model = _Model(7)
    for op, source, arg in ops:
        if op == "observe" and source is not None and isinstance(arg, int):
            before, after = tracker.observe(source, arg)
            assert before == model.read()  # observe reads the watermark before the event,
            old = model.newest.get(source)
            if old is None or arg > old:
                model.newest[source] = arg
            model.idle.discard(source)
            assert after == model.read()  # and after it
        elif op == "idle" and source is not None:
            tracker.set_idle(source, bool(arg))
            if arg:
                model.idle.add(source)
            else:
                model.idle.discard(source)
        elif op == "register" and source is not None:
            tracker.register(source)
            model.newest.setdefault(source, None)
        elif op == "forget" and source is not None:
            tracker.forget(source)
            model.newest.pop(source, None)
            model.idle.discard(source)
        else:
            assert tracker.watermark == model.read()
    assert tracker.watermark == model.read()
