import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { followFile } from '../../bench/followFile.ts';

function scratchFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'follow-')), 'out.log');
  writeFileSync(path, '');
  return path;
}

describe('following a file another process writes', () => {
  it('hands on each append once, in order, and what is left when stopped', async () => {
    const path = scratchFile();
    const seen: string[] = [];
    const follower = followFile(path, (text) => seen.push(text), 5);
    appendFileSync(path, 'one\n');
    await expect.poll(() => seen.join('')).toBe('one\n');
    appendFileSync(path, 'two\nthree\n');
    await follower.drain();
    appendFileSync(path, 'last\n');
    await follower.stop();
    expect(seen.join('')).toBe('one\ntwo\nthree\nlast\n');
    appendFileSync(path, 'after stop\n');
    await follower.drain();
    expect(seen.join('')).toBe('one\ntwo\nthree\nlast\n');
  });

  it('never splits a character between two reads', async () => {
    const path = scratchFile();
    const seen: string[] = [];
    const follower = followFile(path, (text) => seen.push(text), 60_000);
    const euro = Buffer.from('€', 'utf8');
    appendFileSync(path, euro.subarray(0, 1));
    await follower.drain();
    appendFileSync(path, euro.subarray(1));
    await follower.stop();
    expect(seen).toEqual(['€']);
  });

  it('reads more than one chunk of a large append', async () => {
    const path = scratchFile();
    let text = '';
    const follower = followFile(path, (chunk) => (text += chunk), 60_000);
    const line = `${'x'.repeat(99)}\n`;
    appendFileSync(path, line.repeat(2_000));
    await follower.stop();
    expect(text).toBe(line.repeat(2_000));
  });
});
