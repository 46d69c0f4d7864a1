import { clock } from '../../core/clock.js';
import type { BackendCheck, Generator } from '../../native/llm/index.js';

/** Within health's 2 s probe budget, so the answer is ours ("did not answer within 1.5 s"), not the generic timeout. */
const CHECK_TIMEOUT_MS = 1_500;
/** Load balancers poll health every few seconds: one request to the remote server serves them all for this long. */
const CHECK_TTL_MS = 5_000;

type Logger = { info: (msg: string) => void; warn: (msg: string) => void };

/**
 * The remote chat backend's reachability for /api/health: asked at most once per CHECK_TTL_MS (polls in
 * between, and concurrent ones, share the answer), and logged when it changes, not on every poll.
 */
export class BackendCheckCache {
  private last: { generator: Generator; askedAt: number; answer: Promise<BackendCheck> } | undefined;
  private lastState: BackendCheck['state'] = 'ok';

  constructor(private readonly log: Logger) {}

  /** Undefined for a backend with nothing to ask (an in-process model). */
  async check(generator: Generator): Promise<BackendCheck | undefined> {
    if (!generator.check) return undefined;
    const now = clock.now();
    if (this.last?.generator !== generator || now - this.last.askedAt >= CHECK_TTL_MS) {
      this.last = { generator, askedAt: now, answer: generator.check(CHECK_TIMEOUT_MS).then((answer) => this.logChange(answer)) };
    }
    return this.last.answer;
  }

  private logChange(answer: BackendCheck): BackendCheck {
    if (answer.state !== this.lastState) {
      if (answer.state === 'ok') this.log.info('chat model: the remote backend answers again');
      else this.log.warn(`chat model: ${answer.detail}`);
      this.lastState = answer.state;
    }
    return answer;
  }
}
