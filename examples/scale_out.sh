#!/usr/bin/env bash
# Scale-out on one machine, as docs/scale-out.md describes it: two upstream servers of one
# model (fake ones here: tests/fake_upstream.py, one of them broken, answering every call
# with a 500), two selfpara replicas that each balance over both servers (router.yaml) and
# share one Redis call cache, and a round-robin load balancer in front
# (examples/round_robin.py). It sends questions through the balancer, then the same
# questions again so that each lands on the other replica, and prints what each replica
# counted (its /metrics) and how many calls the healthy server got in each pass.
#
#   bash examples/scale_out.sh            # PYTHON=... to choose the interpreter, REQUESTS=N
#
# Without redis-server on PATH (or without the `redis` extra) the replicas run with their
# own in-memory caches and the second pass goes upstream again.
# Swap the fake servers for real ones (vLLM, llama.cpp's llama-server, Ollama) by changing
# the api_base lines of router.yaml; swap round_robin.py for your own load balancer.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python}"
REQUESTS="${REQUESTS:-10}"
WORK="$(mktemp -d)"
cleanup() {
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

wait_for() {  # URL: until it answers 200 (at most 20 s)
  for _ in $(seq 100); do curl -sf "$1" > /dev/null && return 0; sleep 0.2; done
  echo "no answer from $1" >&2
  return 1
}

# 1. two servers of the model: 9101 healthy, 9102 broken
"$PY" tests/fake_upstream.py --port 9101 --delay-ms 50 &
"$PY" tests/fake_upstream.py --port 9102 --delay-ms 50 --fail-status 500 &

# 2. the router config: both servers are deployments of the model `fake`
cat > "$WORK/router.yaml" <<'YAML'
model_list:
  - model_name: fake
    litellm_params: {model: openai/fake, api_base: "http://127.0.0.1:9101/v1"}
  - model_name: fake
    litellm_params: {model: openai/fake, api_base: "http://127.0.0.1:9102/v1"}
router_settings: {routing_strategy: least-busy, allowed_fails: 3, cooldown_time: 30}
YAML

# 3. one Redis for the replicas' call cache
CACHE=memory
if command -v redis-server > /dev/null && "$PY" -c "import redis" 2> /dev/null; then
  redis-server --port 6390 --bind 127.0.0.1 --save "" --appendonly no > "$WORK/redis.log" &
  CACHE=redis://127.0.0.1:6390/0
fi

# 4. two replicas of the proxy, each over both servers, sharing the cache; the operator's key
# reads the whole of /metrics (the cache's hits are not for clients to see)
export SELFPARA_METRICS_KEY="metrics-$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')"
for port in 8101 8102; do
  "$PY" -m selfpara serve --model openai/fake --router-config "$WORK/router.yaml" --cache "$CACHE" \
    --metrics-key-env SELFPARA_METRICS_KEY --port "$port" 2> "$WORK/replica-$port.log" &
done

# 5. the load balancer in front
"$PY" examples/round_robin.py --port 8100 127.0.0.1:8101 127.0.0.1:8102 &

wait_for http://127.0.0.1:9101/v1/models
for port in 8101 8102 8100; do wait_for "http://127.0.0.1:$port/ready"; done
echo "cache: $CACHE"

ask() {  # N: question N through the balancer; prints the answer
  curl -sf http://127.0.0.1:8100/v1/chat/completions -H 'Content-Type: application/json' \
    -d "{\"model\": \"fake\", \"messages\": [{\"role\": \"user\", \"content\": \"Question $1: what is the capital of France?\"}]}" \
    | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["choices"][0]["message"]["content"])'
}

# 6. the questions, twice; one extra request in between shifts the round robin by one, so
# each question comes back on the other replica the second time
for pass in 1 2; do
  curl -sf -X POST http://127.0.0.1:9101/_stats > /dev/null  # reset the healthy server's count
  ok=0
  for i in $(seq "$REQUESTS"); do
    answer="$(ask "$i")" && ok=$((ok + 1))
  done
  calls="$(curl -sf http://127.0.0.1:9101/_stats | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["calls"])')"
  echo "pass $pass: answered $ok of $REQUESTS (last: ${answer:-none}); calls to the healthy server: $calls"
  curl -sf http://127.0.0.1:8100/health > /dev/null
done

# 7. what each replica counted
for port in 8101 8102; do
  echo "replica :$port"
  curl -sf -H "Authorization: Bearer $SELFPARA_METRICS_KEY" "http://127.0.0.1:$port/metrics" | grep -E \
    '^selfpara_(requests_total\{endpoint="chat/completions"|cache_hits_total|deployment_(calls|cooldowns)_total)' \
    | sed 's/^/  /'
done
