import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { tooManyRequests } from '../../core/errors.js';

const WINDOW_SECONDS = 15 * 60;

/**
 * Counts failed logins per account and per client address (not successful ones, which a plain
 * request rate limit would also count) and blocks a key once it has too many failures.
 */
export class LoginThrottle {
  private readonly perAccount = new RateLimiterMemory({ keyPrefix: 'login-account', points: 10, duration: WINDOW_SECONDS, blockDuration: WINDOW_SECONDS });
  private readonly perAddress = new RateLimiterMemory({ keyPrefix: 'login-address', points: 50, duration: WINDOW_SECONDS, blockDuration: WINDOW_SECONDS });

  /** Throws 429 with Retry-After when either key is blocked; a null account (not known yet) checks the address only. */
  async assertAllowed(username: string | null, address: string): Promise<void> {
    const [account, client] = await Promise.all([username === null ? null : this.perAccount.get(accountKey(username)), this.perAddress.get(address)]);
    const blocked = [account, client].filter((res): res is RateLimiterRes => !!res && res.remainingPoints <= 0);
    if (blocked.length) {
      throw tooManyRequests(Math.max(...blocked.map((res) => res.msBeforeNext)) / 1000, 'Too many failed logins, retry later');
    }
  }

  async failed(username: string | null, address: string): Promise<void> {
    await Promise.all([
      username === null ? undefined : this.perAccount.consume(accountKey(username)).catch(() => undefined),
      this.perAddress.consume(address).catch(() => undefined),
    ]);
  }

  async succeeded(username: string): Promise<void> {
    await this.perAccount.delete(accountKey(username));
  }
}

const accountKey = (username: string) => username.toLowerCase();
