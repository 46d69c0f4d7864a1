import type { FastifyBaseLogger } from 'fastify';

/**
 * A failure that repeats while its cause lasts (a full disk fails every write): one warning when it
 * starts and one line when it ends, not a line per failed attempt.
 */
export class OngoingProblem {
  private ongoing = false;

  constructor(
    private readonly log: FastifyBaseLogger,
    private readonly started: string,
    private readonly ended: string,
  ) {}

  report(error: unknown): void {
    if (this.ongoing) return;
    this.ongoing = true;
    this.log.warn({ err: error }, this.started);
  }

  /** The thing that failed worked again. */
  resolved(): void {
    if (!this.ongoing) return;
    this.ongoing = false;
    this.log.info(this.ended);
  }
}
