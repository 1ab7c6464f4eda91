"""What an operator watches, end to end: the emulation's real Prometheus scraping hybridlbd, the
SMuxes and the host agents, and the daemon's live web view in a real headless chromium.

Each test leaves the fabric as it found it (the failed switch recovered).
"""
import os
import time

import hlb_browser
from conftest import hmux_vip, placement, wait_for, wait_quiet

import hlbemu

def promql_value(emu, query):
    r = emu.promql(query)
    return r[0][1] if r else None


def test_prometheus_scrapes_every_target_and_agrees_with_the_api(emu, placed):
    agents = sum(1 for h in emu.fab["hosts"].values() if h.get("agentUrl"))
    expected = {"hybridlbd": 1, "smux": len(emu.fab["smuxes"]), "agent": agents}

    def all_up():
        up = {labels["job"]: v for labels, v in emu.promql("sum by (job) (up)")}
        return up if up == expected else None
    up = wait_for(all_up, 30, 1)
    assert up == expected, "targets up: %s (want %s); %s" % (
        {l["job"]: v for l, v in emu.promql("sum by (job) (up)")}, expected, emu.promql("up == 0"))

    def agrees():
        # the placement the API reports, and the one Prometheus scraped after it
        wait_quiet(emu)
        api = placement(emu)
        time.sleep(4.5)                  # two scrapes (every 2 s) after the API read
        if placement(emu) != api:
            return None
        by_mux = {l["mux"]: v for l, v in emu.promql("sum by (mux) (hybridlb_vips)")}
        want = {"hmux": sum(1 for at in api.values() if at != "smux"), "smux": sum(1 for at in api.values() if at == "smux")}
        got = {k: int(by_mux.get(k, 0)) for k in want}
        return (got, want) if got == want else None
    r = wait_for(agrees, 60, 1)
    assert r, "Prometheus's hybridlb_vips by mux never matched GET /assignment: %s vs %s" % (
        emu.promql("sum by (mux) (hybridlb_vips)"), placement(emu))
    # the controller's counters, the SMuxes' and the agents' are all there
    assert promql_value(emu, "sum(hybridlb_reconciles_total)") >= 1
    assert promql_value(emu, "sum(hybridlb_migrations_total{outcome=\"done\"})") >= 1
    assert promql_value(emu, "sum(hybridlb_southbound_duration_seconds_count{southbound=\"hmux\"})") >= 1
    assert promql_value(emu, "max(hlb_smux_table_version)") == promql_value(emu, "hybridlb_smux_table_version")
    assert promql_value(emu, "sum(hlb_agent_vip_packets_total)") > 0, "the background load was decapsulated"


def test_web_view_shows_the_vips_the_api_reports_and_a_failed_switch(emu, placed):
    assert hlb_browser.available(), "chromium, chromium-driver or certutil missing: topologies/install-deps.sh"
    shots = os.path.join(emu.dir, "logs")      # copied to $HLB_IT_LOGS with the emulation's logs
    b = hlb_browser.Browser(emu.tag, emu.webview_url(), emu.ca)
    vip, sid = None, None
    try:
        s = b.open()
        assert s["updates"] >= 1, "the page never drew: %s" % s

        def same_as_api():
            wait_quiet(emu)
            api = placement(emu)
            page = b.wait(b.state()["updates"] + 2)     # two redraws after the API read
            return page if page["vips"] == api and placement(emu) == api else None
        page = wait_for(same_as_api, 60, 1)
        assert page, "the page's VIPs never matched GET /assignment: %s vs %s" % (b.state()["vips"], placement(emu))
        assert set(page["switches"]) == set(emu.fab["switches"]), page["switches"]
        assert all(st in ("up", "hmux") for st in page["switches"].values()), page["switches"]
        b.screenshot(os.path.join(shots, "webview-before.png"))

        vip, sid = hmux_vip(emu)
        assert page["switches"][sid] == "hmux"
        emu.fail_switch(sid)

        def shows_failure():
            st = b.wait(b.state()["updates"] + 1)
            return st if st["switches"].get(sid) == "down" and st["vips"].get(vip) not in (sid, None) else None
        after = wait_for(shows_failure, 60, 0.5)
        b.screenshot(os.path.join(shots, "webview-switch-down.png"))
        assert after, "the page never showed %s down with %s moved: %s" % (sid, vip, b.state())
        assert wait_for(lambda: b.wait(b.state()["updates"] + 1)["vips"].get(vip) == placement(emu).get(vip), 30, 0.5), \
            "the page does not draw %s where the API has it: %s vs %s" % (vip, b.state()["vips"], placement(emu))
        errors = b.state()["consoleErrors"]
        assert errors == [], "console errors: %s" % errors
        print("web view: %s shown down, %s drawn on %s; screenshots webview-*.png with the logs" % (
            sid, vip, after["vips"][vip]))
    finally:
        if sid:
            emu.recover_switch(sid)
        b.close()
