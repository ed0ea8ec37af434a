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
