#!/usr/bin/env bash
# Smoke test of the two images, built beforehand:
#   docker build -t reassignd:check . && docker build -f Dockerfile.feeder -t reassignd-feeder:check .
#   bash scripts/container-smoke.sh [CONTROLLER_IMAGE] [FEEDER_IMAGE]
# It checks that the controller image has no Java and the feeder image has, starts a ZooKeeper on
# this host (Debian's zookeeper package), a controller container and a cluster of three agents
# from the controller image, creates a topic, and has the feeder image plan a rebalance against
# the controller container (`feed plan --dry-run`). Every container runs on the host network,
# bound to 127.0.0.1, and is removed at the end; the controller and the agents must stop with
# exit code 0. DOCKER=podman works too. Prints "container-smoke: ok ..." last; exit 1 otherwise.
set -euo pipefail

controller_image=${1:-reassignd:check}
feeder_image=${2:-reassignd-feeder:check}
docker=${DOCKER:-docker}
run_id="smoke-$$"
work=$(mktemp -d)
zk_pid=""

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
fail() { echo "container-smoke: $*" >&2; exit 1; }

cleanup() {
    "$docker" rm -f "$run_id-controller" "$run_id-cluster" >/dev/null 2>&1 || true
    [ -n "$zk_pid" ] && kill "$zk_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

for image in "$controller_image" "$feeder_image"; do
    "$docker" image inspect "$image" >/dev/null 2>&1 || fail "no image $image (build it first, see the header)"
done
if "$docker" run --rm --entrypoint sh "$controller_image" -c 'command -v java' >/dev/null 2>&1; then
    fail "$controller_image has Java: the controller image must not"
fi
"$docker" run --rm --entrypoint java "$feeder_image" -version >/dev/null 2>&1 || fail "$feeder_image has no Java"
"$docker" run --rm "$feeder_image" plan --help >/dev/null || fail "$feeder_image: feed plan --help failed"

# ZooKeeper on loopback
zk_port=$(free_port)
http_port=$(free_port)
mkdir -p "$work/zk"
printf 'tickTime=500\ndataDir=%s\nclientPort=%s\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n' \
    "$work/zk" "$zk_port" >"$work/zoo.cfg"
java -cp "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$work/zoo.cfg" >"$work/zk.log" 2>&1 &
zk_pid=$!
# polled every 0.2 s (for up to 30 s): the whole script waits on these polls
for _ in $(seq 150); do
    (echo ruok | timeout 1 bash -c "cat >/dev/tcp/127.0.0.1/$zk_port") 2>/dev/null && break
    sleep 0.2
done

zk="127.0.0.1:$zk_port/smoke"
url="http://127.0.0.1:$http_port"
"$docker" run -d --name "$run_id-controller" --network host "$controller_image" \
    controller --zk "$zk" --http "127.0.0.1:$http_port" --log-format json >/dev/null
"$docker" run -d --name "$run_id-cluster" --network host "$controller_image" \
    cluster --zk "$zk" --brokers 3 --racks 3 --log-format json >/dev/null

brokers() { curl -fsS "$url/v1/brokers" 2>/dev/null | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["brokers"]))' 2>/dev/null || echo 0; }
for _ in $(seq 300); do [ "$(brokers)" = 3 ] && break; sleep 0.2; done
[ "$(brokers)" = 3 ] || fail "the controller did not see 3 brokers (docker logs $run_id-controller)"

curl -fsS -X POST -H 'Content-Type: application/json' "$url/v1/topics" \
    -d '{"topics": [{"name": "smoke", "num_partitions": 12, "replication_factor": 2}]}' >/dev/null \
    || fail "POST /v1/topics failed"

# the feeder image plans against the controller container (Spark in local mode inside it)
"$docker" run --rm --network host -e SPARK_LOCAL_IP=127.0.0.1 "$feeder_image" \
    plan --bootstrap-controller "$url" --goal rebalance:replicas --dry-run >"$work/plan.txt" 2>"$work/plan.err" \
    || { cat "$work/plan.err" >&2; fail "feed plan failed"; }
grep -q '^plan ' "$work/plan.txt" || fail "feed plan printed no summary: $(cat "$work/plan.txt")"

"$docker" stop -t 30 "$run_id-controller" "$run_id-cluster" >/dev/null
codes=$("$docker" inspect -f '{{.State.ExitCode}}' "$run_id-controller" "$run_id-cluster" | tr '\n' ' ')
[ "$codes" = "0 0 " ] || fail "exit codes $codes (want 0 0)"
echo "container-smoke: ok; $controller_image without Java, $feeder_image planned: $(head -1 "$work/plan.txt")"
