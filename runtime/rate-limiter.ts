/**
 * client-go's default controller rate limiter: the larger of a per-key
 * exponential backoff (5 ms doubling to 1000 s) and a global token bucket
 * (10 qps, burst 100), so one failing key backs off alone while a storm of
 * failures cannot flood the apiserver. Pure arithmetic over a Clock.
 */
import type { Clock } from './clock.js';

/** Decides how long a key waits before its next retry. */
export interface RateLimiter {
  /** Delay before the key's next attempt; counts a failure. */
  when(key: string): number;
  /** Forgets the key's failures (call after a success). */
  forget(key: string): void;
  /** Failures counted for the key. */
  retries(key: string): number;
}

/** Per-key exponential backoff: base × 2^failures, capped at max. */
export class ExponentialBackoffLimiter implements RateLimiter {
  private readonly failures = new Map<string, number>();

  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1_000_000,
  ) {}

  when(key: string): number {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    return Math.min(this.baseMs * 2 ** n, this.maxMs);
  }

  forget(key: string): void {
    this.failures.delete(key);
  }

  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }
}

/** A global token bucket: each retry takes a token; tokens refill at qps up to burst. */
export class TokenBucketLimiter implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    private readonly clock: Clock,
    private readonly qps = 10,
    private readonly burst = 100,
  ) {
    this.tokens = burst;
    this.last = clock.now();
  }

  when(): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
    this.last = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  forget(): void {}

  retries(): number {
    return 0;
  }
}

/** The larger delay of several limiters. */
export class MaxOfLimiter implements RateLimiter {
  private readonly limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.limiters = limiters;
  }

  when(key: string): number {
    return Math.max(...this.limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    for (const l of this.limiters) l.forget(key);
  }

  retries(key: string): number {
    return Math.max(...this.limiters.map((l) => l.retries(key)));
  }
}

/** client-go's DefaultControllerRateLimiter. */
export function defaultRateLimiter(clock: Clock): RateLimiter {
  return new MaxOfLimiter(new ExponentialBackoffLimiter(5, 1_000_000), new TokenBucketLimiter(clock, 10, 100));
}
