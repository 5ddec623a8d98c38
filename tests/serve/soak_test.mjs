// A soak test of `tokenline serve` on loopback: for SOAK_S seconds (default 120) good clients (whole and
// streamed completions, chat), bad clients (wrong types, numbers JSON cannot hold, invalid UTF-8, too much
// work per request, not JSON), slow clients (headers at a byte per 300 ms, 100 of them held open against 24
// workers), aborting clients (a stream dropped after its first chunk, a socket destroyed mid-request),
// half-closing clients and oversized bodies run at once, while a monitor asks /health every 250 ms and reads
// the server's RSS and thread count from /proc. Asserts: the server never dies, /health answers 200 within
// 1 s every time, the thread count never grows, RSS stays bounded, every good request gets a whole 200, every
// bad one a 4xx naming what is wrong (never a 500 or a dropped connection), and SIGTERM still drains to
// exit 0 with the outputs written. Run by ctest (label serve) with TOKENLINE_BINARY naming the binary.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BINARY = process.env.TOKENLINE_BINARY;
const SOAK_MS = Number(process.env.SOAK_S ?? 120) * 1000;
const MODEL = 'glm-5.3-tiny';
const WORKERS = 24;       // 16 for completions, 8 reserved: 100 slow clients would hold them all if they could
const SLOW_CLIENTS = 100;
// RSS bound: the tiny model's weights and KV are a few MB; what could grow is per-request state. 256 MiB
// over the RSS after warm-up is 10x what the steady state uses (measured ~20-30 MiB of growth).
const RSS_GROWTH_LIMIT_KB = 256 * 1024;

const dir = mkdtempSync(join(tmpdir(), 'tokenline-soak-'));
let proc;
after(() => {
  if (proc && proc.exitCode === null) proc.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function startServer() {
  proc = spawn(BINARY, ['serve', '--port', '0', '--http-workers', String(WORKERS), '--kv-pages', '128',
                        '--page-size', '16', '--shutdown-timeout', '20', '--max-request-tokens', '10000', '--out', join(dir, 'out')],
               { stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no banner in 60 s:\n' + text)), 60000);
    proc.stderr.on('data', (d) => {
      if (text.length < 1 << 16) text += d;
      const m = text.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    proc.on('exit', (code, signal) => reject(new Error(`server exited ${code} ${signal}:\n${text}`)));
  });
}

function procStatus(pid) {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  return { rssKb: Number(s.match(/^VmRSS:\s+(\d+)/m)[1]), threads: Number(s.match(/^Threads:\s+(\d+)/m)[1]) };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Raw HTTP over one socket: sends `parts` (with pauses), half-closes if asked, resolves with all it read.
function rawExchange(port, parts, { pauseMs = 0, halfClose = false, destroyAfterMs = 0 } = {}) {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    let got = '';
    let done = false;
    const finish = (why) => { if (!done) { done = true; sock.destroy(); resolve({ got, why }); } };
    sock.on('data', (d) => { got += d; });
    sock.on('end', () => finish('end'));
    sock.on('error', (e) => finish(e.code));
    sock.on('connect', async () => {
      for (const p of parts) {
        if (done) return;
        sock.write(p);
        if (pauseMs) await sleep(pauseMs);
      }
      if (halfClose) sock.end();
      if (destroyAfterMs) { await sleep(destroyAfterMs); finish('destroyed'); }
    });
  });
}

const BAD_BODIES = [
  ['{"messages":[{"role":1,"content":"hi"}]}', '/v1/chat/completions', /messages\[0\]\.role: expected a string, found a number/],
  ['{"messages":[{"role":"user","content":[{"type":1,"text":"x"}]}]}', '/v1/chat/completions', /content\[0\]\.type/],
  ['{"messages":[{"role":"user","content":"x"}],"response_format":{"type":1}}', '/v1/chat/completions', /response_format/],
  ['{"prompt":"x","temperature":1e309}', '/v1/completions', /finite/],
  ['{"prompt":"x","temperature":NaN}', '/v1/completions', /NaN/],
  ['{"prompt":"\\ud800"}', '/v1/completions', /surrogate/],
  [Buffer.from('{"prompt":"caf\xe9"}', 'latin1'), '/v1/completions', /not valid UTF-8/],
  ['{"prompt":"x","top_k":18446744073709551615}', '/v1/completions', /top_k/],
  [JSON.stringify({ prompt: Array(3000).fill([1]), n: 128, max_tokens: 1 }), '/v1/completions', /choices/],
  ['{"prompt":"x","n":128,"max_tokens":100}', '/v1/completions', /at most 10000 tokens/],
  ['[[[[[[[[[[', '/v1/completions', /not valid JSON/],
  ['{"prompt":"x","stream":"yes"}', '/v1/completions', /stream: expected a boolean/],
];

test('serve under mixed good, bad, slow and aborted clients stays up and answers', { timeout: SOAK_MS + 120000 }, async () => {
  assert.ok(BINARY, 'TOKENLINE_BINARY is set');
  const port = await startServer();
  const base = `http://127.0.0.1:${port}`;
  const end = Date.now() + SOAK_MS;
  const running = () => Date.now() < end;
  const failures = [];
  const counts = { good: 0, bad: 0, slowClosed: 0, aborted: 0, halfClosed: 0, oversized: 0, health: 0 };
  let died = null;
  proc.on('exit', (code, signal) => { if (died === null) died = `${code} ${signal}`; });

  // Warm-up: one request, then the baseline RSS and thread count.
  assert.equal((await fetch(`${base}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'warm', max_tokens: 4, temperature: 0, ignore_eos: true }) })).status, 200);
  const baseline = procStatus(proc.pid);
  let maxRss = baseline.rssKb, maxThreads = baseline.threads, maxHealthMs = 0;

  async function monitor() {
    while (running() && died === null) {
      const t0 = performance.now();
      try {
        const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(1000) });
        await res.text();
        if (res.status !== 200) failures.push(`/health answered ${res.status}`);
      } catch (e) {
        failures.push(`/health did not answer within 1 s: ${e.name}`);
      }
      maxHealthMs = Math.max(maxHealthMs, performance.now() - t0);
      counts.health += 1;
      const s = procStatus(proc.pid);
      maxRss = Math.max(maxRss, s.rssKb);
      maxThreads = Math.max(maxThreads, s.threads);
      await sleep(250);
    }
  }

  async function good(i) {
    for (let n = 0; running() && died === null; n++) {
      const stream = n % 2 === 0, chat = n % 3 === 0;
      const body = chat
        ? { messages: [{ role: 'user', content: `client ${i} turn ${n}` }], max_tokens: 8, temperature: 0, ignore_eos: true, stream }
        : { prompt: `client ${i} request ${n} ` + 'y'.repeat(n % 50), max_tokens: 8, temperature: 0.8, seed: n, ignore_eos: true, stream };
      try {
        const res = await fetch(`${base}/v1/${chat ? 'chat/completions' : 'completions'}`, {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
          signal: AbortSignal.timeout(60000) });
        const text = await res.text();
        if (res.status !== 200) { failures.push(`good request: ${res.status} ${text.slice(0, 200)}`); continue; }
        if (stream && !text.trimEnd().endsWith('data: [DONE]')) failures.push(`good stream without [DONE]: ${text.slice(-200)}`);
        if (!stream && JSON.parse(text).choices.length !== 1) failures.push(`good reply without its choice: ${text.slice(0, 200)}`);
        counts.good += 1;
      } catch (e) {
        failures.push(`good request failed: ${e}`);
      }
    }
  }

  async function bad() {
    for (let n = 0; running() && died === null; n++) {
      const [body, path, why] = BAD_BODIES[n % BAD_BODIES.length];
      try {
        const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body,
                                                   signal: AbortSignal.timeout(30000) });
        const text = await res.text();
        if (res.status < 400 || res.status >= 500) failures.push(`bad body ${String(body).slice(0, 60)}: ${res.status}`);
        else if (!why.test(text)) failures.push(`bad body ${String(body).slice(0, 60)}: unclear ${text.slice(0, 200)}`);
        counts.bad += 1;
      } catch (e) {
        failures.push(`bad request dropped: ${e}`);
      }
      await sleep(20);
    }
  }

  // A header at a byte per 300 ms, never finished: the server closes it (408) after its read timeout.
  async function slow() {
    while (running() && died === null) {
      const header = 'POST /v1/completions HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'z'.repeat(200);
      const parts = [...header];
      const ended = Math.min(parts.length, Math.ceil((end - Date.now()) / 300));
      await rawExchange(port, parts.slice(0, Math.max(ended, 1)), { pauseMs: 300 });
      counts.slowClosed += 1;
    }
  }

  async function abortive(i) {
    for (let n = 0; running() && died === null; n++) {
      if (n % 2 === 0) {  // a stream dropped after its first chunk
        const controller = new AbortController();
        try {
          const res = await fetch(`${base}/v1/completions`, { method: 'POST', headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ prompt: `abort ${i} ${n}`, max_tokens: 200, ignore_eos: true, stream: true }),
            signal: controller.signal });
          const reader = res.body.getReader();
          await reader.read();
          controller.abort();
        } catch (e) {
          if (e.name !== 'AbortError') failures.push(`aborting client: ${e}`);
        }
      } else {  // a socket destroyed mid-request
        const body = JSON.stringify({ prompt: `gone ${i} ${n}`, max_tokens: 100, ignore_eos: true });
        await rawExchange(port, [`POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`],
                          { destroyAfterMs: 100 });
      }
      counts.aborted += 1;
      await sleep(50);
    }
  }

  async function halfClosed() {
    for (let n = 0; running() && died === null; n++) {
      const body = JSON.stringify({ prompt: `half ${n}`, max_tokens: 4, temperature: 0, ignore_eos: true });
      const { got } = await rawExchange(port, [`POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`],
                                        { halfClose: true });
      if (!/HTTP\/1\.1 200 OK[\s\S]*"choices"/.test(got)) failures.push(`half-closed client got: ${got.slice(0, 200)}`);
      counts.halfClosed += 1;
      await sleep(200);
    }
  }

  async function oversized() {
    for (let n = 0; running() && died === null; n++) {
      const block = 'a'.repeat(1 << 20);
      const parts = ['POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\n\r\n', ...Array(8).fill(block)];
      const { got } = await rawExchange(port, parts);
      if (!got.startsWith('HTTP/1.1 413')) failures.push(`oversized body got: ${got.slice(0, 100)}`);
      counts.oversized += 1;
      await sleep(1000);
    }
  }

  const clients = [monitor(), bad(), halfClosed(), oversized()];
  for (let i = 0; i < 6; i++) clients.push(good(i));
  for (let i = 0; i < 3; i++) clients.push(abortive(i));
  for (let i = 0; i < SLOW_CLIENTS; i++) clients.push(slow());
  await Promise.all(clients);

  assert.equal(died, null, `the server died: ${died}`);
  assert.deepEqual(failures.slice(0, 20), [], `${failures.length} failures`);
  assert.ok(counts.good > 0 && counts.bad > 0 && counts.halfClosed > 0 && counts.oversized > 0 && counts.aborted > 0,
            JSON.stringify(counts));
  assert.ok(maxHealthMs < 1000, `/health took ${maxHealthMs} ms`);
  assert.ok(maxThreads <= baseline.threads, `threads grew from ${baseline.threads} to ${maxThreads}`);
  assert.ok(maxRss - baseline.rssKb < RSS_GROWTH_LIMIT_KB, `RSS grew from ${baseline.rssKb} to ${maxRss} kB`);
  console.log(`soak: ${JSON.stringify(counts)}; /health max ${maxHealthMs.toFixed(1)} ms; threads ${baseline.threads} -> max ${maxThreads}; RSS ${baseline.rssKb} -> max ${maxRss} kB`);

  proc.kill('SIGTERM');
  const code = await new Promise((resolve) => proc.on('exit', (c) => resolve(c)));
  assert.equal(code, 0);
  assert.ok(existsSync(join(dir, 'out', 'metrics.json')), 'metrics.json written');
});

// Runs the binary to its exit (at most 60 s); resolves with the exit code and stderr.
function runToExit(args, { shell = false } = {}) {
  return new Promise((resolve, reject) => {
    const p = shell ? spawn('bash', ['-c', args], { stdio: ['ignore', 'ignore', 'pipe'] })
                    : spawn(BINARY, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d) => { err += d; });
    const timer = setTimeout(() => { p.kill('SIGKILL'); reject(new Error(`still running after 60 s:\n${err}`)); }, 60000);
    p.on('exit', (code) => { clearTimeout(timer); resolve({ code, err }); });
  });
}

test('serve flags out of range exit 2 naming the flag before anything starts', async () => {
  const out = join(dir, 'flags');
  for (const [flag, value] of [['--http-workers', '2147483647'], ['--http-workers', '8'],
                               ['--shutdown-timeout', '1e300'], ['--shutdown-timeout', 'nan'],
                               ['--max-request-choices', '0'], ['--cors', 'a\r\nSet-Cookie: x']]) {
    const { code, err } = await runToExit(['serve', '--port', '0', '--out', out, flag, value]);
    assert.equal(code, 2, `${flag} ${value}: exit ${code}\n${err}`);
    assert.match(err, new RegExp(flag), `${flag} ${value}: ${err}`);
  }
  // Invalid UTF-8 in an argument (node's spawn would encode it): through the shell.
  const { code, err } = await runToExit(`exec "${BINARY}" serve --port 0 --out "${out}" --served-model-name $'caf\\xe9'`,
                                        { shell: true });
  assert.equal(code, 2, err);
  assert.match(err, /--served-model-name: expected UTF-8 text, found invalid UTF-8 at byte 3/);
});

test('serve that cannot start its HTTP threads exits 1 with the reason instead of hanging', async () => {
  // 4,096 workers reserve 32 GiB of stacks: under a 3 GiB address-space limit most cannot start.
  const { code, err } = await runToExit(
    `ulimit -v 3000000 && exec "${BINARY}" serve --port 0 --http-workers 4096 --out "${join(dir, 'threads')}"`,
    { shell: true });
  assert.equal(code, 1, err);
  assert.match(err, /could not start the HTTP threads: \d+ of 4096 workers started/);
});
