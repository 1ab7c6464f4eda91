"""Property-based fuzzing of the live hybridlbd with Schemathesis (PyPI schemathesis 4, in its
own virtualenv: topologies/install-deps.sh), against the OpenAPI document the daemon serves,
over HTTPS with an admin token, one request at a time, bounded in time (HLB_FUZZ_SECONDS,
default 120).

Checks: no 5xx; status codes, content types, headers and bodies as described; invalid data
refused; authentication enforced (ignored_auth: the same request without the token must get a
401); and hybridlbd's own (api_fuzz_hooks.py): every 4xx names the field, and after every 4xx
the VIP configuration and the switches' drain state are what they were before it.

Generated values are mixed with the emulation's own (its VIPs, hosts, switch ids and aggregate,
each picked half the time) so that requests reach existing resources and valid bodies are
accepted: VIPs are added, replaced and removed, switches drained, and the daemon migrates for
real between the refusals. Afterwards the test puts the configuration and the drains back and
checks the daemon still answers. It runs last (conftest.py). Not checked:
positive_data_acceptance (a VIP that fits the schema is still refused when its DIPs are not
hosts of the fabric, which no schema can say)."""
import json
import os

import hlbemu

HERE = os.path.dirname(os.path.abspath(__file__))
ST = os.environ.get("HLB_SCHEMATHESIS", "/opt/hybridlb-fuzz/bin/st")
CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance",
          "response_headers_conformance", "response_schema_conformance", "negative_data_rejection",
          "unsupported_method", "ignored_auth", "refusal_names_the_field", "refusal_changes_nothing"]
FUZZ_VIPS = ["10.100.9.1", "10.100.9.2"]   # not among the fixtures' VIPs: the fuzzer may add them


def toml_list(values):
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def schemathesis_config(emu, vips):
    """The token (from the environment) and the emulation's names, mixed into the generated data."""
    hosts = sorted(h["ip"] for h in emu.fab["hosts"].values() if h["role"] == "dip")
    switches = sorted(emu.fab["switches"])
    lines = ['headers = { Authorization = "Bearer ${HLB_FUZZ_TOKEN}" }', "",
             "[dictionaries.vips]", "values = " + toml_list(vips + FUZZ_VIPS),
             "[dictionaries.hosts]", "values = " + toml_list(hosts),
             "[dictionaries.switches]", "values = " + toml_list(switches),
             "[dictionaries.aggregates]", "values = " + toml_list(["10.100.0.0/16"]), "", "[parameters]"]
    for key, dictionary in (("path.vip", "vips"), ("path.dip", "hosts"), ("path.id", "switches"),
                            ("body.vip", "vips"), ("body.aggregate", "aggregates"), ("body.ip", "hosts"),
                            ("body.ports[*].dips[*].ip", "hosts"), ("body.vips[*].vip", "vips"),
                            ("body.vips[*].aggregate", "aggregates"),
                            ("body.vips[*].ports[*].dips[*].ip", "hosts")):
        lines.append('"%s" = { dictionary = "%s", probability = 0.5 }' % (key, dictionary))
    return "\n".join(lines) + "\n"


def drains(emu):
    code, body = emu.api("GET", "/switches")
    assert code == 200, body
    return {s["id"]: s["drained"] for s in body["switches"]}


def test_fuzzing_the_live_api_finds_no_fault(emu, placed, tmp_path):
    assert os.path.exists(ST), "%s missing: run topologies/install-deps.sh" % ST
    seconds = int(os.environ.get("HLB_FUZZ_SECONDS", "120"))
    t = hlbemu.tlsdir(emu.tag)
    with open(os.path.join(t, "admin.token")) as f:
        token = f.read().strip()
    code, before = emu.api("GET", "/vips")
    assert code == 200, before
    drained_before = drains(emu)
    config = tmp_path / "schemathesis.toml"
    config.write_text(schemathesis_config(emu, [v["vip"] for v in before["vips"]]))
    env = {"HLB_FUZZ_TOKEN": token, "HLB_FUZZ_URL": hlbemu.DAEMON_URL, "HLB_FUZZ_CA": os.path.join(t, "ca.pem"),
           "SCHEMATHESIS_HOOKS": "api_fuzz_hooks", "PYTHONPATH": HERE}
    # in the test's own directory: Schemathesis keeps a cache beside where it runs
    cmd = ["env", "-C", str(tmp_path)] + ["%s=%s" % kv for kv in env.items()] + [
        ST, "--no-color", "--config-file", str(config), "run", hlbemu.DAEMON_URL + "/openapi.json",
        "--url", hlbemu.DAEMON_URL, "--tls-verify", env["HLB_FUZZ_CA"], "--workers", "1",
        "--phases", "coverage,fuzzing", "--max-time", str(seconds), "--checks", ",".join(CHECKS),
        "--request-timeout", "60", "--report", "junit", "--report-junit-path", str(tmp_path / "fuzz.xml")]
    try:
        r = emu.ns_run(cmd, timeout=seconds * 3 + 180)
        print(r.stdout[-8000:])
        assert r.returncode == 0, "Schemathesis found faults (above):\n" + r.stderr[-3000:]
    finally:
        # what the accepted requests changed goes back: the configuration, then the drains
        code, body = emu.api("PUT", "/vips", before, timeout=120)
        assert code == 200, body
        for sid, was in drained_before.items():
            if drains(emu)[sid] != was:
                code, body = emu.api("POST" if was else "DELETE", "/switches/%s/drain" % sid, timeout=120)
                assert code == 200, body
    code, after = emu.api("GET", "/vips")
    assert code == 200 and after == before, json.dumps(after)[:1000]
    assert drains(emu) == drained_before
