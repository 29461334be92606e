import { afterAll, expect } from 'vitest';
import { capturedLogs } from './logs.ts';

/**
 * The names of a JSON object line's top-level keys, in order, repeats included (JSON.parse keeps
 * only the last of a repeated key, so it cannot tell).
 */
export function topLevelKeys(line: string): string[] {
  const keys: string[] = [];
  let depth = 0;
  for (let index = 0; index < line.length; index += 1) {
    const char = line[index];
    if (char === '"') {
      const start = index;
      for (index += 1; line[index] !== '"'; index += 1) if (line[index] === '\\') index += 1;
      let next = index + 1;
      while (line[next] === ' ') next += 1;
      if (depth === 1 && line[next] === ':') keys.push(JSON.parse(line.slice(start, index + 1)) as string);
    } else if (char === '{' || char === '[') depth += 1;
    else if (char === '}' || char === ']') depth -= 1;
  }
  return keys;
}

/**
 * After every end-to-end file: no JSON line any server logged repeats a key (a child logger's
 * binding must not shadow its parent's: a reader keeps one of the two, and which depends on it).
 * Lines that are not JSON (a child process's banner) are not this check's business.
 */
afterAll(() => {
  for (const line of capturedLogs.join('').split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      JSON.parse(line);
    } catch {
      continue;
    }
    const keys = topLevelKeys(line);
    expect(keys.filter((key, index) => keys.indexOf(key) !== index), `a key repeated in ${line.slice(0, 200)}`).toEqual([]);
  }
});
