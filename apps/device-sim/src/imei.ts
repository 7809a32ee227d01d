/** IMEIs for simulated devices: 14 digits from a seeded sequence plus the Luhn check digit. */
export function luhnDigit(body: string): number {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let digit = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return (10 - (sum % 10)) % 10;
}

export function imeiFor(seed: number, index: number): string {
  const body = `35${String(seed % 1000).padStart(3, '0')}${String(index).padStart(9, '0')}`.slice(0, 14);
  return `${body}${luhnDigit(body)}`;
}

/** A small deterministic PRNG (mulberry32) so `--seed` reproduces a fleet. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
