// tokenline serve driven by the official OpenAI SDK (npm `openai`, pinned in package-lock.json), as a
// vLLM user would: models.list, completions.create and chat.completions.create (whole and stream: true),
// seeds, n, logprobs, stop strings, the 400/401/404 errors, and an aborted stream whose request the server
// cancels (pages back, recorded as `cancelled`). Run by ctest: node --test openai_sdk_test.mjs, with
// TOKENLINE_BINARY naming the binary. glm-5.3-tiny with random weights: text is arbitrary bytes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';

const BINARY = process.env.TOKENLINE_BINARY;
const MODEL = 'glm-5.3-tiny';
const KEY = 'sdk-test-key';
const ABORT = ',finished_reason="abort"';
let server, client, base, outDir, stderr = '';
const spawned = [];

// A server process on a free loopback port; resolves with its port once it listens.
function spawnServer(dir, extra, onErr) {
  const proc = spawn(BINARY, ['serve', '--port', '0', '--kv-pages', '64', '--page-size', '16',
                              '--out', join(dir, 'out'), ...extra], { stdio: ['ignore', 'ignore', 'pipe'] });
  spawned.push(proc);
  let text = '';
  const port = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no banner in 30 s:\n' + text)), 30000);
    proc.stderr.on('data', (d) => {
      text += d;
      onErr(d);
      const m = text.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) { clearTimeout(timer); resolve(Number(m[1])); }
    });
    proc.on('exit', (code) => reject(new Error(`server exited ${code}:\n${text}`)));
  });
  return { proc, port };
}

function startServer() {
  outDir = mkdtempSync(join(tmpdir(), 'tokenline-sdk-'));
  const s = spawnServer(outDir, ['--api-key', KEY], (d) => { stderr += d; });
  server = s.proc;
  return s.port;
}

// /metrics as name -> value for this model's series; labels beyond model_name go in `extra`.
async function metrics() {
  const lines = (await (await fetch(`${base}/metrics`)).text()).split('\n');
  const value = (name, extra = '') => {
    const head = `${name}{model_name="${MODEL}"${extra}} `;
    const line = lines.find((l) => l.startsWith(head));
    return line ? Number(line.slice(head.length)) : NaN;
  };
  return { value };
}

before(async () => {
  assert.ok(BINARY, 'TOKENLINE_BINARY is set');
  const port = await startServer();
  base = `http://127.0.0.1:${port}`;
  client = new OpenAI({ baseURL: `${base}/v1`, apiKey: KEY, maxRetries: 0, timeout: 30000 });
});

after(async () => {
  for (const p of spawned) if (p.exitCode === null) p.kill('SIGKILL');
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

test('models.list names the served model', async () => {
  const page = await client.models.list();
  assert.deepEqual(page.data.map((m) => m.id), [MODEL]);
  assert.equal(page.data[0].object, 'model');
});

test('completions.create: whole and streamed replies agree (greedy), usage and cached tokens', async () => {
  const params = { model: MODEL, prompt: 'The quick brown fox', max_tokens: 8, temperature: 0, ignore_eos: true };
  const whole = await client.completions.create(params);
  assert.equal(whole.object, 'text_completion');
  assert.ok(whole.created > 1.6e9);
  assert.equal(whole.choices[0].finish_reason, 'length');
  assert.equal(whole.usage.completion_tokens, 8);
  assert.equal(whole.usage.prompt_tokens, 20);  // BOS + 19 bytes
  assert.equal(typeof whole.usage.prompt_tokens_details.cached_tokens, 'number');
  const stream = await client.completions.create({ ...params, stream: true, stream_options: { include_usage: true } });
  let text = '', usage = null, finish = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) { text += c.text; finish = c.finish_reason ?? finish; }
  }
  assert.equal(text, whole.choices[0].text);
  assert.equal(finish, 'length');
  assert.equal(usage.completion_tokens, 8);
  assert.equal(usage.prompt_tokens_details.cached_tokens, 16);  // the first reply's full page is cached
});

test('chat.completions.create: streamed deltas rebuild the whole reply', async () => {
  const params = { model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_completion_tokens: 6,
                   temperature: 0, ignore_eos: true };
  const whole = await client.chat.completions.create(params);
  assert.equal(whole.object, 'chat.completion');
  assert.equal(whole.choices[0].message.role, 'assistant');
  assert.equal(whole.usage.completion_tokens, 6);
  const stream = await client.chat.completions.create({ ...params, stream: true });
  let text = '', role = null, chunks = 0, finish = null;
  for await (const chunk of stream) {
    chunks += 1;
    assert.equal(chunk.object, 'chat.completion.chunk');
    for (const c of chunk.choices) {
      role = role ?? c.delta.role;
      text += c.delta.content ?? '';
      finish = c.finish_reason ?? finish;
    }
  }
  assert.equal(role, 'assistant');
  // A chunk carries the text generated since the last write: one per step when the writer keeps up,
  // fewer when several steps land before it wakes (a loaded machine), never none.
  assert.ok(chunks >= 1, `at least one chunk, got ${chunks}`);
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(finish, 'length');
});

test('a seed replays its draws; n gives that many choices; logprobs come with top alternatives', async () => {
  const params = { model: MODEL, prompt: 'seeded', max_tokens: 12, temperature: 1, seed: 7, ignore_eos: true };
  const a = await client.completions.create(params);
  const b = await client.completions.create(params);
  const c = await client.completions.create({ ...params, seed: 8 });
  assert.deepEqual(a.choices[0].token_ids, b.choices[0].token_ids);
  assert.notDeepEqual(a.choices[0].token_ids, c.choices[0].token_ids);
  const many = await client.completions.create({ ...params, n: 3 });
  assert.deepEqual(many.choices.map((x) => x.index), [0, 1, 2]);
  assert.equal(many.usage.completion_tokens, 36);
  const chat = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }],
    max_tokens: 4, temperature: 0, ignore_eos: true, logprobs: true, top_logprobs: 2 });
  const content = chat.choices[0].logprobs.content;
  assert.equal(content.length, 4);
  for (const t of content) {
    assert.equal(t.top_logprobs.length, 2);
    assert.ok(t.logprob <= 0);
    assert.ok(t.top_logprobs[0].logprob >= t.logprob - 1e-6, 'greedy picks the most likely token');
  }
});

test('a stop string ends the text before it with finish_reason stop', async () => {
  const params = { model: MODEL, prompt: 'stop here', max_tokens: 32, temperature: 0, ignore_eos: true };
  const full = (await client.completions.create(params)).choices[0].text;
  const at = full.search(/[A-Za-z0-9]/);
  if (at < 0) return;  // 32 random bytes without one: (194/256)^32 < 2e-4
  const stopped = await client.completions.create({ ...params, stop: [full[at]] });
  assert.equal(stopped.choices[0].finish_reason, 'stop');
  assert.equal(stopped.choices[0].text, full.slice(0, at));
});

test('parameters the engine cannot honour are 400s naming them; model and key are checked', async () => {
  const call = (extra) => client.completions.create({ model: MODEL, prompt: 'x', max_tokens: 2, ...extra });
  await assert.rejects(call({ frobnicate: 1 }), (e) => e.status === 400 && e.param === 'frobnicate');
  await assert.rejects(call({ frequency_penalty: 1 }), (e) => e.status === 400 && e.param === 'frequency_penalty');
  await assert.rejects(call({ temperature: 5 }), (e) => e.status === 400 && e.param === 'temperature');
  await assert.rejects(call({ model: 'gpt-4o' }), (e) => e.status === 404 && e.code === 'model_not_found');
  const stranger = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'wrong', maxRetries: 0 });
  await assert.rejects(stranger.models.list(), (e) => e.status === 401);
});

test('an aborted stream is cancelled in the engine: pages back, counted as abort', async () => {
  const before = await metrics();
  const controller = new AbortController();
  const stream = await client.chat.completions.create(
    { model: MODEL, messages: [{ role: 'user', content: 'a long answer' }], max_tokens: 600, temperature: 0,
      ignore_eos: true, stream: true }, { signal: controller.signal });
  let chunks = 0;
  for await (const _ of stream) {  // the SDK ends the iteration quietly on abort
    if (++chunks === 3) controller.abort();
  }
  assert.ok(chunks < 600, `the stream ended at the abort, after ${chunks} chunks`);
  const deadline = Date.now() + 10000;
  let m = await metrics();
  while (Date.now() < deadline && (m.value('vllm:num_requests_running') !== 0 ||
         m.value('vllm:request_success_total', ABORT) < 1)) {
    await new Promise((r) => setTimeout(r, 100));
    m = await metrics();
  }
  assert.equal(m.value('vllm:num_requests_running'), 0);
  assert.equal(m.value('vllm:request_success_total', ABORT),
               before.value('vllm:request_success_total', ABORT) + 1);
  assert.equal(m.value('tokenline:kv_pages_free'), m.value('tokenline:kv_pages_total'));
  assert.equal((await fetch(`${base}/health`)).status, 200);
});

test('SIGTERM drains and writes the outputs; the cancelled request is in requests.csv', async () => {
  const exited = new Promise((resolve) => server.on('exit', (code) => resolve(code)));
  server.kill('SIGTERM');
  assert.equal(await exited, 0);
  const csv = readFileSync(join(outDir, 'out', 'requests.csv'), 'utf8');
  assert.match(csv, /cancelled/);
  assert.match(stderr, /request \d+ abort /);  // the per-request log line
});

test('draining: /health and new completions 503, a second signal aborts the rest at once', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenline-drain-'));
  const { proc, port } = spawnServer(dir, ['--shutdown-timeout', '0'], () => {});
  const url = `http://127.0.0.1:${await port}`;
  const drained = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'none', maxRetries: 0 });
  const stream = await drained.completions.create({ model: MODEL, prompt: 'long', max_tokens: 900,
                                                    ignore_eos: true, stream: true, logprobs: 0 });
  const exited = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
  const reading = (async () => { let n = 0; for await (const _ of stream) n += 1; return n; })();
  await new Promise((r) => setTimeout(r, 300));
  proc.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal((await fetch(`${url}/health`)).status, 503);
  const refused = await fetch(`${url}/v1/completions`, { method: 'POST', body: '{"prompt": "x"}' });
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get('retry-after'), '1');
  proc.kill('SIGTERM');  // no shutdown timeout: only the second signal ends the 900-token request
  await assert.rejects(reading, (e) => e.status === undefined && /shutting down/.test(e.message));
  assert.equal(await exited, 0);
  assert.match(readFileSync(join(dir, 'out', 'requests.csv'), 'utf8'), /cancelled/);
  rmSync(dir, { recursive: true, force: true });
});
