"""hybridlbd's own checks for Schemathesis (test_api_fuzz.py loads them with SCHEMATHESIS_HOOKS):
every refusal (4xx) names the field it refuses, and leaves the state as it was: the VIP
configuration and the switches' drain state, read back with GET before and after each request.
Requests run one at a time (--workers 1), so "before" is the state the request met."""
import json
import os
import ssl
import urllib.request

import schemathesis

BASE = os.environ["HLB_FUZZ_URL"]
TLS = ssl.create_default_context(cafile=os.environ["HLB_FUZZ_CA"])
AUTH = {"Authorization": "Bearer " + os.environ["HLB_FUZZ_TOKEN"]}
_before = []


def get(path):
    req = urllib.request.Request(BASE + path, headers=AUTH)
    with urllib.request.urlopen(req, context=TLS, timeout=30) as r:
        return json.loads(r.read())


def state():
    """What a refused request must not change: every VIP as configured, every switch's drain."""
    return {"vips": get("/vips")["vips"],
            "drained": {s["id"]: s["drained"] for s in get("/switches")["switches"]}}


@schemathesis.hook
def before_call(context, case, **kwargs):
    _before[:] = [state()]


@schemathesis.check
def refusal_names_the_field(ctx, response, case):
    if 400 <= response.status_code < 500:
        try:
            body = response.json()
        except ValueError:
            raise AssertionError("a %d without a JSON body: %r" % (response.status_code, response.text[:200]))
        if not isinstance(body, dict) or not body.get("field") or not body.get("reason"):
            raise AssertionError("a %d that names no field: %s" % (response.status_code, response.text[:300]))


@schemathesis.check
def refusal_changes_nothing(ctx, response, case):
    if 400 <= response.status_code < 500 and _before:
        after = state()
        if after != _before[0]:
            raise AssertionError("a %d changed the state: before %s, after %s" % (
                response.status_code, json.dumps(_before[0])[:500], json.dumps(after)[:500]))
