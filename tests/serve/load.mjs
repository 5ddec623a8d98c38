// A bounded load on `tokenline serve` over loopback (scripts/bench-serve starts the server and runs this):
// CLIENTS clients at once, each sending completions back to back (half streamed) until DURATION_S passes,
// while a monitor polls /health and /metrics and reads the server's thread count. Prints what a reviewer
// checks: errors (anything but 200 or a 503 with Retry-After), 503s, /health and /metrics latency, threads,
// pages free at the end, and whether the server's finished count agrees with the clients'.
// Usage: node load.mjs BASE_URL SERVER_PID [CLIENTS=200] [DURATION_S=30]
import { readFileSync } from 'node:fs';

const [base, pid, clientsArg = '200', durationArg = '30'] = process.argv.slice(2);
const CLIENTS = Number(clientsArg);
const DURATION_MS = Number(durationArg) * 1000;
const MODEL = 'glm-5.3-tiny';
const deadline = Date.now() + DURATION_MS;
const stats = { ok: 0, overloaded: 0, errors: 0, errorSamples: [], tokens: 0 };
const health = [], metricsLatency = [];
let maxThreads = 0;

function threads() {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Threads:\s+(\d+)/m);
  return m ? Number(m[1]) : NaN;
}

async function metric(name, extra = '') {
  const text = await (await fetch(`${base}/metrics`)).text();
  const head = `${name}{model_name="${MODEL}"${extra}} `;
  const line = text.split('\n').find((l) => l.startsWith(head));
  return line ? Number(line.slice(head.length)) : NaN;
}

async function one(i, n) {
  const stream = (i + n) % 2 === 0;
  const prompt = `client ${i} request ${n}: ` + 'x'.repeat(20 + ((i * 7 + n * 13) % 80));
  const res = await fetch(`${base}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, prompt, max_tokens: 16, temperature: 0, ignore_eos: true, stream }),
  });
  const body = await res.text();
  if (res.status === 503 && res.headers.get('retry-after')) {
    stats.overloaded += 1;
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after'))));
    return;
  }
  const good = res.status === 200 && (stream ? body.endsWith('data: [DONE]\n\n') : JSON.parse(body).usage.completion_tokens === 16);
  if (good) {
    stats.ok += 1;
    stats.tokens += 16;
  } else {
    stats.errors += 1;
    if (stats.errorSamples.length < 5) stats.errorSamples.push(`${res.status} ${body.slice(0, 200)}`);
  }
}

async function client(i) {
  for (let n = 0; Date.now() < deadline; ++n) {
    try {
      await one(i, n);
    } catch (e) {
      stats.errors += 1;
      if (stats.errorSamples.length < 5) stats.errorSamples.push(String(e));
    }
  }
}

async function monitor() {
  while (Date.now() < deadline) {
    let t = performance.now();
    const h = await fetch(`${base}/health`);
    await h.text();
    health.push(performance.now() - t);
    t = performance.now();
    await (await fetch(`${base}/metrics`)).text();
    metricsLatency.push(performance.now() - t);
    maxThreads = Math.max(maxThreads, threads());
    await new Promise((r) => setTimeout(r, 250));
  }
}

const pct = (xs, p) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))] : NaN);
const t0 = Date.now();
await Promise.all([monitor(), ...Array.from({ length: CLIENTS }, (_, i) => client(i))]);
const wall = (Date.now() - t0) / 1000;
await new Promise((r) => setTimeout(r, 500));  // the last records reach the metrics
const served = (await metric('vllm:request_success_total', ',finished_reason="length"')) +
               (await metric('vllm:request_success_total', ',finished_reason="stop"'));
const report = {
  clients: CLIENTS,
  wall_s: Number(wall.toFixed(1)),
  ok: stats.ok,
  overloaded_503: stats.overloaded,
  errors: stats.errors,
  error_samples: stats.errorSamples,
  tokens_per_s: Number((stats.tokens / wall).toFixed(1)),
  health_ms: { p50: Number(pct(health, 0.5).toFixed(1)), max: Number(Math.max(...health).toFixed(1)), n: health.length },
  metrics_ms: { p50: Number(pct(metricsLatency, 0.5).toFixed(1)), max: Number(Math.max(...metricsLatency).toFixed(1)) },
  threads_max: maxThreads,
  threads_end: threads(),
  server_finished: served,
  running_end: await metric('vllm:num_requests_running'),
  pages_free_end: await metric('tokenline:kv_pages_free'),
  pages_total: await metric('tokenline:kv_pages_total'),
};
report.client_server_agree = report.server_finished === report.ok;
console.log(JSON.stringify(report, null, 1));
process.exit(report.errors === 0 && report.client_server_agree && report.pages_free_end === report.pages_total ? 0 : 1);
