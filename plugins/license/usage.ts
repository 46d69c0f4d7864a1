/** What the box holds right now, measured against the plan limits. */
interface Usage {
  documents: number;
  storage_bytes: number;
}

type UsageSource = () => Promise<Usage>;

declare module 'fastify' {
  interface FastifyInstance {
    usage: UsageRegistry;
  }
}

/**
 * Features that store things (documents, later others) register how to count them;
 * the license view sums them. With nothing registered the honest answer is zero.
 */
export class UsageRegistry {
  private readonly sources: UsageSource[] = [];

  register(source: UsageSource): void {
    this.sources.push(source);
  }

  async total(): Promise<Usage> {
    const parts = await Promise.all(this.sources.map((source) => source()));
    return parts.reduce(
      (sum, part) => ({ documents: sum.documents + part.documents, storage_bytes: sum.storage_bytes + part.storage_bytes }),
      { documents: 0, storage_bytes: 0 },
    );
  }
}
