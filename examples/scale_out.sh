#!/usr/bin/env bash
# Scale-out on one machine, as docs/scale-out.md describes it: two upstream servers of one
# model (fake ones here: tests/fake_upstream.py, one of them broken, answering every call
# with a 500), two selfpara replicas that each balance over both servers (router.yaml),
# and a round-robin load balancer in front (examples/round_robin.py). It sends requests
# through the balancer and prints what each replica counted (its /metrics).
#
#   bash examples/scale_out.sh            # PYTHON=... to choose the interpreter, REQUESTS=N
#
# Swap the fake servers for real ones (vLLM, llama.cpp's llama-server, Ollama) by changing
# the api_base lines of router.yaml; swap round_robin.py for your own load balancer.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python}"
REQUESTS="${REQUESTS:-20}"
WORK="$(mktemp -d)"
cleanup() {
  for pid in $(jobs -p); do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

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

# 3. two replicas of the proxy, each over both servers
for port in 8101 8102; do
  "$PY" -m selfpara serve --model openai/fake --router-config "$WORK/router.yaml" --port "$port" \
    2> "$WORK/replica-$port.log" &
done

# 4. the load balancer in front
"$PY" examples/round_robin.py --port 8100 127.0.0.1:8101 127.0.0.1:8102 &

for port in 8101 8102 8100; do  # wait until each answers /ready
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$port/ready" > /dev/null && break
    sleep 0.2
  done
done

# 5. requests through the balancer: every one answered although one server is broken
ok=0
for i in $(seq "$REQUESTS"); do
  answer=$(curl -sf http://127.0.0.1:8100/v1/chat/completions -H 'Content-Type: application/json' \
    -d "{\"model\": \"fake\", \"messages\": [{\"role\": \"user\", \"content\": \"Question $i: what is the capital of France?\"}]}" \
    | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["choices"][0]["message"]["content"])') && ok=$((ok + 1))
done
echo "answered: $ok of $REQUESTS (last answer: ${answer:-none})"

# 6. what each replica counted
for port in 8101 8102; do
  echo "replica :$port"
  curl -sf "http://127.0.0.1:$port/metrics" | grep -E \
    '^selfpara_(requests_total\{endpoint="chat/completions"|deployment_(calls|failures|cooldowns)_total)' | sed 's/^/  /'
done
