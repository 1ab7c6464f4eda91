#!/usr/bin/env bash
# Runs the groups and the VIP route that the ONOS programmer writes with netcfg fastFailover on a
# real Open vSwitch (userspace datapath, private instance, netdev-dummy ports) and checks with
# ofproto/trace where a VIP's connections go as the first hops toward the HMux go down and up:
#   VIP/32 -> FAILOVER hlb:ff:X|agg
#     bucket 0: watch_group = hlb:alive:X (FAILOVER, one bucket per first hop, watching its port) -> hlb:to:X
#     bucket 1: watch_group = hlb:agg (SELECT over the SMuxes)                                  -> hlb:agg
#
# Usage: failover_groups_on_ovs.sh COMMANDS "HOP_PORTS" BACKUP_PORT VIP
#   COMMANDS: lines "group <ovs-ofctl group spec>" and "flow <ovs-ofctl flow spec>", in order
#   (OnosHmuxSouthboundTest renders them from the groups and flow rules the southbound wrote).
# SELECT groups come with OpenFlow 1.5 selection_method=hash only so that ofproto/trace can show
# the chosen bucket (ONOS's OpenFlow 1.3 groups use dp_hash, which trace cannot follow); the
# FAILOVER groups are as ONOS writes them. Root and openvswitch-switch; exit 0 = every check passed.
set -euo pipefail
if [ -z "${HLB_FF_NS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
    # a network namespace of its own: the bridge's local tap device goes with it
    HLB_FF_NS=1 exec unshare -n bash "$0" "$@"
fi
COMMANDS=$1
HOPS=$2
BACKUP=$3
VIP=$4
IN_PORT=99
D=$(mktemp -d /tmp/hlbreachff.XXXXXX)
export OVS_RUNDIR=$D OVS_DBDIR=$D OVS_LOGDIR=$D
cleanup() {
    ovs-vsctl --db="unix:$D/db.sock" --timeout=5 --if-exists del-br hlbff 2>/dev/null || true
    for p in "$D/ovs-vswitchd.pid" "$D/ovsdb-server.pid"; do
        [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null || true
    done
    sleep 0.2
    rm -rf "$D"
}
trap cleanup EXIT
ovsdb-tool create "$D/conf.db" /usr/share/openvswitch/vswitch.ovsschema
ovsdb-server "$D/conf.db" --remote="punix:$D/db.sock" --pidfile="$D/ovsdb-server.pid" \
    --log-file="$D/ovsdb-server.log" -vconsole:off --detach --no-chdir
ovs-vswitchd --enable-dummy "unix:$D/db.sock" --pidfile="$D/ovs-vswitchd.pid" \
    --log-file="$D/ovs-vswitchd.log" -vconsole:off --detach --no-chdir
VS="ovs-vsctl --db=unix:$D/db.sock"
$VS add-br hlbff -- set bridge hlbff datapath_type=netdev protocols=OpenFlow13,OpenFlow15
for p in $HOPS $BACKUP $IN_PORT; do
    $VS add-port hlbff p$p -- set interface p$p type=dummy ofport_request=$p
done
OF="ovs-ofctl -O OpenFlow15"
BR="unix:$D/hlbff.mgmt"
while read -r kind spec; do
    case $kind in
        group) $OF add-group "$BR" "$spec" ;;
        flow) $OF add-flow "$BR" "$spec" ;;
        *) [ -z "$kind" ] || { echo "bad line: $kind $spec"; exit 2; } ;;
    esac
done < "$COMMANDS"
APPCTL="ovs-appctl -t $D/ovs-vswitchd.$(cat "$D/ovs-vswitchd.pid").ctl"
declare -A OFPORT   # datapath port -> OpenFlow port (dpif/show: "p1 1/3:")
while read -r nums; do
    OFPORT[${nums#*/}]=${nums%/*}
done < <($APPCTL dpif/show | sed -n 's/^[[:space:]]*p[0-9]* \([0-9]*\/[0-9]*\):.*/\1/p')
out() {   # OpenFlow output port of one TCP connection to the VIP
    local dp
    dp=$($APPCTL ofproto/trace hlbff \
        "in_port=$IN_PORT,tcp,nw_src=10.0.0.$1,nw_dst=$VIP,tcp_src=$((40000 + $1)),tcp_dst=80" \
        | sed -n 's/^Datapath actions: //p')
    dp=${dp##*,}   # the output after any set_field
    echo "${OFPORT[$dp]:-$dp}"
}
ports() {   # the output ports of 16 connections
    for c in $(seq 1 16); do out "$c"; done | sort -n -u | tr '\n' ' ' | sed 's/ $//'
}
fail=0
check() {
    local what=$1 want=$2 got
    got=$(ports)
    if [ "$got" = "$want" ]; then echo "ok   $what: $got"; else echo "FAIL $what: got '$got', want '$want'"; fail=1; fi
}
ALL=$(echo $HOPS | tr ' ' '\n' | sort -n | tr '\n' ' ' | sed 's/ $//')
FIRST=${ALL%% *}
check "every first hop toward the HMux up: ECMP over them" "$ALL"
if [ "$FIRST" != "$ALL" ]; then
    $OF mod-port "$BR" "p$FIRST" down
    # limit: ONOS's select buckets watch nothing; ONOS rewrites the group on the link event
    check "one first hop down: still over all of them" "$ALL"
fi
for p in $ALL; do $OF mod-port "$BR" "p$p" down; done
check "every first hop down: the SMuxes, from the switch itself" "$BACKUP"
$OF mod-port "$BR" "p$FIRST" up
check "a first hop back: toward the HMux again" "$ALL"
exit $fail
