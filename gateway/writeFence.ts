/**
 * A subgraph's reads still running, by credential, so that a write can mark them: a read that
 * started before a credential's mutation may answer with what the service held before it, so no
 * later read of that credential may join it and its answer may not be kept (docs/PERFORMANCE.md,
 * "Shared work"). Only running reads are held, so the fence grows with the reads in flight, not
 * with the credentials ever seen.
 */
export interface FencedRead {
  /** Whether a mutation by the read's credential was sent or answered since the read started. */
  readonly overtaken: boolean;
  /** The read has its answer (or failed): the fence lets go of it. */
  end(): void;
}

export interface WriteFence {
  /** Counts a read by `credential` as running until its `end()`. */
  begin(credential: string): FencedRead;
  /** A mutation by `credential` was sent or answered: every read of it running now is overtaken. */
  overtake(credential: string): void;
  /**
   * A mutation elsewhere (another gateway) by every credential `match` accepts, or by any when
   * `match` is undefined: as `overtake` for each. `match` is asked once per credential with reads running.
   */
  overtakeEvery(match?: (credential: string) => boolean): void;
  /** Reads running and not yet overtaken. */
  readonly running: number;
}

export function createWriteFence(): WriteFence {
  const running = new Map<string, Set<Read>>();
  let count = 0;

  class Read implements FencedRead {
    overtaken = false;
    constructor(private readonly group: Set<Read>, private readonly credential: string) {}
    end() {
      // An overtaken read was let go of when it was overtaken.
      if (this.overtaken || !this.group.delete(this)) return;
      count -= 1;
      if (this.group.size === 0 && running.get(this.credential) === this.group) running.delete(this.credential);
    }
  }

  function overtake(credential: string) {
    const group = running.get(credential);
    if (!group) return;
    running.delete(credential);
    count -= group.size;
    for (const read of group) read.overtaken = true;
  }

  return {
    begin(credential) {
      let group = running.get(credential);
      if (!group) running.set(credential, (group = new Set()));
      const read = new Read(group, credential);
      group.add(read);
      count += 1;
      return read;
    },
    overtake,
    overtakeEvery(match) {
      for (const credential of [...running.keys()]) if (!match || match(credential)) overtake(credential);
    },
    get running() {
      return count;
    },
  };
}
