#!/bin/sh
# Create the crawl's Redis Cluster once; on later runs, heal it after its nodes
# changed address (a container or pod restarted with a new IP). Exits 0 once every
# node reports cluster_state:ok. See docs/cluster.md.
#
#   REDIS_CLUSTER_NODES     host:port of every node, space-separated
#   REDIS_CLUSTER_REPLICAS  replicas per primary (default 1: 6 nodes = 3 primaries + 3 replicas)
#   REDIS_CLUSTER_WAIT      seconds to wait for the nodes, then for cluster_state:ok (default 120)
#   REDISCLI_AUTH           the nodes' password (redis-cli reads it: not on a command line)
#
# Run by the compose profile `cluster` (service redis-cluster-init) and by the
# Kubernetes Job redis-cluster-create (deploy/kubernetes-cluster/).
set -eu
nodes=${REDIS_CLUSTER_NODES:?set REDIS_CLUSTER_NODES (host:port of every node)}
replicas=${REDIS_CLUSTER_REPLICAS:-1}
deadline=$(($(date +%s) + ${REDIS_CLUSTER_WAIT:-120}))

cli() { _at=$1; shift; redis-cli -h "${_at%:*}" -p "${_at##*:}" "$@" 2>/dev/null | tr -d '\r'; }
info() { cli "$1" cluster info | sed -n "s/^$2://p"; }
# CLUSTER MEET (and so redis-cli --cluster create) takes IP addresses, not names
# ahostsv4 asks with AI_ADDRCONFIG, which finds nothing on a host whose only IPv4
# address is loopback (a machine or namespace without a network): the hosts database too
ipv4() {
  { getent ahostsv4 "${1%:*}" || true; getent hosts "${1%:*}" || true; } |
    awk '$1 ~ /^[0-9]+[.][0-9]+[.][0-9]+[.][0-9]+$/ { print $1; exit }'
}
waiting() {
  [ "$(date +%s)" -lt "$deadline" ] || { echo "redis-cluster: $1" >&2; exit 1; }
  sleep 1
}

addresses=""
for node in $nodes; do
  until [ "$(cli "$node" ping)" = PONG ]; do waiting "$node does not answer PING"; done
  ip=$(ipv4 "$node")
  [ -n "$ip" ] || { echo "redis-cluster: no IPv4 address for $node" >&2; exit 1; }
  addresses="$addresses $ip:${node##*:}"
done

first=${nodes%% *}
if [ "$(info "$first" cluster_known_nodes)" -gt 1 ]; then
  echo "redis-cluster: already created; each node meets the others at their current address"
  for node in $nodes; do
    own="$(ipv4 "$node"):${node##*:}"
    for address in $addresses; do
      [ "$address" = "$own" ] || cli "$node" cluster meet "${address%:*}" "${address##*:}" >/dev/null
    done
  done
else
  # shellcheck disable=SC2086 # one word per node
  redis-cli --cluster create $addresses --cluster-replicas "$replicas" --cluster-yes
fi

for node in $nodes; do
  until [ "$(info "$node" cluster_state)" = ok ]; do waiting "$node: cluster_state is not ok"; done
done
echo "redis-cluster: $(echo $nodes | wc -w) nodes, cluster_state:ok"
