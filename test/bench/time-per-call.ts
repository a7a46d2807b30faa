// Microseconds a call of `fn` takes, over `seconds` of calls after a warm-up (the microbenches).

export function timePerCall(fn: () => unknown, seconds: number, batch = 10): number {
  for (let i = 0; i < 50; i++) fn(); // warm up
  let calls = 0;
  const start = process.hrtime.bigint();
  const until = start + BigInt(Math.round(seconds * 1e9));
  let now = start;
  while (now < until) {
    for (let i = 0; i < batch; i++) fn();
    calls += batch;
    now = process.hrtime.bigint();
  }
  return Number(now - start) / calls / 1000;
}
