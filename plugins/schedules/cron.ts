import { Cron } from 'croner';
import { clock } from '../../core/clock.js';
import { badRequest } from '../../core/errors.js';

/** How far ahead a schedule must fire at least once: "0 0 31 2 *" (February 31st) is refused. */
const HORIZON_RUNS = 1;

/** A 5-field cron expression evaluated in UTC (croner); nicknames such as @daily are accepted too. */
export class CronExpression {
  private constructor(private readonly cron: Cron) {}

  /** Parses and validates, or throws 400 invalid_cron naming `field` with croner's reason. */
  static parse(expression: string, field = 'body.cron'): CronExpression {
    let cron: Cron;
    try {
      cron = new Cron(expression.trim(), { timezone: 'UTC', mode: '5-part' });
    } catch (error) {
      const reason = (error as Error).message.replace(/^CronPattern: /, '');
      throw badRequest('invalid_cron', `${field} is not a valid 5-field cron expression (minute hour day-of-month month day-of-week, UTC): ${reason}`, field);
    }
    const parsed = new CronExpression(cron);
    if (parsed.nextRuns(HORIZON_RUNS).length === 0) {
      throw badRequest('invalid_cron', `${field} never fires: no date matches it`, field);
    }
    return parsed;
  }

  /** The next instant strictly after `after` (epoch ms), or null when there is none. */
  next(after: number): number | null {
    return this.cron.nextRun(new Date(after))?.getTime() ?? null;
  }

  /** The next `count` instants after `after`. */
  nextRuns(count: number, after: number = clock.now()): number[] {
    return this.cron.nextRuns(count, new Date(after)).map((date) => date.getTime());
  }
}
