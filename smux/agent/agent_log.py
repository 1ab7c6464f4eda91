"""The host agent's log: JSON lines on stderr, one per event, with its fields."""
import json
import sys
import time


def log(level, msg, **fields):
    """JSON lines on stderr."""
    rec = {"ts": round(time.time(), 3), "level": level, "msg": msg}
    rec.update(fields)
    print(json.dumps(rec), file=sys.stderr, flush=True)
