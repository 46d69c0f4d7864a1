import { RateLimiterMemory, type RateLimiterRes } from 'rate-limiter-flexible';
import { BoundedMap } from '../../core/bounded-map.js';
import { clock } from '../../core/clock.js';
import { tooManyRequests } from '../../core/errors.js';

const WINDOW_SECONDS = 15 * 60;
/** Failures at one account from one address before that pair is locked for WINDOW_SECONDS. */
const PAIR_FAILURES = 10;
/** Failures from one address, across accounts, before the address is locked for WINDOW_SECONDS. */
const ADDRESS_FAILURES = 50;
/** Failures at one account from all addresses in a day before the account-wide backoff starts. */
const ACCOUNT_FREE_FAILURES = 20;
const ACCOUNT_WINDOW_SECONDS = 24 * 60 * 60;
const MAX_BACKOFF_SECONDS = 15 * 60;
/** How long a successful login exempts its address from the account-wide backoff. */
const KNOWN_ADDRESS_MS = 30 * 24 * 60 * 60 * 1000;
/** Successes remembered; beyond this the oldest is forgotten (it only loses its exemption). */
const KNOWN_ADDRESSES_MAX = 10_000;

const TOO_MANY = 'Too many failed logins, retry later';

/** How long a key is still locked, in ms (0: not locked). An expired record still read back is not a lock. */
const lockedFor = (res: RateLimiterRes | null) => (res && res.remainingPoints <= 0 && res.msBeforeNext > 0 ? res.msBeforeNext : 0);

const accountKey = (account: string) => account.toLowerCase();
const pairKey = (account: string, address: string) => `${accountKey(account)}\n${address}`;

/**
 * Password guesses (login, and the current password of a password change). A lock that anyone can
 * trigger is a way to keep the owner out, so no single count locks an account for everyone:
 * - per account and address: PAIR_FAILURES in 15 minutes lock that pair (429 with Retry-After);
 * - per address: ADDRESS_FAILURES across accounts lock the address;
 * - per account across addresses (a distributed guesser): after ACCOUNT_FREE_FAILURES in a day, each
 *   further failure doubles a wait (1 s, 2 s, … at most 15 minutes) before the next try from an
 *   address that has not signed in to the account in the last 30 days. The owner's usual addresses
 *   are exempt, so the guesser slows only itself and new devices.
 * A success clears its pair and marks its address as known; it does not reset the account-wide count,
 * which an attacker's guesses built. Counters live in memory (one process).
 */
export class LoginThrottle {
  private readonly perPair = new RateLimiterMemory({ keyPrefix: 'login-pair', points: PAIR_FAILURES, duration: WINDOW_SECONDS, blockDuration: WINDOW_SECONDS });
  private readonly perAddress = new RateLimiterMemory({ keyPrefix: 'login-address', points: ADDRESS_FAILURES, duration: WINDOW_SECONDS, blockDuration: WINDOW_SECONDS });
  private readonly accountFailures = new RateLimiterMemory({ keyPrefix: 'login-account', points: ACCOUNT_FREE_FAILURES, duration: ACCOUNT_WINDOW_SECONDS });
  private readonly accountBackoff = new RateLimiterMemory({ keyPrefix: 'login-backoff', points: 1, duration: MAX_BACKOFF_SECONDS });
  /** pairKey → when the pair last succeeded. */
  private readonly known = new BoundedMap<string, number>(KNOWN_ADDRESSES_MAX);

  /** Throws 429 with Retry-After while the address, the pair, or (from an unknown address) the account is held back. */
  async assertAllowed(account: string, address: string): Promise<void> {
    const waits = await Promise.all([
      this.perAddress.get(address).then(lockedFor),
      this.perPair.get(pairKey(account, address)).then(lockedFor),
      this.isKnown(account, address) ? 0 : this.accountBackoff.get(accountKey(account)).then(lockedFor),
    ]);
    const wait = Math.max(...waits);
    if (wait > 0) throw tooManyRequests(wait / 1000, TOO_MANY);
  }

  async failed(account: string, address: string): Promise<void> {
    const ignoreLock = () => undefined;
    await Promise.all([this.perAddress.consume(address).catch(ignoreLock), this.perPair.consume(pairKey(account, address)).catch(ignoreLock)]);
    const { consumedPoints } = await this.accountFailures.penalty(accountKey(account));
    const beyond = consumedPoints - ACCOUNT_FREE_FAILURES;
    if (beyond >= 0) await this.accountBackoff.block(accountKey(account), Math.min(2 ** beyond, MAX_BACKOFF_SECONDS));
  }

  async succeeded(account: string, address: string): Promise<void> {
    const key = pairKey(account, address);
    await this.perPair.delete(key);
    // Deleted first so that a returning address moves to the newest end and is evicted last.
    this.known.delete(key);
    this.known.set(key, clock.now());
  }

  private isKnown(account: string, address: string): boolean {
    const at = this.known.get(pairKey(account, address));
    return at !== undefined && clock.now() - at < KNOWN_ADDRESS_MS;
  }
}

/**
 * Second-factor codes (TOTP, recovery codes): only someone who already has the password gets to
 * guess them, so a lock per account (10 failures in 15 minutes, from any address) cannot be used
 * by a stranger to keep the owner out, and keeps a million-code space out of a distributed reach.
 * Also per address (50). A `null` account (an unknown MFA token) counts against the address only.
 */
export class SecondFactorThrottle {
  private readonly perAccount = new RateLimiterMemory({ keyPrefix: 'mfa-account', points: 10, duration: WINDOW_SECONDS, blockDuration: WINDOW_SECONDS });
  private readonly perAddress = new RateLimiterMemory({ keyPrefix: 'mfa-address', points: ADDRESS_FAILURES, duration: WINDOW_SECONDS, blockDuration: WINDOW_SECONDS });

  async assertAllowed(account: string | null, address: string): Promise<void> {
    const waits = await Promise.all([account === null ? 0 : this.perAccount.get(account).then(lockedFor), this.perAddress.get(address).then(lockedFor)]);
    const wait = Math.max(...waits);
    if (wait > 0) throw tooManyRequests(wait / 1000, TOO_MANY);
  }

  async failed(account: string | null, address: string): Promise<void> {
    await Promise.all([
      account === null ? undefined : this.perAccount.consume(account).catch(() => undefined),
      this.perAddress.consume(address).catch(() => undefined),
    ]);
  }

  async succeeded(account: string): Promise<void> {
    await this.perAccount.delete(account);
  }
}
