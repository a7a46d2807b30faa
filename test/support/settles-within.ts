// Tells a hang from an answer: how a promise settled within a bound (a bound on a hang, never a
// speed figure: tests give it many times what the deadline under test needs).
export type Settlement = 'resolved' | 'rejected' | 'pending';

export async function settlesWithin(p: Promise<unknown>, ms: number): Promise<Settlement> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Settlement>((resolve) => { timer = setTimeout(resolve, ms, 'pending'); });
  try {
    return await Promise.race([p.then((): Settlement => 'resolved', (): Settlement => 'rejected'), late]);
  } finally {
    clearTimeout(timer);
  }
}
