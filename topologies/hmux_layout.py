"""The HMux rule layout hybridlbd writes on the Open vSwitch bridges, for scripts and tests that
program or read those bridges by hand: priorities, cookies and the select method, read from
hmux-layout.json, which the build writes from the controller's own constants (never typed here).
"""
import json
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "hmux-layout.json")) as _f:
    LAYOUT = json.load(_f)

PRIORITY = LAYOUT["priorities"]
KINDS = LAYOUT["cookie"]["kinds"]
OVS = LAYOUT["ovs"]
CONTROLLER_COOKIE = OVS["controllerCookie"]               # value/mask, as fabric.json takes it
CONTROLLER_GROUP_ID_BASE = OVS["controllerGroupIdBase"]
SELECT_GROUP = "type=select," + OVS["selectMethod"]      # the select method the SMux's "ovs" replicates
ENTRY_PRIORITIES = (PRIORITY["entryWholeVip"], PRIORITY["entryProtocol"], PRIORITY["entryPort"])


def entry_priority(proto, port):
    """Priority of an HMux entry: the whole VIP < a protocol < a protocol and port."""
    if proto == "any":
        return PRIORITY["entryWholeVip"]
    return PRIORITY["entryPort"] if port else PRIORITY["entryProtocol"]


def cookie(kind, data=0, base=None):
    """The cookie of a rule of `kind` (entry, route, aggregate) above the controller cookie `base`."""
    value = int((base or CONTROLLER_COOKIE).split("/")[0], 16)
    return (data << LAYOUT["cookie"]["dataShift"]) | value | KINDS[kind]


def cookie_match(kind=None):
    """An ovs-ofctl cookie=value/mask matching every controller rule, or those of one kind."""
    value, mask = (int(x, 16) for x in CONTROLLER_COOKIE.split("/"))
    if kind is None:
        return "0x%x/0x%x" % (value, mask)
    return "0x%x/0x%x" % (value | KINDS[kind], mask | LAYOUT["cookie"]["kindMask"])
