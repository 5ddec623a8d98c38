// How long one long prompt stalls the running decodes of `tokenline serve` (the serving defaults of
// docs/serve.md): a streamed decode runs, a PROMPT_BYTES-byte prompt arrives, and the longest gap
// between two streamed tokens is printed (logprobs: 0, so every token is an event even when its bytes are
// not yet text). Usage: node prefill_stall.mjs BASE_URL [PROMPT_BYTES=3000]
const [base, bytesArg = '3000'] = process.argv.slice(2);
const body = (o) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(o) });

const decode = fetch(`${base}/v1/completions`, body({ prompt: 'decode', max_tokens: 120, temperature: 0, logprobs: 0,
                                                      ignore_eos: true, stream: true }));
const res = await decode;
const reader = res.body.getReader();
const gaps = [];
let last = performance.now(), events = 0, longSent = false, longDone = null;
for (;;) {
  const { done, value } = await reader.read();
  if (done) break;
  const now = performance.now();
  const n = new TextDecoder().decode(value).split('data: ').length - 1;
  if (events > 0) gaps.push(now - last);
  last = now;
  events += n;
  if (!longSent && events >= 20) {  // the decode is running: now the long prompt arrives
    longSent = true;
    const t = performance.now();
    longDone = fetch(`${base}/v1/completions`, body({ prompt: 'y'.repeat(Number(bytesArg)), max_tokens: 1,
                                                      temperature: 0 }))
      .then((r) => r.text()).then(() => performance.now() - t);
  }
}
const sorted = [...gaps].sort((a, b) => a - b);
console.log(JSON.stringify({ prompt_bytes: Number(bytesArg), decode_events: events,
                             max_gap_ms: Number(sorted.at(-1).toFixed(1)),
                             median_gap_ms: Number(sorted[Math.floor(sorted.length / 2)].toFixed(1)),
                             long_prompt_e2e_ms: Number((await longDone).toFixed(1)) }));
