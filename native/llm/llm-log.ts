/** The slice of the Fastify (pino) logger the chat backends use: plain messages, never secrets. */
export interface LlmLog {
  info(msg: string): void;
  warn(msg: string): void;
  debug?(msg: string): void;
}

export const silentLog: LlmLog = { info: () => undefined, warn: () => undefined };
